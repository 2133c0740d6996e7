//! The change preview (beyond SPEC): what a domain would look like with proposed records, before
//! anyone publishes them. The proposed values replace what DNS serves for their purposes through
//! an overlay resolver; everything else is read from live DNS, and the same audit, task
//! derivation and records guidance as the sweep and `dns-records` run over it. Nothing is stored
//! and DNS is only read.

use super::load;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::outbound::mta_sts::OutboundPolicyFetcher;
use crate::state::AppState;
use async_trait::async_trait;
use mailward_api_types::tasks::{
    PreviewRequest, PreviewResponse, PreviewScore, PreviewTask, PreviewVerdicts,
    ProposedRecordFinding,
};
use mailward_dns::{Budgeted, Deadline};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use mailward_domain::domain::{Domain, ScoreBand};
use mailward_domain::names::normalize_host;
use mailward_store::Versioned;
use mailward_store::tasks as stored;
use std::time::Duration;
use uuid::Uuid;

/// Most DKIM keys one preview may propose.
pub const MAX_DKIM_PROPOSALS: usize = 10;
/// Longest proposed value, in bytes (a TXT record of 16 strings of 255 bytes).
pub const MAX_VALUE_BYTES: usize = 4080;
/// Queries one preview may make.
const QUERY_BUDGET: u32 = 400;
/// How long a preview may spend on DNS in all.
const DNS_DEADLINE: Duration = Duration::from_secs(8);

/// One replaced TXT name: the records whose text starts with `prefix` (case-insensitively) give
/// way to `value`; an empty prefix replaces every TXT record there.
#[derive(Debug, Clone)]
struct Replacement {
    host: String,
    prefix: &'static str,
    value: String,
}

/// A resolver that answers the replaced TXT names with the proposed values.
struct Overlay<'a> {
    inner: &'a dyn DnsResolver,
    replacements: Vec<Replacement>,
}

impl Overlay<'_> {
    async fn overlaid(
        &self,
        name: &str,
        record_type: RecordType,
        uncached: bool,
    ) -> Result<Answer, DnsError> {
        let host = name.trim_end_matches('.').to_ascii_lowercase();
        let here: Vec<&Replacement> = self
            .replacements
            .iter()
            .filter(|r| r.host == host)
            .collect();
        let live = if uncached {
            self.inner.lookup_uncached(name, record_type).await
        } else {
            self.inner.lookup(name, record_type).await
        };
        if here.is_empty() {
            return live;
        }
        match record_type {
            RecordType::Txt => {
                // The proposal stands at the name itself: a CNAME there would be replaced too.
                let kept: Vec<RecordData> = match &live {
                    Ok(answer) if answer.cname_chain.is_empty() => answer
                        .records
                        .iter()
                        .filter(|r| {
                            let text = r.txt_value().unwrap_or_default().to_ascii_lowercase();
                            !here.iter().any(|rep| {
                                rep.prefix.is_empty()
                                    || text.starts_with(&rep.prefix.to_ascii_lowercase())
                            })
                        })
                        .cloned()
                        .collect(),
                    Ok(_) | Err(DnsError::NxDomain) => Vec::new(),
                    Err(e) => return Err(e.clone()),
                };
                let mut records = kept;
                records.extend(here.iter().map(|rep| {
                    RecordData::Txt(
                        rep.value
                            .as_bytes()
                            .chunks(255)
                            .map(<[u8]>::to_vec)
                            .collect(),
                    )
                }));
                Ok(Answer {
                    records,
                    cname_chain: Vec::new(),
                    ttl: Some(3600),
                })
            }
            // A name that holds a proposed TXT record has no CNAME; other types stay as served.
            RecordType::Cname => Ok(Answer::default()),
            _ => live,
        }
    }
}

#[async_trait]
impl DnsResolver for Overlay<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.overlaid(name, record_type, false).await
    }

    async fn lookup_uncached(
        &self,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        self.overlaid(name, record_type, true).await
    }
}

fn bounded(param: &'static str, value: &str) -> Result<String, ServiceError> {
    let value = value.trim();
    if value.is_empty() || value.len() > MAX_VALUE_BYTES || value.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            param,
            format!(
                "{param} must be 1 to {MAX_VALUE_BYTES} bytes of text without control characters"
            ),
        ));
    }
    Ok(value.to_owned())
}

fn finding(record: &str, host: &str, valid: bool, messages: Vec<String>) -> ProposedRecordFinding {
    ProposedRecordFinding {
        record: record.to_owned(),
        host: host.to_owned(),
        valid,
        messages,
    }
}

