//! From one evaluation of a domain to the problems it shows: the DNS evidence (the audit, the
//! monitoring verdict, the stored conflicts, record TTLs, certificates) and, as a second input,
//! what aggregate reports say about its senders. Each problem is what one task is about.

use crate::model::{TaskType, priority, sequence};
use mailward_audit::{AuditResult, AuditStatus, Dimension, PolicyState};
use mailward_domain::conflicts::StoredConflict;
use mailward_domain::purpose::Purpose;
use mailward_domain::senders::ConfirmationStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use uuid::Uuid;

/// A record the domain should publish (from the records guidance), used to say exactly what
/// to publish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRecord {
    /// What it is for.
    pub purpose: Purpose,
    /// `TXT` or `CNAME`.
    pub record_type: String,
    /// The full host name.
    pub host: String,
    /// The exact value.
    pub value: String,
}

/// A record's TTL as served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordTtl {
    /// What the record is for.
    pub purpose: Purpose,
    /// Its host name.
    pub host: String,
    /// The TTL served, in seconds.
    pub ttl: u32,
}

pub use mailward_domain::certificates::{MxCertificateFinding, VmcFinding};

/// What aggregate reports say about one sender of the domain (a stored DomainSource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SenderFinding {
    /// The DomainSource id (one sender task of a type per sender).
    pub sender_id: Uuid,
    /// The catalogue source, when recognised.
    pub source_id: Option<Uuid>,
    /// How people know the sender (catalogue name, sending domain or address).
    pub name: String,
    /// The domain the sender uses in its envelope or signature.
    pub sending_domain: Option<String>,
    /// What a person decided about it.
    pub status: ConfirmationStatus,
    /// Messages in the recent window (the last 30 days).
    pub volume: u64,
    /// Share of its recent mail passing DMARC, 0-100.
    pub dmarc_pass_pct: f64,
    /// Share of its recent mail passing SPF aligned, 0-100.
    pub spf_pass_pct: f64,
    /// Share of its recent mail passing DKIM aligned, 0-100.
    pub dkim_pass_pct: f64,
    /// A person chose to stop counting it against SPF.
    pub ignore_spf: bool,
    /// A person chose to stop counting it against DKIM.
    pub ignore_dkim: bool,
    /// Days since its last report day; `None` when never seen.
    pub days_since_seen: Option<i64>,
    /// The SPF mechanism that authorizes it, when the domain's live SPF record still holds it.
    pub spf_value_published: Option<String>,
    /// Selectors of the domain's own signatures it uses that Mailward does not monitor.
    pub unmonitored_selectors: Vec<String>,
}

/// Days without mail after which a confirmed sender is worth a review.
pub const UNUSED_SENDER_DAYS: i64 = 30;

/// Everything one evaluation knows about a domain.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The domain name.
    pub domain: &'a str,
    /// Whether the domain is parked (sends and receives no mail).
    pub parked: bool,
    /// The audit; `None` when it could not run (everything is then inconclusive).
    pub audit: Option<&'a AuditResult>,
    /// Whether the DMARC record lacks Mailward's report address (the sweep's monitoring
    /// verdict), and the address to add.
    pub missing_monitoring_rua: Option<&'a str>,
    /// The domain's unresolved DNS conflicts.
    pub conflicts: &'a [StoredConflict],
    /// Whether conflict detection ran this pass (when not, conflict tasks are left alone).
    pub conflicts_examined: bool,
    /// The records the domain should publish.
    pub planned: &'a [PlannedRecord],
    /// TTLs of the records that matter, as served.
    pub ttls: &'a [RecordTtl],
    /// MX certificate findings; `None` when no probe ran (those tasks are left alone).
    pub mx_certificates: Option<&'a [MxCertificateFinding]>,
    /// The VMC; `None` when none was fetched (those tasks are left alone).
    pub vmc: Option<&'a VmcFinding>,
    /// Senders from aggregate reports; `None` until reports exist (sender tasks are left alone).
    pub senders: Option<&'a [SenderFinding]>,
    /// When the evaluation ran.
    pub now: time::OffsetDateTime,
}

