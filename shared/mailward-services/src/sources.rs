//! The sending-source catalogue (SPEC §2.8, §4.8), read from the store, where the curated
//! catalogue embedded in the build is loaded once per version.
//!
//! `instructions_curation` is null unless the caller holds the `sources:update` permission; no
//! credential grants that permission yet (it belongs to the curation workflow), so it is null for
//! every caller today.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::sources::{SourceFilters, SourceView};
use mailward_domain::sources::{DkimIndexItem, SourceStatus, SpfIndexItem};
use mailward_store::sources as stored;
use uuid::Uuid;

fn parse_status(raw: &str) -> Result<SourceStatus, ServiceError> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned())).map_err(|_| {
        ServiceError::invalid(
            "status",
            "status must be ACTIVE, PENDING_REVIEW or REJECTED",
        )
    })
}

/// Every source matching the filters, sorted by `external_id`.
pub async fn list(
    app: &AppState,
    filters: &SourceFilters,
) -> Result<Vec<SourceView>, ServiceError> {
    let status = filters.status.as_deref().map(parse_status).transpose()?;
    let catalogue = stored::load(app.store.as_ref()).await?;
    Ok(catalogue
        .filter(status, filters.origin.as_deref())
        .into_iter()
        .map(SourceView::of)
        .collect())
}

/// The SPF index: sources with at least one SPF value.
pub async fn spf_index(app: &AppState) -> Result<Vec<SpfIndexItem>, ServiceError> {
    Ok(stored::load(app.store.as_ref()).await?.spf_index())
}

/// The DKIM index: sources with selectors or base domains.
pub async fn dkim_index(app: &AppState) -> Result<Vec<DkimIndexItem>, ServiceError> {
    Ok(stored::load(app.store.as_ref()).await?.dkim_index())
}

/// One source.
pub async fn get(app: &AppState, id: Uuid) -> Result<SourceView, ServiceError> {
    stored::load(app.store.as_ref())
        .await?
        .by_id(id)
        .map(SourceView::of)
        .ok_or_else(|| ServiceError::not_found("source"))
}
