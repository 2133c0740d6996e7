//! Step 2: what the world says of the domain, read and not written: the DMARC observation and
//! its verdict (uncached DNS: transitions must see DNS as it is now), the audit for the score
//! with the DKIM selectors remembered, DNS conflicts when the pass's DNS was conclusive, the
//! certificates due a check, and from the store the senders, the open tasks and the latest
//! snapshots. Everything the pure [`super::derive`] needs.

use crate::state::AppState;
use mailward_audit::AuditResult;
use mailward_dns::Budgeted;
use mailward_domain::certificates::{MxTlsCheck, VmcCheck, VmcFinding};
use mailward_domain::domain::Domain;
use mailward_domain::senders::DomainSource;
use mailward_domain::snapshots::Snapshot;
use mailward_monitoring::{Expectation, Observation, Verdict, classify, escalate_lame_delegation};
use mailward_store::Versioned;
use mailward_tasks::Task;
use mailward_tasks::problems::{PlannedRecord, RecordTtl};
use time::{Duration, OffsetDateTime};

/// Queries one domain's evaluation may make.
const DOMAIN_QUERY_BUDGET: u32 = 400;

/// What one pass learnt about a domain.
pub struct Observed {
    /// The DMARC set-up as DNS shows it, with the evidence.
    pub observation: Observation,
    /// Its classification (a lame delegation made definite after a day).
    pub verdict: Verdict,
    /// TTLs of the records the tasks judge, as served.
    pub ttls: Vec<RecordTtl>,
    /// The domain's senders from aggregate reports.
    pub senders: Vec<DomainSource>,
    /// The audit, when it succeeded (the score and snapshots come from it).
    pub audit: Option<AuditResult>,
    /// The DKIM selectors to remember.
    pub dkim_memory: Option<DkimMemory>,
    /// Conflict detection's result; `None` when it did not run (no direct DNS, or this pass's
    /// DNS was inconclusive: the stored conflicts then stay as they are).
    pub conflicts: Option<mailward_conflicts::Detection>,
    /// The BIMI certificate check after this pass.
    pub vmc_check: Option<VmcCheck>,
    /// The MX certificate check after this pass.
    pub mx_tls_check: Option<MxTlsCheck>,
    /// The domain's tasks, as stored.
    pub tasks: Vec<Versioned<Task>>,
    /// The latest snapshot of each record type.
    pub latest_snapshots: Vec<Snapshot>,
    /// The records the plan asks for (the tasks compare them with live DNS).
    pub planned: Vec<PlannedRecord>,
}

/// Reads everything one pass needs.
pub async fn observe(
    state: &AppState,
    domain: &Domain,
    now: OffsetDateTime,
) -> anyhow::Result<Observed> {
    let store = state.store.as_ref();
    let direct = mailward_domain::dns::Uncached(state.resolver.as_ref());
    let resolver = Budgeted::new(&direct, DOMAIN_QUERY_BUDGET).in_lane(state.sweep_dns_lane());
    let expect = Expectation {
        monitoring_email: domain.monitoring_email(&state.config.report_domain),
        delegated_target: domain
            .is_dmarc_managed
            .then(|| crate::domains::hosting::dmarc::dmarc_target(state, domain)),
    };
    // The DMARC record's TTL is noted as the observation reads it (uncached: the TTL served).
    let dmarc_host = format!("_dmarc.{}", domain.url);
    let ttl_recorder = super::TtlRecorder::new(
        &resolver,
        vec![(dmarc_host, mailward_domain::purpose::Purpose::Dmarc)],
    );
    let observation = mailward_monitoring::observe(&ttl_recorder, &domain.url, &expect).await;
    let verdict = escalate_lame_delegation(
        &observation,
        classify(&observation),
        domain.consecutive_indeterminate,
        lame_delegation_after(state.config.sweep_interval_secs),
    );
    let senders: Vec<DomainSource> = mailward_store::senders::list(store, domain.org_id, domain.id)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect();
    let reported: Vec<String> = senders
        .iter()
        .flat_map(|s| s.dkim_selectors.iter().cloned())
        .collect();
    let (audit, dkim_memory) = audit_with_dkim_memory(state, domain, &reported, now).await;
    // Detection "never fails": what it could not learn yields no conflict. So when this pass's
    // DNS was inconclusive (a failed observation lookup, or no audit) it does not run.
    let conclusive = observation.transient_failures.is_empty() && audit.is_some();
    let conflicts = match state.direct_dns.as_ref().filter(|_| conclusive) {
        Some(direct) => {
            Some(detect_conflicts(state, domain, audit.as_ref(), &resolver, direct.as_ref()).await)
        }
        None => None,
    };
    let (vmc_check, mx_tls_check) = match &audit {
        Some(audit) => certificates(state, domain, audit, now).await,
        None => (domain.vmc_check.clone(), domain.mx_tls_check.clone()),
    };
    let planned = audit
        .as_ref()
        .map(|a| {
            let ctx = super::plan_context(
                state,
                domain,
                a.spf.as_ref().and_then(|s| s.record.clone()),
                super::dkim_from_audit(a),
            );
            super::planned_records(&ctx)
        })
        .unwrap_or_default();
    Ok(Observed {
        ttls: ttl_recorder.ttls(),
        tasks: mailward_store::tasks::list_for_domain(store, domain.org_id, domain.id).await?,
        latest_snapshots: match &audit {
            Some(_) => mailward_store::snapshots::latest(store, domain.org_id, domain.id).await?,
            None => Vec::new(),
        },
        observation,
        verdict,
        senders,
        audit,
        dkim_memory,
        conflicts,
        vmc_check,
        mx_tls_check,
        planned,
    })
}

