//! The SPF auditor: walks a domain's whole record tree without a client address.
//!
//! Unlike [`crate::check_host`], which stops at the first match for one address, the auditor
//! follows every `include` and `redirect` and looks at every term, because a record that passes
//! for some senders can still exceed the lookup limit for others (LESSONS.md, SPF). It produces
//! the content of SPF diagnostics (SPEC §2.13): the records, the TTL, a lookup tree, the lookup
//! count as SPEC §8.2 counts it, void lookups, health, and problems with stable codes (listed in
//! [`crate::problem`]).
//!
//! Counting rules, the same as evaluation's:
//! - `include`, `a`, `mx`, `ptr`, `exists` and `redirect` cost one each, recursively; `ip4`, `ip6`,
//!   `all` and `exp` cost nothing. An `mx` term costs one whatever its number of MX hosts.
//! - Terms after `all` are never evaluated and are not charged; a `redirect` in a record that has
//!   `all` is ignored and not charged.
//! - A term whose target needs the sender (`exists:%{i}._spf.example.com`) cannot be expanded here:
//!   it costs one, is reported as `macro_unexpandable`, and is not followed. `%{d}` is expandable:
//!   it is the domain of the record being read (the include or redirect target).
//! - Void lookups depend on the client's address family (an `a` term queries A for IPv4 clients
//!   and AAAA for IPv6 ones), so they are counted per family and the worse one is reported.
//!   `ptr` cannot be evaluated without an address and is not counted.
//!
//! The walk is bounded ([`MAX_NODES`], [`MAX_DEPTH`], loop detection on the current path) because
//! records are attacker-controlled; DNS answers are cached for the duration of one audit.

use crate::eval::{LOOKUP_LIMIT, MX_RECORD_LIMIT, VOID_LOOKUP_LIMIT};
use crate::macros::{ExpandError, MacroString, MacroValues};
use crate::names::{is_queryable, strip_trailing_dot, truncate_left};
use crate::parse::{Mechanism, Qualifier, Record, parse_record};
use crate::problem::{Problem, ProblemCode, Severity};
use crate::select::{PublishedRecord, RecordLookup, lookup_spf_record};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use serde::Serialize;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

/// Most nodes in one lookup tree; past it the walk stops with `audit_truncated`.
pub const MAX_NODES: usize = 300;
/// Deepest include/redirect nesting walked (evaluation cannot go past 10 anyway).
pub const MAX_DEPTH: u32 = 12;

/// Overall verdict of an audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfHealth))]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// No problems.
    Pass,
    /// Warnings only.
    Warn,
    /// At least one error.
    Fail,
}

/// The kind of a lookup-tree node (SPEC §2.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfNodeKind))]
pub enum NodeKind {
    /// An `include` term.
    #[serde(rename = "include")]
    Include,
    /// An `a` term.
    #[serde(rename = "a")]
    A,
    /// An `mx` term.
    #[serde(rename = "mx")]
    Mx,
    /// A `ptr` term.
    #[serde(rename = "ptr")]
    Ptr,
    /// An `exists` term.
    #[serde(rename = "exists")]
    Exists,
    /// A `redirect` modifier.
    #[serde(rename = "redirect")]
    Redirect,
    /// A name looked up on a term's behalf at no extra charge (each MX host of an `mx` term).
    #[serde(rename = "expanded-domain")]
    ExpandedDomain,
}

/// One entry of the lookup tree, in depth-first order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SpfLookupNode))]
pub struct LookupNode {
    /// What kind of term.
    pub kind: NodeKind,
    /// The target: the expanded name when it could be expanded, else the domain-spec as written.
    pub operand: String,
    /// The domain whose record holds the term.
    pub host: String,
    /// Nesting depth; terms of the audited record are at 0.
    pub depth: u32,
    /// Lookups charged for this node itself (0 or 1).
    pub cost: u32,
    /// True when the node makes evaluation fail (DNS error, missing or broken target, over a limit).
    pub error: bool,
    /// A readable note (addresses found, why it is not charged, ...).
    pub note: Option<String>,
    /// Codes of the problems found at this node.
    pub problems: Vec<ProblemCode>,
}

