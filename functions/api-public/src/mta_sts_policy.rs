//! `GET /.well-known/mta-sts.txt`: the hosted MTA-STS policies, chosen by the `Host` senders
//! ask (`mta-sts.<domain>`, RFC 8461 §3.3), or the CNAME target `<domain>.mta-sts.<hosted zone>`.
//! Behind a CloudFront front (AWS) the `Host` is the API's own, so the front names the policy
//! host in `X-Mailward-Policy-Host`; the policy is public, so trusting the header reveals
//! nothing a sender could not fetch anyway.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_http::{AppState, Routes};
use mailward_services::domains::hosting::mta_sts;

/// Serves the policy of the host asked for.
#[utoipa::path(get, path = "/.well-known/mta-sts.txt", tag = "domains", security(()),
    description = "The MTA-STS policy Mailward hosts for the domain named by the `Host` header \
(`mta-sts.<domain>`, or the CNAME target `<domain>.mta-sts.<hosted zone>`), as `text/plain` \
(RFC 8461 §3.3): never a redirect. 404 (plain text) for a host with no hosted policy. A policy \
retired by DELETE is served as `mode: none` until its old `max_age` has passed. Deployment: \
`mta-sts.<domain>` is CNAMEd to `<domain>.mta-sts.<hosted zone>`, which the operator points at \
the HTTPS front of the domain: on AWS a CloudFront distribution per policy host presenting an ACM \
certificate for it (the reconciliation points the name at the distribution once deployed), which \
names the host in the `X-Mailward-Policy-Host` header since it forwards with the API's own `Host`; \
locally the stack answers it on its own listener by Host header.",
    params(("X-Mailward-Policy-Host" = Option<String>, Header,
        description = "The policy host, set by the HTTPS front; preferred over `Host`.")),
    responses(
        (status = 200, description = "The policy", content_type = "text/plain"),
        (status = 404, description = "No policy for this host", content_type = "text/plain"),
    ))]
pub async fn mta_sts_policy(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let host = headers
        .get(mta_sts::FRONT_HOST_HEADER)
        .or_else(|| headers.get(header::HOST))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match mta_sts::served_policy(&app, host).await {
        Some(policy) => (
            [
                (header::CONTENT_TYPE, "text/plain"),
                (header::CACHE_CONTROL, "max-age=300"),
            ],
            policy,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain")],
            "no MTA-STS policy is hosted for this host\n",
        )
            .into_response(),
    }
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(mta_sts_policy))
}
