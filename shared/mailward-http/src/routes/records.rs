//! Records guidance (SPEC §2.5, §4.1): the exact records a domain should publish compared with
//! live DNS, and the verification passes. The rules live in `mailward-plan`; this module builds
//! the plan's context from the stored domain and the configuration.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::PathId;
use crate::repo::domains;
use crate::routes::dns_quota::DnsQuota;
use crate::routes::domains::load;
use crate::routes::tools::{DetectedDnsProvider, provider_of};
use crate::state::AppState;
use crate::views::ErrorBody;
use crate::views_domain::monitoring_email;
use axum::extract::State;
use mailward_dns::Budgeted;
use mailward_domain::dns::{DnsResolver as _, RecordData, RecordType, Uncached};
use mailward_domain::domain::Domain;
use mailward_domain::store::StoreError;
use mailward_plan::{PlanContext, Purpose, RecordState, Warning};
use serde::Serialize;
use std::collections::BTreeSet;
use utoipa::ToSchema;

/// Queries one records page or verification may make (a verification may spend 62 of them on
/// the DKIM selector catalogue).
const QUERY_BUDGET: u32 = 300;

/// How long a verification may spend probing the DKIM selector catalogue.
const CATALOGUE_PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

fn purpose_name(p: Purpose) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn previously_verified(domain: &Domain) -> BTreeSet<Purpose> {
    domain
        .verified_purposes
        .iter()
        .filter_map(|p| serde_json::from_value(serde_json::Value::String(p.clone())).ok())
        .collect()
}

/// The plan's inputs for a stored domain; DKIM keys are those found at the domain's selectors
/// (see [`crate::dkim_discovery`] and [`dkim_keys`]).
async fn context(
    state: &AppState,
    domain: &Domain,
    resolver: &dyn mailward_domain::dns::DnsResolver,
    probe_dkim_catalogue: bool,
) -> PlanContext {
    // The live SPF record and the DKIM keys are independent lookups: asked at once, so a slow
    // DNS costs one timeout, not two in a row.
    let (live_spf, dkim) = tokio::join!(
        mailward_plan::fetch_live_spf(resolver, &domain.url),
        dkim_keys(domain, resolver, probe_dkim_catalogue),
    );
    let live_spf = live_spf.ok().flatten();
    let monitoring = monitoring_email(domain, &state.config);
    PlanContext {
        domain: domain.url.clone(),
        dmarc: domain.dmarc_options.clone(),
        spf: domain.spf_options.clone(),
        bimi: domain.bimi_options.clone(),
        target_spf: domain.target_spf.clone(),
        live_spf,
        // TLS-RPT reports go to the domain's own report address, like DMARC aggregates.
        tls_rpt_rua: Some(monitoring.clone()),
        monitoring_email: monitoring,
        report_domain: state.config.report_domain.clone(),
        hosted_zone: state.config.hosted_zone.clone(),
        // Hosted DMARC (CNAME delegation), MTA-STS hosting, registered DKIM keys and confirmed
        // senders arrive with their own endpoints; until then DMARC is the customer-published
        // TXT and DKIM the keys the domain already serves.
        dmarc_delegated: false,
        mta_sts: None,
        dkim,
        known_sender_includes: Vec::new(),
        parked: domain.is_parked,
        previously_verified: previously_verified(domain),
    }
}

/// The DKIM keys to plan: those at the selectors the sweep (or an earlier verification) found.
/// With none known and `probe_catalogue`, the whole selector catalogue is probed (a verification
/// asked for DKIM), on its own query budget.
async fn dkim_keys(
    domain: &Domain,
    resolver: &dyn mailward_domain::dns::DnsResolver,
    probe_catalogue: bool,
) -> Vec<mailward_plan::DkimPlan> {
    if domain.is_parked {
        return Vec::new();
    }
    if domain.dkim_selectors_seen.is_empty() && probe_catalogue {
        let catalogue = crate::routes::audit::catalogue_selectors();
        let budget = u32::try_from(catalogue.len() * 2 + 8).unwrap_or(u32::MAX);
        let catalogue_resolver = Budgeted::new(resolver, budget);
        // A best-effort discovery: under a failing DNS it must not hold the request up.
        let probe = crate::dkim_discovery::discover(&catalogue_resolver, &domain.url, &catalogue);
        return tokio::time::timeout(CATALOGUE_PROBE_LIMIT, probe)
            .await
            .unwrap_or_default();
    }
    crate::dkim_discovery::discover(resolver, &domain.url, &domain.dkim_selectors_seen).await
}

