//! Step 4, pure: from the claimed domain, what the pass observed and what it reconciled, the
//! domain's next fields (the state machine's move, the score, the DKIM memory, the merged DNS
//! conflicts, the certificates, the task counters), the task writes, the events and the
//! snapshots to record. No storage and no network: tested on hand-built observations.

use super::observe::Observed;
use super::reconcile::Hosted;
use crate::config::Config;
use crate::error::ServiceError;
use crate::tasks::writes::SweepTaskWrites;
use mailward_audit::AuditResult;
use mailward_domain::conflicts::StoredConflict;
use mailward_domain::domain::{Domain, FailureReason};
use mailward_domain::snapshots::Snapshot;
use mailward_monitoring::{MonitoringEvent, MonitoringState, Step, Verdict, step};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// What one pass decided.
pub struct Derived {
    /// The domain to store (claim released).
    pub next: Domain,
    /// The state machine's move.
    pub step: Step,
    /// The domain events to publish (the move's, plus `domain.updated` when only the conflicts
    /// or task counters changed).
    pub events: Vec<MonitoringEvent>,
    /// The task reconciliation's writes.
    pub tasks: SweepTaskWrites,
    /// Snapshots of the records whose values changed.
    pub snapshots: Vec<Snapshot>,
}

/// Decides the pass.
pub fn derive(
    config: &Config,
    claimed: &Domain,
    observed: &Observed,
    hosted: &Hosted,
    now: OffsetDateTime,
) -> Result<Derived, ServiceError> {
    let audit = observed.audit.as_ref();
    // A score from answers that went missing would move on the loss, not on the domain: a
    // domain checked before keeps its score until an audit without failed lookups.
    let score = audit
        .filter(|a| claimed.last_checked_at.is_none() || !a.lookups_failed())
        .map_or(claimed.score, |a| a.summary.score);
    let moved = step(
        &monitoring_state(claimed),
        &observed.verdict,
        score,
        now,
        &config.sweep_rules(),
    );
    let mut next = next_fields(config, claimed, &moved, now);
    if let Some(memory) = &observed.dkim_memory {
        next.dkim_selectors_seen = memory.selectors.clone();
        next.dkim_full_probe_at = memory.full_probe_at;
    }
    if let Some(found) = &observed.conflicts {
        next.dns_conflicts = StoredConflict::merge(
            &claimed.dns_conflicts,
            &found.conflicts,
            &found.inconclusive_labels,
            now,
        );
    }
    if let Some(managed) = &hosted.managed_dmarc {
        next.managed_dmarc = managed.clone();
    }
    next.reports_authorized = hosted.reports_authorized;
    next.vmc_check = observed.vmc_check.clone();
    next.mx_tls_check = observed.mx_tls_check.clone();
    let tasks = task_writes(config, &next, observed, now)?;
    (next.open_tasks_count, next.highest_open_task_priority) = tasks.counters;
    let conflicts_changed =
        StoredConflict::keys(&next.dns_conflicts) != StoredConflict::keys(&claimed.dns_conflicts);
    let counters_changed =
        tasks.counters != (claimed.open_tasks_count, claimed.highest_open_task_priority);
    if moved.changed || conflicts_changed || counters_changed {
        next.updated_at = now;
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
    let snapshots = audit.map_or_else(Vec::new, |a| new_snapshots(claimed, a, observed, now));
    Ok(Derived {
        next,
        step: moved,
        events,
        tasks,
        snapshots,
    })
}

/// The domain after the state machine's move: status, reason, detail, policy, score, the
/// pending window, the next check, and the claim released.
fn next_fields(config: &Config, claimed: &Domain, moved: &Step, now: OffsetDateTime) -> Domain {
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
    next.next_check_at =
        Some(now + Duration::seconds(i64::try_from(config.sweep_interval_secs).unwrap_or(300)));
    next.sweep_claimed_until = None;
    next
}

/// The task engine's findings for the pass, reconciled with the stored tasks.
fn task_writes(
    config: &Config,
    domain: &Domain,
    observed: &Observed,
    now: OffsetDateTime,
) -> Result<SweepTaskWrites, ServiceError> {
    let audit = observed.audit.as_ref();
    let rua = domain.monitoring_email(&config.report_domain);
    let missing_rua = matches!(
        observed.verdict,
        Verdict::NotMonitored {
            reason: FailureReason::DmarcRecordMissingMailwardRua,
            ..
        }
    );
    // Sender tasks are judged when the domain has senders and the audit read its SPF record.
    let sender_findings = audit.filter(|_| !observed.senders.is_empty()).map(|a| {
        let live_spf = a.spf.as_ref().and_then(|s| s.record.clone());
        crate::reports::senders::findings_of(domain, &observed.senders, Some(&live_spf), now.date())
    });
    let evidence = mailward_tasks::Evidence {
        domain: &domain.url,
        parked: domain.is_parked,
        audit,
        missing_monitoring_rua: missing_rua.then_some(rua.as_str()),
        conflicts: &domain.dns_conflicts,
        conflicts_examined: observed.conflicts.is_some(),
        planned: &observed.planned,
        ttls: &observed.ttls,
        mx_certificates: domain
            .mx_tls_check
            .as_ref()
            .filter(|_| config.mx_tls_probe)
            .map(|c| c.findings.as_slice()),
        vmc: domain.vmc_check.as_ref().map(|c| &c.finding),
        senders: sender_findings.as_deref(),
        now,
    };
    let findings = mailward_tasks::derive(&evidence);
    crate::tasks::writes::sweep_writes(config, domain, &observed.tasks, &findings, audit, now)
}

/// A snapshot of each record type whose values differ from its latest one.
fn new_snapshots(
    claimed: &Domain,
    audit: &AuditResult,
    observed: &Observed,
    now: OffsetDateTime,
) -> Vec<Snapshot> {
    snapshot_values(audit)
        .into_iter()
        .filter(|(record_type, values)| {
            !observed
                .latest_snapshots
                .iter()
                .any(|s| s.record_type == *record_type && s.values == *values)
        })
        .map(|(record_type, values)| Snapshot {
            id: Uuid::new_v4(),
            domain_id: claimed.id,
            record_type: record_type.to_owned(),
            values,
            captured_at: now,
        })
        .collect()
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

/// The values of each snapshot type in an audit. A type whose lookup failed is absent, so a
/// timeout never records an empty snapshot.
fn snapshot_values(audit: &AuditResult) -> Vec<(&'static str, Vec<String>)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::observe::Observed;
    use async_trait::async_trait;
    use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
    use mailward_domain::domain::{MonitoringStatus, Policy};
    use mailward_monitoring::{Expectation, classify};
    use std::collections::HashMap;

    /// DNS answered from a table: no network, no storage.
    struct Canned(HashMap<(String, RecordType), Answer>);

    #[async_trait]
    impl DnsResolver for Canned {
        async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            match self.0.get(&(name.clone(), record_type)) {
                Some(answer) => Ok(answer.clone()),
                None if name.ends_with("example.test") => Ok(Answer::default()),
                None => Err(DnsError::NxDomain),
            }
        }
    }

    fn txt(value: &str) -> Answer {
        Answer {
            records: vec![RecordData::Txt(vec![value.as_bytes().to_vec()])],
            cname_chain: Vec::new(),
            ttl: Some(300),
        }
    }

    const T0: OffsetDateTime = time::macros::datetime!(2026-03-01 00:00 UTC);

    fn config(grace: Duration) -> Config {
        let mut config = Config::new("http://127.0.0.1:8080", vec![7; 32]);
        config.pending_grace_secs = u64::try_from(grace.whole_seconds()).unwrap();
        config
    }

    /// What a pass would observe of `domain` when `_dmarc` holds `record` (or nothing).
    async fn observed(config: &Config, domain: &Domain, record: Option<&str>) -> Observed {
        let mut table = HashMap::new();
        if let Some(record) = record {
            table.insert(
                (format!("_dmarc.{}", domain.url), RecordType::Txt),
                txt(record),
            );
        }
        let expect = Expectation {
            monitoring_email: domain.monitoring_email(&config.report_domain),
            delegated_target: None,
        };
        let observation = mailward_monitoring::observe(&Canned(table), &domain.url, &expect).await;
        Observed {
            verdict: classify(&observation),
            observation,
            ttls: Vec::new(),
            senders: Vec::new(),
            audit: None,
            dkim_memory: None,
            conflicts: None,
            vmc_check: None,
            mx_tls_check: None,
            tasks: Vec::new(),
            latest_snapshots: Vec::new(),
            planned: Vec::new(),
        }
    }

    fn claimed() -> Domain {
        let mut domain = Domain::new(Uuid::new_v4(), Uuid::new_v4(), "example.test".into(), T0);
        domain.sweep_claimed_until = Some(T0 + Duration::minutes(5));
        domain
    }

    #[tokio::test]
    async fn full_monitoring_sets_the_domain_up_and_releases_the_claim() {
        let config = config(Duration::hours(72));
        let domain = claimed();
        let rua = domain.monitoring_email(&config.report_domain);
        let seen = observed(
            &config,
            &domain,
            Some(&format!("v=DMARC1; p=quarantine; rua=mailto:{rua}")),
        )
        .await;
        let now = T0 + Duration::minutes(1);
        let derived = derive(&config, &domain, &seen, &Hosted::default(), now).unwrap();
        let next = &derived.next;
        assert_eq!(next.monitoring_status, MonitoringStatus::Setup);
        assert_eq!(next.dmarc_policy, Policy::Quarantine);
        assert_eq!(next.dmarc_verified_at, Some(now));
        assert_eq!(next.sweep_claimed_until, None);
        assert_eq!(next.last_checked_at, Some(now));
        assert_eq!(
            next.next_check_at,
            Some(now + Duration::seconds(i64::try_from(config.sweep_interval_secs).unwrap()))
        );
        let names: Vec<&str> = derived.events.iter().map(MonitoringEvent::name).collect();
        assert!(names.contains(&"domain.monitoring.activated"), "{names:?}");
        assert!(derived.snapshots.is_empty(), "no audit, no snapshot");
    }

    #[tokio::test]
    async fn a_missing_record_waits_out_the_grace_window_then_fails() {
        let domain = claimed();
        let waiting = config(Duration::hours(72));
        let seen = observed(&waiting, &domain, None).await;
        let derived = derive(&waiting, &domain, &seen, &Hosted::default(), T0).unwrap();
        assert_eq!(derived.next.monitoring_status, MonitoringStatus::Pending);
        assert_eq!(derived.next.pending_since, Some(T0));
        let impatient = config(Duration::ZERO);
        let derived = derive(&impatient, &domain, &seen, &Hosted::default(), T0).unwrap();
        assert_eq!(derived.next.monitoring_status, MonitoringStatus::Failed);
        assert_eq!(
            derived.next.monitoring_failure_reason,
            Some(FailureReason::DmarcRecordMissing)
        );
    }

    #[tokio::test]
    async fn stored_conflicts_stay_when_detection_did_not_run_and_hosting_moves_its_fields() {
        let config = config(Duration::hours(72));
        let mut domain = claimed();
        domain.dns_conflicts = vec![StoredConflict {
            conflict: mailward_domain::conflicts::Conflict {
                label: "_dmarc.example.test".into(),
                protocol: mailward_domain::conflicts::Protocol::Dmarc,
                kind: mailward_domain::conflicts::ConflictKind::MultipleDmarcRecords,
                summary: String::new(),
                rfc: String::new(),
                consequence: String::new(),
                remediation: String::new(),
                conflicting_records: Vec::new(),
                authoritative_nameservers: Vec::new(),
                public_resolvers: Vec::new(),
            },
            occurrence_count: 1,
            first_detected_at: T0,
            last_detected_at: T0,
        }];
        let seen = observed(&config, &domain, None).await;
        let hosted = Hosted {
            managed_dmarc: None,
            reports_authorized: true,
        };
        let derived = derive(&config, &domain, &seen, &hosted, T0).unwrap();
        assert_eq!(derived.next.dns_conflicts, domain.dns_conflicts);
        assert!(derived.next.reports_authorized);
    }
}
