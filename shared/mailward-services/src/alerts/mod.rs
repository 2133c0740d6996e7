//! Alert rules and alerts (an extension beyond SPEC): what a rule watches, where its alerts go,
//! and the alerts themselves. Rules are made by editors and administrators (and read-write
//! keys): they change no DNS record and no configuration of the domains, and the people who
//! work the tasks are the ones who want paging; a member limited to groups makes and sees only
//! rules within their groups. Every member reads. Secrets of destinations (Slack and Teams
//! URLs, PagerDuty routing keys) are sealed at rest and never answered.
//!
//! Evaluation ([`evaluate`]) runs where each condition's data is computed; notifications go out
//! through the outbox: an `alert.*` event carries the rule's destinations, and the publisher
//! queues one delivery per destination (`mailward_workers::alerts`), signed events for webhook
//! endpoints.

mod conditions;
pub mod evaluate;
mod input;
pub mod send;

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::alerts as wire;
use mailward_api_types::{PageParams, alerts::AlertFilters};
use mailward_domain::alerts::{
    Alert, AlertCondition, AlertRule, AlertScope, AlertStatus, DEFAULT_REPEAT_MINUTES, Destination,
    MAX_RULES,
};
use mailward_store::alerts as stored;
use time::OffsetDateTime;
use uuid::Uuid;

pub use evaluate::evaluate;

