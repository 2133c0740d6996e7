//! Builds an organization export (`mailward_services::exports`): one zip archive holding every
//! resource of the organization as the API answers it (`<resource>.json`: the list's `data`,
//! every page) and its report data as CSV (`reports/daily.csv`, `reports/sources.csv`, the
//! last 365 days as `GET /report-data/export` gives them), read with the requesting
//! administrator's rights at build time. Kept under `exports/<day>/<org>/<id>.zip` for
//! [`mailward_services::exports::ARCHIVE_DAYS`].

use futures::StreamExt as _;
use mailward_api_types::ApiVersion;
use mailward_api_types::common::PageParams;
pub use mailward_app::jobs::BuildExport;
use mailward_domain::admin::OrgExport;
use mailward_domain::model::Role;
use mailward_services::caller::{Caller, Credential};
use mailward_services::error::ServiceError;
use mailward_services::state::AppState;
use mailward_store::{accounts, exports};
use serde_json::Value;
use std::io::Write as _;

/// Runs the job: builds the archive of a pending export and records the outcome.
pub async fn build(state: &AppState, job: BuildExport) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(current) = exports::get(store, job.org_id, job.export_id).await? else {
        return Ok(());
    };
    if current.value.status != "pending" {
        return Ok(());
    }
    let mut export = current.value.clone();
    match archive(state, &export).await {
        Ok((key, size)) => {
            export.status = "ready".into();
            export.object_key = Some(key);
            export.size_bytes = Some(size);
        }
        // A store or object-store outage is retried by the queue; anything else is final.
        Err(e) if e.kind() == mailward_services::ErrorKind::Unavailable => return Err(e.into()),
        Err(e) => {
            export.status = "failed".into();
            export.error = Some(e.to_string());
        }
    }
    export.completed_at = Some(state.clock.now());
    exports::save(store, &export, current.version).await?;
    tracing::info!(org.id = %export.org_id, export.id = %export.id, status = %export.status, "organization export built");
    Ok(())
}

/// The requesting administrator, if they still are one.
async fn reader(state: &AppState, export: &OrgExport) -> Result<Caller, ServiceError> {
    let membership = accounts::membership(state.store.as_ref(), export.org_id, export.requested_by)
        .await?
        .filter(|m| m.roles.contains(&Role::Admin) && m.group_limit().is_none())
        .ok_or_else(|| ServiceError::forbidden("the administrator who asked is no longer one"))?;
    Ok(Caller {
        org_id: export.org_id,
        credential: Credential::Session {
            account_id: membership.account_id,
            role: Role::Admin,
            mfa: true,
            session_id: None,
        },
        version: ApiVersion::LATEST,
        groups: None,
    })
}

/// Every page of a list as JSON values: `list(page)` answers `(data, has_more)`.
macro_rules! every_page {
    ($page:ident => $list:expr) => {{
        let mut all: Vec<Value> = Vec::new();
        for $page in 1u32.. {
            let list = $list;
            for item in list.data {
                all.push(serde_json::to_value(item).map_err(ServiceError::internal)?);
            }
            if !list.page_info.has_more {
                break;
            }
        }
        all
    }};
}

/// The organization's DNS and mailbox connections as their routes show them: never a
/// credential.
async fn connections(
    app: &AppState,
    caller: &Caller,
) -> Result<Vec<(&'static str, Value)>, ServiceError> {
    let dns = mailward_services::dns_connections::list(app, caller).await?;
    let mailboxes = mailward_services::mailboxes::list(app, caller).await?;
    // What the organization supplied or kept for the sender requirements of each domain (spam
    // rates, header-analysis verdicts, each provider's report figures).
    let requirements =
        mailward_store::sender_requirements::list(app.store.as_ref(), caller.org_id).await?;
    // Alert rules as their route shows them (never a destination's URL or routing key), and
    // every alert still kept.
    let rules = mailward_services::alerts::list(app, caller).await?;
    let alerts: Vec<_> = mailward_store::alerts::alerts(app.store.as_ref(), caller.org_id)
        .await?
        .iter()
        .map(|a| mailward_services::alerts::alert_view(app, a))
        .collect();
    Ok(vec![
        ("dns_connections", json_of(dns.data)?),
        ("mailbox_connections", json_of(mailboxes.data)?),
        ("sender_requirements", json_of(requirements)?),
        ("alert_rules", json_of(rules.data)?),
        ("alerts", json_of(alerts)?),
    ])
}

