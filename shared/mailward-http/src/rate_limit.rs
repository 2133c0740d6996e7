//! Rate limiting (SPEC §7.6, §8.1): fixed windows counted through the
//! [`RateCounter`](mailward_domain::rate_limits::RateCounter) port: in memory in the single local
//! process, in the shared store on AWS so every Lambda instance shares one counter per bucket.
//!
//! Each request hits the `global` bucket in the middleware; extractors hit the others (`api_key`
//! in [`crate::auth::Principal`], `dns`/`api_key_dns` and `signup` on their routes). Every hit is
//! logged in the request's [`RateLimitLog`], and the response's `RateLimit-*` headers describe the
//! bucket closest to exhaustion.

use crate::error::ApiError;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use mailward_api_types::RateLimitBody;
pub use mailward_domain::rate_limits::client_subject;
use mailward_services::AppState;
use mailward_services::config::Scope;
use std::sync::{Arc, Mutex};

/// One bucket's state after a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketState {
    /// Which bucket.
    pub scope: Scope,
    /// Requests per window.
    pub limit: u32,
    /// Window length.
    pub window_secs: u32,
    /// Requests left in this window.
    pub remaining: u32,
    /// Seconds until the window ends (at least 1).
    pub reset_secs: u32,
    /// Whether this hit went over the limit.
    pub exceeded: bool,
}

/// The buckets hit while serving one request.
#[derive(Debug, Clone, Default)]
pub struct RateLimitLog(Arc<Mutex<Vec<BucketState>>>);

impl RateLimitLog {
    /// Records a hit.
    pub fn push(&self, bucket: BucketState) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(bucket);
    }

    /// The bucket closest to exhaustion (an exceeded bucket first).
    pub fn tightest(&self) -> Option<BucketState> {
        let buckets = self.0.lock().unwrap_or_else(|p| p.into_inner());
        buckets.iter().copied().min_by_key(|b| {
            (
                !b.exceeded,
                u64::from(b.remaining) * 1000 / u64::from(b.limit.max(1)),
                b.remaining,
            )
        })
    }
}

/// Counts one request against `scope` for `subject`. A store failure fails open (logged): an
/// outage of the counter store must not turn into refusing every request.
pub async fn hit(state: &AppState, scope: Scope, subject: &str) -> Option<BucketState> {
    let limit = state.config.limit(scope);
    let now = state.clock.unix();
    let window = i64::from(limit.window_secs);
    let start = now - now.rem_euclid(window);
    let end = start + window;
    let window = mailward_domain::rate_limits::Window { start, end };
    match state
        .rate_counter
        .hit(scope.as_str(), subject, window)
        .await
    {
        Ok(count) => {
            let count = u32::try_from(count.max(0)).unwrap_or(u32::MAX);
            Some(BucketState {
                scope,
                limit: limit.limit,
                window_secs: limit.window_secs,
                remaining: limit.limit.saturating_sub(count),
                reset_secs: u32::try_from((end - now).max(1)).unwrap_or(1),
                exceeded: count > limit.limit,
            })
        }
        Err(e) => {
            tracing::warn!(error = %e, scope = scope.as_str(), "rate-limit counter unavailable; allowing the request");
            None
        }
    }
}

/// Hits `scope` for `subject`, records it in the request's log and refuses with 429 when over.
pub async fn enforce(
    state: &AppState,
    parts: &Parts,
    scope: Scope,
    subject: &str,
) -> Result<(), ApiError> {
    enforce_logged(
        state,
        parts.extensions.get::<RateLimitLog>(),
        scope,
        subject,
    )
    .await
}

/// [`enforce`] for handlers that hold the request's log directly.
pub async fn enforce_logged(
    state: &AppState,
    log: Option<&RateLimitLog>,
    scope: Scope,
    subject: &str,
) -> Result<(), ApiError> {
    let Some(bucket) = hit(state, scope, subject).await else {
        return Ok(());
    };
    if let Some(log) = log {
        log.push(bucket);
    }
    if bucket.exceeded {
        Err(too_many_requests(bucket))
    } else {
        Ok(())
    }
}

/// The 429 response of SPEC §7.6.
pub fn too_many_requests(bucket: BucketState) -> ApiError {
    let body = RateLimitBody {
        error: "rate_limit_exceeded".into(),
        scope: bucket.scope.as_str().into(),
        message: format!(
            "too many requests in the {} bucket: {} per {} seconds; retry after {} seconds",
            bucket.scope.as_str(),
            bucket.limit,
            bucket.window_secs,
            bucket.reset_secs
        ),
        limit: bucket.limit,
        window_seconds: bucket.window_secs,
        retry_after_seconds: bucket.reset_secs,
    };
    let e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_exceeded",
        "too many requests",
    )
    .header(header::RETRY_AFTER, HeaderValue::from(bucket.reset_secs));
    match serde_json::to_value(body) {
        Ok(raw) => e.with_raw_body(raw),
        Err(_) => e,
    }
}

/// Writes `RateLimit-Limit/Remaining/Reset` for a bucket.
pub fn write_headers(headers: &mut HeaderMap, bucket: BucketState) {
    headers.insert("ratelimit-limit", HeaderValue::from(bucket.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(bucket.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(bucket.reset_secs));
}
