//! A domain's failure reports in the domain's partition ([`crate::domain_data`]), each expiring with its
//! retention (`expires_at`).

use super::{decode, domain_data, encode, keys};
use mailward_domain::failure_reports::StoredFailureReport;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use uuid::Uuid;

/// The write of a new failure report, expiring at `expires_at` (unix seconds); a report
/// already stored under the same id is a conflict (the same delivery again).
pub fn create_op(report: &StoredFailureReport, expires_at: i64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::domain_pk(report.org_id, report.domain_id),
            keys::failure_report_sk(report.domain_id, report.id),
            encode(report)?,
        )
        .expiring_at(expires_at),
        condition: Condition::NotExists,
    })
}

/// Every failure report of a domain still kept.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<StoredFailureReport>, StoreError> {
    domain_data::query_prefix(store, org, domain, keys::failure_reports_prefix(domain))
        .await?
        .iter()
        .map(decode)
        .collect()
}
