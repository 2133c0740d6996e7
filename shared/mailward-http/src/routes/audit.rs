//! `GET /tools/audit` (camelCase, SPEC §2.12) and `GET /tools/activation-scan`.
//!
//! Results are cached ten minutes per domain in the store (TTL), so repeated audits of one domain
//! cost no DNS; `refresh=true` bypasses the cache. `email` captures a lead (stored with the visitor
//! journey id header when it is a UUID); `store_scan=true` saves the result for the public
//! `GET /tools/activation-scan` for 24 hours (without the echoed email).

use crate::auth::OptionalPrincipal;
use crate::error::ApiError;
use crate::extract::Query;
use crate::mta_sts_fetch::OutboundPolicyFetcher;
use crate::repo::{encode, keys};
use crate::routes::dns_quota::{DnsQuota, normalize_domain};
use crate::state::AppState;
use crate::views::ErrorBody;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use mailward_audit::{AuditInput, AuditResult};
use mailward_dns::Budgeted;
use mailward_domain::dns::Uncached;
use mailward_domain::email::EmailAddress;
use mailward_domain::store::{Condition, Item};
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use uuid::Uuid;

/// How long an audit is cached (SPEC §8.2).
pub const AUDIT_CACHE_SECS: i64 = 600;
/// How long a stored activation scan lives (SPEC §8.2).
pub const ACTIVATION_SCAN_SECS: i64 = 24 * 3600;
/// Queries one audit may make.
const AUDIT_QUERY_BUDGET: u32 = 400;
/// The header carrying the visitor journey id (read only when capturing a lead).
pub const JOURNEY_HEADER: &str = "x-visitor-journey-id";

/// `GET /tools/audit` parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditParams {
    /// The domain to audit.
    pub domain: String,
    /// Captures a lead and is echoed in `summary.email`.
    pub email: Option<String>,
    /// Save the result for `GET /tools/activation-scan` (24 hours).
    #[serde(default)]
    pub store_scan: bool,
    /// Bypass the ten-minute cache and the resolver's cache.
    #[serde(default)]
    pub refresh: bool,
}

/// A captured lead.
#[derive(Debug, Serialize, Deserialize)]
struct Lead {
    email: String,
    domain: String,
    journey_id: Option<Uuid>,
    org_id: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    created_at: time::OffsetDateTime,
}

/// The DKIM selectors to probe: every selector convention of the active catalogue.
pub fn catalogue_selectors() -> Vec<String> {
    let mut selectors: Vec<String> = mailward_domain::sources::catalogue()
        .sources()
        .iter()
        .flat_map(|s| s.dkim_discovery_selectors.iter().cloned())
        .collect();
    selectors.sort();
    selectors.dedup();
    selectors
}

async fn run_audit(state: &AppState, domain: &str) -> Result<AuditResult, ApiError> {
    // Cached results come from the store; a miss audits through the resolver's own cache.
    let cache_pk = keys::audit_cache_pk(domain);
    let cached = state
        .store
        .get(&cache_pk, keys::AUDIT_CACHE_SK, false)
        .await?;
    // An unreadable cached copy (e.g. written by an older version) is simply recomputed.
    if let Some(result) =
        cached.and_then(|item| serde_json::from_slice::<AuditResult>(&item.data).ok())
    {
        return Ok(result);
    }
    fresh_audit(state, domain, false).await
}

/// Audits from DNS and caches the result; `uncached` also bypasses the resolver's cache.
async fn fresh_audit(
    state: &AppState,
    domain: &str,
    uncached: bool,
) -> Result<AuditResult, ApiError> {
    let direct = Uncached(state.resolver.as_ref());
    let base: &dyn mailward_domain::dns::DnsResolver = if uncached {
        &direct
    } else {
        state.resolver.as_ref()
    };
    let resolver = Budgeted::new(base, AUDIT_QUERY_BUDGET);
    let fetcher = OutboundPolicyFetcher { state };
    let input = AuditInput {
        domain: domain.to_owned(),
        email: None,
        dkim_selectors: Some(catalogue_selectors()),
        extra_selectors: Vec::new(),
        hosted_dmarc_suffix: state.config.hosted_dmarc_suffix.clone(),
    };
    let result = mailward_audit::audit(&resolver, &fetcher, &input).await;
    let item = Item::new(
        keys::audit_cache_pk(domain),
        keys::AUDIT_CACHE_SK,
        encode(&result)?,
    )
    .expiring_at(state.clock.unix() + AUDIT_CACHE_SECS);
    state.store.put(item, Condition::None).await?;
    Ok(result)
}

