//! The monitoring sweep (SPEC §3, §6.5): re-evaluates every domain on a period.
//!
//! - **Coordinator** ([`coordinate`]): walks the sparse due-work index (`SWEEP#<shard>`, sorted by
//!   next check time) and sends batches of domains to the jobs queue. It reads only index pages,
//!   never the table. On AWS an EventBridge schedule runs it; locally an interval or
//!   `mailward sweep`.
//! - **Worker** ([`run_batch`], a queue job): for each domain, claims it (a version-checked write
//!   of `sweep_claimed_until`, so two workers never evaluate one domain at once), observes its
//!   DNS with bounded concurrency, runs the audit for the score, applies the state machine of
//!   `mailward-monitoring`, and saves the domain with its events in one transaction. A failed
//!   batch is retried by the queue; a deleted domain is skipped; an update racing the sweep makes
//!   the save fail its version check and the domain is evaluated again on the next pass.

use crate::state::AppState;
pub use mailward_app::jobs::{SWEEP_BATCH, SweepBatch};
use mailward_dns::Budgeted;
use mailward_domain::conflicts::StoredConflict;
use mailward_domain::diff::previous_attributes;
use mailward_domain::domain::{Domain, MonitoringStatus, ScoreBand};
use mailward_domain::snapshots::Snapshot;
use mailward_monitoring::{
    Expectation, MonitoringEvent, MonitoringState, classify, escalate_lame_delegation, observe,
    step,
};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{domains, snapshots};
use serde_json::json;
use time::Duration;
use uuid::Uuid;

/// Domains per batch message.
pub const BATCH_SIZE: usize = 25;

/// How long a claim protects a domain from a second worker.
pub const CLAIM_SECS: i64 = 300;

/// Queries one domain's evaluation may make.
const DOMAIN_QUERY_BUDGET: u32 = 400;

/// Queues an evaluation of these domains now (a sweep batch on the jobs queue), so a domain
/// just added shows its real status and score within seconds instead of after the next sweep
/// period. Best effort: when the queue is unavailable the periodic sweep still picks the
/// domains up (they are due at once), so a failure is logged, not returned.
pub async fn evaluate_soon(state: &AppState, domains: &[(Uuid, Uuid)]) {
    if !state.config.evaluate_new_domains {
        return;
    }
    for chunk in domains.chunks(BATCH_SIZE) {
        let batch = SweepBatch {
            domains: chunk.to_vec(),
        };
        let sent = crate::job::enqueue(state, &batch, 0).await;
        if let Err(error) = sent {
            tracing::warn!(domains = chunk.len(), %error, "could not queue the evaluation of new domains; the next sweep will evaluate them");
        }
    }
}

fn monitoring_state(domain: &Domain) -> MonitoringState {
    MonitoringState {
        status: domain.monitoring_status,
        failure_reason: domain.monitoring_failure_reason,
        failure_detail: domain.monitoring_failure_detail.clone(),
        dmarc_verified_at: domain.dmarc_verified_at,
        dmarc_policy: domain.dmarc_policy,
        score: domain.score,
        created_at: domain.created_at,
        pending_since: domain.pending_since,
        consecutive_indeterminate: domain.consecutive_indeterminate,
    }
}

