//! Evaluation: the rules of an organization whose condition is computed at `trigger`, judged on
//! one domain, and each alert opened, kept (repeated after the rule's interval) or resolved.
//! Each change commits with its `alert.*` outbox event (and its activity entry), so a
//! notification is never lost and never sent for a change that did not commit. An alert opens
//! through a marker created with `NotExists`: two evaluations racing open it once.

use super::{alert_view, conditions};
use crate::activity::{self, Change};
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::alerts::{
    Alert, AlertAction, AlertRoute, AlertRule, AlertStatus, Finding, Transition, Trigger, diff,
};
use mailward_domain::domain::Domain;
use mailward_domain::events::types;
use mailward_domain::store::WriteOp;
use mailward_store::alerts::{self as stored, OpenAlert};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, domains};
use uuid::Uuid;

/// Evaluates the organization's enabled rules computed at `trigger` on one domain. Cheap when
/// the organization has no such rule (one query).
pub async fn evaluate(
    app: &AppState,
    org: Uuid,
    domain_id: Uuid,
    trigger: Trigger,
) -> Result<(), ServiceError> {
    let rules: Vec<AlertRule> = stored::rules(app.store.as_ref(), org)
        .await?
        .into_iter()
        .filter(|r| r.enabled && r.condition.evaluated_at(trigger))
        .collect();
    if rules.is_empty() {
        return Ok(());
    }
    let Some(domain) = domains::get(app.store.as_ref(), org, domain_id).await? else {
        return Ok(());
    };
    for rule in &rules {
        let findings = if rule.scope.covers(domain.value.id, domain.value.group_id) {
            conditions::findings(app, &domain.value, &rule.condition).await?
        } else {
            Vec::new()
        };
        apply(app, rule, &domain.value, findings).await?;
    }
    Ok(())
}

/// Evaluates one rule on every domain of the organization at once (after it is made or
/// changed, so an alert does not wait for the next pass), for each trigger it is computed at.
pub async fn evaluate_rule_now(app: &AppState, rule: &AlertRule) -> Result<(), ServiceError> {
    if !rule.enabled {
        return Ok(());
    }
    for domain in domains::list(app.store.as_ref(), rule.org_id).await? {
        if !rule.scope.covers(domain.id, domain.group_id) {
            continue;
        }
        let findings = conditions::findings(app, &domain, &rule.condition).await?;
        apply(app, rule, &domain, findings).await?;
    }
    Ok(())
}

/// Resolves every open alert of a rule (turned off, changed or deleted).
pub async fn resolve_all(app: &AppState, rule: &AlertRule) -> Result<(), ServiceError> {
    for open in stored::open_for_rule(app.store.as_ref(), rule.org_id, rule.id).await? {
        resolve(app, rule, &open).await?;
    }
    Ok(())
}

/// Resolves the open alerts of a deleted domain, on every rule.
pub async fn domain_gone(app: &AppState, org: Uuid, domain_id: Uuid) -> Result<(), ServiceError> {
    for rule in stored::rules(app.store.as_ref(), org).await? {
        for open in stored::open_for(app.store.as_ref(), org, rule.id, domain_id).await? {
            resolve(app, &rule, &open).await?;
        }
    }
    Ok(())
}

async fn apply(
    app: &AppState,
    rule: &AlertRule,
    domain: &Domain,
    findings: Vec<Finding>,
) -> Result<(), ServiceError> {
    let open = stored::open_for(app.store.as_ref(), rule.org_id, rule.id, domain.id).await?;
    if findings.is_empty() && open.is_empty() {
        return Ok(());
    }
    let now = app.clock.now();
    let marks: Vec<_> = open
        .iter()
        .map(|o| {
            (
                o.value.alert_id,
                o.value.subject.clone(),
                o.value.notified_at,
            )
        })
        .collect();
    for transition in diff(findings, &marks, rule.repeat_interval_minutes, now) {
        match transition {
            Transition::Open(finding) => open_alert(app, rule, domain, finding).await?,
            Transition::Keep {
                alert,
                finding,
                notify,
            } => {
                if let Some(mark) = open.iter().find(|o| o.value.alert_id == alert) {
                    keep(app, rule, mark, finding, notify).await?;
                }
            }
            Transition::Resolve(alert) => {
                if let Some(mark) = open.iter().find(|o| o.value.alert_id == alert) {
                    resolve(app, rule, mark).await?;
                }
            }
        }
    }
    Ok(())
}

/// The outbox event of an alert change, routed to the rule's destinations.
fn event(
    app: &AppState,
    rule: &AlertRule,
    alert: &Alert,
    action: AlertAction,
) -> Result<WriteOp, ServiceError> {
    let name = match action {
        AlertAction::Opened => types::ALERT_OPENED,
        AlertAction::Resolved => types::ALERT_RESOLVED,
        AlertAction::Updated | AlertAction::Test => types::ALERT_UPDATED,
    };
    let mut event = OutboxEvent::new(
        name,
        alert.org_id,
        app.clock.now(),
        serde_json::to_value(alert_view(app, alert))?,
        None,
    );
    event.route = Some(AlertRoute {
        rule_id: rule.id,
        alert_id: alert.id,
        action,
        destinations: rule.destinations.clone(),
    });
    Ok(event.write_op()?)
}