pub(crate) fn at(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn scope_view(scope: &AlertScope) -> wire::AlertScopeView {
    let (kind, group_ids, domain_ids) = match scope {
        AlertScope::All => ("all", Vec::new(), Vec::new()),
        AlertScope::Groups { group_ids } => ("groups", group_ids.clone(), Vec::new()),
        AlertScope::Domains { domain_ids } => ("domains", Vec::new(), domain_ids.clone()),
    };
    wire::AlertScopeView {
        kind: kind.to_owned(),
        group_ids,
        domain_ids,
    }
}

fn condition_view(c: &AlertCondition) -> wire::AlertConditionView {
    let mut v = wire::AlertConditionView {
        kind: c.name().to_owned(),
        band: None,
        threshold_pct: None,
        window_days: None,
        min_messages: None,
        min_sessions: None,
        within_days: None,
    };
    match c {
        AlertCondition::ScoreBelow { band } => v.band = Some(band.as_str().to_owned()),
        AlertCondition::DmarcPassRateBelow {
            threshold_pct,
            window_days,
            min_messages,
        } => {
            v.threshold_pct = Some(*threshold_pct);
            v.window_days = Some(*window_days);
            v.min_messages = Some(*min_messages);
        }
        AlertCondition::NewUnknownSender {
            min_messages,
            window_days,
        } => {
            v.window_days = Some(*window_days);
            v.min_messages = Some(*min_messages);
        }
        AlertCondition::SenderFailureRateAbove {
            threshold_pct,
            min_messages,
        } => {
            v.threshold_pct = Some(*threshold_pct);
            v.min_messages = Some(*min_messages);
        }
        AlertCondition::TlsFailureRateAbove {
            threshold_pct,
            window_days,
            min_sessions,
        } => {
            v.threshold_pct = Some(*threshold_pct);
            v.window_days = Some(*window_days);
            v.min_sessions = Some(*min_sessions);
        }
        AlertCondition::CertificateExpiring { within_days } => v.within_days = Some(*within_days),
        AlertCondition::MonitoringProblem
        | AlertCondition::HostedRecordError
        | AlertCondition::DnsConflict => {}
    }
    v
}

fn destination_view(d: &Destination) -> wire::AlertDestinationView {
    wire::AlertDestinationView {
        id: d.id,
        kind: d.kind.as_str().to_owned(),
        emails: d.emails.clone(),
        endpoint_id: d.endpoint_id,
        hint: d.hint.clone(),
    }
}

fn rule_view(rule: &AlertRule, open_alerts: u32) -> wire::AlertRule {
    wire::AlertRule {
        id: rule.id,
        object: "alert_rule".to_owned(),
        name: rule.name.clone(),
        enabled: rule.enabled,
        scope: scope_view(&rule.scope),
        condition: condition_view(&rule.condition),
        destinations: rule.destinations.iter().map(destination_view).collect(),
        repeat_interval_minutes: rule.repeat_interval_minutes,
        open_alerts,
        created_at: at(rule.created_at),
        updated_at: at(rule.updated_at),
    }
}

/// An alert in its REST shape (the `alert.*` events carry it too).
pub fn alert_view(app: &AppState, alert: &Alert) -> wire::Alert {
    let base = app.config.base_url.trim_end_matches('/');
    wire::Alert {
        id: alert.id,
        object: "alert".to_owned(),
        rule_id: alert.rule_id,
        rule_name: alert.rule_name.clone(),
        condition: alert.condition.clone(),
        domain_id: alert.domain_id,
        domain: alert.domain.clone(),
        subject: alert.subject.clone(),
        status: match alert.status {
            AlertStatus::Open => "open",
            AlertStatus::Resolved => "resolved",
        }
        .to_owned(),
        severity: alert.severity.as_str().to_owned(),
        summary: alert.summary.clone(),
        details: alert.details.clone(),
        opened_at: at(alert.opened_at),
        updated_at: at(alert.updated_at),
        resolved_at: alert.resolved_at.map(at),
        notified_at: at(alert.notified_at),
        notifications: alert.notifications,
        dedup_key: alert.dedup_key(),
        deliveries: alert
            .deliveries
            .iter()
            .map(|d| wire::AlertDeliveryView {
                destination_id: d.destination_id,
                kind: d.kind.as_str().to_owned(),
                action: d.action.as_str().to_owned(),
                attempt: d.attempt,
                status: if d.succeeded { "succeeded" } else { "failed" }.to_owned(),
                response_status: d.response_status,
                error: d.error.clone(),
                created_at: at(d.at),
                next_retry_at: d.next_retry_at.map(at),
            })
            .collect(),
        links: wire::AlertLinks::new(base, alert.domain_id, alert.rule_id),
    }
}

/// Whether the caller may see (and, with write access, change) a rule: every rule for callers
/// without a group limit; for a member limited to groups, the rules scoped to some of their
/// groups, and the rules listing domains that they made (each domain was checked against their
/// groups then).
fn visible(caller: &Caller, rule: &AlertRule) -> bool {
    match (&caller.groups, &rule.scope) {
        (None, _) => true,
        (Some(_), AlertScope::All) => false,
        (Some(mine), AlertScope::Groups { group_ids }) => {
            group_ids.iter().all(|g| mine.contains(g))
        }
        (Some(_), AlertScope::Domains { .. }) => {
            rule.created_by.is_some() && rule.created_by == caller.actor().1
        }
    }
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<mailward_store::Versioned<AlertRule>, ServiceError> {
    stored::rule(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|r| visible(caller, &r.value))
        .ok_or_else(|| ServiceError::not_found("alert rule"))
}

async fn open_count(app: &AppState, org: Uuid, rule: Uuid) -> Result<u32, ServiceError> {
    Ok(stored::open_for_rule(app.store.as_ref(), org, rule)
        .await?
        .len() as u32)
}

/// Queues the rule's evaluation on its domains, so an alert that already holds opens now rather
/// than at its condition's next computation (which comes anyway: a queue failure is logged).
async fn evaluate_soon(app: &AppState, rule: &AlertRule) {
    if !rule.enabled {
        return;
    }
    let job = mailward_app::jobs::EvaluateAlertRule {
        org_id: rule.org_id,
        rule_id: rule.id,
    };
    if let Err(e) = crate::job::enqueue(app, &job, 0).await {
        tracing::warn!(rule.id = %rule.id, error = %e, "the first evaluation of an alert rule could not be queued");
    }
}

/// `POST /alert-rules`.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    body: wire::CreateAlertRule,
) -> Result<wire::AlertRule, ServiceError> {
    caller.require_write()?;
    let name = input::name(&body.name)?;
    let condition = input::condition(&body.condition)?;
    let scope = input::scope(app, caller, body.scope.as_ref()).await?;
    let repeat = input::repeat(
        body.repeat_interval_minutes
            .unwrap_or(DEFAULT_REPEAT_MINUTES),
    )?;
    let destinations = input::destinations(app, caller, &body.destinations, &[]).await?;
    if stored::rules(app.store.as_ref(), caller.org_id)
        .await?
        .len()
        >= MAX_RULES
    {
        return Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "alert_rule_limit",
            format!("an organization has at most {MAX_RULES} alert rules"),
        ));
    }
    let now = app.clock.now();
    let rule = AlertRule {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        name,
        enabled: body.enabled.unwrap_or(true),
        scope,
        condition,
        destinations,
        repeat_interval_minutes: repeat,
        created_by: caller.actor().1,
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![stored::rule_op(&rule, None)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "alert_rule.created",
            "alert_rule",
            Some(rule.id),
            format!(
                "created the alert rule {} ({})",
                rule.name,
                rule.condition.name()
            ),
        ),
    )?);
    app.store.transact(ops).await?;
    evaluate_soon(app, &rule).await;
    Ok(rule_view(&rule, 0))
}

