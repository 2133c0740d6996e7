//! The scheduled report (an extension beyond SPEC): a weekly or monthly PDF by mail for the
//! organization, or for one group with its own branding (an MSP's customer).
//!
//! Settings: administrators (and read-write keys) manage them; the organization's report needs
//! an administrator without a group limit, a group's report one who sees that group. Every
//! member reads the settings of what they see. [`content`] reads the report's figures through
//! the same operations as the API on the day it is sent (the domain summary, the timeseries,
//! the senders, the tasks, the rollout plan), so each number can be read again from the API
//! that day. The PDF and the mail are `mailward_workers::scheduled_reports`'.

mod content;

pub use content::content;

use mailward_api_types::scheduled_reports as wire;
use mailward_app::activity::{self, Change};
use mailward_app::{Caller, ErrorKind, ServiceError, state::AppState};
use mailward_domain::email::EmailAddress;
use mailward_domain::scheduled_reports::{
    Branding, Cadence, MAX_RECIPIENTS, ReportScope, ReportSettings,
};
use mailward_store::scheduled_reports as stored;
use time::OffsetDateTime;
use uuid::Uuid;

fn at(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn view(s: &ReportSettings) -> wire::ReportSettings {
    let (kind, group_id) = match s.scope {
        ReportScope::Organization => ("organization", None),
        ReportScope::Group { group_id } => ("group", Some(group_id)),
    };
    wire::ReportSettings {
        id: s.id,
        object: "report_settings".to_owned(),
        scope: wire::ReportScopeView {
            kind: kind.to_owned(),
            group_id,
        },
        enabled: s.enabled,
        cadence: s.cadence.as_str().to_owned(),
        period: s.cadence.period().to_owned(),
        recipients: s.recipients.clone(),
        branding: wire::BrandingView {
            name: s.branding.name.clone(),
            logo_url: s.branding.logo_url.clone(),
            footer: s.branding.footer.clone(),
        },
        next_send_at: s.enabled.then(|| at(s.next_send_at)),
        last_sent_at: s.last_sent_at.map(at),
        last_period: s.last_period.clone(),
        created_at: at(s.created_at),
        updated_at: at(s.updated_at),
    }
}

pub(crate) fn group_of(scope: ReportScope) -> Option<Uuid> {
    match scope {
        ReportScope::Organization => None,
        ReportScope::Group { group_id } => Some(group_id),
    }
}

/// Whether the caller sees a report: the organization's to callers without a group limit, a
/// group's to whoever sees that group.
fn sees(caller: &Caller, scope: ReportScope) -> bool {
    match scope {
        ReportScope::Organization => !caller.is_group_limited(),
        ReportScope::Group { group_id } => caller.sees_group(Some(group_id)),
    }
}

fn cadence(raw: &str) -> Result<Cadence, ServiceError> {
    match raw {
        "weekly" => Ok(Cadence::Weekly),
        "monthly" => Ok(Cadence::Monthly),
        _ => Err(ServiceError::invalid(
            "cadence",
            "cadence must be weekly or monthly",
        )),
    }
}

fn recipients(list: &[String]) -> Result<Vec<String>, ServiceError> {
    if list.is_empty() || list.len() > MAX_RECIPIENTS {
        return Err(ServiceError::invalid(
            "recipients",
            format!("recipients must list 1 to {MAX_RECIPIENTS} addresses"),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for raw in list {
        let email = EmailAddress::parse(raw).map_err(|_| {
            ServiceError::invalid("recipients", format!("{raw:?} is not an email address"))
        })?;
        if !out.iter().any(|e| e == email.as_str()) {
            out.push(email.as_str().to_owned());
        }
    }
    Ok(out)
}

/// A branding line: trimmed, 1 to 200 characters without control characters; `""` clears.
fn line(param: &'static str, raw: &str) -> Result<Option<String>, ServiceError> {
    let value = raw.trim();
    if value.is_empty() {
        return Ok(None);
    }
    if value.chars().count() > 200 || value.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            param,
            format!("{param} must be at most 200 characters without control characters"),
        ));
    }
    Ok(Some(value.to_owned()))
}

fn branding(
    app: &AppState,
    into: &mut Branding,
    input: &wire::BrandingInput,
) -> Result<(), ServiceError> {
    if let Some(name) = &input.name {
        into.name = line("branding.name", name)?;
    }
    if let Some(footer) = &input.footer {
        into.footer = line("branding.footer", footer)?;
    }
    if let Some(url) = &input.logo_url {
        into.logo_url = match url.trim() {
            "" => None,
            raw => Some(
                mailward_app::outbound::client::check_url(raw, app.config.outbound.allow_loopback)
                    .map_err(|m| {
                        ServiceError::invalid("branding.logo_url", format!("logo_url: {m}"))
                    })?
                    .to_string(),
            ),
        };
    }
    Ok(())
}

async fn scope(
    app: &AppState,
    caller: &Caller,
    input: Option<&wire::ReportScopeInput>,
) -> Result<ReportScope, ServiceError> {
    let Some(input) = input else {
        caller.require_unlimited()?;
        return Ok(ReportScope::Organization);
    };
    match (input.kind.as_str(), input.group_id) {
        ("organization", None) => {
            caller.require_unlimited()?;
            Ok(ReportScope::Organization)
        }
        ("group", Some(group_id)) => {
            let exists = mailward_store::groups::get(app.store.as_ref(), caller.org_id, group_id)
                .await?
                .is_some();
            if !exists || !caller.sees_group(Some(group_id)) {
                return Err(ServiceError::invalid(
                    "scope.group_id",
                    format!("no group {group_id} in this organization"),
                ));
            }
            Ok(ReportScope::Group { group_id })
        }
        ("group", None) => Err(ServiceError::invalid(
            "scope.group_id",
            "a group report needs group_id",
        )),
        ("organization", Some(_)) => Err(ServiceError::invalid(
            "scope.group_id",
            "the organization's report takes no group_id",
        )),
        _ => Err(ServiceError::invalid(
            "scope.type",
            "scope.type must be organization or group",
        )),
    }
}

/// `POST /report-settings`: one report per organization and one per group.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    body: wire::CreateReportSettings,
) -> Result<wire::ReportSettings, ServiceError> {
    caller.require_admin()?;
    let scope = scope(app, caller, body.scope.as_ref()).await?;
    let cadence = cadence(&body.cadence)?;
    let recipients = recipients(&body.recipients)?;
    let mut brand = Branding::default();
    if let Some(input) = &body.branding {
        branding(app, &mut brand, input)?;
    }
    let existing = stored::list(app.store.as_ref(), caller.org_id).await?;
    if existing.iter().any(|s| s.scope == scope) {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "report_settings_exist",
            "this organization or group has its report already: change that one",
        ));
    }
    let now = app.clock.now();
    let settings = ReportSettings {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        scope,
        enabled: body.enabled.unwrap_or(true),
        cadence,
        recipients,
        branding: brand,
        next_send_at: cadence.next_send(now),
        last_period: None,
        last_sent_at: None,
        last_scores: Default::default(),
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![stored::put_op(&settings, None)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "report_settings.created",
            "report_settings",
            Some(settings.id),
            format!("scheduled a {} report", cadence.as_str()),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(view(&settings))
}

/// `GET /report-settings`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
) -> Result<wire::ReportSettingsList, ServiceError> {
    Ok(wire::ReportSettingsList {
        data: stored::list(app.store.as_ref(), caller.org_id)
            .await?
            .iter()
            .filter(|s| sees(caller, s.scope))
            .map(view)
            .collect(),
    })
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<mailward_store::Versioned<ReportSettings>, ServiceError> {
    stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|s| sees(caller, s.value.scope))
        .ok_or_else(|| ServiceError::not_found("report settings"))
}

