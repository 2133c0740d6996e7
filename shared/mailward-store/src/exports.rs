//! Organization exports, in the organization's partition (`EXPORT#<id>`).

use super::{Versioned, decode_versioned, keys, put_versioned, versioned_item};
use mailward_domain::admin::OrgExport;
use mailward_domain::store::{ItemStore, StoreError, WriteOp};
use uuid::Uuid;

/// Reads an export.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<OrgExport>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::export_sk(id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The write that saves an export read at `version` (`None`: creates it), for a transaction
/// with its activity entry.
pub fn save_op(export: &OrgExport, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = versioned_item(
        keys::org_pk(export.org_id),
        keys::export_sk(export.id),
        export,
        version,
    )?;
    Ok(WriteOp::Put { item, condition })
}

/// Saves an export read at `version`.
pub async fn save(
    store: &dyn ItemStore,
    export: &OrgExport,
    version: u64,
) -> Result<(), StoreError> {
    put_versioned(
        store,
        keys::org_pk(export.org_id),
        keys::export_sk(export.id),
        export,
        Some(version),
    )
    .await
}
