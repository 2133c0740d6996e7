//! The SPF dimension: `mailward_spf::audit_domain` (the whole-tree auditor: record, lookup
//! count, lookup tree, problems), plus a concurrent prefetch of the tree.
//!
//! Why the prefetch: the auditor walks the tree one lookup at a time, so its wall time is the
//! number of lookups, not the tree's depth. The prefetch reads the same records level by level,
//! firing every lookup of a level at once into the audit's memo ([`crate::memo`]); the auditor
//! then finds its answers already in flight or done, and the SPF chain costs about one round per
//! include level. Only literal targets are prefetched (macros need the sender); the prefetch is
//! bounded by [`PREFETCH_MAX_NAMES`] and depth 10.
//!
//! Codes are the auditor's (`mailward_spf::problem` lists them), by their severity, except that
//! `dns_temporary_error` (a lookup failed) is reported as the warning `dns_lookup_failed`: the
//! record is unknown, not missing.

use crate::lookup::{Looked, look, txt};
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings};
use futures::future::{BoxFuture, FutureExt, join_all};
use mailward_domain::dns::{DnsResolver, RecordType};
use mailward_spf::{
    Health, Mechanism, Modifier, NodeKind, ProblemCode, Severity, SpfAudit, Term, parse_record,
};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most names the prefetch asks about (records are attacker-controlled).
pub const PREFETCH_MAX_NAMES: usize = 60;

/// One lookup-tree entry (SPEC §2.13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpfLookup {
    /// include, a, mx, ptr, exists, redirect or expanded-domain.
    pub kind: String,
    /// The target.
    pub operand: String,
    /// The domain whose record holds the term.
    pub host: String,
    /// Nesting depth (0 = the audited record).
    pub depth: u32,
    /// Lookups charged for this node (0 or 1).
    pub cost: u32,
    /// True when the node breaks evaluation.
    pub error: bool,
    /// A readable note.
    pub note: Option<String>,
    /// Problem codes at this node.
    pub problems: Vec<String>,
}

/// One SPF problem with its place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpfProblem {
    /// Stable code.
    pub code: String,
    /// error or warning.
    pub severity: String,
    /// The domain whose record has the problem.
    pub host: String,
    /// Explanation.
    pub message: String,
}

/// The `spf` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SpfResult {
    /// Score, verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The evaluated record, when there is exactly one.
    pub record: Option<String>,
    /// Every `v=spf1` record found.
    pub records: Vec<String>,
    /// Charged lookups.
    pub lookup_count: u32,
    /// The limit (10).
    pub lookup_limit: u32,
    /// Void lookups (worse address family).
    pub void_lookups: u32,
    /// The auditor's own health (pass, warn, fail).
    pub health: String,
    /// The lookup tree, depth-first.
    pub tree: Vec<SpfLookup>,
    /// Every problem.
    pub problems: Vec<SpfProblem>,
}

/// Runs the auditor and the prefetch together.
pub(crate) async fn gather(resolver: &dyn DnsResolver, domain: &str) -> SpfAudit {
    let budget = AtomicUsize::new(PREFETCH_MAX_NAMES);
    let (audit, ()) = futures::future::join(
        mailward_spf::audit_domain(resolver, domain),
        prefetch(resolver, domain.to_string(), 0, &budget),
    )
    .await;
    audit
}

fn take(budget: &AtomicUsize) -> bool {
    budget
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn literal(spec: Option<&mailward_spf::MacroString>, current: &str) -> Option<String> {
    match spec {
        None => Some(current.to_string()),
        Some(m) if !m.has_expressions() => Some(m.as_str().trim_end_matches('.').to_string()),
        Some(_) => None,
    }
}

/// Reads `domain`'s SPF record and prefetches everything it references, recursively.
fn prefetch<'a>(
    resolver: &'a dyn DnsResolver,
    domain: String,
    depth: u32,
    budget: &'a AtomicUsize,
) -> BoxFuture<'a, ()> {
    async move {
        if depth > 10 || !take(budget) {
            return;
        }
        let Ok(values) = txt(resolver, &domain).await else {
            return;
        };
        let spf: Vec<&String> = values
            .iter()
            .filter(|v| {
                let l = v.to_ascii_lowercase();
                l == "v=spf1" || l.starts_with("v=spf1 ")
            })
            .collect();
        let [record] = spf.as_slice() else {
            return;
        };
        let Ok(parsed) = parse_record(record) else {
            return;
        };
        let mut tasks: Vec<BoxFuture<'a, ()>> = Vec::new();
        for term in &parsed.terms {
            match term {
                Term::Directive(d) => match &d.mechanism {
                    Mechanism::Include { domain: spec } => {
                        if let Some(t) = literal(Some(spec), &domain) {
                            tasks.push(prefetch(resolver, t, depth + 1, budget));
                        }
                    }
                    Mechanism::A { domain: spec, .. } => {
                        if let Some(t) = literal(spec.as_ref(), &domain) {
                            tasks.push(addresses(resolver, t, budget));
                        }
                    }
                    Mechanism::Mx { domain: spec, .. } => {
                        if let Some(t) = literal(spec.as_ref(), &domain) {
                            tasks.push(mx_hosts(resolver, t, budget));
                        }
                    }
                    Mechanism::Exists { domain: spec } => {
                        if let Some(t) = literal(Some(spec), &domain)
                            && take(budget)
                        {
                            tasks.push(
                                async move {
                                    look(resolver, &t, RecordType::A).await;
                                }
                                .boxed(),
                            );
                        }
                    }
                    _ => {}
                },
                Term::Modifier(Modifier::Redirect { domain: spec }) => {
                    if let Some(t) = literal(Some(spec), &domain) {
                        tasks.push(prefetch(resolver, t, depth + 1, budget));
                    }
                }
                Term::Modifier(_) => {}
            }
        }
        join_all(tasks).await;
    }
    .boxed()
}

