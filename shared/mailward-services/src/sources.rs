//! The sending-source catalogue (SPEC §2.8, §4.8), read from the store, where the curated
//! catalogue embedded in the build is loaded once per version.
//!
//! `instructions_curation` is null for every customer (the `sources:update` permission is
//! Mailward staff's: `mailward_staff::sources` reads it through [`get_curated`]). An approved
//! proposal is what a source's instructions say for everyone, and its review time is the
//! source's `updated_at`.

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

type Curations = Vec<(String, String, mailward_domain::sources::Curation)>;

/// The view of `source` with its approved instructions, and its curation when `staff`.
fn curated_view(
    source: &mailward_domain::sources::Source,
    curations: &Curations,
    staff: bool,
) -> SourceView {
    use mailward_domain::sources::CurationStatus;
    let mut view = SourceView::of(source);
    let mut shown = serde_json::Map::new();
    for (_, kind, curation) in curations
        .iter()
        .filter(|(e, _, _)| *e == source.external_id)
    {
        if curation.status == CurationStatus::Approved {
            let instructions = Some(curation.proposal.clone());
            match kind.as_str() {
                "dkim" => view.source.dkim_instructions = instructions,
                _ => view.source.spf_instructions = instructions,
            }
            let reviewed = curation.reviewed_at.as_deref().and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            });
            if let Some(at) = reviewed.filter(|at| *at > view.updated_at) {
                view.updated_at = at;
            }
        }
        shown.insert(
            kind.clone(),
            serde_json::to_value(curation).unwrap_or_default(),
        );
    }
    if staff {
        view.instructions_curation = Some(serde_json::Value::Object(shown));
    }
    view
}

/// Every source matching the filters, sorted by `external_id`.
pub async fn list(
    app: &AppState,
    filters: &SourceFilters,
) -> Result<Vec<SourceView>, ServiceError> {
    let status = filters.status.as_deref().map(parse_status).transpose()?;
    let catalogue = stored::load(app.store.as_ref()).await?;
    let curations = stored::curations(app.store.as_ref()).await?;
    Ok(catalogue
        .filter(status, filters.origin.as_deref())
        .into_iter()
        .map(|s| curated_view(s, &curations, false))
        .collect())
}

/// One source with its curation, for Mailward staff (`sources:update`).
pub async fn get_curated(app: &AppState, id: Uuid) -> Result<SourceView, ServiceError> {
    let catalogue = stored::load(app.store.as_ref()).await?;
    let curations = stored::curations(app.store.as_ref()).await?;
    catalogue
        .by_id(id)
        .map(|s| curated_view(s, &curations, true))
        .ok_or_else(|| ServiceError::not_found("source"))
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
    let curations = stored::curations(app.store.as_ref()).await?;
    stored::load(app.store.as_ref())
        .await?
        .by_id(id)
        .map(|s| curated_view(s, &curations, false))
        .ok_or_else(|| ServiceError::not_found("source"))
}