fn record_messages<C: mailward_records::ProblemCode>(
    problems: &[mailward_records::Problem<C>],
) -> Vec<String> {
    problems
        .iter()
        .map(|p| format!("{}: {}", p.code.as_str(), p.message))
        .collect()
}

/// What a proposal adds up to: the answers the overlay serves, and each record's own findings.
#[derive(Default)]
struct Proposals {
    replacements: Vec<Replacement>,
    findings: Vec<ProposedRecordFinding>,
}

impl Proposals {
    fn push(
        &mut self,
        record: &str,
        host: String,
        prefix: &'static str,
        value: String,
        (valid, messages): (bool, Vec<String>),
    ) {
        self.findings.push(finding(record, &host, valid, messages));
        self.replacements.push(Replacement {
            host,
            prefix,
            value,
        });
    }
}

/// A DMARC record's findings: valid, or each issue with the tag it concerns.
fn dmarc_findings(value: &str) -> (bool, Vec<String>) {
    let parsed = mailward_dmarc::parse_record(value);
    let valid = matches!(
        parsed.status,
        mailward_dmarc::RecordStatus::Valid | mailward_dmarc::RecordStatus::TreatAsPNone
    );
    let messages = parsed
        .issues
        .iter()
        .map(|i| {
            let at = match (&i.tag, &i.value) {
                (Some(tag), Some(value)) => format!(" ({tag}={value})"),
                (Some(tag), None) => format!(" ({tag})"),
                _ => String::new(),
            };
            format!("{}{at}", i.code.as_str())
        })
        .collect();
    (valid, messages)
}

fn spf_findings(value: &str) -> (bool, Vec<String>) {
    match mailward_spf::parse_record(value) {
        Ok(_) => (true, Vec::new()),
        Err(e) => (false, vec![format!("{}: {}", e.code.as_str(), e.message)]),
    }
}

/// Findings of a record whose parser grades problems by severity: valid without errors.
fn graded<C: mailward_records::ProblemCode>(
    problems: &[mailward_records::Problem<C>],
) -> (bool, Vec<String>) {
    (
        !problems
            .iter()
            .any(|p| p.severity == mailward_records::Severity::Error),
        record_messages(problems),
    )
}

/// The DKIM keys proposed, each at its selector's name.
fn propose_dkim(
    out: &mut Proposals,
    domain: &str,
    keys: &[mailward_api_types::tasks::DkimProposal],
) -> Result<(), ServiceError> {
    if keys.len() > MAX_DKIM_PROPOSALS {
        return Err(ServiceError::invalid(
            "dkim",
            format!("dkim holds at most {MAX_DKIM_PROPOSALS} keys"),
        ));
    }
    for (i, key) in keys.iter().enumerate() {
        let selector = key.selector.trim().to_ascii_lowercase();
        let host = format!("{selector}._domainkey.{domain}");
        if selector.is_empty() || selector.contains("..") || normalize_host(&host).is_err() {
            return Err(ServiceError::invalid(
                format!("dkim[{i}].selector"),
                "the selector must be one or more DNS labels",
            ));
        }
        let value = bounded("dkim", &key.value).map_err(|_| {
            ServiceError::invalid(
                format!("dkim[{i}].value"),
                format!("the key must be 1 to {MAX_VALUE_BYTES} bytes of text"),
            )
        })?;
        let parsed = mailward_records::dkim::parse(&value);
        let checked = (parsed.is_usable(), record_messages(&parsed.problems));
        out.push("dkim", host, "", value, checked);
    }
    Ok(())
}