/// `GET /report-settings/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::ReportSettings, ServiceError> {
    Ok(view(&load(app, caller, id).await?.value))
}

/// `POST /report-settings/{id}`.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    body: wire::UpdateReportSettings,
) -> Result<wire::ReportSettings, ServiceError> {
    caller.require_admin()?;
    let current = load(app, caller, id).await?;
    let mut next = current.value.clone();
    let now = app.clock.now();
    if let Some(raw) = &body.cadence {
        next.cadence = cadence(raw)?;
        next.next_send_at = next.cadence.next_send(now);
    }
    if let Some(list) = &body.recipients {
        next.recipients = recipients(list)?;
    }
    if let Some(input) = &body.branding {
        branding(app, &mut next.branding, input)?;
    }
    if let Some(enabled) = body.enabled {
        if enabled && !next.enabled {
            next.next_send_at = next.cadence.next_send(now);
        }
        next.enabled = enabled;
    }
    next.updated_at = now;
    let mut ops = vec![stored::put_op(&next, Some(current.version))?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "report_settings.updated",
            "report_settings",
            Some(id),
            "changed the scheduled report",
        ),
    )?);
    app.store.transact(ops).await.map_err(|e| {
        if e.is_conflict() {
            ServiceError::conflict("the report settings changed meanwhile; read them and try again")
        } else {
            e.into()
        }
    })?;
    Ok(view(&next))
}

/// `DELETE /report-settings/{id}`.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_admin()?;
    let current = load(app, caller, id).await?;
    let mut ops = vec![stored::delete_op(caller.org_id, id, current.version)];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "report_settings.deleted",
            "report_settings",
            Some(id),
            "removed the scheduled report",
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(())
}

/// `POST /report-settings/{id}/send`: builds and mails the report now, for the window of today,
/// beside the schedule (which it does not move).
pub async fn send_now(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::ReportSendQueued, ServiceError> {
    caller.require_admin()?;
    let settings = load(app, caller, id).await?.value;
    let job = mailward_app::jobs::SendScheduledReport {
        org_id: caller.org_id,
        settings_id: settings.id,
        now: true,
    };
    mailward_app::job::enqueue(app, &job, 0)
        .await
        .map_err(ServiceError::unavailable)?;
    Ok(wire::ReportSendQueued {
        report_settings_id: id,
        status: "queued".to_owned(),
    })
}