/// Audits a domain's email authentication.
#[utoipa::path(get, path = "/tools/audit", tag = "tools", params(AuditParams),
    description = "Optional auth. See the generated scoring section below.",
    security((), ("api_key" = []), ("session" = [])),
    responses(
        (status = 200, description = "The audit (camelCase); `status` error carries only `summary`", content_type = "application/json"),
        (status = 400, body = ErrorBody), (status = 429, body = crate::views::RateLimitBody),
    ))]
pub async fn audit_domain(
    State(state): State<AppState>,
    caller: OptionalPrincipal,
    _quota: DnsQuota,
    headers: HeaderMap,
    Query(params): Query<AuditParams>,
) -> Result<axum::Json<AuditResult>, ApiError> {
    let domain = normalize_domain("domain", &params.domain)?;
    let email = params
        .email
        .as_deref()
        .map(|e| {
            EmailAddress::parse(e)
                .map_err(|_| ApiError::invalid_param("email", "email is not a valid address"))
        })
        .transpose()?;
    let mut result = if params.refresh {
        fresh_audit(&state, &domain, true).await?
    } else {
        run_audit(&state, &domain).await?
    };
    if params.store_scan {
        let item = Item::new(
            keys::activation_scan_pk(&domain),
            keys::ACTIVATION_SCAN_SK,
            encode(&result)?,
        )
        .expiring_at(state.clock.unix() + ACTIVATION_SCAN_SECS);
        state.store.put(item, Condition::None).await?;
    }
    if let Some(email) = email {
        let journey_id = headers
            .get(JOURNEY_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| Uuid::parse_str(v.trim()).ok());
        let now = state.clock.now();
        let lead = Lead {
            email: email.as_str().to_owned(),
            domain: domain.clone(),
            journey_id,
            org_id: caller.0.as_ref().map(|p| p.org_id),
            created_at: now,
        };
        let day = now.date().to_string();
        let millis = now.unix_timestamp_nanos() / 1_000_000;
        let item = Item::new(
            keys::lead_pk(&day),
            keys::lead_sk(millis, Uuid::new_v4()),
            encode(&lead)?,
        );
        state.store.put(item, Condition::NotExists).await?;
        result.summary.email = Some(email.as_str().to_owned());
    }
    Ok(axum::Json(result))
}

/// Query naming a domain.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanParams {
    /// The audited domain.
    pub domain: String,
}

/// The most recent stored audit of a domain.
#[utoipa::path(get, path = "/tools/activation-scan", tag = "tools", params(ScanParams),
    description = "No credentials. The audit most recently saved with `store_scan=true` for `domain` \
(the echoed email is not kept); it expires 24 hours after the scan. 404 `scan_not_found` when none is \
stored.",
    responses(
        (status = 200, description = "The stored audit (camelCase)", content_type = "application/json"),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn activation_scan(
    State(state): State<AppState>,
    Query(params): Query<ScanParams>,
) -> Result<axum::Json<AuditResult>, ApiError> {
    let domain = normalize_domain("domain", &params.domain)?;
    let item = state
        .store
        .get(
            &keys::activation_scan_pk(&domain),
            keys::ACTIVATION_SCAN_SK,
            false,
        )
        .await?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "scan_not_found",
                "no stored scan for this domain (scans expire after 24 hours)",
            )
        })?;
    let result: AuditResult = crate::repo::decode(&item)?;
    Ok(axum::Json(result))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(audit_domain))
        .routes(utoipa_axum::routes!(activation_scan))
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
(MTA-STS or TLS-RPT absent) or `error` (DKIM when the probe catalogue was unavailable). When the \
audit cannot run at all, `status` is `error` and only `summary` is present.\n\n\
Results are cached ten minutes per domain (`refresh=true` bypasses the cache). `email` captures a \
lead (with the `X-Visitor-Journey-Id` header when it is a UUID) and is echoed in the summary. \
`store_scan=true` saves the result, without the email, for `GET /tools/activation-scan` (24 h). \
Counts in the `dns` bucket (and `api_key_dns` with an API key).\n\n\
**Overall score.** 100 minus the points taken off in the scored dimensions, each capped at its \
weight. Only mx, spf, dkim, dmarc and bimi are scored; MTA-STS and TLS-RPT never are.\n\n\
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
