//! The middleware every entry point shares: request ids and logs, the HTTPS rule, credential
//! resolution, the global rate limit and `RateLimit-*` headers, and plain-text 401/404 for
//! clients that ask for text (SPEC §7.5).

use crate::auth::{Credential, ResolvedAuth, resolve};
use crate::error::{ApiError, InternalCause};
use crate::rate_limit::{RateLimitLog, hit, too_many_requests, write_headers};
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mailward_services::AppState;
use mailward_services::config::Scope;
use std::net::SocketAddr;
use std::time::Instant;

use crate::request_id::REQUEST_ID;
pub use crate::request_id::current_request_id;

/// The client address used for per-IP buckets.
#[derive(Debug, Clone)]
pub struct ClientIp(pub String);

fn request_id_from(headers: &HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned)
}

fn client_ip(state: &AppState, req: &Request) -> String {
    if state.config.trust_proxy {
        // API Gateway appends the address it saw; earlier entries are client-supplied.
        if let Some(last) = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            return last.to_owned();
        }
    }
    req.extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |ci| ci.0.ip().to_string())
}

fn wants_plain_text(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|accept| accept.split(',').next())
        .map(|first| {
            first
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|mime| mime == "text/plain" || mime == "text/html")
}

/// The Content-Security-Policy of an HTML page that sets none of its own: nothing loads, no
/// script runs, inline styles only, forms post to the service, never framed.
pub const DEFAULT_HTML_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Security headers on every response: `X-Content-Type-Options: nosniff` everywhere, and on
/// HTML a Content-Security-Policy (the page's own when it sets one, else
/// [`DEFAULT_HTML_CSP`]), `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer`.
pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if html {
        if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(DEFAULT_HTML_CSP),
            );
        }
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    response
}

/// The request pipeline: see the module docs.
/// The refusal of a change by a credential of an organization staff suspended: reads go on,
/// as do a person's own sign-in routes (`/oauth/...`: signing out, sessions).
fn suspended_write(req: &Request, resolved: &ResolvedAuth) -> Option<Response> {
    let ResolvedAuth::Valid {
        suspended: Some(reason),
        ..
    } = resolved
    else {
        return None;
    };
    let method = req.method();
    if method == axum::http::Method::GET
        || method == axum::http::Method::HEAD
        || method == axum::http::Method::OPTIONS
        || req.uri().path().starts_with("/oauth/")
    {
        return None;
    }
    Some(
        ApiError::new(
            StatusCode::FORBIDDEN,
            "organization_suspended",
            format!(
                "Mailward support suspended this organization ({reason}); it can be read but not changed until support lifts the suspension"
            ),
        )
        .into_response(),
    )
}

/// The route template a request matched (`/domains/{id}`), carried on the response for the
/// request metrics; absent when no route matched.
#[derive(Debug, Clone)]
pub struct RouteTemplate(pub String);

/// Notes the matched route's template on the response (a route layer: it runs only for
/// requests that matched a route).
pub async fn route_template(req: Request, next: Next) -> Response {
    let template = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let mut response = next.run(req).await;
    if let Some(template) = template {
        response.extensions_mut().insert(RouteTemplate(template));
    }
    response
}

pub async fn request_context(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let request_id = request_id_from(req.headers());
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let plain_text = wants_plain_text(req.headers());
    let id_for_scope = request_id.clone();

    let mut response = REQUEST_ID
        .scope(id_for_scope, async {
            if req
                .headers()
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|proto| proto.eq_ignore_ascii_case("http"))
            {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    "https_required",
                    "requests must use HTTPS",
                )
                .into_response();
            }
            let ip = client_ip(&state, &req);
            let resolved = match resolve(&state, req.headers()).await {
                Ok(resolved) => resolved,
                Err(e) => return e.into_response(),
            };
            let subject = match &resolved {
                ResolvedAuth::Valid { credential, .. } => match credential {
                    Credential::ApiKey { key_id, .. } => format!("key:{key_id}"),
                    Credential::Session { account_id, .. } => {
                        format!("sub:{account_id}")
                    }
                },
                _ => mailward_domain::rate_limits::client_subject(&ip),
            };
            let log = RateLimitLog::default();
            let global = hit(&state, Scope::Global, &subject).await;
            if let Some(bucket) = global {
                log.push(bucket);
            }
            if let Some(refusal) = suspended_write(&req, &resolved) {
                return refusal;
            }
            req.extensions_mut().insert(resolved);
            req.extensions_mut().insert(ClientIp(ip));
            req.extensions_mut().insert(log.clone());
            let mut response = match global {
                Some(bucket) if bucket.exceeded => too_many_requests(bucket).into_response(),
                _ => next.run(req).await,
            };
            if let Some(bucket) = log.tightest() {
                write_headers(response.headers_mut(), bucket);
            }
            response
        })
        .await;

    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-request-id", value);
    }
    let status = response.status();
    // Only a JSON error body is rewritten: the web application's pages are HTML already.
    let json_body = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if plain_text
        && json_body
        && (status == StatusCode::UNAUTHORIZED || status == StatusCode::NOT_FOUND)
    {
        response = plain_status_line(response);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let elapsed_ms = elapsed * 1000.0;
    let route = response
        .extensions()
        .get::<RouteTemplate>()
        .map_or("unmatched", |r| r.0.as_str());
    mailward_services::metrics::request(method.as_str(), route, status.as_u16(), elapsed);
    if let Some(InternalCause(cause)) = response.extensions().get::<InternalCause>() {
        tracing::error!(request.id = %request_id, http.method = %method, http.path = %path, http.status = status.as_u16(), elapsed_ms, error = %cause, "request failed");
    } else {
        tracing::info!(request.id = %request_id, http.method = %method, http.path = %path, http.status = status.as_u16(), elapsed_ms, "request served");
    }
    response
}

/// Replaces a JSON error body with the plain status line, keeping the headers.
fn plain_status_line(response: Response) -> Response {
    let (mut parts, _) = response.into_parts();
    let line = format!(
        "{} {}",
        parts.status.as_u16(),
        parts.status.canonical_reason().unwrap_or("")
    );
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(line))
}