/// What the archive holds: file names and bytes.
async fn contents(app: &AppState, caller: &Caller) -> Result<Vec<(String, Vec<u8>)>, ServiceError> {
    use mailward_services::{
        api_keys, domains, groups, invitations, members, organizations, support, tasks,
    };
    let org = caller.org_id;
    let per = |page: u32| PageParams {
        page: Some(page),
        per_page: Some(100),
    };
    let mut json: Vec<(&str, Value)> = vec![(
        "organization",
        serde_json::to_value(organizations::get(app, caller, org).await?)
            .map_err(ServiceError::internal)?,
    )];
    let domains = every_page!(page => domains::list(app, caller, &mailward_api_types::domains::ListDomainsParams {
        page: Some(page), per_page: Some(100), ..Default::default() }).await?);
    json.push(("domains", Value::Array(domains)));
    let groups = every_page!(page => groups::list(app, caller, &mailward_api_types::admin::ListGroupsParams {
        page: Some(page), per_page: Some(100), ..Default::default() }).await?);
    json.push(("groups", Value::Array(groups)));
    json.push(("members", json_of(members::list(app, caller).await?)?));
    json.push((
        "invitations",
        json_of(invitations::list(app, caller).await?)?,
    ));
    let keys = every_page!(page => api_keys::list(app, caller, per(page)).await?);
    json.push(("api_keys", Value::Array(keys)));
    let hooks = every_page!(page => mailward_services::webhooks::endpoints::list(app, caller, per(page)).await?);
    json.push(("webhook_endpoints", Value::Array(hooks)));
    let tasks = every_page!(page => tasks::list(app, caller, &mailward_api_types::tasks::ListTasksParams {
        statuses: Some("open,snoozed,canceled,dismissed,pending,done".into()),
        page: Some(page), per_page: Some(100), ..Default::default() }).await?);
    json.push(("tasks", Value::Array(tasks)));
    let log = every_page!(page => mailward_services::activity::list(app, caller, &mailward_api_types::activity::ActivityParams {
        page: Some(page), per_page: Some(100), ..Default::default() }).await?);
    json.push(("activity_log", Value::Array(log)));
    let tickets = every_page!(page => support::list(app, caller, &mailward_api_types::support::ListTicketsParams {
        page: Some(page), per_page: Some(100), ..Default::default() }).await?);
    let mut full = Vec::with_capacity(tickets.len());
    for ticket in &tickets {
        let id = ticket["id"]
            .as_str()
            .and_then(|i| i.parse().ok())
            .unwrap_or_default();
        full.push(json_of(support::get(app, caller, id).await?)?);
    }
    json.push(("support_tickets", Value::Array(full)));
    let own = mailward_services::sources::list(
        app,
        Some(caller),
        &mailward_api_types::sources::SourceFilters {
            status: None,
            origin: Some(mailward_domain::candidates::CUSTOM_ORIGIN.to_owned()),
        },
    )
    .await?;
    json.push(("custom_sources", json_of(own)?));
    json.extend(connections(app, caller).await?);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, value) in json {
        let bytes = serde_json::to_vec_pretty(&value).map_err(ServiceError::internal)?;
        files.push((format!("{name}.json"), bytes));
    }
    for data in ["daily", "sources"] {
        files.push((
            format!("reports/{data}.csv"),
            report_csv(app, caller, data).await?,
        ));
    }
    Ok(files)
}

/// The organization's report data of the last 365 days as CSV.
async fn report_csv(app: &AppState, caller: &Caller, data: &str) -> Result<Vec<u8>, ServiceError> {
    let params = mailward_services::reports::export::ExportParams {
        format: Some("csv".into()),
        period: Some("last_365_days".into()),
        data: Some(data.into()),
    };
    let export =
        mailward_services::reports::export::organization_export(app, caller, &params).await?;
    let mut body = export.body;
    let mut out = Vec::new();
    while let Some(piece) = body.next().await {
        out.extend_from_slice(piece?.as_bytes());
    }
    Ok(out)
}

/// Builds and stores the archive: its key and size.
async fn archive(state: &AppState, export: &OrgExport) -> Result<(String, u64), ServiceError> {
    let caller = reader(state, export).await?;
    let files = contents(state, &caller).await?;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(format!("mailward-export/{name}"), options)
            .map_err(ServiceError::internal)?;
        zip.write_all(&bytes).map_err(ServiceError::internal)?;
    }
    let bytes = zip.finish().map_err(ServiceError::internal)?.into_inner();
    let day = mailward_domain::reports::day_string(export.created_at.date());
    let key = format!("exports/{day}/{}/{}.zip", export.org_id, export.id);
    let objects = state
        .objects
        .as_ref()
        .ok_or_else(|| ServiceError::unavailable("no object store is configured"))?;
    let size = bytes.len() as u64;
    objects
        .put(&key, bytes.into(), "application/zip")
        .await
        .map_err(ServiceError::unavailable)?;
    Ok((key, size))
}

fn json_of<T: serde::Serialize>(value: T) -> Result<Value, ServiceError> {
    serde_json::to_value(value).map_err(ServiceError::internal)
}
