//! DNS tools (SPEC §4.8, §2.11): DNS lookup, DNS provider detection, SPF include validation and
//! mailbox-provider detection. Each resolves DNS during the request, so each counts in the `dns`
//! bucket (and `api_key_dns` for API keys).

use axum::extract::State;
use mailward_api_types::tools::{
    DetectedDnsProvider, DnsLookupRequest, DnsLookupResult, DomainParam, IncludeValidation,
    MailboxProviderResult,
};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::{Json, Query};
use mailward_http::{ApiError, AppState, OptionalPrincipal, Principal, Routes};
use mailward_services::tools;

/// Looks a host up in TXT, MX, NS, A and CNAME, concurrently.
#[utoipa::path(post, path = "/tools/dns-lookup", tag = "tools", request_body = DnsLookupRequest,
    description = "Optional auth. Asks TXT, MX, NS, A and CNAME for `host` concurrently; a type with \
no answer (or whose lookup failed) is absent from `records`. MX records carry their preference. \
Counts in the `dns` bucket (and `api_key_dns` with an API key).",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsLookupResult), (status = 400, body = ErrorBody), (status = 429, body = RateLimitBody)))]
pub async fn dns_lookup(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
    _quota: DnsQuota,
    Json(body): Json<DnsLookupRequest>,
) -> Result<axum::Json<DnsLookupResult>, ApiError> {
    Ok(axum::Json(tools::dns_lookup(&app, &body.host).await?))
}

/// Detects the DNS provider of a domain from its NS records.
#[utoipa::path(get, path = "/dns-providers/detect", tag = "tools", params(DomainParam),
    description = "The query parameter is `domain`. `id` is a lowercase provider id from NS \
patterns (an open set; e.g. cloudflare, route53, google, azure, godaddy, namecheap), null when no \
pattern matches; `nameservers` is empty when the lookup failed. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DetectedDnsProvider), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn detect_dns_provider(
    State(app): State<AppState>,
    _caller: Principal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<DetectedDnsProvider>, ApiError> {
    Ok(axum::Json(
        tools::detect_dns_provider(&app, &params.domain).await?,
    ))
}

/// Validates a domain as an SPF include target.
#[utoipa::path(get, path = "/tools/validate-include", tag = "tools", params(DomainParam),
    description = "The query parameter is `domain`, the include target. Valid when it publishes \
exactly one well-formed SPF record that stays within the 10-lookup limit counting the include \
itself, and does not end in a permissive `+all`/`?all`. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = IncludeValidation), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn validate_include(
    State(app): State<AppState>,
    _caller: Principal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<IncludeValidation>, ApiError> {
    Ok(axum::Json(
        tools::validate_include(&app, &params.domain).await?,
    ))
}

/// Detects the mailbox provider from the MX records.
#[utoipa::path(get, path = "/tools/mailbox-provider", tag = "tools", params(DomainParam),
    description = "Optional auth. The query parameter is `domain`. The most preferred MX host that \
matches the sending-source catalogue decides: a mailbox provider (e.g. Google Workspace, Microsoft \
365) is returned; a security gateway (e.g. Mimecast, Proofpoint) hides the provider, so the result \
is null with reason `security_gateway`; no MX (or a null MX) gives `no_mx`; unmatched hosts give \
`unknown_mx`. Counts in the DNS buckets.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = MailboxProviderResult), (status = 400, body = ErrorBody)))]
pub async fn mailbox_provider(
    State(app): State<AppState>,
    _caller: OptionalPrincipal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<MailboxProviderResult>, ApiError> {
    Ok(axum::Json(
        tools::mailbox_provider(&app, &params.domain).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(dns_lookup))
        .routes(utoipa_axum::routes!(detect_dns_provider))
        .routes(utoipa_axum::routes!(validate_include))
        .routes(utoipa_axum::routes!(mailbox_provider))
}