/// `GET /alert-rules`.
pub async fn list(app: &AppState, caller: &Caller) -> Result<wire::AlertRuleList, ServiceError> {
    let mut data = Vec::new();
    for rule in stored::rules(app.store.as_ref(), caller.org_id).await? {
        if visible(caller, &rule) {
            let open = open_count(app, caller.org_id, rule.id).await?;
            data.push(rule_view(&rule, open));
        }
    }
    Ok(wire::AlertRuleList { data })
}

/// `GET /alert-rules/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::AlertRule, ServiceError> {
    let rule = load(app, caller, id).await?.value;
    let open = open_count(app, caller.org_id, id).await?;
    Ok(rule_view(&rule, open))
}

/// `POST /alert-rules/{id}`: the fields given replace the rule's. A rule turned off, or whose
/// condition or scope changed, has its open alerts resolved (their destinations hear so).
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    body: wire::UpdateAlertRule,
) -> Result<wire::AlertRule, ServiceError> {
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    let mut next = current.value.clone();
    if let Some(name) = &body.name {
        next.name = input::name(name)?;
    }
    if let Some(enabled) = body.enabled {
        next.enabled = enabled;
    }
    if let Some(condition) = &body.condition {
        next.condition = input::condition(condition)?;
    }
    if let Some(scope) = &body.scope {
        next.scope = input::scope(app, caller, Some(scope)).await?;
    }
    if let Some(minutes) = body.repeat_interval_minutes {
        next.repeat_interval_minutes = input::repeat(minutes)?;
    }
    if let Some(destinations) = &body.destinations {
        next.destinations =
            input::destinations(app, caller, destinations, &current.value.destinations).await?;
    }
    next.updated_at = app.clock.now();
    let mut ops = vec![stored::rule_op(&next, Some(current.version))?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "alert_rule.updated",
            "alert_rule",
            Some(id),
            format!("changed the alert rule {}", next.name),
        ),
    )?);
    app.store.transact(ops).await.map_err(|e| {
        if e.is_conflict() {
            ServiceError::conflict("the rule changed meanwhile; read it and try again")
        } else {
            e.into()
        }
    })?;
    let restart = !next.enabled
        || next.condition != current.value.condition
        || next.scope != current.value.scope;
    if restart {
        evaluate::resolve_all(app, &next).await?;
    }
    evaluate_soon(app, &next).await;
    let open = open_count(app, caller.org_id, id).await?;
    Ok(rule_view(&next, open))
}

/// `DELETE /alert-rules/{id}`: its open alerts resolve first (PagerDuty and the chat tools hear
/// so); its alerts stay listed until they expire.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    evaluate::resolve_all(app, &current.value).await?;
    let mut ops = vec![stored::delete_rule_op(caller.org_id, id, current.version)];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "alert_rule.deleted",
            "alert_rule",
            Some(id),
            format!("deleted the alert rule {}", current.value.name),
        ),
    )?);
    app.store.transact(ops).await.map_err(|e| {
        if e.is_conflict() {
            ServiceError::conflict("the rule changed meanwhile; read it and try again")
        } else {
            e.into()
        }
    })?;
    Ok(())
}

/// `GET /alerts`: newest first; a member limited to groups sees the alerts of their groups'
/// domains.
pub async fn list_alerts(
    app: &AppState,
    caller: &Caller,
    filters: &AlertFilters,
    page: PageParams,
) -> Result<wire::AlertList, ServiceError> {
    let status = match filters.status.as_deref() {
        None => None,
        Some("open") => Some(AlertStatus::Open),
        Some("resolved") => Some(AlertStatus::Resolved),
        Some(_) => {
            return Err(ServiceError::invalid(
                "status",
                "status must be open or resolved",
            ));
        }
    };
    let all: Vec<Alert> = stored::alerts(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|a| {
            caller.sees_group(a.group_id)
                && status.is_none_or(|s| a.status == s)
                && filters.domain_id.is_none_or(|d| a.domain_id == d)
                && filters.rule_id.is_none_or(|r| a.rule_id == r)
        })
        .collect();
    let (page_items, page_info) = crate::pagination::paginate(page, all)?;
    Ok(wire::AlertList {
        data: page_items.iter().map(|a| alert_view(app, a)).collect(),
        page_info,
    })
}

/// `POST /alert-rules/{id}/test`: a sample alert to every destination of the rule, now.
pub async fn test(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::AlertTest, ServiceError> {
    caller.require_write()?;
    let rule = load(app, caller, id).await?.value;
    let results = send::test(app, caller, &rule).await?;
    Ok(wire::AlertTest {
        rule_id: id,
        results,
    })
}
