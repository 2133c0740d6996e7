//! One POST to a receiver outside (webhook endpoints, chat tools, PagerDuty): the outbound
//! policy checked first, the guarded client, a bounded read of the answer, and how the attempt
//! ended (SPEC §6.4's classification and backoff, shared by every kind of delivery).

use crate::outbound::client::{Refused, check_url};
use crate::state::AppState;
use time::OffsetDateTime;

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

/// POSTs `body` as JSON to `url` with `headers`: the outbound policy first, then at most
/// [`MAX_RESPONSE_BYTES`] of the answer read.
pub async fn post(state: &AppState, url: &str, headers: &[(&str, &str)], body: String) -> Outcome {
    let policy = &state.config.outbound;
    if let Err(e) = check_url(url, policy.allow_loopback) {
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
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    match request.body(body).send().await {
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

/// A random number in `[0, 1]` for backoff jitter.
pub fn jitter() -> f64 {
    let bytes = mailward_domain::secrets::random_bytes(2);
    f64::from(u16::from_le_bytes([bytes[0], bytes[1]])) / f64::from(u16::MAX)
}
