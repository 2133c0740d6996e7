//! Records guidance (SPEC §2.5, §4.1): the exact records a domain should publish compared with
//! live DNS, and the verification passes. The rules live in `mailward-plan`; this module builds
//! the plan's context from the stored domain and the configuration, and bounds the DNS work.

use super::{dkim_discovery, load};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::records::{DnsRecordsResponse, VerifyResponse};
use mailward_api_types::tools::DetectedDnsProvider;
use mailward_dns::{Budgeted, Deadline};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType, Uncached};
use mailward_domain::dns_providers::provider_of;
use mailward_domain::domain::Domain;
use mailward_plan::{PlanContext, Purpose, Warning};
use mailward_store::optimistic::{OnConflict, retry_on_conflict};
use mailward_store::{Versioned, domains};
use std::collections::BTreeSet;
use std::time::Duration;
use uuid::Uuid;

/// Queries one records page or verification may make (a verification may spend 62 of them on
/// the DKIM selector catalogue).
const QUERY_BUDGET: u32 = 300;

/// How long one records page or verification may spend on DNS in all, whatever its stages: a
/// client gives up after 10 s, so the answer must come before, with what DNS told by then.
pub const DNS_DEADLINE: Duration = Duration::from_secs(8);

/// Writes a verification may take when the sweep keeps writing the same domain.
const MAX_SAVE_ATTEMPTS: u32 = 3;

/// How long a verification may spend probing the DKIM selector catalogue.
const CATALOGUE_PROBE_LIMIT: Duration = Duration::from_secs(3);

/// The plan's inputs for a stored domain; DKIM keys are those found at the domain's selectors.
async fn context(
    app: &AppState,
    domain: &Domain,
    resolver: &dyn DnsResolver,
    probe_dkim_catalogue: bool,
) -> PlanContext {
    // The live SPF record and the DKIM keys are independent lookups: asked at once, so a slow
    // DNS costs one timeout, not two in a row.
    let (live_spf, mut dkim, hosted) = tokio::join!(
        mailward_plan::fetch_live_spf(resolver, &domain.url),
        dkim_keys(domain, resolver, probe_dkim_catalogue),
        super::hosting::dkim_keys::hosted_plans(app, domain),
    );
    // A hosted key is planned as the CNAME to where Mailward serves it.
    for plan in hosted {
        dkim.retain(|p| p.selector != plan.selector);
        dkim.push(plan);
    }
    crate::evaluation::plan_context(app, domain, live_spf.ok().flatten(), dkim)
}

/// The DKIM keys to plan: those at the selectors the sweep (or an earlier verification) found.
/// With none known and `probe_catalogue`, the whole selector catalogue is probed (a verification
/// asked for DKIM), on its own query budget and time limit.
async fn dkim_keys(
    domain: &Domain,
    resolver: &dyn DnsResolver,
    probe_catalogue: bool,
) -> Vec<mailward_plan::DkimPlan> {
    if domain.is_parked {
        return Vec::new();
    }
    if domain.dkim_selectors_seen.is_empty() && probe_catalogue {
        let catalogue = mailward_domain::sources::catalogue().dkim_discovery_selectors();
        let budget = u32::try_from(catalogue.len() * 2 + 8).unwrap_or(u32::MAX);
        let catalogue_resolver = Budgeted::new(resolver, budget);
        // A best-effort discovery: under a failing DNS it must not hold the request up.
        let probe = dkim_discovery::discover(&catalogue_resolver, &domain.url, &catalogue);
        return tokio::time::timeout(CATALOGUE_PROBE_LIMIT, probe)
            .await
            .unwrap_or_default();
    }
    dkim_discovery::discover(resolver, &domain.url, &domain.dkim_selectors_seen).await
}