/// The replacements and each proposed record's own findings, or a 400 naming the field.
fn proposals(domain: &str, input: &PreviewRequest) -> Result<Proposals, ServiceError> {
    let mut out = Proposals::default();
    type Check = fn(&str) -> (bool, Vec<String>);
    let single: [(&'static str, &Option<String>, String, &'static str, Check); 2] = [
        (
            "dmarc",
            &input.dmarc,
            format!("_dmarc.{domain}"),
            "v=DMARC1",
            dmarc_findings,
        ),
        ("spf", &input.spf, domain.to_owned(), "v=spf1", spf_findings),
    ];
    for (param, raw, host, prefix, check) in single {
        if let Some(raw) = raw {
            let value = bounded(param, raw)?;
            let checked = check(&value);
            out.push(param, host, prefix, value, checked);
        }
    }
    propose_dkim(&mut out, domain, &input.dkim)?;
    let rest: [(&'static str, &Option<String>, String, &'static str, Check); 3] = [
        (
            "mta_sts",
            &input.mta_sts,
            format!("_mta-sts.{domain}"),
            "v=STSv1",
            |v| graded(&mailward_records::mta_sts::parse_txt(v).problems),
        ),
        (
            "tls_rpt",
            &input.tls_rpt,
            format!("_smtp._tls.{domain}"),
            "v=TLSRPTv1",
            |v| graded(&mailward_records::tls_rpt::parse(v).problems),
        ),
        (
            "bimi",
            &input.bimi,
            format!("default._bimi.{domain}"),
            "v=BIMI1",
            |v| graded(&mailward_records::bimi::parse(v).problems),
        ),
    ];
    for (param, raw, host, prefix, check) in rest {
        if let Some(raw) = raw {
            let value = bounded(param, raw)?;
            let checked = check(&value);
            out.push(param, host, prefix, value, checked);
        }
    }
    if out.replacements.is_empty() {
        return Err(ServiceError::invalid(
            "dmarc",
            "propose at least one record: dmarc, spf, dkim, mta_sts, tls_rpt or bimi",
        ));
    }
    Ok(out)
}

fn band(score: u8) -> String {
    ScoreBand::of(score).as_str().to_owned()
}

/// Previews the domain with the proposed records.
pub async fn preview(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: PreviewRequest,
) -> Result<PreviewResponse, ServiceError> {
    let domain: Domain = load(app, caller, id).await?.value;
    let Proposals {
        replacements,
        findings: records,
    } = proposals(&domain.url, &input)?;
    let deadline = Deadline::new(app.resolver.as_ref(), DNS_DEADLINE);
    let overlay = Overlay {
        inner: &deadline,
        replacements,
    };
    let resolver = Budgeted::new(&overlay, QUERY_BUDGET);
    let fetcher = OutboundPolicyFetcher { app };
    let audit_input = mailward_audit::AuditInput {
        domain: domain.url.clone(),
        email: None,
        dkim_selectors: Some(selectors(&domain, &input)),
        extra_selectors: Vec::new(),
        hosted_dmarc_suffix: app.config.hosted_dmarc_suffix.clone(),
    };
    let (audit, spf) = tokio::join!(
        mailward_audit::audit(&resolver, &fetcher, &audit_input),
        mailward_spf::audit_domain(&resolver, &domain.url),
    );
    if audit.status != mailward_audit::AuditStatus::Success {
        return Err(ServiceError::new(
            crate::error::ErrorKind::Unprocessable,
            "preview_unavailable",
            format!(
                "the domain could not be audited ({}); check that it exists and its name servers answer",
                audit.summary.error_code.as_deref().unwrap_or("dns failure")
            ),
        ));
    }
    // The tasks the change would close and open.
    let ctx = crate::evaluation::plan_context(
        app,
        &domain,
        audit.spf.as_ref().and_then(|s| s.record.clone()),
        crate::evaluation::dkim_from_audit(&audit),
    );
    let planned = crate::evaluation::planned_records(&ctx);
    let findings = findings_after(app, &domain, &audit, &planned);
    let tasks = stored::list_for_domain(app.store.as_ref(), caller.org_id, id).await?;
    let (tasks_closing, tasks_opening) = task_changes(&findings, &tasks);
    // The records guidance's warnings over the same overlay.
    let expected = mailward_plan::expected_records(&ctx);
    let compared = mailward_plan::compare(&resolver, &expected).await;
    let warnings = mailward_plan::warnings(&ctx, &compared);
    // A proposed enforcing policy: what it would stop of the reported mail.
    let enforcing = input.dmarc.as_deref().and_then(enforcing_policy);
    let enforcement_impact = match enforcing {
        Some(policy) => {
            Some(crate::reports::impact::for_domain(app, caller.org_id, &domain, policy).await?)
        }
        None => None,
    };
    let (current, proposed, verdicts) = scores(&domain, &audit);
    Ok(PreviewResponse {
        current,
        proposed,
        verdicts,
        spf,
        tasks_closing,
        tasks_opening,
        warnings,
        records,
        enforcement_impact,
    })
}