/// The result of an audit: the content of SPF diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SpfAudit {
    /// The audited domain.
    pub domain: String,
    /// The live record, when there is exactly one.
    pub record: Option<String>,
    /// Every `v=spf1` record at the domain (more than one is an error).
    pub records: Vec<String>,
    /// TTL of the TXT answer, when known.
    pub ttl: Option<u32>,
    /// pass, warn or fail.
    pub health: Health,
    /// Charged lookups (SPEC §8.2).
    pub lookup_count: u32,
    /// The limit, 10.
    pub lookup_limit: u32,
    /// `lookup_limit - lookup_count`, never below zero.
    pub remaining_lookups: u32,
    /// Void lookups for an IPv4 client.
    pub void_lookups_ipv4: u32,
    /// Void lookups for an IPv6 client.
    pub void_lookups_ipv6: u32,
    /// The larger of the two.
    pub void_lookups: u32,
    /// The void lookup limit, 2.
    pub void_lookup_limit: u32,
    /// The lookup tree, depth-first.
    pub tree: Vec<LookupNode>,
    /// Every problem found.
    pub problems: Vec<Problem>,
}

/// Audits the SPF record published at `domain`.
pub async fn audit_domain(resolver: &dyn DnsResolver, domain: &str) -> SpfAudit {
    let domain = strip_trailing_dot(domain).to_ascii_lowercase();
    let mut auditor = Auditor::new(resolver);
    let mut audit = empty_audit(&domain);
    match lookup_spf_record(resolver, &domain).await {
        RecordLookup::Found { record, ttl } => {
            audit.record = Some(record.text.clone());
            audit.records = vec![record.text.clone()];
            audit.ttl = ttl;
            auditor.path.push(domain.clone());
            auditor.walk_published(&domain, &record, 0).await;
        }
        RecordLookup::NotFound => auditor.problems.push(Problem::error(
            ProblemCode::NoSpfRecord,
            &domain,
            format!("{domain} publishes no v=spf1 TXT record"),
        )),
        RecordLookup::Multiple { records, ttl } => {
            audit.records = records.iter().map(|r| r.text.clone()).collect();
            audit.ttl = ttl;
            auditor.problems.push(Problem::error(
                ProblemCode::MultipleSpfRecords,
                &domain,
                format!(
                    "{domain} publishes {} v=spf1 records; evaluation gives permerror until only one remains",
                    records.len()
                ),
            ));
        }
        RecordLookup::Failed(error) => auditor.problems.push(Problem::error(
            ProblemCode::DnsTemporaryError,
            &domain,
            format!("TXT lookup of {domain} failed: {error}"),
        )),
    }
    auditor.finish(audit)
}

/// Audits `record` as if it were published at `domain` (for proposed or hosted records); its
/// includes and redirects are looked up live.
pub async fn audit_record(resolver: &dyn DnsResolver, domain: &str, record: &str) -> SpfAudit {
    let domain = strip_trailing_dot(domain).to_ascii_lowercase();
    let mut auditor = Auditor::new(resolver);
    let mut audit = empty_audit(&domain);
    audit.record = Some(record.to_string());
    audit.records = vec![record.to_string()];
    auditor.path.push(domain.clone());
    // A proposed record has no character-strings yet: whoever publishes it splits it, so
    // `string_too_long` is not reported here.
    let published = PublishedRecord {
        text: record.to_string(),
        string_lengths: Vec::new(),
    };
    auditor.walk_published(&domain, &published, 0).await;
    auditor.finish(audit)
}