/// One problem: what one task is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// The task type that fixes it.
    pub task_type: TaskType,
    /// Which problem of that type (one task per key).
    pub key: String,
    /// 0 critical to 3 low.
    pub priority: u8,
    /// Rollout position.
    pub sequence: u8,
    /// One sentence a person can act on.
    pub description: String,
    /// The audit codes the problem stands for, per dimension (for the score gain).
    pub codes: Vec<(Dimension, String)>,
    /// The sender's domain, for sender tasks.
    pub sending_domain: Option<String>,
    /// The sender's catalogue source, for sender tasks.
    pub source_id: Option<Uuid>,
}

/// The problems of one evaluation, and what it could judge.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// The problems present.
    pub problems: Vec<Problem>,
    /// Task types this evaluation could judge: an active task of another type is left as it
    /// is (its evidence was not gathered, or its lookups failed).
    pub judged: BTreeSet<TaskType>,
    /// Task types that do not apply to the domain at all (e.g. MTA-STS on a parked domain): an
    /// active task of such a type is canceled.
    pub not_applicable: BTreeSet<TaskType>,
}

/// A problem with a stable key equal to its type (the types with at most one task).
fn single(task_type: TaskType, priority: u8, sequence: u8, description: String) -> Problem {
    Problem {
        task_type,
        key: task_type.as_str().to_owned(),
        priority,
        sequence,
        description,
        codes: Vec::new(),
        sending_domain: None,
        source_id: None,
    }
}

fn with_codes(mut problem: Problem, dimension: Dimension, codes: &[&str]) -> Problem {
    problem.codes = codes.iter().map(|c| (dimension, (*c).to_owned())).collect();
    problem
}

/// Whether an assessment's lookups failed (its findings are unknown, not absent).
fn failed(assessment: &mailward_audit::Assessment) -> bool {
    assessment
        .errors
        .iter()
        .chain(assessment.warnings.iter())
        .any(|c| c == mailward_audit::verdict::DNS_LOOKUP_FAILED)
}

fn has(assessment: &mailward_audit::Assessment, code: &str) -> bool {
    assessment
        .errors
        .iter()
        .chain(assessment.warnings.iter())
        .chain(assessment.info.iter())
        .any(|c| c == code)
}

fn planned<'a>(evidence: &Evidence<'a>, purpose: Purpose) -> Option<&'a PlannedRecord> {
    evidence.planned.iter().find(|r| r.purpose == purpose)
}

/// "publish TXT `_dmarc.example.com` = `v=DMARC1; ...`" for a planned record, or a pointer to
/// the records guidance when none is planned.
fn publish(evidence: &Evidence<'_>, purpose: Purpose) -> String {
    match planned(evidence, purpose) {
        Some(r) => format!(
            "publish {} {} with the value \"{}\"",
            r.record_type, r.host, r.value
        ),
        None => "publish the record shown in the domain's records guidance".to_owned(),
    }
}

/// TTL above which a record's changes take too long to reach receivers.
pub const MAX_TTL_SECS: u32 = 86_400;
/// TTL the records guidance recommends.
pub const RECOMMENDED_TTL_SECS: u32 = 3_600;
/// How long before a certificate expires its renewal becomes a task.
pub const CERTIFICATE_WARNING_DAYS: i64 = 30;

/// The problems one evaluation shows.
pub fn derive(evidence: &Evidence<'_>) -> Findings {
    let mut findings = Findings::default();
    if evidence.conflicts_examined {
        findings.judged.insert(TaskType::ResolveDnsConflict);
        for conflict in evidence.conflicts {
            let c = &conflict.conflict;
            let key = format!("{}#{}", c.label, c.kind.as_str());
            findings.problems.push(Problem {
                key,
                ..single(
                    TaskType::ResolveDnsConflict,
                    priority::HIGH,
                    sequence::FOUNDATION,
                    format!("{} at {}: {}", sentence(&c.summary), c.label, c.remediation),
                )
            });
        }
    }
    if let Some(senders) = evidence.senders {
        sender_problems(senders, &mut findings);
    }
    let Some(audit) = evidence.audit.filter(|a| a.status == AuditStatus::Success) else {
        return findings;
    };
    if evidence.parked {
        parked_problems(evidence, audit, &mut findings);
        return findings;
    }
    findings.not_applicable.insert(TaskType::LockdownDomain);
    dmarc_problems(evidence, audit, &mut findings);
    spf_problems(evidence, audit, &mut findings);
    mx_problems(evidence, audit, &mut findings);
    receiving_problems(evidence, audit, &mut findings);
    bimi_problems(evidence, audit, &mut findings);
    ttl_problems(evidence, &mut findings);
    certificate_problems(evidence, &mut findings);
    findings
}

