//! The delivery job: one POST of one event to one endpoint, recorded, retried with backoff.

use super::signature::{SIGNATURE_HEADER, sign};
pub use mailward_app::jobs::{DELIVER_WEBHOOK, DeliveryJob};
use mailward_domain::webhooks::{
    AUTO_DISABLE_AFTER, AttemptStatus, DeliveryAttempt, EndpointStatus, WebhookEndpoint,
};
use mailward_services::secret_box;
use mailward_services::state::AppState;
use mailward_store::webhooks;
use std::time::Instant;
use uuid::Uuid;

/// Attempts per event before it is given up (first attempt included). With the backoff below
/// the last one happens about a day and a half after the event.
pub const MAX_ATTEMPTS: u32 = 12;

pub use mailward_services::outbound::post::{
    MAX_RESPONSE_BYTES, Outcome, backoff_secs, classify_status,
};

async fn send(
    state: &AppState,
    endpoint: &WebhookEndpoint,
    secret: &str,
    job: &DeliveryJob,
) -> Outcome {
    let now = state.clock.now();
    let signature = sign(secret, now.unix_timestamp(), job.body.as_bytes());
    let attempt = job.attempt.to_string();
    mailward_services::outbound::post::post(
        state,
        &endpoint.url,
        &[
            (SIGNATURE_HEADER, signature.as_str()),
            ("mailward-event-id", job.event_id.as_str()),
            ("mailward-delivery-attempt", attempt.as_str()),
        ],
        job.body.clone(),
    )
    .await
}

/// Runs one delivery attempt. Returns `Err` only for store or queue failures (the message is
/// then retried by the queue); receiver failures are handled here.
pub async fn deliver(state: &AppState, job: DeliveryJob) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(current) = webhooks::get(store, job.org_id, job.endpoint_id).await? else {
        tracing::info!(webhook.id = %job.endpoint_id, event.id = %job.event_id, "endpoint deleted; dropping delivery");
        return Ok(());
    };
    let endpoint = current.value;
    if endpoint.status != EndpointStatus::Enabled {
        tracing::info!(webhook.id = %endpoint.id, event.id = %job.event_id, "endpoint not enabled; dropping delivery");
        return Ok(());
    }
    let secret = secret_box::open(&state.config.secret_key, &endpoint.sealed_secret)
        .map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let outcome = send(state, &endpoint, &secret, &job).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let now = state.clock.now();

    let (status, response_status, error, retry) = match &outcome {
        Outcome::Delivered(code) => (AttemptStatus::Succeeded, Some(*code), None, None),
        Outcome::Retryable {
            status,
            error,
            retry_after,
        } => {
            let retry = (job.attempt < MAX_ATTEMPTS).then(|| {
                backoff_secs(
                    job.attempt + 1,
                    *retry_after,
                    mailward_services::outbound::post::jitter(),
                )
            });
            (AttemptStatus::Failed, *status, Some(error.clone()), retry)
        }
        Outcome::Final { status, error } => {
            (AttemptStatus::Failed, *status, Some(error.clone()), None)
        }
    };
    let attempt = DeliveryAttempt {
        id: Uuid::new_v4(),
        endpoint_id: endpoint.id,
        event_id: job.event_id.clone(),
        event_type: job.event_type.clone(),
        attempt: job.attempt,
        status,
        response_status,
        error,
        duration_ms,
        url: endpoint.url.clone(),
        next_retry_at: retry
            .map(|secs| now + time::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX))),
        created_at: now,
    };
    mailward_services::metrics::delivered(status == AttemptStatus::Succeeded);
    let disabled = update_failure_count(state, &job, status == AttemptStatus::Succeeded).await?;
    tracing::info!(webhook.id = %endpoint.id, event.id = %job.event_id, attempt = job.attempt, status = ?status, http.status = ?response_status, "webhook delivery attempted");
    // The retry is queued before the attempt is listed: an attempt shown with a
    // `next_retry_at` always has its retry scheduled, due at that time or earlier.
    if let (Some(delay), false) = (retry, disabled) {
        let next = DeliveryJob {
            attempt: job.attempt + 1,
            ..job.clone()
        };
        mailward_services::job::enqueue(state, &next, delay).await?;
    }
    webhooks::record_attempt(store, job.org_id, &attempt).await?;
    Ok(())
}

