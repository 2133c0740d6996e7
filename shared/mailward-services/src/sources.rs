//! The sending-source catalogue (SPEC §2.8, §4.8), read from the store, where the curated
//! catalogue embedded in the build is loaded once per version.
//!
//! `instructions_curation` is null for every customer (the `sources:update` permission is
//! Mailward staff's: `mailward_staff::sources` reads it through [`get_curated`]). An approved
//! proposal is what a source's instructions say for everyone, and its review time is the
//! source's `updated_at`.
//!
//! Organizations' own sources are [`custom`]'s.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::sources::{SourceFilters, SourceView};
use mailward_domain::candidates::DatedSource;
use mailward_domain::sources::{DkimIndexItem, SourceStatus, SpfIndexItem};
use mailward_store::sources as stored;
use time::OffsetDateTime;
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

/// Every source matching the filters, sorted by `external_id`: the catalogue, and with a
/// caller its organization's own sources (`is_custom`, origin `CUSTOM`), which nobody else sees.
pub async fn list(
    app: &AppState,
    caller: Option<&Caller>,
    filters: &SourceFilters,
) -> Result<Vec<SourceView>, ServiceError> {
    let status = filters.status.as_deref().map(parse_status).transpose()?;
    let store = app.store.as_ref();
    let catalogue = stored::load(store).await?;
    let curations = stored::curations(store).await?;
    let dates = promoted_dates(app).await?;
    let mut out: Vec<SourceView> = catalogue
        .filter(status, filters.origin.as_deref())
        .into_iter()
        .map(|s| dated(curated_view(s, &curations, false), &dates))
        .collect();
    if let Some(caller) = caller {
        let own = stored::custom(store, caller.org_id).await?;
        out.extend(
            own.iter()
                .filter(|d| status.is_none_or(|st| d.source.status == st))
                .filter(|d| {
                    filters
                        .origin
                        .as_deref()
                        .is_none_or(|o| d.source.origin == o)
                })
                .map(own_view),
        );
        out.sort_by(|a, b| a.source.external_id.cmp(&b.source.external_id));
    }
    Ok(out)
}

type Dates = std::collections::HashMap<Uuid, (OffsetDateTime, OffsetDateTime)>;

/// The times of promoted sources (the embedded ones carry the catalogue's publication).
async fn promoted_dates(app: &AppState) -> Result<Dates, ServiceError> {
    Ok(stored::promoted(app.store.as_ref())
        .await?
        .into_iter()
        .map(|d| (d.source.id, (d.created_at, d.updated_at)))
        .collect())
}

fn dated(mut view: SourceView, dates: &Dates) -> SourceView {
    if let Some((created, updated)) = dates.get(&view.source.id) {
        view.created_at = *created;
        view.updated_at = (*updated).max(view.updated_at);
    }
    view
}

fn own_view(d: &DatedSource) -> SourceView {
    let mut view = SourceView::of(&d.source);
    view.created_at = d.created_at;
    view.updated_at = d.updated_at;
    view
}

/// One source with its curation, for Mailward staff (`sources:update`).
pub async fn get_curated(app: &AppState, id: Uuid) -> Result<SourceView, ServiceError> {
    let catalogue = stored::load(app.store.as_ref()).await?;
    let curations = stored::curations(app.store.as_ref()).await?;
    let dates = promoted_dates(app).await?;
    catalogue
        .by_id(id)
        .map(|s| dated(curated_view(s, &curations, true), &dates))
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

/// One source: a catalogue source, or one of the caller's organization's own (another
/// organization's is "not found").
pub async fn get(
    app: &AppState,
    caller: Option<&Caller>,
    id: Uuid,
) -> Result<SourceView, ServiceError> {
    let store = app.store.as_ref();
    if let Some(own) = match caller {
        Some(c) => stored::get_custom(store, c.org_id, id).await?,
        None => None,
    } {
        return Ok(own_view(&own.value));
    }
    let curations = stored::curations(store).await?;
    let dates = promoted_dates(app).await?;
    stored::load(store)
        .await?
        .by_id(id)
        .map(|s| dated(curated_view(s, &curations, false), &dates))
        .ok_or_else(|| ServiceError::not_found("source"))
}

pub mod custom;