fn new_id(app: &AppState) -> Uuid {
    let now = app.clock.now();
    let ts = uuid::Timestamp::from_unix(
        uuid::NoContext,
        u64::try_from(now.unix_timestamp()).unwrap_or(0),
        now.nanosecond(),
    );
    Uuid::new_v7(ts)
}

async fn open_alert(
    app: &AppState,
    rule: &AlertRule,
    domain: &Domain,
    finding: Finding,
) -> Result<(), ServiceError> {
    let now = app.clock.now();
    let alert = Alert {
        id: new_id(app),
        org_id: rule.org_id,
        rule_id: rule.id,
        rule_name: rule.name.clone(),
        condition: rule.condition.name().to_owned(),
        domain_id: domain.id,
        domain: domain.url.clone(),
        group_id: domain.group_id,
        subject: finding.subject.clone(),
        status: AlertStatus::Open,
        severity: rule.condition.severity(),
        summary: finding.summary,
        details: finding.details,
        opened_at: now,
        updated_at: now,
        resolved_at: None,
        notified_at: now,
        notifications: 1,
        deliveries: Vec::new(),
    };
    let mark = OpenAlert {
        alert_id: alert.id,
        rule_id: rule.id,
        domain_id: domain.id,
        subject: finding.subject,
        notified_at: now,
    };
    let mut ops = vec![
        stored::open_op(rule.org_id, &mark, None)?,
        stored::alert_op(&alert, None)?,
        event(app, rule, &alert, AlertAction::Opened)?,
    ];
    ops.extend(activity::system_ops(
        rule.org_id,
        Change::new(
            "alert.opened",
            "alert",
            Some(alert.id),
            format!("alert opened ({}): {}", rule.name, alert.summary),
        ),
        now,
    )?);
    match app.store.transact(ops).await {
        Ok(()) => {
            tracing::info!(org.id = %rule.org_id, alert.id = %alert.id, rule.id = %rule.id, domain = %domain.url, "alert opened");
            Ok(())
        }
        // Another evaluation opened it first: one alert, one notification.
        Err(e) if e.is_conflict() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

async fn load_alert(
    app: &AppState,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Alert>>, ServiceError> {
    Ok(stored::alert(app.store.as_ref(), org, id).await?)
}

/// Conflicting writers of an alert (its deliveries are recorded on it) are outlasted by
/// re-reading it this many times.
const ATTEMPTS: usize = 8;

async fn keep(
    app: &AppState,
    rule: &AlertRule,
    mark: &Versioned<OpenAlert>,
    finding: Finding,
    notify: bool,
) -> Result<(), ServiceError> {
    for _ in 0..ATTEMPTS {
        let Some(current) = load_alert(app, rule.org_id, mark.value.alert_id).await? else {
            return Ok(());
        };
        let mut alert = current.value.clone();
        if alert.summary == finding.summary && alert.details == finding.details && !notify {
            return Ok(());
        }
        let now = app.clock.now();
        alert.summary = finding.summary.clone();
        alert.details = finding.details.clone();
        alert.rule_name = rule.name.clone();
        alert.updated_at = now;
        let mut ops = Vec::new();
        if notify {
            alert.notified_at = now;
            alert.notifications += 1;
            let mut next = mark.value.clone();
            next.notified_at = now;
            ops.push(stored::open_op(rule.org_id, &next, Some(mark.version))?);
            ops.push(event(app, rule, &alert, AlertAction::Updated)?);
        }
        ops.push(stored::alert_op(&alert, Some(current.version))?);
        match app.store.transact(ops).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    // Still changing: the next evaluation sees it again.
    Ok(())
}

async fn resolve(
    app: &AppState,
    rule: &AlertRule,
    mark: &Versioned<OpenAlert>,
) -> Result<(), ServiceError> {
    for _ in 0..ATTEMPTS {
        let now = app.clock.now();
        let Some(current) = load_alert(app, rule.org_id, mark.value.alert_id).await? else {
            let close = stored::close_op(rule.org_id, &mark.value, mark.version);
            if let Err(e) = app.store.transact(vec![close]).await {
                tracing::warn!(org.id = %rule.org_id, error = %e, "an open-alert marker without its alert could not be removed");
            }
            return Ok(());
        };
        let mut alert = current.value.clone();
        alert.status = AlertStatus::Resolved;
        alert.resolved_at = Some(now);
        alert.updated_at = now;
        alert.notified_at = now;
        alert.notifications += 1;
        let mut ops = vec![
            stored::close_op(rule.org_id, &mark.value, mark.version),
            stored::alert_op(&alert, Some(current.version))?,
            event(app, rule, &alert, AlertAction::Resolved)?,
        ];
        ops.extend(activity::system_ops(
            rule.org_id,
            Change::new(
                "alert.resolved",
                "alert",
                Some(alert.id),
                format!("alert resolved ({}): {}", rule.name, alert.domain),
            ),
            now,
        )?);
        match app.store.transact(ops).await {
            Ok(()) => {
                tracing::info!(org.id = %rule.org_id, alert.id = %alert.id, "alert resolved");
                return Ok(());
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the alert kept changing while it was resolved",
    ))
}
