//! Records guidance (SPEC §2.5, §4.1): the records to publish compared with live DNS, the
//! verification passes, and SPF diagnostics. Each resolves DNS during the request, so each
//! counts in the DNS buckets.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::records::{DnsRecordsResponse, SpfDiagnostics, VerifyResponse};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::PathId;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_plan::Purpose;
use mailward_services::domains::{records, spf};

/// The records to publish, compared with live DNS.
#[utoipa::path(get, path = "/domains/{id}/dns-records", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Computes the exact records for the domain's options: DMARC (TXT with Mailward's \
report address first in `rua`, `t=y` when `dmarc_options.pct` < 100; with hosted DMARC the \
`_dmarc` CNAME to Mailward's zone instead), SPF (with hosted SPF, `spf_options.enabled`, the one \
record that includes the chain Mailward serves; otherwise `target_spf`, or the live record kept \
with its `all`), DKIM (the usable keys the domain already serves at the selectors found by the \
monitoring sweep or a DKIM verification, planned as published: TXT, or the CNAME to the \
sender's key host; keys registered with Mailward as the CNAME to where Mailward serves them), \
TLS-RPT (`_smtp._tls` with the domain's report address; not required), BIMI when enabled. A \
parked domain (`is_parked`) is locked down instead: DMARC `p=reject; sp=reject`, SPF \
`v=spf1 -all` unless `target_spf` is set, no DKIM. Each record says `action` \
(create|replace|delete; already published records need none), `already_published` (null when \
the live lookup failed: the action is then a static hint), `required`, `status` \
(pending|verifying|verified|drifted) and a recommended `ttl`. Looks DNS up without caches, so \
it counts in the DNS buckets (`dns`, and `api_key_dns` for API keys). All of its DNS work \
shares one 8-second deadline, so it answers within a client's 10 s even when the domain's DNS \
times out; lookups that ran out of time read as failed (`already_published` null), never as \
absent. When Mailward hosts no MTA-STS policy for the domain, none is published at \
`_mta-sts`, and DANE (TLSA at `_25._tcp.<mx>` in a DNSSEC-signed zone, RFC 7672) does not \
protect every MX host, `warnings` holds `inbound_tls_unprotected` naming both ways and each \
host's TLSA name (an extension beyond SPEC).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsRecordsResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_dns_records(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<DnsRecordsResponse>, ApiError> {
    Ok(axum::Json(
        records::dns_records(&app, &principal, id).await?,
    ))
}

/// Verifies every record now.
#[utoipa::path(post, path = "/domains/{id}/verify", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys (it stores what it confirmed; 403 \
`forbidden` for viewers and read-only keys). Asks DNS without caches whether each planned record \
is published. `verified` lists \
only the purposes confirmed during this pass; `tls_rpt` and `mta_sts_policy` never appear. \
`results` always has the five booleans (false when not confirmed, including nothing planned). \
SPF is confirmed only when the published record stays within 10 DNS lookups. When no DKIM \
selector is known yet, the pass probes the selector catalogue and remembers the keys it finds. \
Counts in the DNS buckets. All of its \
DNS work shares one 8-second deadline, so it answers within a client's 10 s even when the \
domain's DNS times out (what did not answer is not confirmed).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    Ok(axum::Json(
        records::verify(&app, &principal, id, None).await?,
    ))
}

/// Verifies the SPF record now.
#[utoipa::path(post, path = "/domains/{id}/verify/spf", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "As `POST /domains/{id}/verify`, for SPF only.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain_spf(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    Ok(axum::Json(
        records::verify(&app, &principal, id, Some(Purpose::Spf)).await?,
    ))
}

/// Verifies the DKIM records now.
#[utoipa::path(post, path = "/domains/{id}/verify/dkim", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "As `POST /domains/{id}/verify`, for DKIM only.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain_dkim(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    Ok(axum::Json(
        records::verify(&app, &principal, id, Some(Purpose::Dkim)).await?,
    ))
}

/// SPF diagnostics of a domain.
#[utoipa::path(get, path = "/domains/{id}/spf", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Walks the live SPF record's whole tree (every include and redirect, without a \
sender) and reports the lookup count as SPEC §8.2 counts it, the void lookups, the tree and every \
problem, plus hosted-SPF state and a suggested next action. Looks DNS up without caches; counts in \
the DNS buckets. `hosted_spf` gives, while hosted SPF is on, the record to publish, the served \
chain, the lookups a receiver makes, each source term (flattened or why not, with its \
`mechanism_descriptions` entry) and the senders' range changes seen by the hourly re-flattening; \
until the domain's record includes the chain, `next_action` is `publish_hosted_spf_record` with \
the record to publish.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SpfDiagnostics), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_spf_diagnostics(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<SpfDiagnostics>, ApiError> {
    Ok(axum::Json(spf::diagnostics(&app, &principal, id).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(get_dns_records))
        .routes(utoipa_axum::routes!(verify_domain))
        .routes(utoipa_axum::routes!(verify_domain_spf))
        .routes(utoipa_axum::routes!(verify_domain_dkim))
        .routes(utoipa_axum::routes!(get_spf_diagnostics))
}
