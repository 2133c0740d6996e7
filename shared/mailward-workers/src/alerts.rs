//! Alert notifications: the publisher turns each `alert.*` event into one delivery job per
//! destination of its route ([`fan_out`]); a job POSTs to Slack, Teams or PagerDuty (retried
//! with the webhook backoff, each attempt recorded on the alert) or mails each address once per
//! event. A failing destination never holds the others: each has its own job.

use mailward_app::jobs::{AlertDeliveryJob, EvaluateAlertRule};
use mailward_domain::alerts::{AlertDelivery, DestinationKind};
use mailward_services::alerts::send;
use mailward_services::outbound::post::{Outcome, backoff_secs, jitter};
use mailward_services::state::AppState;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{alerts as stored, notifications};

/// Attempts per notification (first included), as for webhook deliveries.
pub const MAX_ATTEMPTS: u32 = crate::webhooks::delivery::MAX_ATTEMPTS;

/// Queues one delivery per destination of an alert event's route that is not a webhook
/// endpoint (those receive the signed event itself, from the publisher).
pub async fn fan_out(state: &AppState, event: &OutboxEvent) -> anyhow::Result<usize> {
    let Some(route) = &event.route else {
        return Ok(0);
    };
    let mut queued = 0;
    for destination in &route.destinations {
        if destination.kind == DestinationKind::WebhookEndpoint {
            continue;
        }
        let job = AlertDeliveryJob {
            org_id: event.org_id,
            alert_id: route.alert_id,
            event_id: event.id.clone(),
            action: route.action,
            destination: destination.clone(),
            alert: event.object.clone(),
            attempt: 1,
        };
        mailward_services::job::enqueue(state, &job, 0).await?;
        queued += 1;
    }
    Ok(queued)
}

/// Runs one notification.
pub async fn deliver(state: &AppState, job: AlertDeliveryJob) -> anyhow::Result<()> {
    let alert: mailward_api_types::alerts::Alert = serde_json::from_value(job.alert.clone())?;
    if job.destination.kind == DestinationKind::Email {
        return mail(state, &job, &alert).await;
    }
    let started = std::time::Instant::now();
    let outcome = send::http(state, &job.destination, job.action, &alert).await;
    let now = state.clock.now();
    let (succeeded, status, error, retry) = match outcome {
        Outcome::Delivered(code) => (true, Some(code), None, None),
        Outcome::Retryable {
            status,
            error,
            retry_after,
        } => {
            let retry = (job.attempt < MAX_ATTEMPTS)
                .then(|| backoff_secs(job.attempt + 1, retry_after, jitter()));
            (false, status, Some(error), retry)
        }
        Outcome::Final { status, error } => (false, status, Some(error), None),
    };
    tracing::info!(alert.id = %job.alert_id, destination = job.destination.kind.as_str(), attempt = job.attempt, succeeded, http.status = ?status, elapsed_ms = started.elapsed().as_millis() as u64, "alert notification attempted");
    if let Some(delay) = retry {
        let next = AlertDeliveryJob {
            attempt: job.attempt + 1,
            ..job.clone()
        };
        mailward_services::job::enqueue(state, &next, delay).await?;
    }
    record(
        state,
        &job,
        AlertDelivery {
            destination_id: job.destination.id,
            kind: job.destination.kind,
            action: job.action,
            attempt: job.attempt,
            succeeded,
            response_status: status,
            error,
            at: now,
            next_retry_at: retry.map(|s| now + time::Duration::seconds(s as i64)),
        },
    )
    .await
}

/// Mails each address once per event (a job run twice sends once).
async fn mail(
    state: &AppState,
    job: &AlertDeliveryJob,
    alert: &mailward_api_types::alerts::Alert,
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let occurrence = format!("{}:{}", job.event_id, job.destination.id);
    for to in &job.destination.emails {
        if !notifications::claim(store, job.org_id, &occurrence, to, state.clock.unix()).await? {
            continue;
        }
        match send::email(state, job.org_id, to, job.action, alert).await {
            Ok(true) => tracing::info!(alert.id = %job.alert_id, "alert mail sent"),
            Ok(false) => {
                tracing::info!(org.id = %job.org_id, "alerts notification switched off; not sent");
                return Ok(());
            }
            Err(e) => {
                notifications::release(store, job.org_id, &occurrence, to).await?;
                return Err(anyhow::anyhow!("{e}"));
            }
        }
    }
    Ok(())
}

/// Records an attempt on the alert (optimistic, re-read on conflict); a deleted alert is left.
async fn record(
    state: &AppState,
    job: &AlertDeliveryJob,
    delivery: AlertDelivery,
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    for _ in 0..16 {
        let Some(current) = stored::alert(store, job.org_id, job.alert_id).await? else {
            return Ok(());
        };
        let mut alert = current.value;
        alert.record(delivery.clone());
        match store
            .transact(vec![stored::alert_op(&alert, Some(current.version))?])
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    tracing::warn!(alert.id = %job.alert_id, "the alert kept changing; a delivery attempt is not listed");
    Ok(())
}

/// Evaluates a rule on its domains (made or changed).
pub async fn evaluate_rule(state: &AppState, job: EvaluateAlertRule) -> anyhow::Result<()> {
    let Some(rule) = stored::rule(state.store.as_ref(), job.org_id, job.rule_id).await? else {
        return Ok(());
    };
    mailward_services::alerts::evaluate::evaluate_rule_now(state, &rule.value).await?;
    Ok(())
}
