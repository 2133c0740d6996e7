//! Organization exports (an extension beyond SPEC §4.2): an administrator asks, a background
//! job (`mailward_workers::exports`) builds one archive of every resource as JSON and the
//! report data as CSV, and the export then answers a signed download link that expires.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::organizations::OrganizationExport;
use mailward_app::activity::{self, Change};
use mailward_app::jobs::BuildExport;
use mailward_domain::admin::OrgExport;
use mailward_store::exports;
use time::Duration;
use uuid::Uuid;

/// How long a download link works.
pub const LINK_TTL: Duration = Duration::hours(1);

/// How long an archive is kept (then the retention pass, and S3's lifecycle rule, remove it).
pub const ARCHIVE_DAYS: i64 = 7;

async fn view(app: &AppState, export: &OrgExport) -> Result<OrganizationExport, ServiceError> {
    // The archive is deleted ARCHIVE_DAYS after it was built (the retention job, the bucket's
    // lifecycle rule): from then on the export reads `expired`, with no link.
    let built = export.completed_at.unwrap_or(export.created_at);
    let expired =
        export.status == "ready" && app.clock.now() >= built + time::Duration::days(ARCHIVE_DAYS);
    let status = if expired {
        "expired"
    } else {
        export.status.as_str()
    };
    let (download_url, download_expires_at) = match (&export.object_key, &app.objects) {
        (Some(key), Some(objects)) if status == "ready" => {
            let expires = app.clock.now() + LINK_TTL;
            let url = objects
                .presign_download(key, expires)
                .await
                .map_err(ServiceError::unavailable)?;
            (Some(url), Some(expires))
        }
        _ => (None, None),
    };
    Ok(OrganizationExport {
        id: export.id,
        status: status.to_owned(),
        size_bytes: export.size_bytes,
        download_url,
        download_expires_at,
        error: export.error.clone(),
        created_at: export.created_at,
        completed_at: export.completed_at,
    })
}

/// Asks for an export of the caller's organization: a signed-in administrator without a
/// group limit (the archive holds members and keys).
pub async fn request(
    app: &AppState,
    caller: &Caller,
    org: Uuid,
) -> Result<OrganizationExport, ServiceError> {
    let account = caller.require_session_org_admin()?;
    caller.require_own_org(org)?;
    if app.objects.is_none() {
        return Err(ServiceError::unavailable("no object store is configured"));
    }
    let export = OrgExport {
        id: Uuid::new_v4(),
        org_id: org,
        status: "pending".into(),
        requested_by: account,
        object_key: None,
        size_bytes: None,
        error: None,
        created_at: app.clock.now(),
        completed_at: None,
    };
    let mut ops = vec![exports::save_op(&export, None)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "organization.export_requested",
            "organization",
            Some(org),
            "asked for an export of the organization",
        ),
    )?);
    app.store.transact(ops).await?;
    let job = BuildExport {
        org_id: org,
        export_id: export.id,
    };
    crate::job::enqueue(app, &job, 0).await?;
    view(app, &export).await
}

/// One export, with a fresh download link once ready.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    org: Uuid,
    id: Uuid,
) -> Result<OrganizationExport, ServiceError> {
    caller.require_session_org_admin()?;
    caller.require_own_org(org)?;
    let export = exports::get(app.store.as_ref(), org, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("export"))?;
    view(app, &export.value).await
}
