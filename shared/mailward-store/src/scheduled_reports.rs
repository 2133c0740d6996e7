//! Scheduled report settings, in their organization's partition under `REPORTSET#<id>`, and in
//! GSI1 `REPORTSETTINGS` by their next send time, which the hourly schedule reads up to now.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::scheduled_reports::ReportSettings;
use mailward_domain::store::{
    Condition, Index, ItemStore, Query, SortKey, StoreError, WriteOp, query_all,
};
use uuid::Uuid;

/// The write of a report's settings: created when `version` is `None`.
pub fn put_op(settings: &ReportSettings, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = super::versioned_item(
        keys::org_pk(settings.org_id),
        keys::report_settings_sk(settings.id),
        settings,
        version,
    )?;
    let item = item.with_gsi1(
        keys::REPORT_SETTINGS_INDEX,
        keys::report_settings_index_sk(
            settings.next_send_at.unix_timestamp(),
            settings.org_id,
            settings.id,
        ),
    );
    Ok(WriteOp::Put { item, condition })
}

/// The delete of a report's settings at the version read.
pub fn delete_op(org: Uuid, id: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::report_settings_sk(id),
        condition: Condition::Version(version),
    }
}

/// One report's settings.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<ReportSettings>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::report_settings_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every report of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ReportSettings>, StoreError> {
    let mut all: Vec<ReportSettings> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::REPORT_SETTINGS_PREFIX),
    )
    .await?
    .iter()
    .map(|i| decode_versioned(i).map(|v| v.value))
    .collect::<Result<_, _>>()?;
    all.sort_by_key(|r| (r.created_at, r.id));
    Ok(all)
}

/// Every report of every organization due at `now` (its next send time reached).
pub async fn due(store: &dyn ItemStore, now: i64) -> Result<Vec<(Uuid, Uuid)>, StoreError> {
    let mut query = Query::partition(keys::REPORT_SETTINGS_INDEX).on(Index::Gsi1);
    query.sort = SortKey::AtMost(format!("{:012}~", now.max(0)));
    Ok(query_all(store, query)
        .await?
        .iter()
        .filter_map(|i| decode_versioned::<ReportSettings>(i).ok())
        .map(|v| (v.value.org_id, v.value.id))
        .collect())
}
