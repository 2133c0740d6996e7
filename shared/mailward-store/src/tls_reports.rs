//! A domain's TLS reports (RFC 8460) in the domain's partition
//! ([`crate::domain_data`]). The item is written in
//! the same commit batch as the report's identity item, before it, so a report marked imported
//! always has its details.

use super::{decode, domain_data, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use mailward_domain::tls_reports::StoredTlsReport;
use uuid::Uuid;

/// The write of a TLS report (unconditional: the same report writes the same item).
pub fn put_op(report: &StoredTlsReport) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::domain_pk(report.org_id, report.domain_id),
            keys::tls_report_sk(report.domain_id, report.id),
            encode(report)?,
        ),
        condition: Condition::None,
    })
}

/// Every TLS report of a domain.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<StoredTlsReport>, StoreError> {
    domain_data::query_prefix(store, org, domain, keys::tls_reports_prefix(domain))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// One TLS report of a domain.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    id: Uuid,
) -> Result<Option<StoredTlsReport>, StoreError> {
    domain_data::get(store, org, domain, &keys::tls_report_sk(domain, id), true)
        .await?
        .map(|item| decode(&item))
        .transpose()
}