/// A summary as a sentence start (no trailing period).
fn sentence(summary: &str) -> String {
    summary.trim().trim_end_matches('.').to_owned()
}

/// DMARC: set up (no record of its own) or update (broken, or without Mailward's address).
fn dmarc_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    let Some(dmarc) = &audit.dmarc else { return };
    if failed(&dmarc.assessment) {
        return;
    }
    findings.judged.insert(TaskType::SetUpDmarcRecord);
    findings.judged.insert(TaskType::UpdateDmarcRecord);
    let a = &dmarc.assessment;
    let host = format!("_dmarc.{}", evidence.domain);
    if has(a, "dmarc_record_missing") {
        let problem = single(
            TaskType::SetUpDmarcRecord,
            priority::CRITICAL,
            sequence::DMARC_SETUP,
            format!(
                "No DMARC record is published for {}, so receivers neither report on nor protect its mail: {}.",
                evidence.domain,
                publish(evidence, Purpose::Dmarc)
            ),
        );
        findings.problems.push(with_codes(
            problem,
            Dimension::Dmarc,
            &["dmarc_record_missing"],
        ));
        return;
    }
    if has(a, "dmarc_record_on_parent_only") {
        let problem = single(
            TaskType::SetUpDmarcRecord,
            priority::HIGH,
            sequence::DMARC_SETUP,
            format!(
                "{} has no DMARC record of its own and inherits its parent's policy, so its reports are not sent to Mailward: {}.",
                evidence.domain,
                publish(evidence, Purpose::Dmarc)
            ),
        );
        findings.problems.push(with_codes(
            problem,
            Dimension::Dmarc,
            &["dmarc_record_on_parent_only"],
        ));
        return;
    }
    // One update task for the record, describing its most severe issue.
    let issues: [(&str, u8, &str); 7] = [
        (
            "dmarc_multiple_records",
            priority::CRITICAL,
            "several DMARC records are published, so receivers apply none of them",
        ),
        (
            "dmarc_record_invalid",
            priority::CRITICAL,
            "the DMARC record is not valid, so receivers apply no DMARC",
        ),
        (
            "dmarc_dangling_cname",
            priority::CRITICAL,
            "the DMARC CNAME points at a name with no DMARC record",
        ),
        (
            "policy_treated_as_none",
            priority::HIGH,
            "the DMARC record's policy is unusable and receivers treat it as p=none",
        ),
        (
            "dmarc_near_miss_record",
            priority::HIGH,
            "a TXT record that looks like DMARC but is malformed is published, and receivers ignore it",
        ),
        (
            "rua_destination_unauthorized",
            priority::MEDIUM,
            "an external report address in rua has not authorized the domain, so receivers drop those reports",
        ),
        (
            "legacy_tag_pct",
            priority::LOW,
            "the DMARC record still uses pct, which RFC 9989 removed (t=y replaces it)",
        ),
    ];
    let mut codes: Vec<&str> = issues
        .iter()
        .filter(|(code, _, _)| has(a, code))
        .map(|(code, _, _)| *code)
        .collect();
    let worst = issues.iter().find(|(code, _, _)| has(a, code));
    let missing_rua = evidence.missing_monitoring_rua;
    let (priority, what) = match (worst, missing_rua) {
        (Some((_, p, what)), _) => (*p, (*what).to_owned()),
        (None, Some(rua)) => (
            priority::HIGH,
            format!(
                "the DMARC record does not send aggregate reports to Mailward (mailto:{rua} is missing from rua)"
            ),
        ),
        (None, None) => return,
    };
    if missing_rua.is_some() {
        codes.push("rua_missing");
    }
    let problem = single(
        TaskType::UpdateDmarcRecord,
        priority,
        sequence::DMARC_SETUP,
        format!(
            "At {host} {what}: replace it with one record and {}.",
            publish(evidence, Purpose::Dmarc)
        ),
    );
    findings
        .problems
        .push(with_codes(problem, Dimension::Dmarc, &codes));
}