fn empty_audit(domain: &str) -> SpfAudit {
    SpfAudit {
        domain: domain.to_string(),
        record: None,
        records: Vec::new(),
        ttl: None,
        health: Health::Pass,
        lookup_count: 0,
        lookup_limit: LOOKUP_LIMIT,
        remaining_lookups: LOOKUP_LIMIT,
        void_lookups_ipv4: 0,
        void_lookups_ipv6: 0,
        void_lookups: 0,
        void_lookup_limit: VOID_LOOKUP_LIMIT,
        tree: Vec::new(),
        problems: Vec::new(),
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

struct Auditor<'r> {
    resolver: &'r dyn DnsResolver,
    nodes: Vec<LookupNode>,
    problems: Vec<Problem>,
    lookups: u32,
    void_v4: u32,
    void_v6: u32,
    path: Vec<String>,
    cache: HashMap<(String, RecordType), Result<Answer, DnsError>>,
    truncated: bool,
}

/// What a node's own lookups found.
enum Lookup {
    Records(Vec<RecordData>),
    Void,
    Failed(DnsError),
}

impl<'r> Auditor<'r> {
    fn new(resolver: &'r dyn DnsResolver) -> Auditor<'r> {
        Auditor {
            resolver,
            nodes: Vec::new(),
            problems: Vec::new(),
            lookups: 0,
            void_v4: 0,
            void_v6: 0,
            path: Vec::new(),
            cache: HashMap::new(),
            truncated: false,
        }
    }

    fn finish(mut self, mut audit: SpfAudit) -> SpfAudit {
        let root = audit.domain.clone();
        if self.lookups > LOOKUP_LIMIT {
            self.problems.push(Problem::error(
                ProblemCode::LookupLimitExceeded,
                &root,
                format!(
                    "the record needs {} DNS lookups; the limit is {LOOKUP_LIMIT}, so evaluation ends in permerror for senders not matched earlier",
                    self.lookups
                ),
            ));
        }
        for (family, count) in [("IPv4", self.void_v4), ("IPv6", self.void_v6)] {
            if count > VOID_LOOKUP_LIMIT {
                self.problems.push(Problem::error(
                    ProblemCode::VoidLookupLimitExceeded,
                    &root,
                    format!(
                        "{count} lookups return no data for {family} senders; the limit is {VOID_LOOKUP_LIMIT}"
                    ),
                ));
            }
        }
        if self.truncated {
            self.problems.push(Problem::warning(
                ProblemCode::AuditTruncated,
                &root,
                format!("the record tree is larger than {MAX_NODES} nodes or deeper than {MAX_DEPTH}; the rest was not walked"),
            ));
        }
        audit.health = if self.problems.iter().any(|p| p.severity == Severity::Error) {
            Health::Fail
        } else if self.problems.is_empty() {
            Health::Pass
        } else {
            Health::Warn
        };
        audit.lookup_count = self.lookups;
        audit.remaining_lookups = LOOKUP_LIMIT.saturating_sub(self.lookups);
        audit.void_lookups_ipv4 = self.void_v4;
        audit.void_lookups_ipv6 = self.void_v6;
        audit.void_lookups = self.void_v4.max(self.void_v6);
        audit.tree = self.nodes;
        audit.problems = self.problems;
        audit
    }

    /// Records a problem, attaching its code to `node` when given.
    fn problem(&mut self, node: Option<usize>, problem: Problem) {
        if let Some(node) = node.and_then(|i| self.nodes.get_mut(i)) {
            if !node.problems.contains(&problem.code) {
                node.problems.push(problem.code);
            }
            if problem.severity == Severity::Error {
                node.error = true;
            }
        }
        self.problems.push(problem);
    }

    fn push_node(&mut self, node: LookupNode) -> Option<usize> {
        if self.nodes.len() >= MAX_NODES {
            self.truncated = true;
            return None;
        }
        self.nodes.push(node);
        Some(self.nodes.len() - 1)
    }

    fn note(&mut self, node: usize, text: String) {
        if let Some(node) = self.nodes.get_mut(node) {
            node.note = Some(match node.note.take() {
                Some(existing) => format!("{existing}; {text}"),
                None => text,
            });
        }
    }

    /// Charges one lookup to `node` and flags the node that crosses the limit.
    fn charge(&mut self, node: usize) {
        if let Some(node) = self.nodes.get_mut(node) {
            node.cost = 1;
        }
        self.lookups += 1;
        if self.lookups == LOOKUP_LIMIT + 1 {
            self.note(
                node,
                format!("lookup {} is over the limit of {LOOKUP_LIMIT}: evaluation reaching this term ends in permerror", self.lookups),
            );
            if let Some(node) = self.nodes.get_mut(node) {
                node.error = true;
                node.problems.push(ProblemCode::LookupLimitExceeded);
            }
        }
    }

    async fn query(&mut self, name: &str, record_type: RecordType) -> Lookup {
        let key = (name.to_ascii_lowercase(), record_type);
        let answer = match self.cache.get(&key) {
            Some(answer) => answer.clone(),
            None => {
                let answer = self.resolver.lookup(name, record_type).await;
                self.cache.insert(key, answer.clone());
                answer
            }
        };
        match answer {
            Ok(answer) if answer.records.is_empty() => Lookup::Void,
            Ok(answer) => Lookup::Records(answer.records),
            Err(DnsError::NxDomain) | Err(DnsError::InvalidName(_)) => Lookup::Void,
            Err(error) => Lookup::Failed(error),
        }
    }

    /// Checks a published record's strings, parses it and walks it.
    fn walk_published<'a>(
        &'a mut self,
        domain: &'a str,
        published: &'a PublishedRecord,
        depth: u32,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let parent = self.nodes.len().checked_sub(1).filter(|_| depth > 0);
            if published.has_overlong_string() {
                self.problem(
                    None,
                    Problem::error(
                        ProblemCode::StringTooLong,
                        domain,
                        format!("the TXT record at {domain} has a character-string over 255 octets; split it into several strings (they are joined without separator)"),
                    ),
                );
            }
            match parse_record(&published.text) {
                Ok(record) => self.walk_record(domain, &record, depth).await,
                Err(error) => self.problem(
                    parent,
                    Problem::error(ProblemCode::SyntaxError, domain, error.to_string()),
                ),
            }
        })
    }

    async fn walk_record(&mut self, domain: &str, record: &Record, depth: u32) {
        let has_all = record.has_all();
        let mut after_all = false;
        let mut reported_after_all = false;
        for directive in record.directives() {
            if self.truncated {
                return;
            }
            let kind = match &directive.mechanism {
                Mechanism::All => {
                    match directive.qualifier {
                        Qualifier::Pass => self.problem(None, Problem::error(
                            ProblemCode::PermissiveAll,
                            domain,
                            format!("'{}' at {domain} authorizes every sender on the internet", directive.text),
                        )),
                        Qualifier::Neutral => self.problem(None, Problem::warning(
                            ProblemCode::PermissiveAll,
                            domain,
                            format!("'{}' at {domain} makes every unlisted sender neutral, which protects nothing", directive.text),
                        )),
                        Qualifier::Fail | Qualifier::SoftFail => {}
                    }
                    after_all = true;
                    continue;
                }
                Mechanism::Ip4 { .. } | Mechanism::Ip6 { .. } => continue,
                Mechanism::Include { .. } => NodeKind::Include,
                Mechanism::A { .. } => NodeKind::A,
                Mechanism::Mx { .. } => NodeKind::Mx,
                Mechanism::Ptr { .. } => NodeKind::Ptr,
                Mechanism::Exists { .. } => NodeKind::Exists,
            };
            let spec = match &directive.mechanism {
                Mechanism::Include { domain } | Mechanism::Exists { domain } => Some(domain),
                Mechanism::A { domain, .. }
                | Mechanism::Mx { domain, .. }
                | Mechanism::Ptr { domain } => domain.as_ref(),
                _ => None,
            };
            let target = expand_target(spec, domain);
            let Some(node) = self.push_node(LookupNode {
                kind,
                operand: target.operand(),
                host: domain.to_string(),
                depth,
                cost: 0,
                error: false,
                note: None,
                problems: Vec::new(),
            }) else {
                return;
            };
            if after_all {
                self.note(
                    node,
                    "after 'all': never evaluated, not charged".to_string(),
                );
                if !reported_after_all {
                    reported_after_all = true;
                    self.problem(
                        Some(node),
                        Problem::warning(
                            ProblemCode::TermsAfterAll,
                            domain,
                            format!(
                                "terms after 'all' at {domain} are never evaluated; remove them"
                            ),
                        ),
                    );
                }
                continue;
            }
            self.charge(node);
            if kind == NodeKind::Ptr {
                self.problem(Some(node), Problem::warning(
                    ProblemCode::PtrDeprecated,
                    domain,
                    format!("'{}' at {domain}: ptr is slow, unreliable and deprecated (RFC 7208 §5.5); list addresses instead", directive.text),
                ));
                self.note(
                    node,
                    "needs the client address: not evaluated by the audit".to_string(),
                );
                continue;
            }
            let name = match target {
                Target::Name(name) => name,
                Target::Unexpandable { spec, reason } => {
                    self.note(
                        node,
                        "contains a macro that needs the sender: cannot be expanded by an audit"
                            .to_string(),
                    );
                    self.problem(Some(node), Problem::warning(
                        ProblemCode::MacroUnexpandable,
                        domain,
                        format!("'{}' at {domain}: {reason}; it counts as one lookup and cannot be checked without a sender ({spec})", directive.text),
                    ));
                    continue;
                }
                Target::Invalid { spec } => {
                    self.problem(Some(node), Problem::error(
                        ProblemCode::InvalidTargetName,
                        domain,
                        format!("'{}' at {domain}: '{spec}' does not expand to a name that can be looked up", directive.text),
                    ));
                    continue;
                }
            };
            match kind {
                NodeKind::Include => self.follow(node, domain, &name, depth, false).await,
                NodeKind::A => self.walk_a(node, domain, &name).await,
                NodeKind::Mx => self.walk_mx(node, domain, &name, depth).await,
                NodeKind::Exists => self.walk_exists(node, domain, &name).await,
                _ => {}
            }
        }
        if let Some(spec) = record.redirect() {
            let target = expand_target(Some(spec), domain);
            let Some(node) = self.push_node(LookupNode {
                kind: NodeKind::Redirect,
                operand: target.operand(),
                host: domain.to_string(),
                depth,
                cost: 0,
                error: false,
                note: None,
                problems: Vec::new(),
            }) else {
                return;
            };
            if has_all {
                self.note(
                    node,
                    "ignored because the record has 'all': not charged".to_string(),
                );
                self.problem(Some(node), Problem::warning(
                    ProblemCode::RedirectIgnoredWithAll,
                    domain,
                    format!("redirect={spec} at {domain} is ignored because the record also has 'all' (RFC 7208 §6.1)"),
                ));
                return;
            }
            self.charge(node);
            match target {
                Target::Name(name) => self.follow(node, domain, &name, depth, true).await,
                Target::Unexpandable { reason, .. } => {
                    self.note(node, "contains a macro that needs the sender: cannot be expanded by an audit".to_string());
                    self.problem(Some(node), Problem::warning(
                        ProblemCode::MacroUnexpandable,
                        domain,
                        format!("redirect={spec} at {domain}: {reason}"),
                    ));
                }
                Target::Invalid { .. } => self.problem(Some(node), Problem::error(
                    ProblemCode::InvalidTargetName,
                    domain,
                    format!("redirect={spec} at {domain} does not expand to a name that can be looked up"),
                )),
            }
        }
    }

    /// Follows an include or redirect to its target's record.
    async fn follow(
        &mut self,
        node: usize,
        domain: &str,
        target: &str,
        depth: u32,
        redirect: bool,
    ) {
        let what = if redirect { "redirect" } else { "include" };
        if self.path.iter().any(|p| p.eq_ignore_ascii_case(target)) {
            self.problem(Some(node), Problem::error(
                ProblemCode::IncludeLoop,
                domain,
                format!("{what} of {target} at {domain} loops back to a domain already being evaluated; evaluation ends in permerror"),
            ));
            return;
        }
        if depth + 1 > MAX_DEPTH {
            self.truncated = true;
            return;
        }
        match lookup_spf_record(self.resolver, target).await {
            RecordLookup::Found { record, .. } => {
                self.path.push(target.to_string());
                self.walk_published(target, &record, depth + 1).await;
                self.path.pop();
            }
            RecordLookup::NotFound => {
                let code = if redirect {
                    ProblemCode::RedirectTargetWithoutSpf
                } else {
                    ProblemCode::IncludeTargetWithoutSpf
                };
                self.problem(Some(node), Problem::error(
                    code,
                    domain,
                    format!("{what} target {target} publishes no SPF record; evaluation reaching it ends in permerror"),
                ));
            }
            RecordLookup::Multiple { records, .. } => self.problem(Some(node), Problem::error(
                ProblemCode::MultipleSpfRecords,
                target,
                format!("{target} publishes {} v=spf1 records; evaluation reaching it ends in permerror", records.len()),
            )),
            RecordLookup::Failed(error) => self.problem(Some(node), Problem::error(
                ProblemCode::DnsTemporaryError,
                domain,
                format!("TXT lookup of {target} failed: {error}"),
            )),
        }
    }

    async fn walk_a(&mut self, node: usize, domain: &str, name: &str) {
        let mut counts = Vec::new();
        for (record_type, family) in [(RecordType::A, "IPv4"), (RecordType::Aaaa, "IPv6")] {
            match self.query(name, record_type).await {
                Lookup::Records(records) => counts.push(format!(
                    "{} {family}",
                    records.iter().filter_map(RecordData::ip).count()
                )),
                Lookup::Void => {
                    self.count_void(
                        record_type == RecordType::A,
                        record_type == RecordType::Aaaa,
                    );
                    counts.push(format!(
                        "no {family} address (void lookup for {family} senders)"
                    ));
                }
                Lookup::Failed(error) => {
                    self.dns_failure(node, domain, name, &error);
                    return;
                }
            }
        }
        self.note(node, counts.join(", "));
    }

    async fn walk_exists(&mut self, node: usize, domain: &str, name: &str) {
        match self.query(name, RecordType::A).await {
            Lookup::Records(_) => self.note(node, "exists".to_string()),
            Lookup::Void => {
                self.count_void(true, true);
                self.note(node, "no A record (void lookup)".to_string());
            }
            Lookup::Failed(error) => self.dns_failure(node, domain, name, &error),
        }
    }

    async fn walk_mx(&mut self, node: usize, domain: &str, name: &str, depth: u32) {
        let records = match self.query(name, RecordType::Mx).await {
            Lookup::Records(records) => records,
            Lookup::Void => {
                self.count_void(true, true);
                self.note(node, "no MX records (void lookup)".to_string());
                return;
            }
            Lookup::Failed(error) => {
                self.dns_failure(node, domain, name, &error);
                return;
            }
        };
        let mut exchanges: Vec<(u16, String)> = records
            .iter()
            .filter_map(|r| match r {
                RecordData::Mx {
                    preference,
                    exchange,
                } => Some((*preference, strip_trailing_dot(exchange).to_string())),
                _ => None,
            })
            .filter(|(_, e)| !e.is_empty())
            .collect();
        exchanges.sort_by_key(|(preference, _)| *preference);
        self.note(
            node,
            format!("{} MX hosts, one lookup for the term", exchanges.len()),
        );
        if exchanges.len() > MX_RECORD_LIMIT {
            self.problem(Some(node), Problem::error(
                ProblemCode::MxTooManyRecords,
                domain,
                format!("{name} has {} MX records; an mx term may look up at most {MX_RECORD_LIMIT}, so evaluation ends in permerror for senders not matched by the first {MX_RECORD_LIMIT}", exchanges.len()),
            ));
        }
        for (_, exchange) in exchanges.into_iter().take(MX_RECORD_LIMIT) {
            let Some(child) = self.push_node(LookupNode {
                kind: NodeKind::ExpandedDomain,
                operand: exchange.clone(),
                host: domain.to_string(),
                depth: depth + 1,
                cost: 0,
                error: false,
                note: None,
                problems: Vec::new(),
            }) else {
                return;
            };
            let mut found = 0;
            for record_type in [RecordType::A, RecordType::Aaaa] {
                match self.query(&exchange, record_type).await {
                    Lookup::Records(records) => {
                        found += records.iter().filter_map(RecordData::ip).count();
                    }
                    Lookup::Void => {}
                    Lookup::Failed(error) => {
                        self.dns_failure(child, domain, &exchange, &error);
                    }
                }
            }
            self.note(child, format!("{found} addresses"));
        }
    }

    fn count_void(&mut self, ipv4: bool, ipv6: bool) {
        self.void_v4 += u32::from(ipv4);
        self.void_v6 += u32::from(ipv6);
    }

    fn dns_failure(&mut self, node: usize, domain: &str, name: &str, error: &DnsError) {
        self.problem(
            Some(node),
            Problem::error(
                ProblemCode::DnsTemporaryError,
                domain,
                format!("lookup of {name} failed: {error}; evaluation reaching it gives temperror"),
            ),
        );
    }
}

/// A term's target as far as an audit can know it.
enum Target {
    Name(String),
    Unexpandable { spec: String, reason: String },
    Invalid { spec: String },
}

impl Target {
    fn operand(&self) -> String {
        match self {
            Target::Name(name) => name.clone(),
            Target::Unexpandable { spec, .. } | Target::Invalid { spec } => spec.clone(),
        }
    }
}

/// Expands a domain-spec knowing only `%{d}`, or takes the current domain.
fn expand_target(spec: Option<&MacroString>, domain: &str) -> Target {
    let Some(spec) = spec else {
        return Target::Name(domain.to_string());
    };
    let values = MacroValues {
        domain: domain.to_string(),
        ..MacroValues::default()
    };
    match spec.expand(&values) {
        Ok(expanded) => {
            let name = truncate_left(strip_trailing_dot(&expanded)).to_string();
            if is_queryable(&name) {
                Target::Name(name)
            } else {
                Target::Invalid {
                    spec: spec.to_string(),
                }
            }
        }
        Err(error @ ExpandError::Unavailable(_)) => Target::Unexpandable {
            spec: spec.to_string(),
            reason: error.to_string(),
        },
        Err(ExpandError::TooLong) => Target::Invalid {
            spec: spec.to_string(),
        },
    }
}
