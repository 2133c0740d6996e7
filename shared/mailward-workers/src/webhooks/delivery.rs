//! The delivery job: one POST of one event to one endpoint, recorded, retried with backoff.

use super::signature::{SIGNATURE_HEADER, sign};
pub use mailward_app::jobs::{DELIVER_WEBHOOK, DeliveryJob};
use mailward_domain::webhooks::{
    AUTO_DISABLE_AFTER, AttemptStatus, DeliveryAttempt, EndpointStatus, WebhookEndpoint,
};
use mailward_services::outbound::client::{Refused, check_url};
use mailward_services::secret_box;
use mailward_services::state::AppState;
use mailward_store::webhooks;
use std::time::Instant;
use time::OffsetDateTime;
use uuid::Uuid;

/// Attempts per event before it is given up (first attempt included). With the backoff below
/// the last one happens about a day and a half after the event.
pub const MAX_ATTEMPTS: u32 = 12;

/// Largest response body read from a receiver; the rest is dropped unread.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx.
    Delivered(u16),
    /// Worth retrying (5xx, 408, 429, timeout, connection error); `retry_after` from the
    /// receiver when it sent one.
    Retryable {
        status: Option<u16>,
        error: String,
        retry_after: Option<u64>,
    },
    /// Deliberate rejection (other 4xx, redirects) or refused by the outbound policy.
    Final { status: Option<u16>, error: String },
}

/// Classifies a response status (SPEC §6.4).
pub fn classify_status(status: u16, retry_after: Option<u64>) -> Outcome {
    match status {
        200..=299 => Outcome::Delivered(status),
        408 | 429 | 500..=599 => Outcome::Retryable {
            status: Some(status),
            error: format!("HTTP {status}"),
            retry_after,
        },
        300..=399 => Outcome::Final {
            status: Some(status),
            error: format!("HTTP {status}: redirects are not followed"),
        },
        _ => Outcome::Final {
            status: Some(status),
            error: format!("HTTP {status}"),
        },
    }
}

/// Delay before attempt `next_attempt` (2, 3, ...): 30 s doubling up to 6 h, ±20 % jitter, and
/// never sooner than the receiver's `Retry-After` (capped at 24 h).
pub fn backoff_secs(next_attempt: u32, retry_after: Option<u64>, jitter_unit: f64) -> u64 {
    let exponent = next_attempt.saturating_sub(2).min(20);
    let base = (30u64 << exponent).min(6 * 3600) as f64;
    let jittered = (base * (0.8 + 0.4 * jitter_unit.clamp(0.0, 1.0))).round() as u64;
    jittered.max(retry_after.unwrap_or(0).min(24 * 3600)).max(1)
}

fn parse_retry_after(
    value: Option<&reqwest::header::HeaderValue>,
    now: OffsetDateTime,
) -> Option<u64> {
    let text = value?.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(secs);
    }
    let date = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc2822).ok()?;
    Some(u64::try_from((date - now).whole_seconds().max(0)).unwrap_or(0))
}

async fn send(
    state: &AppState,
    endpoint: &WebhookEndpoint,
    secret: &str,
    job: &DeliveryJob,
) -> Outcome {
    let policy = &state.config.outbound;
    if let Err(e) = check_url(&endpoint.url, policy.allow_loopback) {
        return Outcome::Final {
            status: None,
            error: e,
        };
    }
    let client = match state.outbound_client() {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Retryable {
                status: None,
                error: e,
                retry_after: None,
            };
        }
    };
    let now = state.clock.now();
    let signature = sign(secret, now.unix_timestamp(), job.body.as_bytes());
    let request = client
        .post(&endpoint.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, signature)
        .header("mailward-event-id", &job.event_id)
        .header("mailward-delivery-attempt", job.attempt.to_string())
        .body(job.body.clone());
    match request.send().await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let retry_after =
                parse_retry_after(response.headers().get(reqwest::header::RETRY_AFTER), now);
            // Read at most MAX_RESPONSE_BYTES so a huge or endless body cannot hold the worker.
            let mut read = 0usize;
            while read < MAX_RESPONSE_BYTES {
                match response.chunk().await {
                    Ok(Some(chunk)) => read += chunk.len(),
                    _ => break,
                }
            }
            classify_status(status, retry_after)
        }
        Err(e) => {
            let error = describe(&e);
            if is_policy_refusal(&e) {
                Outcome::Final {
                    status: None,
                    error,
                }
            } else {
                Outcome::Retryable {
                    status: None,
                    error,
                    retry_after: None,
                }
            }
        }
    }
}

fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text.chars().take(500).collect()
}

fn is_policy_refusal(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<Refused>().is_some() {
            return true;
        }
        source = s.source();
    }
    false
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
            let retry = (job.attempt < MAX_ATTEMPTS)
                .then(|| backoff_secs(job.attempt + 1, *retry_after, jitter()));
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

fn jitter() -> f64 {
    let bytes = mailward_domain::secrets::random_bytes(2);
    f64::from(u16::from_le_bytes([bytes[0], bytes[1]])) / f64::from(u16::MAX)
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
