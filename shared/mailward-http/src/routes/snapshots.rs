//! DNS snapshots (SPEC §4.1): what DNS served for each record type of a domain, recorded by the
//! sweep whenever it changed.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{PathId, Query};
use crate::pagination::PageParams;
use crate::repo::snapshots::{self, Snapshot, TYPES};
use crate::routes::domains::load;
use crate::state::AppState;
use crate::views::{ErrorBody, PageInfo};
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A snapshot as the API shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotView {
    pub id: Uuid,
    pub domain_id: Uuid,
    /// spf, dmarc, bimi, mx, dkim, ns, mta_sts or tls_rpt.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The values DNS served (sorted; empty when there were none): TXT values, `preference host`
    /// for MX, name servers for NS, `selector: record` for DKIM.
    pub values: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub captured_at: OffsetDateTime,
    /// With `diff`: the change from the previous snapshot of the same type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<SnapshotDiff>,
}

/// What changed since the previous snapshot of the same type.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotDiff {
    /// The previous snapshot's id; null for the first snapshot of its type.
    pub previous_id: Option<Uuid>,
    /// Values present now and not before.
    pub added: Vec<String>,
    /// Values present before and not now.
    pub removed: Vec<String>,
}

impl From<&Snapshot> for SnapshotView {
    fn from(s: &Snapshot) -> Self {
        Self {
            id: s.id,
            domain_id: s.domain_id,
            record_type: s.record_type.clone(),
            values: s.values.clone(),
            captured_at: s.captured_at,
            diff: None,
        }
    }
}

/// A page of snapshots.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SnapshotList {
    pub data: Vec<SnapshotView>,
    pub page_info: PageInfo,
}

/// `GET /domains/{id}/dns-snapshots` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SnapshotFilters {
    /// spf, dmarc, bimi, mx, dkim, ns, mta_sts or tls_rpt.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub record_type: Option<String>,
    /// 1-based page.
    pub page: Option<u32>,
    /// 1-100.
    pub per_page: Option<u32>,
}

fn check_type(raw: Option<&str>) -> Result<Option<&str>, ApiError> {
    match raw {
        Some(t) if !TYPES.contains(&t) => Err(ApiError::invalid_param(
            "type",
            format!("type must be one of {}", TYPES.join(", ")),
        )),
        other => Ok(other),
    }
}

/// Snapshots of a domain, newest first.
#[utoipa::path(get, path = "/domains/{id}/dns-snapshots", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), SnapshotFilters),
    description = "One snapshot per record type and change, taken by the monitoring sweep; a failed \
lookup records nothing (a timeout never looks like the records vanished). Newest first.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SnapshotList), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_dns_snapshots(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(filters): Query<SnapshotFilters>,
) -> Result<axum::Json<SnapshotList>, ApiError> {
    load(&state, &principal, id).await?;
    let record_type = check_type(filters.record_type.as_deref())?;
    let mut all = snapshots::list(state.store.as_ref(), principal.org_id, id, record_type).await?;
    all.sort_by(|a, b| {
        b.captured_at
            .cmp(&a.captured_at)
            .then(a.record_type.cmp(&b.record_type))
    });
    let (page, page_info) = PageParams {
        page: filters.page,
        per_page: filters.per_page,
    }
    .paginate(all)?;
    Ok(axum::Json(SnapshotList {
        data: page.iter().map(SnapshotView::from).collect(),
        page_info,
    }))
}

/// `GET /domains/{id}/dns-snapshots/{snapshot_id}` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DiffParam {
    /// Include the change from the previous snapshot of the same type: bare `diff`, `true` or
    /// `1` turn it on; `false`, `0` or leaving it out turn it off.
    #[param(value_type = Option<String>)]
    pub diff: Option<String>,
}

impl DiffParam {
    /// Whether the diff was asked for; any other value is 400 naming `diff`.
    fn wanted(&self) -> Result<bool, ApiError> {
        match self.diff.as_deref() {
            None | Some("false" | "0") => Ok(false),
            Some("" | "true" | "1") => Ok(true),
            Some(_) => Err(ApiError::invalid_param(
                "diff",
                "diff must be true, false, 1, 0 or given bare",
            )),
        }
    }
}

/// One snapshot, optionally with its diff.
#[utoipa::path(get, path = "/domains/{id}/dns-snapshots/{snapshot_id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ("snapshot_id" = uuid::Uuid, Path, description = "Snapshot id"), DiffParam),
    description = "With `diff` (bare `?diff`, `diff=true` or `diff=1`; `diff=false` and `diff=0` \
turn it off; any other value answers 400 naming `diff`) the snapshot carries `diff`: the values \
added and removed since the previous snapshot of the same type.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SnapshotView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_dns_snapshot(
    State(state): State<AppState>,
    principal: Principal,
    Path((domain_raw, snapshot_raw)): Path<(String, String)>,
    Query(params): Query<DiffParam>,
) -> Result<axum::Json<SnapshotView>, ApiError> {
    let id = Uuid::parse_str(&domain_raw).map_err(|_| {
        ApiError::invalid_param("id", "the domain id in the path is not a valid UUID")
    })?;
    let snapshot_id = Uuid::parse_str(&snapshot_raw).map_err(|_| {
        ApiError::invalid_param(
            "snapshot_id",
            "the snapshot id in the path is not a valid UUID",
        )
    })?;
    let with_diff = params.wanted()?;
    load(&state, &principal, id).await?;
    let all = snapshots::list(state.store.as_ref(), principal.org_id, id, None).await?;
    let position = all
        .iter()
        .position(|s| s.id == snapshot_id)
        .ok_or_else(|| ApiError::not_found("snapshot"))?;
    let snapshot = &all[position];
    let mut view = SnapshotView::from(snapshot);
    if with_diff {
        let previous = all[..position]
            .iter()
            .rev()
            .find(|s| s.record_type == snapshot.record_type);
        let before: Vec<String> = previous.map(|p| p.values.clone()).unwrap_or_default();
        view.diff = Some(SnapshotDiff {
            previous_id: previous.map(|p| p.id),
            added: snapshot
                .values
                .iter()
                .filter(|v| !before.contains(v))
                .cloned()
                .collect(),
            removed: before
                .iter()
                .filter(|v| !snapshot.values.contains(v))
                .cloned()
                .collect(),
        });
    }
    Ok(axum::Json(view))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_dns_snapshots))
        .routes(utoipa_axum::routes!(get_dns_snapshot))
}