fn addresses<'a>(
    resolver: &'a dyn DnsResolver,
    name: String,
    budget: &'a AtomicUsize,
) -> BoxFuture<'a, ()> {
    async move {
        if !take(budget) {
            return;
        }
        futures::future::join(
            look(resolver, &name, RecordType::A),
            look(resolver, &name, RecordType::Aaaa),
        )
        .await;
    }
    .boxed()
}

fn mx_hosts<'a>(
    resolver: &'a dyn DnsResolver,
    name: String,
    budget: &'a AtomicUsize,
) -> BoxFuture<'a, ()> {
    async move {
        if !take(budget) {
            return;
        }
        if let Looked::Found(answer) = look(resolver, &name, RecordType::Mx).await {
            let hosts = mailward_records::mx::from_answer(&answer.records);
            join_all(
                hosts
                    .into_iter()
                    .filter(|h| !h.is_root())
                    .take(10)
                    .map(|h| addresses(resolver, h.exchange, budget)),
            )
            .await;
        }
    }
    .boxed()
}

fn kind(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Include => "include",
        NodeKind::A => "a",
        NodeKind::Mx => "mx",
        NodeKind::Ptr => "ptr",
        NodeKind::Exists => "exists",
        NodeKind::Redirect => "redirect",
        NodeKind::ExpandedDomain => "expanded-domain",
    }
}

/// True when the domain has no SPF record (proven, not a failed lookup).
pub(crate) fn has_no_record(audit: &SpfAudit) -> bool {
    audit.records.is_empty()
        && audit
            .problems
            .iter()
            .any(|p| p.code == ProblemCode::NoSpfRecord)
}

/// True when the domain's own TXT lookup failed.
pub(crate) fn lookup_failed(audit: &SpfAudit) -> bool {
    audit.records.is_empty()
        && audit
            .problems
            .iter()
            .any(|p| p.code == ProblemCode::DnsTemporaryError)
}

/// Builds the `spf` object.
pub(crate) fn assess(audit: &SpfAudit) -> SpfResult {
    let mut findings = Findings::default();
    for p in &audit.problems {
        if p.code == ProblemCode::DnsTemporaryError {
            findings.warning(DNS_LOOKUP_FAILED);
            continue;
        }
        match p.severity {
            Severity::Error => findings.error(p.code.as_str()),
            Severity::Warning => findings.warning(p.code.as_str()),
        }
    }
    let status = findings.verdict();
    SpfResult {
        assessment: findings.verdict_with(Dimension::Spf, status),
        record: audit.record.clone(),
        records: audit.records.clone(),
        lookup_count: audit.lookup_count,
        lookup_limit: audit.lookup_limit,
        void_lookups: audit.void_lookups,
        health: match audit.health {
            Health::Pass => "pass",
            Health::Warn => "warn",
            Health::Fail => "fail",
        }
        .to_string(),
        tree: audit
            .tree
            .iter()
            .map(|n| SpfLookup {
                kind: kind(n.kind).to_string(),
                operand: n.operand.clone(),
                host: n.host.clone(),
                depth: n.depth,
                cost: n.cost,
                error: n.error,
                note: n.note.clone(),
                problems: n.problems.iter().map(|c| c.as_str().to_string()).collect(),
            })
            .collect(),
        problems: audit
            .problems
            .iter()
            .map(|p| SpfProblem {
                code: p.code.as_str().to_string(),
                severity: match p.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                }
                .to_string(),
                host: p.host.clone(),
                message: p.message.clone(),
            })
            .collect(),
    }
}