/// SPF: set up, reduce lookups, or clean up.
fn spf_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    let Some(spf) = &audit.spf else { return };
    if failed(&spf.assessment) {
        return;
    }
    for t in [
        TaskType::SetUpSpfRecord,
        TaskType::ReduceSpfLookups,
        TaskType::CleanupSpfRecord,
    ] {
        findings.judged.insert(t);
    }
    let code_present = |code: &str| spf.problems.iter().any(|p| p.code == code);
    if code_present("no_spf_record") {
        let problem = single(
            TaskType::SetUpSpfRecord,
            priority::HIGH,
            sequence::FOUNDATION,
            format!(
                "{} publishes no SPF record, so receivers cannot tell its servers from forgers: {}.",
                evidence.domain,
                publish(evidence, Purpose::Spf)
            ),
        );
        findings
            .problems
            .push(with_codes(problem, Dimension::Spf, &["no_spf_record"]));
        return;
    }
    if code_present("lookup_limit_exceeded") || code_present("void_lookup_limit_exceeded") {
        let what = if code_present("lookup_limit_exceeded") {
            format!(
                "needs {} DNS lookups, over the limit of {}",
                spf.lookup_count, spf.lookup_limit
            )
        } else {
            "makes more than two lookups that find nothing".to_owned()
        };
        let problem = single(
            TaskType::ReduceSpfLookups,
            priority::HIGH,
            sequence::ALIGNMENT,
            format!(
                "The SPF record of {} {what}, so receivers treat it as an error and SPF fails for all of its mail: remove includes of services no longer used or flatten them.",
                evidence.domain
            ),
        );
        findings.problems.push(with_codes(
            problem,
            Dimension::Spf,
            &["lookup_limit_exceeded", "void_lookup_limit_exceeded"],
        ));
    }
    let cleanup: [(&str, u8, &str); 10] = [
        (
            "multiple_spf_records",
            priority::CRITICAL,
            "several v=spf1 records are published, so SPF fails for all mail: merge them into one",
        ),
        (
            "syntax_error",
            priority::HIGH,
            "the record has a syntax error, so SPF fails for all mail: correct it",
        ),
        (
            "include_loop",
            priority::HIGH,
            "the record includes itself through a loop: remove the looping include",
        ),
        (
            "permissive_all",
            priority::HIGH,
            "the record ends in +all or ?all, which lets anyone send as the domain: end it with ~all or -all",
        ),
        (
            "include_target_without_spf",
            priority::MEDIUM,
            "an include names a domain without an SPF record: remove that include",
        ),
        (
            "redirect_target_without_spf",
            priority::HIGH,
            "the redirect names a domain without an SPF record: point it at a working record",
        ),
        (
            "invalid_target_name",
            priority::MEDIUM,
            "a mechanism names an invalid domain: correct or remove it",
        ),
        (
            "terms_after_all",
            priority::LOW,
            "terms after all are never evaluated: remove them",
        ),
        (
            "redirect_ignored_with_all",
            priority::LOW,
            "a redirect beside all is ignored: keep one of them",
        ),
        (
            "string_too_long",
            priority::MEDIUM,
            "a string of the TXT record is longer than 255 characters: split it",
        ),
    ];
    let present: Vec<&(&str, u8, &str)> =
        cleanup.iter().filter(|(c, _, _)| code_present(c)).collect();
    if let Some((_, priority, what)) = present.first() {
        let codes: Vec<&str> = present.iter().map(|(c, _, _)| *c).collect();
        let problem = single(
            TaskType::CleanupSpfRecord,
            *priority,
            sequence::CLEANUP,
            format!("In the SPF record of {}, {what}.", evidence.domain),
        );
        findings
            .problems
            .push(with_codes(problem, Dimension::Spf, &codes));
    }
}

/// MX: a domain that sends mail needs working MX records.
fn mx_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    let Some(mx) = &audit.mx else { return };
    if failed(&mx.assessment) {
        return;
    }
    findings.judged.insert(TaskType::SetUpMxRecord);
    let a = &mx.assessment;
    let issues: [(&str, &str); 5] = [
        (
            "no_mx_records",
            "publishes no MX record, so replies and bounces have nowhere to go",
        ),
        (
            "mx_all_hosts_unresolvable",
            "lists MX hosts none of which has an address",
        ),
        (
            "invalid_mx_host",
            "lists an MX target that is not a host name",
        ),
        (
            "mx_ip_literal",
            "lists an IP address as MX target instead of a host name",
        ),
        (
            "null_mx_with_other_records",
            "publishes a null MX beside other MX records",
        ),
    ];
    let present: Vec<&(&str, &str)> = issues.iter().filter(|(c, _)| has(a, c)).collect();
    if let Some((_, what)) = present.first() {
        let codes: Vec<&str> = present.iter().map(|(c, _)| *c).collect();
        let problem = single(
            TaskType::SetUpMxRecord,
            priority::MEDIUM,
            sequence::FOUNDATION,
            format!(
                "{} {what}: publish MX records naming your mail servers (or a null MX `0 .` if it receives no mail).",
                evidence.domain
            ),
        );
        findings
            .problems
            .push(with_codes(problem, Dimension::Mx, &codes));
    }
}