/// Asks the domain's authoritative name servers and the configured public resolvers directly.
async fn detect_conflicts(
    state: &AppState,
    domain: &Domain,
    audit: Option<&AuditResult>,
    resolver: &Budgeted<'_>,
    direct: &dyn mailward_conflicts::DirectDns,
) -> mailward_conflicts::Detection {
    let mut input = mailward_conflicts::ConflictInput::new(&domain.url);
    input.dkim_selectors = audit
        .and_then(|a| a.dkim.as_ref())
        .map(|d| d.found_selectors.clone())
        .unwrap_or_default();
    input.public_resolvers = state.config.public_resolvers.clone();
    input.nameserver_port = state.config.nameserver_port;
    input.nameserver_ports = state.config.nameserver_ports.clone();
    mailward_conflicts::detect_with_coverage(resolver, direct, &input).await
}

/// Sweeps in a row of name servers answering SERVFAIL/REFUSED after which the delegation is
/// taken as broken (`nameservers_unresolvable`): a day's worth of passes, at least three.
fn lame_delegation_after(interval_secs: u64) -> u32 {
    u32::try_from(86_400 / interval_secs.max(1))
        .unwrap_or(u32::MAX)
        .max(3)
}

/// What the sweep remembers of a domain's DKIM selectors after an audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DkimMemory {
    /// The selectors found (kept for the quick probes in between).
    pub selectors: Vec<String>,
    /// When the whole catalogue was last probed.
    pub full_probe_at: Option<OffsetDateTime>,
}

/// Whether this pass must probe the whole selector catalogue: never done, older than the
/// configured interval, or nothing remembered to re-check cheaply.
fn full_dkim_probe_due(domain: &Domain, now: OffsetDateTime, interval_secs: u64) -> bool {
    let interval = Duration::seconds(i64::try_from(interval_secs).unwrap_or(i64::MAX / 2));
    domain
        .dkim_full_probe_at
        .is_none_or(|at| now - at >= interval)
}

/// The audit for the score and snapshots, with the DKIM probe kept cheap: between full probes
/// only the selectors found last time are asked (two queries each instead of two per catalogue
/// selector). When one of them stopped answering with a key (a rotation, a removed sender), the
/// full catalogue is probed at once so a new selector is found in the same pass; the other
/// lookups of that second audit come from the resolver's cache.
async fn audit_with_dkim_memory(
    state: &AppState,
    domain: &Domain,
    reported: &[String],
    now: OffsetDateTime,
) -> (Option<AuditResult>, Option<DkimMemory>) {
    // Selectors seen signing in aggregate reports are always probed, first among equals.
    let with_reported = |mut selectors: Vec<String>| {
        for s in reported {
            if !selectors.contains(s) {
                selectors.push(s.clone());
            }
        }
        selectors
    };
    let catalogue = with_reported(mailward_domain::sources::catalogue().dkim_discovery_selectors());
    if !full_dkim_probe_due(domain, now, state.config.dkim_full_probe_interval_secs) {
        let quick = run_audit(
            state,
            domain,
            with_reported(domain.dkim_selectors_seen.clone()),
            Vec::new(),
        )
        .await;
        if let Some(audit) = &quick {
            let found = dkim_found(audit);
            if domain.dkim_selectors_seen.iter().all(|s| found.contains(s)) {
                let memory = DkimMemory {
                    selectors: found,
                    full_probe_at: domain.dkim_full_probe_at,
                };
                return (quick, Some(memory));
            }
        } else {
            return (None, None);
        }
    }
    // The selectors known to sign (seen in reports or found before) are asked first.
    let known = with_reported(domain.dkim_selectors_seen.clone());
    let full = run_audit(state, domain, catalogue, known).await;
    let memory = full.as_ref().map(|audit| {
        let found = dkim_found(audit);
        let failed: Vec<String> = audit
            .dkim
            .as_ref()
            .map(|d| {
                d.selectors
                    .iter()
                    .filter(|s| s.lookup_failed)
                    .map(|s| s.selector.clone())
                    .collect()
            })
            .unwrap_or_default();
        if failed.is_empty() {
            DkimMemory {
                selectors: found,
                full_probe_at: Some(now),
            }
        } else {
            // Incomplete: keep what may still be there and probe everything again next pass.
            let mut selectors = found;
            selectors.extend(
                domain
                    .dkim_selectors_seen
                    .iter()
                    .filter(|s| failed.contains(s))
                    .cloned(),
            );
            selectors.sort();
            selectors.dedup();
            DkimMemory {
                selectors,
                full_probe_at: domain.dkim_full_probe_at,
            }
        }
    });
    (full, memory)
}