/// Refreshes what the domain keeps of its certificates, about once a day (the DKIM catalogue's
/// interval): the BIMI mark certificate its record names (fetched and read for its expiry) and,
/// where the probe runs, its MX hosts' TLS certificates. A check that could not run keeps the
/// last result for the same certificate; a record that names no certificate drops it.
async fn check_certificates(
    state: &AppState,
    before: &Domain,
    next: &mut Domain,
    audit: &mailward_audit::AuditResult,
    now: time::OffsetDateTime,
) {
    let interval = Duration::seconds(
        i64::try_from(state.config.dkim_full_probe_interval_secs).unwrap_or(i64::MAX / 2),
    );
    let due = |checked_at: time::OffsetDateTime| now - checked_at >= interval;
    let certificate_url = audit
        .bimi
        .as_ref()
        .filter(|b| b.certificate.present && b.certificate.https)
        .and_then(|b| b.certificate.url.clone());
    next.vmc_check = match certificate_url {
        None => None,
        Some(url) => {
            let kept = before.vmc_check.clone().filter(|c| c.finding.url == url);
            if kept.as_ref().is_some_and(|c| !due(c.checked_at)) {
                kept
            } else {
                match crate::outbound::vmc::fetch_not_after(state, &url).await {
                    Ok(not_after) => Some(mailward_domain::certificates::VmcCheck {
                        finding: mailward_domain::certificates::VmcFinding { url, not_after },
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
    if !state.config.mx_tls_probe {
        return;
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
        next.mx_tls_check = None;
        return;
    }
    if before
        .mx_tls_check
        .as_ref()
        .is_some_and(|c| !due(c.checked_at))
    {
        return;
    }
    let names: Vec<String> = hosts.into_iter().map(|(_, h)| h).collect();
    if let Some(findings) = crate::outbound::mx_tls::probe_domain(state, &names, now).await {
        next.mx_tls_check = Some(mailward_domain::certificates::MxTlsCheck {
            findings,
            checked_at: now,
        });
    }
}

/// What a pass gathered besides the audit and the verdict, for the task derivation.
struct PassEvidence<'a> {
    /// Whether conflict detection ran (conflict tasks are judged only then).
    conflicts_examined: bool,
    /// TTLs of the records that matter, as served.
    ttls: &'a [mailward_tasks::problems::RecordTtl],
    /// The domain's senders from aggregate reports.
    senders: &'a [mailward_domain::senders::DomainSource],
}

/// The domain's tasks after this evaluation: the problems it shows (from the audit, the
/// monitoring verdict, the conflicts, the DMARC TTL and the report senders), reconciled with
/// its stored tasks.
async fn derive_tasks(
    state: &AppState,
    domain: &Domain,
    verdict: &mailward_monitoring::Verdict,
    audit: Option<&mailward_audit::AuditResult>,
    pass: PassEvidence<'_>,
    now: time::OffsetDateTime,
) -> anyhow::Result<crate::tasks::writes::SweepTaskWrites> {
    let PassEvidence {
        conflicts_examined,
        ttls,
        senders,
    } = pass;
    let existing =
        mailward_store::tasks::list_for_domain(state.store.as_ref(), domain.org_id, domain.id)
            .await?;
    let rua = domain.monitoring_email(&state.config.report_domain);
    let missing_rua = matches!(
        verdict,
        mailward_monitoring::Verdict::NotMonitored {
            reason: mailward_domain::domain::FailureReason::DmarcRecordMissingMailwardRua,
            ..
        }
    );
    let planned = audit
        .map(|a| {
            let ctx = crate::evaluation::plan_context(
                state,
                domain,
                a.spf.as_ref().and_then(|s| s.record.clone()),
                crate::evaluation::dkim_from_audit(a),
            );
            crate::evaluation::planned_records(&ctx)
        })
        .unwrap_or_default();
    // Sender tasks are judged when the domain has senders and the audit read its SPF record.
    let sender_findings = audit.filter(|_| !senders.is_empty()).map(|a| {
        let live_spf = a.spf.as_ref().and_then(|s| s.record.clone());
        crate::reports::senders::findings_of(domain, senders, Some(&live_spf), now.date())
    });
    let evidence = mailward_tasks::Evidence {
        domain: &domain.url,
        parked: domain.is_parked,
        audit,
        missing_monitoring_rua: missing_rua.then_some(rua.as_str()),
        conflicts: &domain.dns_conflicts,
        conflicts_examined,
        planned: &planned,
        ttls,
        mx_certificates: domain
            .mx_tls_check
            .as_ref()
            .filter(|_| state.config.mx_tls_probe)
            .map(|c| c.findings.as_slice()),
        vmc: domain.vmc_check.as_ref().map(|c| &c.finding),
        senders: sender_findings.as_deref(),
        now,
    };
    let findings = mailward_tasks::derive(&evidence);
    Ok(crate::tasks::writes::sweep_writes(
        state, domain, &existing, &findings, audit, now,
    )?)
}

/// Sweeps in a row of name servers answering SERVFAIL/REFUSED after which the delegation is
/// taken as broken (`nameservers_unresolvable`): a day's worth of passes, at least three.
fn lame_delegation_after(interval_secs: u64) -> u32 {
    u32::try_from(86_400 / interval_secs.max(1))
        .unwrap_or(u32::MAX)
        .max(3)
}

/// What became of one domain in a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swept {
    /// Evaluated and stored; its monitoring status after the pass.
    Evaluated(MonitoringStatus),
    /// Another worker holds the domain's claim until this instant: not evaluated by this one.
    Busy(time::OffsetDateTime),
    /// Evaluated, but the domain changed meanwhile (a person's edit): the next pass evaluates it
    /// again.
    Superseded,
    /// Deleted before it could be evaluated.
    Gone,
}

/// Evaluates one domain end to end.
pub async fn sweep_domain(state: &AppState, org: Uuid, id: Uuid) -> anyhow::Result<Swept> {
    let store = state.store.as_ref();
    let now = state.clock.now();
    // Claim: only one worker evaluates a domain at a time.
    let Some(current) = domains::get(store, org, id).await? else {
        return Ok(Swept::Gone); // deleted while its batch was in flight
    };
    if let Some(until) = current
        .value
        .sweep_claimed_until
        .filter(|until| *until > now)
    {
        return Ok(Swept::Busy(until));
    }
    let mut claimed = current.value.clone();
    claimed.sweep_claimed_until = Some(now + Duration::seconds(CLAIM_SECS));
    match store
        .transact(vec![domains::save_op(&claimed, current.version)?])
        .await
    {
        Ok(()) => {}
        // Claimed or changed by someone else between the read and the claim.
        Err(e) if e.is_conflict() => return Ok(Swept::Superseded),
        Err(e) => return Err(e.into()),
    }
    let claim_version = current.version + 1;

    // Monitoring transitions must see DNS as it is now, not as a cache remembers it.
    let direct = mailward_domain::dns::Uncached(state.resolver.as_ref());
    let resolver = Budgeted::new(&direct, DOMAIN_QUERY_BUDGET).in_lane(state.sweep_dns_lane());
    let expect = Expectation {
        monitoring_email: claimed.monitoring_email(&state.config.report_domain),
        delegated_target: claimed
            .is_dmarc_managed
            .then(|| crate::domains::hosting::dmarc::dmarc_target(state, &claimed)),
    };
    // The DMARC record's TTL is noted as the observation reads it (uncached: the TTL served).
    let dmarc_host = format!("_dmarc.{}", claimed.url);
    let ttl_recorder = crate::evaluation::TtlRecorder::new(
        &resolver,
        vec![(dmarc_host, mailward_domain::purpose::Purpose::Dmarc)],
    );
    let observation = observe(&ttl_recorder, &claimed.url, &expect).await;
    let verdict = escalate_lame_delegation(
        &observation,
        classify(&observation),
        claimed.consecutive_indeterminate,
        lame_delegation_after(state.config.sweep_interval_secs),
    );
    let senders: Vec<mailward_domain::senders::DomainSource> =
        mailward_store::senders::list(store, org, id)
            .await?
            .into_iter()
            .map(|s| s.value)
            .collect();
    let reported: Vec<String> = senders
        .iter()
        .flat_map(|s| s.dkim_selectors.iter().cloned())
        .collect();
    let (audit, dkim_memory) = audit_with_dkim_memory(state, &claimed, &reported, now).await;
    let score = audit.as_ref().map_or(claimed.score, |a| a.summary.score);
    let previous = monitoring_state(&claimed);
    let moved = step(&previous, &verdict, score, now, &state.config.sweep_rules());

    let mut next = claimed.clone();
    next.monitoring_status = moved.next.status;
    next.monitoring_failure_reason = moved.next.failure_reason;
    next.monitoring_failure_detail = moved.next.failure_detail.clone();
    next.dmarc_verified_at = moved.next.dmarc_verified_at;
    next.dmarc_policy = moved.next.dmarc_policy;
    next.score = moved.next.score;
    next.pending_since = moved.next.pending_since;
    next.consecutive_indeterminate = moved.next.consecutive_indeterminate;
    next.last_checked_at = Some(now);
    next.next_check_at = Some(
        now + Duration::seconds(i64::try_from(state.config.sweep_interval_secs).unwrap_or(300)),
    );
    next.sweep_claimed_until = None;
    if let Some(memory) = dkim_memory {
        next.dkim_selectors_seen = memory.selectors;
        next.dkim_full_probe_at = memory.full_probe_at;
    }
    // Detection "never fails": what it could not learn yields no conflict. So when this pass's
    // DNS was inconclusive (a failed observation lookup, or no audit) the stored conflicts stay
    // as they are, instead of being dropped and later counted again from one.
    let dns_conclusive = observation.transient_failures.is_empty() && audit.is_some();
    let hosted_dmarc = crate::domains::hosting::dmarc::reconcile_dmarc(
        state,
        &claimed,
        &observation.delegation,
        observation.transient_failures.is_empty(),
        now,
    )
    .await;
    if let Some(managed) = &hosted_dmarc {
        next.managed_dmarc = managed.clone();
    }
    if !claimed.reports_authorized {
        match crate::domains::hosting::dmarc::authorize_reports(state, &claimed.url).await {
            Ok(()) => next.reports_authorized = true,
            Err(e) => {
                tracing::warn!(domain.id = %id, error = %e, "report authorization not published; next pass tries again")
            }
        }
    }
    if let Some(direct) = state.direct_dns.as_ref().filter(|_| dns_conclusive) {
        let mut input = mailward_conflicts::ConflictInput::new(&claimed.url);
        input.dkim_selectors = audit
            .as_ref()
            .and_then(|a| a.dkim.as_ref())
            .map(|d| d.found_selectors.clone())
            .unwrap_or_default();
        input.public_resolvers = state.config.public_resolvers.clone();
        input.nameserver_port = state.config.nameserver_port;
        input.nameserver_ports = state.config.nameserver_ports.clone();
        let found =
            mailward_conflicts::detect_with_coverage(&resolver, direct.as_ref(), &input).await;
        next.dns_conflicts = StoredConflict::merge(
            &claimed.dns_conflicts,
            &found.conflicts,
            &found.inconclusive_labels,
            now,
        );
    }
    let conflicts_changed =
        StoredConflict::keys(&next.dns_conflicts) != StoredConflict::keys(&claimed.dns_conflicts);
    if let Some(audit) = &audit {
        check_certificates(state, &claimed, &mut next, audit, now).await;
    }
    let task_writes = derive_tasks(
        state,
        &next,
        &verdict,
        audit.as_ref(),
        PassEvidence {
            conflicts_examined: state.direct_dns.is_some() && dns_conclusive,
            ttls: &ttl_recorder.ttls(),
            senders: &senders,
        },
        now,
    )
    .await?;
    (next.open_tasks_count, next.highest_open_task_priority) = task_writes.counters;
    let counters_changed =
        task_writes.counters != (claimed.open_tasks_count, claimed.highest_open_task_priority);
    if moved.changed || conflicts_changed || counters_changed {
        next.updated_at = now;
    }

    let before_view = serde_json::to_value(state.domain_view(&current.value))?;
    let after_view = serde_json::to_value(state.domain_view(&next))?;
    let mut ops = vec![domains::save_op(&next, claim_version)?];
    if next.monitoring_status != claimed.monitoring_status {
        ops.extend(crate::activity::system_ops(
            org,
            crate::activity::Change::new(
                "domain.monitoring_changed",
                "domain",
                Some(id),
                format!(
                    "{}: monitoring {:?} → {:?}",
                    next.url, claimed.monitoring_status, next.monitoring_status
                ),
            )
            .previous(Some(json!({
                "monitoring_status": claimed.monitoring_status.as_str(),
            }))),
            now,
        )?);
    }
    if let Some(audit) = &audit {
        let latest = snapshots::latest(store, org, id).await?;
        for (record_type, values) in snapshot_values(audit) {
            let unchanged = latest
                .iter()
                .any(|s| s.record_type == record_type && s.values == values);
            if !unchanged {
                let snapshot = Snapshot {
                    id: Uuid::new_v4(),
                    domain_id: id,
                    record_type: record_type.to_owned(),
                    values,
                    captured_at: now,
                };
                ops.extend(snapshots::record_ops(org, &snapshot)?);
            }
        }
    }
    if next.managed_dmarc.status != claimed.managed_dmarc.status {
        let kind = match next.managed_dmarc.status {
            mailward_domain::domain::ManagedStatus::Ready => {
                Some(mailward_domain::events::types::DOMAIN_HOSTED_RECORD_READY)
            }
            mailward_domain::domain::ManagedStatus::Error => {
                Some(mailward_domain::events::types::DOMAIN_HOSTED_RECORD_ERROR)
            }
            _ => None,
        };
        if let Some(kind) = kind {
            let mut event = OutboxEvent::new(kind, org, now, after_view.clone(), None);
            event.record = Some("dmarc".to_owned());
            ops.push(event.write_op()?);
        }
    }
    let mut events = moved.events.clone();
    if (conflicts_changed || counters_changed)
        && !events
            .iter()
            .any(|e| matches!(e, MonitoringEvent::Updated { .. }))
    {
        events.push(MonitoringEvent::Updated {
            fields: vec!["dns_conflicts".to_owned(), "open_tasks_count".to_owned()],
        });
    }
    for event in &events {
        let previous_attributes = match event {
            MonitoringEvent::PolicyChanged { previous } => {
                Some(json!({ "dmarc_policy": previous.as_str() }))
            }
            MonitoringEvent::ScoreBandChanged {
                previous_score,
                previous_band,
            } => Some(json!({
                "score": previous_score,
                "score_band": previous_band.as_str(),
            })),
            MonitoringEvent::Updated { .. } => previous_attributes(&before_view, &after_view),
            _ => None,
        };
        ops.push(
            OutboxEvent::new(
                event.name(),
                org,
                now,
                after_view.clone(),
                previous_attributes,
            )
            .write_op()?,
        );
    }
    if ops.len() + task_writes.ops.len() <= mailward_domain::store::MAX_TRANSACTION_OPS {
        ops.extend(task_writes.ops);
    } else {
        tracing::warn!(domain.id = %id, ops = ops.len() + task_writes.ops.len(), "too many writes for one transaction; the domain's tasks are reconciled next pass");
    }
    let outcome = match store.transact(ops).await {
        Ok(()) => {
            for task in &task_writes.moved {
                crate::tasks::writes::schedule_check(state, task).await;
            }
            Swept::Evaluated(next.monitoring_status)
        }
        // Updated meanwhile (a person, report identification): evaluated again on the next
        // pass; the report window below still slides, it has its own retries.
        Err(e) if e.is_conflict() => Swept::Superseded,
        Err(e) => return Err(e.into()),
    };
    // The 14-day report window slides daily even when no report arrives.
    let yesterday = now.date().previous_day().unwrap_or(now.date());
    if claimed
        .report_figures
        .as_ref()
        .is_some_and(|f| f.as_of < mailward_store::reports::day_string(yesterday))
        && let Err(e) = crate::reports::figures::refresh_figures(state, org, id, None).await
    {
        tracing::warn!(domain.id = %id, error = %e, "could not slide the report window");
    }
    if moved.indeterminate_alert {
        tracing::warn!(domain.id = %id, domain.name = %claimed.url, "DNS answers for this domain have been inconclusive for several sweeps");
    }
    tracing::debug!(domain.id = %id, status = ?next.monitoring_status, band = ?ScoreBand::of(next.score), "domain swept");
    Ok(outcome)
}

/// What the sweep remembers of a domain's DKIM selectors after an audit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DkimMemory {
    selectors: Vec<String>,
    full_probe_at: Option<time::OffsetDateTime>,
}

/// Whether this pass must probe the whole selector catalogue: never done, older than the
/// configured interval, or nothing remembered to re-check cheaply.
fn full_dkim_probe_due(domain: &Domain, now: time::OffsetDateTime, interval_secs: u64) -> bool {
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
    now: time::OffsetDateTime,
) -> (Option<mailward_audit::AuditResult>, Option<DkimMemory>) {
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
fn dkim_found(audit: &mailward_audit::AuditResult) -> Vec<String> {
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
) -> Option<mailward_audit::AuditResult> {
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

/// The values of each snapshot type in an audit. A type whose lookup failed is absent, so a
/// timeout never records an empty snapshot.
fn snapshot_values(audit: &mailward_audit::AuditResult) -> Vec<(&'static str, Vec<String>)> {
    let failed = |assessment: &mailward_audit::Assessment| {
        assessment
            .warnings
            .iter()
            .chain(assessment.errors.iter())
            .any(|c| c == "dns_lookup_failed")
    };
    let mut out = Vec::new();
    if let Some(spf) = &audit.spf
        && !failed(&spf.assessment)
    {
        out.push(("spf", spf.records.clone()));
    }
    if let Some(dmarc) = &audit.dmarc
        && !failed(&dmarc.assessment)
    {
        out.push(("dmarc", dmarc.records.clone()));
    }
    if let Some(bimi) = &audit.bimi
        && !failed(&bimi.assessment)
    {
        out.push(("bimi", bimi.record.iter().cloned().collect()));
    }
    if let Some(mx) = &audit.mx
        && !failed(&mx.assessment)
    {
        out.push((
            "mx",
            mx.records
                .iter()
                .map(|r| format!("{} {}", r.preference, r.exchange))
                .collect(),
        ));
    }
    if let Some(dkim) = &audit.dkim
        && !failed(&dkim.assessment)
    {
        out.push((
            "dkim",
            dkim.selectors
                .iter()
                .filter(|s| s.found)
                .map(|s| {
                    format!(
                        "{}: {}",
                        s.selector,
                        s.record
                            .clone()
                            .or_else(|| s.cname_target.clone())
                            .unwrap_or_default()
                    )
                })
                .collect(),
        ));
    }
    let ns_answered = matches!(audit.nameservers_status.as_deref(), Some("ok" | "no_data"));
    if let Some(ns) = audit.nameservers.as_ref().filter(|_| ns_answered) {
        out.push(("ns", ns.clone()));
    }
    if let Some(sts) = &audit.mta_sts
        && !failed(&sts.assessment)
    {
        out.push(("mta_sts", sts.record.iter().cloned().collect()));
    }
    if let Some(tls) = &audit.tls_rpt
        && !failed(&tls.assessment)
    {
        out.push(("tls_rpt", tls.record.iter().cloned().collect()));
    }
    for (_, values) in &mut out {
        values.sort();
        values.dedup();
    }
    out
}