/// The DKIM selectors to audit: those seen for the domain (or the catalogue's discovery list)
/// and the proposed ones.
fn selectors(domain: &Domain, input: &PreviewRequest) -> Vec<String> {
    let mut s = if domain.dkim_selectors_seen.is_empty() {
        mailward_domain::sources::catalogue().dkim_discovery_selectors()
    } else {
        domain.dkim_selectors_seen.clone()
    };
    s.extend(
        input
            .dkim
            .iter()
            .map(|k| k.selector.trim().to_ascii_lowercase()),
    );
    s.sort();
    s.dedup();
    s
}

/// The policy of a proposed DMARC record when it enforces (quarantine or reject).
fn enforcing_policy(record: &str) -> Option<&'static str> {
    match mailward_dmarc::parse::parse_record(record).p? {
        mailward_dmarc::parse::Policy::Quarantine => Some("quarantine"),
        mailward_dmarc::parse::Policy::Reject => Some("reject"),
        mailward_dmarc::parse::Policy::None => None,
    }
}

/// The active tasks the change would close and the problems it would open as tasks, each most
/// severe first.
fn task_changes(
    findings: &mailward_tasks::Findings,
    tasks: &[Versioned<mailward_tasks::Task>],
) -> (Vec<PreviewTask>, Vec<PreviewTask>) {
    let active: Vec<&mailward_tasks::Task> = tasks
        .iter()
        .map(|t| &t.value)
        .filter(|t| t.status.is_active())
        .collect();
    let tasks_closing = active
        .iter()
        .filter(|t| {
            (findings.judged.contains(&t.task_type)
                || findings.not_applicable.contains(&t.task_type))
                && !findings
                    .problems
                    .iter()
                    .any(|p| p.task_type == t.task_type && p.key == t.problem_key)
        })
        .map(|t| PreviewTask {
            task_id: Some(t.id),
            task_type: t.task_type,
            priority: t.priority,
            description: t.description.clone(),
        })
        .collect();
    let tasks_opening = findings
        .problems
        .iter()
        .filter(|p| {
            !tasks.iter().any(|t| {
                t.value.task_type == p.task_type
                    && t.value.problem_key == p.key
                    && (t.value.status.is_active()
                        || t.value.status == mailward_tasks::TaskStatus::Dismissed)
            })
        })
        .map(|p| PreviewTask {
            task_id: None,
            task_type: p.task_type,
            priority: p.priority,
            description: p.description.clone(),
        })
        .collect();
    let by_severity = |a: &PreviewTask, b: &PreviewTask| {
        (a.priority, a.task_type).cmp(&(b.priority, b.task_type))
    };
    let mut tasks_closing: Vec<PreviewTask> = tasks_closing;
    tasks_closing.sort_by(by_severity);
    let mut tasks_opening: Vec<PreviewTask> = tasks_opening;
    tasks_opening.sort_by(by_severity);
    (tasks_closing, tasks_opening)
}

/// What the task rules find in the domain as the proposal would leave it.
fn findings_after(
    app: &AppState,
    domain: &Domain,
    audit: &mailward_audit::AuditResult,
    planned: &[mailward_tasks::PlannedRecord],
) -> mailward_tasks::Findings {
    let rua = domain.monitoring_email(&app.config.report_domain);
    let missing_rua = audit.dmarc.as_ref().is_some_and(|d| {
        d.record.is_some()
            && !d.tags.as_ref().is_some_and(|t| {
                t.rua
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(&format!("mailto:{rua}")))
            })
    });
    let evidence = mailward_tasks::Evidence {
        domain: &domain.url,
        parked: domain.is_parked,
        audit: Some(audit),
        missing_monitoring_rua: missing_rua.then_some(rua.as_str()),
        conflicts: &domain.dns_conflicts,
        conflicts_examined: false,
        planned,
        ttls: &[],
        mx_certificates: None,
        vmc: None,
        senders: None,
        now: app.clock.now(),
    };
    mailward_tasks::derive(&evidence)
}

/// The score now, the score with the proposal, and its verdicts.
fn scores(
    domain: &Domain,
    audit: &mailward_audit::AuditResult,
) -> (PreviewScore, PreviewScore, PreviewVerdicts) {
    let s = &audit.summary;
    (
        PreviewScore {
            score: domain.score,
            score_band: band(domain.score),
        },
        PreviewScore {
            score: s.score,
            score_band: band(s.score),
        },
        PreviewVerdicts {
            mx: s.mx,
            spf: s.spf,
            dkim: s.dkim,
            dmarc: s.dmarc,
            bimi: s.bimi,
            mta_sts: s.mta_sts,
            tls_rpt: s.tls_rpt,
        },
    )
}