/// Selectors with a key record in an audit.
fn dkim_found(audit: &AuditResult) -> Vec<String> {
    let mut found = audit
        .dkim
        .as_ref()
        .map(|d| d.found_selectors.clone())
        .unwrap_or_default();
    found.sort();
    found.dedup();
    found
}

/// The audit of a domain (None when it could not run): its score, and the values snapshots keep.
/// `first` are selectors to ask ahead of the others (they are also among `selectors`).
async fn run_audit(
    state: &AppState,
    domain: &Domain,
    selectors: Vec<String>,
    first: Vec<String>,
) -> Option<AuditResult> {
    let resolver =
        Budgeted::new(state.resolver.as_ref(), DOMAIN_QUERY_BUDGET).in_lane(state.sweep_dns_lane());
    let fetcher = crate::outbound::mta_sts::OutboundPolicyFetcher { app: state };
    let input = mailward_audit::AuditInput {
        domain: domain.url.clone(),
        email: None,
        dkim_selectors: Some(selectors),
        extra_selectors: first,
        hosted_dmarc_suffix: state.config.hosted_dmarc_suffix.clone(),
    };
    let result = mailward_audit::audit(&resolver, &fetcher, &input).await;
    matches!(result.status, mailward_audit::AuditStatus::Success).then_some(result)
}

/// Refreshes what the domain keeps of its certificates, about once a day (the DKIM catalogue's
/// interval): the BIMI mark certificate its record names (fetched and read for its expiry) and,
/// where the probe runs, its MX hosts' TLS certificates. A check that could not run keeps the
/// last result for the same certificate; a record that names no certificate drops it.
async fn certificates(
    state: &AppState,
    before: &Domain,
    audit: &AuditResult,
    now: OffsetDateTime,
) -> (Option<VmcCheck>, Option<MxTlsCheck>) {
    let interval = Duration::seconds(
        i64::try_from(state.config.dkim_full_probe_interval_secs).unwrap_or(i64::MAX / 2),
    );
    let due = |checked_at: OffsetDateTime| now - checked_at >= interval;
    let certificate_url = audit
        .bimi
        .as_ref()
        .filter(|b| b.certificate.present && b.certificate.https)
        .and_then(|b| b.certificate.url.clone());
    let vmc_check = match certificate_url {
        None => None,
        Some(url) => {
            let kept = before.vmc_check.clone().filter(|c| c.finding.url == url);
            if kept.as_ref().is_some_and(|c| !due(c.checked_at)) {
                kept
            } else {
                match crate::outbound::vmc::fetch_not_after(state, &url).await {
                    Ok(not_after) => Some(VmcCheck {
                        finding: VmcFinding { url, not_after },
                        checked_at: now,
                    }),
                    Err(why) => {
                        tracing::info!(domain.id = %before.id, %why, "BIMI certificate not read");
                        kept
                    }
                }
            }
        }
    };
    let kept = before.mx_tls_check.clone();
    if !state.config.mx_tls_probe {
        return (vmc_check, kept);
    }
    let mut hosts: Vec<(u16, String)> = audit
        .mx
        .as_ref()
        .map(|mx| {
            mx.records
                .iter()
                .filter(|r| r.exchange != "." && !r.exchange.is_empty())
                .map(|r| (r.preference, r.exchange.clone()))
                .collect()
        })
        .unwrap_or_default();
    hosts.sort();
    if hosts.is_empty() {
        return (vmc_check, None);
    }
    if kept.as_ref().is_some_and(|c| !due(c.checked_at)) {
        return (vmc_check, kept);
    }
    let names: Vec<String> = hosts.into_iter().map(|(_, h)| h).collect();
    let dane: std::collections::HashMap<String, Vec<_>> = audit
        .dane
        .as_ref()
        .map(|d| {
            names
                .iter()
                .map(|h| (h.clone(), d.usable_records(h)))
                .filter(|(_, r)| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    match crate::outbound::mx_tls::probe_domain(state, &names, (now, &dane)).await {
        Some(findings) => (
            vmc_check,
            Some(MxTlsCheck {
                findings,
                checked_at: now,
            }),
        ),
        None => (vmc_check, kept),
    }
}