/// Resets or bumps the endpoint's consecutive-failure count (optimistic, retried on conflict);
/// the twentieth consecutive failure turns the endpoint `AUTO_DISABLED`. Returns whether the
/// endpoint is now auto-disabled.
async fn update_failure_count(
    state: &AppState,
    job: &DeliveryJob,
    succeeded: bool,
) -> anyhow::Result<bool> {
    let store = state.store.as_ref();
    // Concurrent deliveries to one endpoint race here; each retry re-reads the latest version.
    for _ in 0..64 {
        let Some(current) = webhooks::get(store, job.org_id, job.endpoint_id).await? else {
            return Ok(false);
        };
        let was_disabled = current.value.status == EndpointStatus::AutoDisabled;
        let mut endpoint = current.value;
        if succeeded {
            if endpoint.consecutive_failures == 0 {
                return Ok(false);
            }
            endpoint.consecutive_failures = 0;
        } else {
            endpoint.consecutive_failures = endpoint.consecutive_failures.saturating_add(1);
            if endpoint.consecutive_failures >= AUTO_DISABLE_AFTER
                && endpoint.status == EndpointStatus::Enabled
            {
                endpoint.status = EndpointStatus::AutoDisabled;
                endpoint.updated_at = state.clock.now();
                tracing::warn!(webhook.id = %endpoint.id, "endpoint auto-disabled after {AUTO_DISABLE_AFTER} consecutive failures");
            }
        }
        let disabled_now = endpoint.status == EndpointStatus::AutoDisabled && !was_disabled;
        let mut ops = vec![webhooks::save_op(&endpoint, current.version)?];
        if disabled_now {
            // The service changed the customer's configuration: the activity log says so.
            ops.extend(mailward_services::activity::system_ops(
                job.org_id,
                mailward_services::activity::Change::new(
                    "webhook_endpoint.auto_disabled",
                    "webhook_endpoint",
                    Some(endpoint.id),
                    format!(
                        "disabled webhook endpoint {} after {AUTO_DISABLE_AFTER} consecutive failed deliveries",
                        endpoint.url
                    ),
                ),
                state.clock.now(),
            )?);
        }
        match store.transact(ops).await {
            Ok(()) => return Ok(endpoint.status == EndpointStatus::AutoDisabled),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("endpoint kept changing while recording a delivery outcome")
}

/// The time a receiver has to answer (SPEC §6.4): the default of the outbound client.
pub use mailward_services::config::RECEIVER_TIMEOUT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified_per_the_spec() {
        assert!(matches!(
            classify_status(204, None),
            Outcome::Delivered(204)
        ));
        for s in [500, 503, 408, 429] {
            assert!(
                matches!(classify_status(s, None), Outcome::Retryable { .. }),
                "{s}"
            );
        }
        for s in [400, 401, 404, 410, 301, 302] {
            assert!(
                matches!(classify_status(s, None), Outcome::Final { .. }),
                "{s}"
            );
        }
    }

    #[test]
    fn backoff_grows_caps_and_honours_retry_after() {
        assert_eq!(backoff_secs(2, None, 0.5), 30);
        assert_eq!(backoff_secs(3, None, 0.5), 60);
        assert_eq!(backoff_secs(12, None, 0.5), 6 * 3600);
        assert!(backoff_secs(2, None, 0.0) >= 24 && backoff_secs(2, None, 1.0) <= 36);
        assert_eq!(backoff_secs(2, Some(3600), 0.5), 3600);
        assert_eq!(backoff_secs(2, Some(10 * 24 * 3600), 0.5), 24 * 3600);
    }
}