/// Whether the domain receives mail (MX hosts, not a null MX).
fn receives_mail(audit: &AuditResult) -> bool {
    audit
        .mx
        .as_ref()
        .is_some_and(|mx| !mx.null_mx && mx.records.iter().any(|r| r.exchange != "."))
}

/// MTA-STS and TLS-RPT: hardening for domains that receive mail.
fn receiving_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    if !receives_mail(audit) {
        if audit.mx.as_ref().is_some_and(|mx| !failed(&mx.assessment)) {
            findings.not_applicable.insert(TaskType::SetUpMtaSts);
            findings.not_applicable.insert(TaskType::SetUpTlsRpt);
        }
        return;
    }
    if let Some(sts) = audit.mta_sts.as_ref().filter(|s| !failed(&s.assessment)) {
        findings.judged.insert(TaskType::SetUpMtaSts);
        let a = &sts.assessment;
        let description = if has(a, "mta_sts_not_configured") {
            Some((
                priority::LOW,
                format!(
                    "{} publishes no MTA-STS policy, so senders cannot insist on encrypted delivery to it: publish a policy at https://mta-sts.{}/.well-known/mta-sts.txt and {}.",
                    evidence.domain,
                    evidence.domain,
                    publish(evidence, Purpose::MtaSts)
                ),
            ))
        } else if !a.errors.is_empty() {
            Some((
                priority::HIGH,
                format!(
                    "The MTA-STS set-up of {} is broken ({}), so senders that honour it may refuse to deliver: fix the policy at https://mta-sts.{}/.well-known/mta-sts.txt and its TXT record.",
                    evidence.domain,
                    a.errors.join(", "),
                    evidence.domain
                ),
            ))
        } else {
            None
        };
        if let Some((priority, description)) = description {
            findings.problems.push(single(
                TaskType::SetUpMtaSts,
                priority,
                sequence::HARDENING,
                description,
            ));
        }
    }
    if let Some(tls) = audit.tls_rpt.as_ref().filter(|t| !failed(&t.assessment)) {
        findings.judged.insert(TaskType::SetUpTlsRpt);
        let a = &tls.assessment;
        let description = if has(a, "tls_rpt_not_configured") {
            Some((
                priority::LOW,
                format!(
                    "{} publishes no TLS-RPT record, so nobody reports failed encrypted deliveries to it: {}.",
                    evidence.domain,
                    publish(evidence, Purpose::TlsRpt)
                ),
            ))
        } else if !a.errors.is_empty() {
            Some((
                priority::MEDIUM,
                format!(
                    "The TLS-RPT record at _smtp._tls.{} is not usable ({}): {}.",
                    evidence.domain,
                    a.errors.join(", "),
                    publish(evidence, Purpose::TlsRpt)
                ),
            ))
        } else {
            None
        };
        if let Some((priority, description)) = description {
            findings.problems.push(single(
                TaskType::SetUpTlsRpt,
                priority,
                sequence::HARDENING,
                description,
            ));
        }
    }
}

/// BIMI: an opportunity once DMARC is enforced; a broken record is a weakness.
fn bimi_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    let (Some(bimi), Some(dmarc)) = (&audit.bimi, &audit.dmarc) else {
        return;
    };
    if failed(&bimi.assessment) || failed(&dmarc.assessment) {
        return;
    }
    findings.judged.insert(TaskType::SetUpBimi);
    let enforced = matches!(
        dmarc.policy_state,
        PolicyState::Quarantine | PolicyState::Reject
    );
    let a = &bimi.assessment;
    if !bimi.certificate.present {
        findings
            .not_applicable
            .insert(TaskType::RenewVmcCertificate);
    }
    if bimi.declined {
        return;
    }
    if has(a, "bimi_record_missing") {
        if enforced {
            let problem = single(
                TaskType::SetUpBimi,
                priority::LOW,
                sequence::HARDENING,
                format!(
                    "DMARC is enforced for {}, so mailbox providers can show its logo: publish an SVG Tiny PS logo and a BIMI record at default._bimi.{}.",
                    evidence.domain, evidence.domain
                ),
            );
            findings.problems.push(with_codes(
                problem,
                Dimension::Bimi,
                &["bimi_record_missing"],
            ));
        }
        return;
    }
    if !a.errors.is_empty() {
        let problem = single(
            TaskType::SetUpBimi,
            priority::MEDIUM,
            sequence::HARDENING,
            format!(
                "The BIMI record at default._bimi.{} is not usable ({}): {}.",
                evidence.domain,
                a.errors.join(", "),
                publish(evidence, Purpose::Bimi)
            ),
        );
        let codes: Vec<&str> = a.errors.iter().map(String::as_str).collect();
        findings
            .problems
            .push(with_codes(problem, Dimension::Bimi, &codes));
    }
}