/// `GET /domains/{id}/dns-records` response.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnsRecordsResponse {
    /// SPEC §2.5 records (plus `live_values`, what DNS serves now), delete entries right after
    /// the record they concern.
    #[schema(value_type = Vec<Object>)]
    pub records: Vec<RecordState>,
    /// Every required record is verified.
    pub all_verified: bool,
    /// Read before publishing, e.g. `enforcing_policy_without_working_auth`, or
    /// `domain_does_not_exist` when the name is NXDOMAIN.
    #[schema(value_type = Vec<Object>)]
    pub warnings: Vec<Warning>,
    /// The DNS host, from the domain's NS records.
    pub dns_provider: DetectedDnsProvider,
}

/// The records to publish, compared with live DNS.
#[utoipa::path(get, path = "/domains/{id}/dns-records", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Computes the exact records for the domain's options: DMARC (TXT with Mailward's \
report address first in `rua`, `t=y` when `dmarc_options.pct` < 100), SPF (`target_spf`, or the \
live record kept with its `all`), DKIM (the usable keys the domain already serves at the \
selectors found by the monitoring sweep or a DKIM verification, planned as published: TXT, or \
the CNAME to the sender's key host; registering keys with Mailward is not available yet), \
TLS-RPT (`_smtp._tls` with the domain's report address; not required), BIMI when enabled. A \
parked domain (`is_parked`) is locked down instead: DMARC `p=reject; sp=reject`, SPF \
`v=spf1 -all` unless `target_spf` is set, no DKIM. Each record says `action` \
(create|replace|delete; already published records need none), `already_published` (null when \
the live lookup failed: the action is then a static hint), `required`, `status` \
(pending|verifying|verified|drifted) and a recommended `ttl`. Looks DNS up without caches, so \
it counts in the DNS buckets (`dns`, and `api_key_dns` for API keys).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsRecordsResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_dns_records(
    State(state): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<DnsRecordsResponse>, ApiError> {
    let domain = load(&state, &principal, id).await?.value;
    let direct = Uncached(state.resolver.as_ref());
    let resolver = Budgeted::new(&direct, QUERY_BUDGET);
    // The DNS provider's NS lookup is independent of the plan: asked at the same time.
    let plan = async {
        let ctx = context(&state, &domain, &resolver, false).await;
        let expected = mailward_plan::expected_records(&ctx);
        let records = mailward_plan::compare(&resolver, &expected).await;
        (ctx, records)
    };
    let ((ctx, records), ns_lookup) =
        tokio::join!(plan, resolver.lookup(&domain.url, RecordType::Ns));
    let mut warnings = mailward_plan::warnings(&ctx, &records);
    let all_verified = mailward_plan::all_verified(&records);
    if matches!(ns_lookup, Err(mailward_domain::dns::DnsError::NxDomain)) {
        warnings.push(Warning::new(
            "domain_does_not_exist",
            format!(
                "{} does not exist in DNS (NXDOMAIN): register or delegate it before publishing records",
                domain.url
            ),
        ));
    }
    let nameservers: Vec<String> = match ns_lookup {
        Ok(answer) => answer
            .records
            .into_iter()
            .filter_map(|r| {
                if let RecordData::Ns(n) = r {
                    Some(n)
                } else {
                    None
                }
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let dns_provider = DetectedDnsProvider {
        id: provider_of(&nameservers).map(str::to_owned),
        nameservers,
    };
    Ok(axum::Json(DnsRecordsResponse {
        records,
        all_verified,
        warnings,
        dns_provider,
    }))
}

/// `POST /domains/{id}/verify` response.
#[derive(Debug, Serialize, ToSchema)]
pub struct VerifyResponse {
    /// Always false: the pass runs during the request.
    pub queued: bool,
    /// Purposes confirmed during this pass (only those; never `tls_rpt` or `mta_sts_policy`).
    #[schema(value_type = Object)]
    pub verified: std::collections::BTreeMap<Purpose, bool>,
    /// `{dmarc, spf, dkim, mta_sts, bimi}` booleans: true when confirmed in this pass.
    #[schema(value_type = Object)]
    pub results: mailward_plan::Results,
}

async fn run_verify(
    state: &AppState,
    principal: &Principal,
    id: uuid::Uuid,
    only: Option<Purpose>,
) -> Result<VerifyResponse, ApiError> {
    let current = load(state, principal, id).await?;
    let domain = current.value.clone();
    let direct = Uncached(state.resolver.as_ref());
    let resolver = Budgeted::new(&direct, QUERY_BUDGET);
    let wants_dkim = only.is_none_or(|p| p == Purpose::Dkim);
    let ctx = context(state, &domain, &resolver, wants_dkim).await;
    let mut seen: Vec<String> = domain.dkim_selectors_seen.clone();
    seen.extend(ctx.dkim.iter().map(|k| k.selector.clone()));
    seen.sort();
    seen.dedup();
    let expected = mailward_plan::expected_records(&ctx);
    let verification = mailward_plan::verify(&resolver, &expected, only).await;
    let mut confirmed: BTreeSet<String> = domain.verified_purposes.iter().cloned().collect();
    for purpose in verification.confirmed() {
        confirmed.insert(purpose_name(purpose));
    }
    let confirmed: Vec<String> = confirmed.into_iter().collect();
    if confirmed != domain.verified_purposes || seen != domain.dkim_selectors_seen {
        let mut next = domain.clone();
        next.verified_purposes = confirmed;
        // The sweep re-checks these between its catalogue probes.
        next.dkim_selectors_seen = seen;
        match state
            .store
            .transact(vec![domains::save_op(&next, current.version)?])
            .await
        {
            // A concurrent change wins; the next pass records the confirmation again.
            Ok(()) | Err(StoreError::TransactionCanceled { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(VerifyResponse {
        queued: false,
        verified: verification.verified,
        results: verification.results,
    })
}

/// Verifies every record now.
#[utoipa::path(post, path = "/domains/{id}/verify", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Asks DNS without caches whether each planned record is published. `verified` lists \
only the purposes confirmed during this pass; `tls_rpt` and `mta_sts_policy` never appear. \
`results` always has the five booleans (false when not confirmed, including nothing planned). \
SPF is confirmed only when the published record stays within 10 DNS lookups. When no DKIM \
selector is known yet, the pass probes the selector catalogue and remembers the keys it finds. \
Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain(
    State(state): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    run_verify(&state, &principal, id, None)
        .await
        .map(axum::Json)
}

/// Verifies the SPF record now.
#[utoipa::path(post, path = "/domains/{id}/verify/spf", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "As `POST /domains/{id}/verify`, for SPF only.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain_spf(
    State(state): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    run_verify(&state, &principal, id, Some(Purpose::Spf))
        .await
        .map(axum::Json)
}

/// Verifies the DKIM records now.
#[utoipa::path(post, path = "/domains/{id}/verify/dkim", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "As `POST /domains/{id}/verify`, for DKIM only.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = VerifyResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn verify_domain_dkim(
    State(state): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<VerifyResponse>, ApiError> {
    run_verify(&state, &principal, id, Some(Purpose::Dkim))
        .await
        .map(axum::Json)
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(get_dns_records))
        .routes(utoipa_axum::routes!(verify_domain))
        .routes(utoipa_axum::routes!(verify_domain_spf))
        .routes(utoipa_axum::routes!(verify_domain_dkim))
        .routes(utoipa_axum::routes!(get_spf_diagnostics))
}

/// A suggested next step for the SPF record.
#[derive(Debug, Serialize, ToSchema)]
pub struct NextAction {
    /// Stable code: `publish_spf_record`, `merge_spf_records`, `fix_spf_syntax`,
    /// `reduce_spf_lookups`, `tighten_all`, `retry_later`, `review_warnings` or `none`.
    pub code: String,
    /// For a person.
    pub message: String,
}

/// Hosted (flattened) SPF state.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostedSpf {
    /// Whether the domain asked for hosted, flattened SPF (`spf_options.force_flattening`).
    pub requested: bool,
    /// Whether Mailward serves it. Hosted SPF is not available yet, so this is always false.
    pub active: bool,
    /// `managed_dns_status.spf`: unknown until hosting exists.
    pub status: String,
}

/// `GET /domains/{domainId}/spf` response (SPEC §2.13 content).
#[derive(Debug, Serialize, ToSchema)]
pub struct SpfDiagnostics {
    /// The audit: `domain`, `record` (the live record), `records` (every v=spf1 record; more
    /// than one is an error), `ttl`, `health` pass|warn|fail, `lookup_count`, `lookup_limit`
    /// (10), `remaining_lookups`, void lookups, `tree` (kind include|a|mx|ptr|exists|redirect|
    /// expanded-domain, operand, depth, cost, error, note) and `problems` (code, severity
    /// error|warning, host, message).
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub audit: mailward_spf::SpfAudit,
    /// Hosted SPF.
    pub hosted_spf: HostedSpf,
    /// What to do next.
    pub next_action: NextAction,
}

fn next_action(audit: &mailward_spf::SpfAudit) -> NextAction {
    use mailward_spf::ProblemCode as C;
    let has = |code: C| audit.problems.iter().any(|p| p.code == code);
    let (code, message) = if has(C::DnsTemporaryError) {
        (
            "retry_later",
            "DNS did not answer; the record could not be checked",
        )
    } else if has(C::NoSpfRecord) {
        (
            "publish_spf_record",
            "publish one TXT record starting with v=spf1 at the domain",
        )
    } else if has(C::MultipleSpfRecords) {
        (
            "merge_spf_records",
            "merge the v=spf1 records into one: receivers treat several as an error",
        )
    } else if has(C::SyntaxError) {
        (
            "fix_spf_syntax",
            "fix the record's syntax: receivers treat it as a permanent error",
        )
    } else if has(C::LookupLimitExceeded) || has(C::VoidLookupLimitExceeded) {
        (
            "reduce_spf_lookups",
            "remove unused includes or flatten the record: it exceeds the DNS lookup limits",
        )
    } else if has(C::PermissiveAll) {
        (
            "tighten_all",
            "end the record with ~all or -all instead of +all/?all",
        )
    } else if !audit.problems.is_empty() {
        ("review_warnings", "the record works; review the warnings")
    } else {
        ("none", "the SPF record is healthy")
    };
    NextAction {
        code: code.into(),
        message: message.into(),
    }
}

/// SPF diagnostics of a domain.
#[utoipa::path(get, path = "/domains/{id}/spf", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Walks the live SPF record's whole tree (every include and redirect, without a \
sender) and reports the lookup count as SPEC §8.2 counts it, the void lookups, the tree and every \
problem, plus hosted-SPF state and a suggested next action. Looks DNS up without caches; counts in \
the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SpfDiagnostics), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_spf_diagnostics(
    State(state): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<SpfDiagnostics>, ApiError> {
    let domain = load(&state, &principal, id).await?.value;
    let direct = Uncached(state.resolver.as_ref());
    let resolver = Budgeted::new(&direct, QUERY_BUDGET);
    let audit = mailward_spf::audit_domain(&resolver, &domain.url).await;
    let next_action = next_action(&audit);
    let hosted_spf = HostedSpf {
        requested: domain.spf_options.force_flattening,
        active: false,
        status: "unknown".into(),
    };
    Ok(axum::Json(SpfDiagnostics {
        audit,
        hosted_spf,
        next_action,
    }))
}