/// The records the domain should publish, compared with live DNS (uncached), with warnings and
/// the DNS host.
/// When Mailward hosts no MTA-STS policy for the domain, publishes none of its own and DANE does
/// not protect every MX host: advice naming both ways (code `inbound_tls_unprotected`).
async fn inbound_tls(resolver: &dyn DnsResolver, domain: &Domain) -> Option<Warning> {
    if domain.is_parked || (domain.is_mta_sts_managed && domain.mta_sts.is_some()) {
        return None;
    }
    let sts_name = format!("_mta-sts.{}", domain.url);
    let (sts, dane) = tokio::join!(
        resolver.lookup(&sts_name, RecordType::Txt),
        mailward_audit::dane::check(resolver, &domain.url)
    );
    let sts_absent = match sts {
        Ok(answer) => !answer
            .records
            .iter()
            .filter_map(RecordData::txt_value)
            .any(|t| t.trim_start().starts_with("v=STSv1")),
        Err(e) => e.is_definitive(),
    };
    let dane = dane?;
    if !sts_absent || mailward_audit::dane::protects_every_host(&dane) {
        return None;
    }
    let hosts: Vec<&str> = dane.hosts.iter().map(|h| h.host.as_str()).collect();
    if hosts.is_empty() {
        return None;
    }
    Some(Warning::new(
        "inbound_tls_unprotected",
        format!(
            "neither MTA-STS nor DANE protects mail sent to {}: an attacker on the path can strip STARTTLS and read it. Enable hosted MTA-STS here, or, if the zones of the MX hosts are DNSSEC-signed, publish DANE (RFC 7672) for each of them: a TLSA record at {} with the value \"3 1 1 <SHA-256 of the certificate's public key>\", kept up to date when the key changes",
            domain.url,
            hosts
                .iter()
                .map(|h| mailward_records::dane::tlsa_name(h))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

pub async fn dns_records(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<DnsRecordsResponse, ServiceError> {
    let domain = load(app, caller, id).await?.value;
    let direct = Uncached(app.resolver.as_ref());
    let deadline = Deadline::new(&direct, DNS_DEADLINE);
    let resolver = Budgeted::new(&deadline, QUERY_BUDGET);
    // The DNS provider's NS lookup is independent of the plan: asked at the same time.
    let plan = async {
        let ctx = context(app, &domain, &resolver, false).await;
        let expected = mailward_plan::expected_records(&ctx);
        let records = mailward_plan::compare(&resolver, &expected).await;
        (ctx, records)
    };
    let ((ctx, records), ns_lookup, inbound) = tokio::join!(
        plan,
        resolver.lookup(&domain.url, RecordType::Ns),
        inbound_tls(&resolver, &domain)
    );
    let mut warnings = mailward_plan::warnings(&ctx, &records);
    warnings.extend(inbound);
    let all_verified = mailward_plan::all_verified(&records);
    if matches!(ns_lookup, Err(DnsError::NxDomain)) {
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
            .filter_map(|r| match r {
                RecordData::Ns(n) => Some(n),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let dns_provider = DetectedDnsProvider {
        id: provider_of(&nameservers).map(str::to_owned),
        nameservers,
    };
    Ok(DnsRecordsResponse {
        records,
        all_verified,
        warnings,
        dns_provider,
    })
}

/// Adds what a verification confirmed (purposes, DKIM selectors that answered) to the stored
/// domain. Only verification writes these, but the sweep writes the domain too (its claim, the
/// status): losing the version check to it is not a reason to forget a confirmation, so the
/// write is applied again on the fresh copy (a few times at most).
async fn remember_verification(
    app: &AppState,
    caller: &Caller,
    read: Versioned<Domain>,
    confirmed: &[Purpose],
    selectors: &[String],
) -> Result<(), ServiceError> {
    let id = read.value.id;
    retry_on_conflict(
        MAX_SAVE_ATTEMPTS,
        read,
        |current: Versioned<Domain>| async move {
            let mut next = current.value.clone();
            let mut purposes: BTreeSet<Purpose> = next.verified_purposes.iter().copied().collect();
            purposes.extend(confirmed.iter().copied());
            next.verified_purposes = purposes.into_iter().collect();
            // The sweep re-checks these between its catalogue probes.
            let mut seen: BTreeSet<String> = next.dkim_selectors_seen.iter().cloned().collect();
            seen.extend(selectors.iter().cloned());
            next.dkim_selectors_seen = seen.into_iter().collect();
            if next == current.value {
                return Ok(());
            }
            let mut ops = domains::save_ops(&next, &current.value, current.version)?;
            ops.extend(crate::activity::ops(
                app,
                caller,
                crate::activity::Change::new(
                    "domain.verified",
                    "domain",
                    Some(next.id),
                    format!(
                        "verified {}: {}",
                        next.url,
                        confirmed
                            .iter()
                            .map(|p| p.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            )?);
            app.store.transact(ops).await?;
            Ok::<_, ServiceError>(())
        },
        || async move { Ok(OnConflict::Retry(load(app, caller, id).await?)) },
    )
    .await
}

/// Verifies the planned records now (all, or one purpose) against DNS without caches, and
/// remembers what was confirmed and which DKIM selectors answered.
pub async fn verify(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    only: Option<Purpose>,
) -> Result<VerifyResponse, ServiceError> {
    // Verification stores what it confirmed (and logs it): a write.
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    let domain = current.value.clone();
    let direct = Uncached(app.resolver.as_ref());
    let deadline = Deadline::new(&direct, DNS_DEADLINE);
    let resolver = Budgeted::new(&deadline, QUERY_BUDGET);
    let wants_dkim = only.is_none_or(|p| p == Purpose::Dkim);
    let ctx = context(app, &domain, &resolver, wants_dkim).await;
    let mut seen: Vec<String> = domain.dkim_selectors_seen.clone();
    seen.extend(ctx.dkim.iter().map(|k| k.selector.clone()));
    seen.sort();
    seen.dedup();
    let expected = mailward_plan::expected_records(&ctx);
    let verification = mailward_plan::verify(&resolver, &expected, only).await;
    let newly_confirmed: Vec<Purpose> = verification.confirmed().collect();
    remember_verification(app, caller, current, &newly_confirmed, &seen).await?;
    Ok(VerifyResponse {
        queued: false,
        verified: verification.verified,
        results: verification.results,
    })
}
