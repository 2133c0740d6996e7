//! `POST /tools/header-analyze`: what a message's headers say, and the live re-verification.

use axum::extract::State;
use mailward_api_types::tools::{HeaderAnalysis, HeaderAnalyzeRequest};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::Json;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::header_analysis;

/// Analyzes a message's headers.
#[utoipa::path(post, path = "/tools/header-analyze", tag = "tools", request_body = HeaderAnalyzeRequest,
    description = "Paste a received message's headers (10 to 100,000 characters; add a blank line and the body to have body hashes checked). The answer is camelCase. \
`verdicts` (spf, dkim, dmarc, arc: pass, fail, softfail, neutral, none, temperror, permerror or unknown) come only from the Authentication-Results the analysis can trust: those written by the final receiver (the authentication service of the topmost Authentication-Results) above the Received header where its servers accepted the message; every other Authentication-Results is listed with `trusted: false` and the reason (anyone upstream can write one). \
`receivedHops` are in travel order (hop 1 is the first server), each with its timestamp and `delayMs` since the previous stamp (the Date header for the first); a stamp earlier than the previous one gives `delayMs` 0 and `clockSkewMs`. \
With `include_dns_validation` (default true), `dnsValidation` re-verifies live: every DKIM signature against its DNS key (RSA and Ed25519, the body hash when a body is present, `l=`, canonicalization; a body hash that does not verify or an expired signature is `fail` (RFC 6376 §6.1), with the reason in `detail`), the ARC chain (RFC 8617: instances, `cv=`, the newest message signature and every seal; rsa-sha256 only), SPF for the connecting IP of the hop where the final receiver accepted the message, and DMARC (RFC 9989 policy discovery and alignment; `pass` needs an aligned SPF or DKIM pass). Signature expiry (`x=`) is judged at the time of the request. `dnsValidation` is null when not requested. \
Counts in the `dns` bucket (and `api_key_dns` with an API key).",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = HeaderAnalysis),
        (status = 400, description = "`param` headers: too short, too long or no header fields", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 429, body = RateLimitBody),
    ))]
pub async fn header_analyze(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    Json(body): Json<HeaderAnalyzeRequest>,
) -> Result<axum::Json<HeaderAnalysis>, ApiError> {
    Ok(axum::Json(
        header_analysis::analyze(&app, &principal, body).await?,
    ))
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(header_analyze))
}