/// TTLs: a record whose changes take more than a day to reach receivers.
fn ttl_problems(evidence: &Evidence<'_>, findings: &mut Findings) {
    if evidence.ttls.is_empty() {
        return;
    }
    findings.judged.insert(TaskType::UpdateTtl);
    let long: Vec<&RecordTtl> = evidence
        .ttls
        .iter()
        .filter(|t| t.ttl > MAX_TTL_SECS)
        .collect();
    if long.is_empty() {
        return;
    }
    let which: Vec<String> = long
        .iter()
        .map(|t| format!("{} ({} s)", t.host, t.ttl))
        .collect();
    findings.problems.push(single(
        TaskType::UpdateTtl,
        priority::LOW,
        sequence::HARDENING,
        format!(
            "Changes to {} take more than a day to reach receivers: lower the TTL to {RECOMMENDED_TTL_SECS} seconds.",
            which.join(" and ")
        ),
    ));
}

/// Certificates: an MX host's TLS certificate, the BIMI mark certificate.
fn certificate_problems(evidence: &Evidence<'_>, findings: &mut Findings) {
    if let Some(mx) = evidence.mx_certificates {
        findings.judged.insert(TaskType::FixMxCertificate);
        for finding in mx {
            findings.problems.push(Problem {
                key: format!("fix_mx_certificate#{}", finding.host),
                ..single(
                    TaskType::FixMxCertificate,
                    priority::HIGH,
                    sequence::HARDENING,
                    format!(
                        "The TLS certificate of MX host {} is {}: install a valid certificate for that name so senders can deliver over TLS.",
                        finding.host, finding.problem
                    ),
                )
            });
        }
    }
    if let Some(vmc) = evidence.vmc {
        findings.judged.insert(TaskType::RenewVmcCertificate);
        let left = vmc.not_after - evidence.now;
        if left < time::Duration::days(CERTIFICATE_WARNING_DAYS) {
            let when = if left.is_negative() {
                "expired".to_owned()
            } else {
                format!("expires in {} days", left.whole_days())
            };
            findings.problems.push(single(
                TaskType::RenewVmcCertificate,
                if left.is_negative() {
                    priority::HIGH
                } else {
                    priority::MEDIUM
                },
                sequence::HARDENING,
                format!(
                    "The BIMI mark certificate of {} at {} {when}: renew it with your certificate authority and publish the new one.",
                    evidence.domain, vmc.url
                ),
            ));
        }
    }
}

/// A parked domain: only the lockdown and conflicts apply.
fn parked_problems(evidence: &Evidence<'_>, audit: &AuditResult, findings: &mut Findings) {
    for t in TaskType::ALL {
        if !matches!(t, TaskType::LockdownDomain | TaskType::ResolveDnsConflict) {
            findings.not_applicable.insert(t);
        }
    }
    let dns_failed = [
        audit.dmarc.as_ref().map(|d| &d.assessment),
        audit.spf.as_ref().map(|s| &s.assessment),
        audit.mx.as_ref().map(|m| &m.assessment),
    ]
    .iter()
    .any(|a| a.is_none_or(failed));
    if dns_failed {
        return;
    }
    findings.judged.insert(TaskType::LockdownDomain);
    let mut missing = Vec::new();
    if audit
        .dmarc
        .as_ref()
        .is_none_or(|d| d.policy_state != PolicyState::Reject)
    {
        missing.push(format!("DMARC p=reject at _dmarc.{}", evidence.domain));
    }
    let spf_locked = audit.spf.as_ref().is_some_and(|s| {
        s.records.len() == 1
            && s.record
                .as_deref()
                .is_some_and(|r| r.split_whitespace().collect::<Vec<_>>() == ["v=spf1", "-all"])
    });
    if !spf_locked {
        missing.push("SPF \"v=spf1 -all\"".to_owned());
    }
    if !audit.mx.as_ref().is_some_and(|m| m.null_mx) {
        missing.push("a null MX (`0 .`)".to_owned());
    }
    if !missing.is_empty() {
        findings.problems.push(single(
            TaskType::LockdownDomain,
            priority::HIGH,
            sequence::FOUNDATION,
            format!(
                "{} sends no mail but is not locked down, so it can be forged: publish {}.",
                evidence.domain,
                missing.join(", ")
            ),
        ));
    }
}

