//! `GET /tools/audit` (camelCase, SPEC §2.12) and `GET /tools/activation-scan`. The audit's
//! OpenAPI description carries the scoring tables, generated from the engine's own.

use axum::extract::State;
use axum::http::HeaderMap;
use mailward_api_types::tools::{AuditParams, ScanParams};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_audit::AuditResult;
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::Query;
use mailward_http::{ApiError, AppState, OptionalPrincipal, Routes};
use mailward_services::audit;
use uuid::Uuid;

/// The header carrying the visitor journey id (read only when capturing a lead).
pub const JOURNEY_HEADER: &str = "x-visitor-journey-id";

/// Audits a domain's email authentication.
#[utoipa::path(get, path = "/tools/audit", tag = "tools", params(AuditParams),
    description = "Optional auth. See the generated scoring section below.",
    security((), ("api_key" = []), ("session" = [])),
    responses(
        (status = 200, description = "The audit (camelCase); `status` error carries only `summary`", body = AuditResult),
        (status = 400, body = ErrorBody), (status = 429, body = RateLimitBody),
    ))]
pub async fn audit_domain(
    State(app): State<AppState>,
    caller: OptionalPrincipal,
    _quota: DnsQuota,
    headers: HeaderMap,
    Query(params): Query<AuditParams>,
) -> Result<axum::Json<AuditResult>, ApiError> {
    let journey_id = headers
        .get(JOURNEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| Uuid::parse_str(v.trim()).ok());
    Ok(axum::Json(
        audit::audit(&app, caller.caller(), &params, journey_id).await?,
    ))
}

/// The most recent stored audit of a domain.
#[utoipa::path(get, path = "/tools/activation-scan", tag = "tools", params(ScanParams),
    description = "No credentials. The audit most recently saved with `store_scan=true` for `domain` \
(the echoed email is not kept); it expires 24 hours after the scan. 404 `scan_not_found` when none is \
stored.",
    responses(
        (status = 200, description = "The stored audit (camelCase)", body = AuditResult),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn activation_scan(
    State(app): State<AppState>,
    Query(params): Query<ScanParams>,
) -> Result<axum::Json<AuditResult>, ApiError> {
    Ok(axum::Json(
        audit::activation_scan(&app, &params.domain).await?,
    ))
}

/// Routes of this module, with the scoring tables in the audit's description.
pub fn routes() -> Routes {
    let mut routes = Routes::new()
        .routes(utoipa_axum::routes!(audit_domain))
        .routes(utoipa_axum::routes!(activation_scan));
    if let Some(op) = routes
        .get_openapi_mut()
        .paths
        .paths
        .get_mut("/tools/audit")
        .and_then(|item| item.get.as_mut())
    {
        op.description = Some(scoring_description());
    }
    routes
}

/// The scoring section of the audit's OpenAPI description, generated from the engine's own
/// tables so it cannot drift from what the engine does.
pub fn scoring_description() -> String {
    use mailward_audit::score::{
        PARKED_DIMENSIONS, UNLISTED_ERROR_POINTS, UNLISTED_WARNING_POINTS,
    };
    use mailward_audit::{DEDUCTIONS, WEIGHTS};
    let mut text = String::from(
        "Optional auth. Audits `domain` from live DNS (MX, SPF, DKIM, DMARC, BIMI, MTA-STS, TLS-RPT, \
NS) with independent lookups run concurrently. The response is camelCase: `status` success|error, \
`summary` (domain, echoed `email`, `parked`, overall `score` 0-100 and one verdict per dimension), \
`nameservers`, and one object per dimension with `score` (0 or the negative points taken off), \
`status` (verdict), `info`, `errors`, `warnings` (codes) and a `state` object. Verdicts are \
`pass`, `warn`, `fail`, `in progress` (DMARC below full reject, MTA-STS in testing), `info` \
(MTA-STS, TLS-RPT or DANE absent) or `error` (DKIM when the probe catalogue was unavailable). When the \
audit cannot run at all, `status` is `error` and only `summary` is present.\n\n\
**DANE (an extension beyond SPEC).** A `dane` object (not in `summary`, never scored) reads the \
TLSA records at `_25._tcp.<mx>` of the first five MX hosts (RFC 7672): `hosts[]` with each host's \
records (`3 1 1 <hex>`), how many are `usable` (DANE-TA or DANE-EE, well formed) and whether the \
zone holding them is DNSSEC-signed (`dnssecSigned`, from a DNSKEY at the zone apex; null when \
unknown), and `dnssecSigned` for the domain's own zone. Codes: `dane_not_configured` (verdict \
`info`), `dane_certificate_not_checked` (this audit does not connect to port 25; a monitored \
domain's MX TLS probe matches the records against the presented certificates), `dane_partial`, \
`dane_no_usable_record`, `dane_zone_unsigned`, `tlsa_pkix_usage`, `tlsa_unknown_parameter`, \
`tlsa_bad_digest_length`, `tlsa_bad_full_data`, `dns_lookup_failed`.\n\n\
Results are cached ten minutes per domain; `refresh=true` bypasses the cache for a caller with \
credentials (an API key or a session) and is ignored for an anonymous one, which is served from \
the cache. `email` captures a \
lead (with the `X-Visitor-Journey-Id` header when it is a UUID) and is echoed in the summary. \
`store_scan=true` saves the result, without the email, for `GET /tools/activation-scan` (24 h). \
Counts in the `dns` bucket (and `api_key_dns` with an API key).\n\n\
**Overall score.** 100 minus the points taken off in the scored dimensions, each capped at its \
weight. Only mx, spf, dkim, dmarc and bimi are scored; MTA-STS, TLS-RPT and DANE never are.\n\n\
| dimension | weight |\n|---|---|\n",
    );
    for w in WEIGHTS {
        text.push_str(&format!("| {} | {} |\n", w.dimension.as_str(), w.points));
    }
    let parked: Vec<&str> = PARKED_DIMENSIONS.iter().map(|d| d.as_str()).collect();
    text.push_str(&format!(
        "\nFor a parked domain only {} count, rescaled to 100.\n\n**Codes and deductions.** An \
error code not listed costs {UNLISTED_ERROR_POINTS} points, a warning {UNLISTED_WARNING_POINTS}.\n\n\
| dimension | code | points | meaning |\n|---|---|---|---|\n",
        parked.join(" and ")
    ));
    for d in DEDUCTIONS.iter() {
        text.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            d.dimension.as_str(),
            d.code,
            d.points,
            d.meaning
        ));
    }
    text
}
