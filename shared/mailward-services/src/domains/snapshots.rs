//! DNS snapshots of a domain (SPEC §4.1): listed newest first, and one with its diff from the
//! previous snapshot of the same type.

use super::load;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::snapshots::{SnapshotDiff, SnapshotFilters, SnapshotList, SnapshotView};
use mailward_domain::snapshots::TYPES;
use mailward_store::snapshots;
use uuid::Uuid;

fn check_type(raw: Option<&str>) -> Result<Option<&str>, ServiceError> {
    match raw {
        Some(t) if !TYPES.contains(&t) => Err(ServiceError::invalid(
            "type",
            format!("type must be one of {}", TYPES.join(", ")),
        )),
        other => Ok(other),
    }
}

/// The domain's snapshots (optionally of one type), newest first.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    filters: &SnapshotFilters,
) -> Result<SnapshotList, ServiceError> {
    load(app, caller, id).await?;
    let record_type = check_type(filters.record_type.as_deref())?;
    let mut all = snapshots::list(app.store.as_ref(), caller.org_id, id, record_type).await?;
    all.sort_by(|a, b| {
        b.captured_at
            .cmp(&a.captured_at)
            .then(a.record_type.cmp(&b.record_type))
    });
    let (page, page_info) = paginate(
        PageParams {
            page: filters.page,
            per_page: filters.per_page,
        },
        all,
    )?;
    Ok(SnapshotList {
        data: page.iter().map(SnapshotView::from).collect(),
        page_info,
    })
}

/// Reads the `diff` flag: bare, `true` or `1` turn it on; `false`, `0` or absent turn it off;
/// anything else is refused naming `diff`.
pub fn diff_wanted(raw: Option<&str>) -> Result<bool, ServiceError> {
    match raw {
        None | Some("false" | "0") => Ok(false),
        Some("" | "true" | "1") => Ok(true),
        Some(_) => Err(ServiceError::invalid(
            "diff",
            "diff must be true, false, 1, 0 or given bare",
        )),
    }
}

/// One snapshot, with the values added and removed since the previous snapshot of its type
/// when `with_diff`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    snapshot_id: Uuid,
    with_diff: bool,
) -> Result<SnapshotView, ServiceError> {
    load(app, caller, id).await?;
    let all = snapshots::list(app.store.as_ref(), caller.org_id, id, None).await?;
    let position = all
        .iter()
        .position(|s| s.id == snapshot_id)
        .ok_or_else(|| ServiceError::not_found("snapshot"))?;
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
    Ok(view)
}