/// Senders from aggregate reports (the second input): confirm new senders that look
/// legitimate (recognised, or passing DMARC at least sometimes; a never-passing stranger is
/// spoofing, not a sender to confirm), fix confirmed senders that fail SPF or DKIM, review
/// confirmed senders gone quiet, clean up the records of discarded ones, and bring selectors
/// Mailward does not monitor to a person's attention.
fn sender_problems(senders: &[SenderFinding], findings: &mut Findings) {
    for t in [
        TaskType::ConfirmSource,
        TaskType::SourceFailingSpf,
        TaskType::SourceFailingDkim,
        TaskType::ReviewUnusedSender,
        TaskType::CleanupSenderRecords,
        TaskType::DkimSelectorNotImported,
    ] {
        findings.judged.insert(t);
    }
    for sender in senders {
        let base = |task_type: TaskType, priority: u8, sequence: u8, description: String| Problem {
            key: format!("{}#{}", task_type.as_str(), sender.sender_id),
            sending_domain: sender.sending_domain.clone(),
            source_id: sender.source_id,
            ..single(task_type, priority, sequence, description)
        };
        match sender.status {
            ConfirmationStatus::Discarded => {
                if let Some(value) = &sender.spf_value_published {
                    findings.problems.push(base(
                        TaskType::CleanupSenderRecords,
                        priority::MEDIUM,
                        sequence::CLEANUP,
                        format!(
                            "{} is discarded as a sender, but the SPF record still authorizes it ({value}): remove that mechanism so it can no longer send as the domain.",
                            sender.name
                        ),
                    ));
                }
            }
            ConfirmationStatus::RequiresConfirmation => {
                let plausible = sender.source_id.is_some() || sender.dmarc_pass_pct > 0.0;
                if sender.volume > 0 && plausible {
                    findings.problems.push(base(
                        TaskType::ConfirmSource,
                        priority::MEDIUM,
                        sequence::ALIGNMENT,
                        format!(
                            "{} sent {} messages as the domain in the last 30 days: confirm it is yours so Mailward can align it, or discard it.",
                            sender.name, sender.volume
                        ),
                    ));
                }
            }
            ConfirmationStatus::Confirmed => {
                if sender.volume == 0 {
                    if sender
                        .days_since_seen
                        .is_some_and(|d| d >= UNUSED_SENDER_DAYS)
                    {
                        findings.problems.push(base(
                            TaskType::ReviewUnusedSender,
                            priority::LOW,
                            sequence::CLEANUP,
                            format!(
                                "{} has sent no mail as the domain for {} days: if it no longer sends for you, discard it and remove its SPF and DKIM records.",
                                sender.name,
                                sender.days_since_seen.unwrap_or_default()
                            ),
                        ));
                    }
                    continue;
                }
                if sender.spf_pass_pct < 98.0 && !sender.ignore_spf {
                    findings.problems.push(base(
                        TaskType::SourceFailingSpf,
                        priority::HIGH,
                        sequence::ALIGNMENT,
                        format!(
                            "Only {:.0}% of the mail {} sends passes SPF aligned: add it to the SPF record as its documentation says.",
                            sender.spf_pass_pct, sender.name
                        ),
                    ));
                }
                if sender.dkim_pass_pct < 98.0 && !sender.ignore_dkim {
                    findings.problems.push(base(
                        TaskType::SourceFailingDkim,
                        priority::HIGH,
                        sequence::ALIGNMENT,
                        format!(
                            "Only {:.0}% of the mail {} sends passes DKIM aligned: publish its DKIM key under the domain as its documentation says.",
                            sender.dkim_pass_pct, sender.name
                        ),
                    ));
                }
                for selector in &sender.unmonitored_selectors {
                    findings.problems.push(Problem {
                        key: format!(
                            "{}#{}#{selector}",
                            TaskType::DkimSelectorNotImported.as_str(),
                            sender.sender_id
                        ),
                        ..base(
                            TaskType::DkimSelectorNotImported,
                            priority::LOW,
                            sequence::HARDENING,
                            format!(
                                "{} signs the domain's mail with DKIM selector {selector}, but no key answers at {selector}._domainkey: publish the key (or, if it was rotated out, update the sender) so Mailward can monitor it.",
                                sender.name
                            ),
                        )
                    });
                }
            }
        }
    }
}

