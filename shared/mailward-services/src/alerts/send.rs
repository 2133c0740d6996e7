//! Sending one alert message to one destination: a POST to Slack, Teams or PagerDuty through the
//! outbound policy (the same guarded client, SSRF checks and classification as webhook
//! deliveries), or mail to each address. Used by the delivery job (with retries) and by
//! `POST /alert-rules/{id}/test` (one attempt each, answered at once).

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::outbound::post::{Outcome, post};
use crate::secret_box;
use crate::state::AppState;
use mailward_alerts as messages;
use mailward_api_types::alerts::{Alert, AlertLinks, AlertTestResult};
use mailward_app::jobs::DeliveryJob;
use mailward_domain::alerts::{AlertAction, AlertRule, Destination, DestinationKind};
use mailward_domain::events::types;
use mailward_domain::notifications::Switch;
use mailward_domain::webhooks::EndpointStatus;
use mailward_store::{domains, orgs, webhooks};
use serde_json::json;

/// POSTs the alert to a Slack, Teams or PagerDuty destination.
pub async fn http(
    app: &AppState,
    destination: &Destination,
    action: AlertAction,
    alert: &Alert,
) -> Outcome {
    let secret = match destination
        .sealed_secret
        .as_deref()
        .map(|s| secret_box::open(&app.config.secret_key, s))
    {
        Some(Ok(secret)) => secret,
        _ => {
            return Outcome::Final {
                status: None,
                error: "the destination's secret could not be read".into(),
            };
        }
    };
    let (url, body) = match destination.kind {
        DestinationKind::Slack => (secret, messages::slack(alert, action)),
        DestinationKind::Teams => (secret, messages::teams(alert, action)),
        DestinationKind::Pagerduty => (
            app.config.pagerduty_url.clone(),
            messages::pagerduty(alert, action, &secret, &app.config.base_url),
        ),
        DestinationKind::Email | DestinationKind::WebhookEndpoint => {
            return Outcome::Final {
                status: None,
                error: "not an HTTP destination".into(),
            };
        }
    };
    post(app, &url, &[], body.to_string()).await
}

/// Mails the alert to one address, when the organization's `alerts` switch is on. Returns
/// whether it was sent.
pub async fn email(
    app: &AppState,
    org: uuid::Uuid,
    to: &str,
    action: AlertAction,
    alert: &Alert,
) -> Result<bool, ServiceError> {
    let Some(organization) = orgs::get(app.store.as_ref(), org).await? else {
        return Ok(false);
    };
    if !organization.value.is_serviced() || !organization.value.email_notifications.alerts {
        return Ok(false);
    }
    let unsubscribe =
        crate::unsubscribe::recipient_url(app, org, Switch::Alerts, alert.rule_id, to);
    let mail = messages::email(&organization.value.name, alert, action, to, &unsubscribe);
    app.mailer
        .send(mail)
        .await
        .map_err(ServiceError::unavailable)?;
    Ok(true)
}

/// A sample alert of the rule, on one of its domains (or `example.com` when it has none yet).
async fn sample(app: &AppState, caller: &Caller, rule: &AlertRule) -> Result<Alert, ServiceError> {
    let domain = domains::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .find(|d| rule.scope.covers(d.id, d.group_id) && caller.sees_group(d.group_id));
    let (domain_id, name) = domain.map_or((uuid::Uuid::nil(), "example.com".to_owned()), |d| {
        (d.id, d.url)
    });
    let now = super::at(app.clock.now());
    let base = app.config.base_url.trim_end_matches('/');
    let id = uuid::Uuid::new_v4();
    Ok(Alert {
        id,
        object: "alert".into(),
        rule_id: rule.id,
        rule_name: rule.name.clone(),
        condition: rule.condition.name().to_owned(),
        domain_id,
        domain: name.clone(),
        subject: String::new(),
        status: "open".into(),
        severity: rule.condition.severity().as_str().to_owned(),
        summary: format!(
            "This is a test of the alert rule \"{}\": nothing is wrong with {name}.",
            rule.name
        ),
        details: serde_json::Map::from_iter([("test".to_owned(), json!(true))]),
        opened_at: now.clone(),
        updated_at: now.clone(),
        resolved_at: None,
        notified_at: now,
        notifications: 1,
        dedup_key: format!("mailward-alert-test-{id}"),
        deliveries: Vec::new(),
        links: AlertLinks::new(base, domain_id, rule.id),
    })
}

fn result(d: &Destination, status: &str) -> AlertTestResult {
    AlertTestResult {
        destination_id: d.id,
        kind: d.kind.as_str().to_owned(),
        status: status.to_owned(),
        response_status: None,
        error: None,
    }
}

/// Sends a sample to every destination: HTTP destinations and mail at once (one attempt each,
/// side by side), webhook endpoints through their signed delivery queue.
pub async fn test(
    app: &AppState,
    caller: &Caller,
    rule: &AlertRule,
) -> Result<Vec<AlertTestResult>, ServiceError> {
    let alert = sample(app, caller, rule).await?;
    let sends = rule
        .destinations
        .iter()
        .map(|d| test_one(app, caller, d, &alert));
    futures::future::join_all(sends).await.into_iter().collect()
}

async fn test_one(
    app: &AppState,
    caller: &Caller,
    d: &Destination,
    alert: &Alert,
) -> Result<AlertTestResult, ServiceError> {
    match d.kind {
        DestinationKind::Slack | DestinationKind::Teams | DestinationKind::Pagerduty => {
            let outcome = http(app, d, AlertAction::Test, alert).await;
            let mut r = result(d, "delivered");
            match outcome {
                Outcome::Delivered(code) => r.response_status = Some(code),
                Outcome::Retryable { status, error, .. } | Outcome::Final { status, error } => {
                    r.status = "failed".into();
                    r.response_status = status;
                    r.error = Some(error);
                }
            }
            Ok(r)
        }
        DestinationKind::Email => {
            let mut r = result(d, "delivered");
            for to in &d.emails {
                match email(app, caller.org_id, to, AlertAction::Test, alert).await {
                    Ok(true) => {}
                    Ok(false) => {
                        r.status = "skipped".into();
                        r.error = Some("the alerts notification switch is off".into());
                        break;
                    }
                    Err(e) => {
                        r.status = "failed".into();
                        r.error = Some(e.message().to_string());
                        break;
                    }
                }
            }
            Ok(r)
        }
        DestinationKind::WebhookEndpoint => {
            let Some(endpoint_id) = d.endpoint_id else {
                return Ok(result(d, "failed"));
            };
            let endpoint = webhooks::get(app.store.as_ref(), caller.org_id, endpoint_id).await?;
            let Some(endpoint) = endpoint.filter(|e| e.value.status == EndpointStatus::Enabled)
            else {
                let mut r = result(d, "skipped");
                r.error = Some("the webhook endpoint is gone or not enabled".into());
                return Ok(r);
            };
            let event_id = format!("evt_{}", uuid::Uuid::new_v4().simple());
            let body = json!({
                "id": event_id,
                "type": types::ALERT_OPENED,
                "api_version": endpoint.value.api_version,
                "created": alert.opened_at,
                "data": {"object": alert, "test": true},
            });
            let job = DeliveryJob {
                org_id: caller.org_id,
                endpoint_id,
                event_id,
                event_type: types::ALERT_OPENED.to_owned(),
                body: body.to_string(),
                attempt: 1,
            };
            crate::job::enqueue(app, &job, 0)
                .await
                .map_err(ServiceError::unavailable)?;
            Ok(result(d, "queued"))
        }
    }
}