/// The sender problems alone (the report pipeline reconciles sender tasks between sweeps; the
/// other types are not judged, so their tasks are left alone).
pub fn derive_sender_findings(senders: &[SenderFinding]) -> Findings {
    let mut findings = Findings::default();
    sender_problems(senders, &mut findings);
    findings
}

#[cfg(test)]
mod sender_tests {
    use super::*;

    fn sender(status: ConfirmationStatus) -> SenderFinding {
        SenderFinding {
            sender_id: Uuid::from_u128(1),
            source_id: None,
            name: "Mailer".into(),
            sending_domain: Some("mailer.example".into()),
            status,
            volume: 100,
            dmarc_pass_pct: 100.0,
            spf_pass_pct: 100.0,
            dkim_pass_pct: 100.0,
            ignore_spf: false,
            ignore_dkim: false,
            days_since_seen: Some(1),
            spf_value_published: None,
            unmonitored_selectors: Vec::new(),
        }
    }

    fn types(senders: &[SenderFinding]) -> Vec<&'static str> {
        derive_sender_findings(senders)
            .problems
            .iter()
            .map(|p| p.task_type.as_str())
            .collect()
    }

    #[test]
    fn only_plausible_new_senders_are_offered_for_confirmation() {
        let new = sender(ConfirmationStatus::RequiresConfirmation);
        assert_eq!(types(std::slice::from_ref(&new)), ["confirm_source"]);
        let spoofer = SenderFinding {
            dmarc_pass_pct: 0.0,
            ..new.clone()
        };
        assert!(types(std::slice::from_ref(&spoofer)).is_empty());
        let recognised_spoofed = SenderFinding {
            source_id: Some(Uuid::from_u128(9)),
            ..spoofer
        };
        assert_eq!(types(&[recognised_spoofed]), ["confirm_source"]);
    }

    #[test]
    fn confirmed_senders_are_judged_on_alignment_use_and_selectors() {
        let failing = SenderFinding {
            spf_pass_pct: 50.0,
            dkim_pass_pct: 10.0,
            unmonitored_selectors: vec!["s9".into()],
            ..sender(ConfirmationStatus::Confirmed)
        };
        assert_eq!(
            types(std::slice::from_ref(&failing)),
            [
                "source_failing_spf",
                "source_failing_dkim",
                "dkim_selector_not_imported"
            ]
        );
        let ignored = SenderFinding {
            ignore_spf: true,
            ignore_dkim: true,
            unmonitored_selectors: Vec::new(),
            ..failing
        };
        assert!(types(&[ignored]).is_empty());
        let quiet = SenderFinding {
            volume: 0,
            days_since_seen: Some(UNUSED_SENDER_DAYS),
            ..sender(ConfirmationStatus::Confirmed)
        };
        assert_eq!(
            types(std::slice::from_ref(&quiet)),
            ["review_unused_sender"]
        );
        let recently_quiet = SenderFinding {
            days_since_seen: Some(UNUSED_SENDER_DAYS - 1),
            ..quiet
        };
        assert!(types(&[recently_quiet]).is_empty());
    }

    #[test]
    fn discarded_senders_only_ask_for_their_records_to_go() {
        let discarded = sender(ConfirmationStatus::Discarded);
        assert!(types(std::slice::from_ref(&discarded)).is_empty());
        let still_authorized = SenderFinding {
            spf_value_published: Some("include:mailer.example".into()),
            ..discarded
        };
        let findings = derive_sender_findings(&[still_authorized]);
        assert_eq!(findings.problems.len(), 1);
        assert_eq!(
            findings.problems[0].task_type,
            TaskType::CleanupSenderRecords
        );
        assert!(
            findings.problems[0]
                .description
                .contains("include:mailer.example")
        );
        assert!(findings.judged.contains(&TaskType::ConfirmSource));
    }
}
