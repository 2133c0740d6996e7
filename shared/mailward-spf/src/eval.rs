//! `check_host()` (RFC 7208 §4 to §6) for one client address, against the [`DnsResolver`] port.
//!
//! How the evaluator counts, because implementations disagree and this is what diagnostics show:
//! - Each `include`, `a`, `mx`, `ptr`, `exists` and `redirect` costs one lookup when it is reached,
//!   before its DNS query, across the whole evaluation (includes and redirects share the count).
//!   `ip4`, `ip6`, `all` and `exp` cost nothing. The eleventh charged term is a permerror.
//! - A void lookup is a term's own query answering NXDOMAIN or no records. It is counted in one
//!   place (`Evaluator::note_void`); the third is a permerror. Address lookups of MX hosts and of
//!   PTR names, and the `exp=` lookup, are not terms' own queries and are not counted.
//! - An `mx` term costs one however many MX hosts it has. Its hosts are tried in preference order
//!   and at most ten are looked up: needing an eleventh is a permerror (§4.6.4: the evaluation
//!   "MUST NOT result in querying more than 10 address records"; the RFC 7208 suite's
//!   `mx-limit`). A match among the first ten is a match. At most ten PTR names are checked.
//! - A DNS failure (timeout, SERVFAIL, ...) on a term's query is a temperror, never a non-match,
//!   except where the RFC says otherwise: the PTR lookups of `ptr` and `%{p}` (§5.5) and `exp=`
//!   (§6.2), whose failures are ignored.
//! - A target name that cannot be queried after expansion (empty or over-long label) is treated
//!   as a name that does not exist, without a query: a non-match for `a`, `mx`, `exists`, `ptr`,
//!   and "no record", hence permerror, for `include` and `redirect` (the suite's preferred result).

use crate::SpfResult;
use crate::macros::{MacroLetter, MacroPlace, MacroString, MacroValues};
use crate::names::{
    canonical_ip, in_network, is_queryable, is_same_or_subdomain, is_valid_initial_domain,
    reverse_name, strip_trailing_dot, truncate_left,
};
use crate::parse::{Directive, Mechanism, Qualifier, Record, parse_record};
use crate::problem::{Problem, ProblemCode};
use crate::select::{RecordLookup, lookup_spf_record};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use serde::Serialize;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

/// Most terms that cost a DNS lookup in one evaluation (§4.6.4).
pub const LOOKUP_LIMIT: u32 = 10;
/// Most void lookups in one evaluation (§4.6.4, the recommended default).
pub const VOID_LOOKUP_LIMIT: u32 = 2;
/// Most MX records one `mx` term may have (§4.6.4).
pub const MX_RECORD_LIMIT: usize = 10;
/// Most PTR names checked by `ptr` or `%{p}` (§4.6.4).
pub const PTR_NAME_LIMIT: usize = 10;
/// Nesting bound: the lookup limit already stops recursion at depth 11; this is a backstop.
pub const MAX_RECURSION_DEPTH: u32 = 16;

/// What to check: the inputs of `check_host()` plus the receiver's name for `%{r}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpfRequest {
    /// The SMTP client's address; IPv4-mapped IPv6 is treated as IPv4.
    pub ip: IpAddr,
    /// MAIL FROM, or empty for the null reverse-path (then `postmaster@<helo>` is checked, which is
    /// also how a HELO identity check is asked for).
    pub mail_from: String,
    /// The HELO/EHLO domain (`%{h}`).
    pub helo: String,
    /// The receiving host's domain for `%{r}` in explanations; `unknown` when absent.
    pub receiver: Option<String>,
    /// Seconds since the epoch for `%{t}`; the system clock when absent.
    pub timestamp: Option<u64>,
}

impl SpfRequest {
    /// A MAIL FROM check (empty `mail_from` checks `postmaster@helo`).
    pub fn mail_from(ip: IpAddr, mail_from: &str, helo: &str) -> SpfRequest {
        SpfRequest {
            ip,
            mail_from: mail_from.to_string(),
            helo: helo.to_string(),
            receiver: None,
            timestamp: None,
        }
    }

    /// A HELO identity check (RFC 7208 §2.3).
    pub fn helo(ip: IpAddr, helo: &str) -> SpfRequest {
        SpfRequest::mail_from(ip, "", helo)
    }

    /// Sets the receiver's domain for `%{r}`.
    pub fn with_receiver(mut self, receiver: &str) -> SpfRequest {
        self.receiver = Some(receiver.to_string());
        self
    }
}

/// The term that decided the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MatchedTerm {
    /// The domain whose record holds the term (after any redirect).
    pub domain: String,
    /// The term as written (for a match inside an include, the `include` term).
    pub term: String,
    /// Its qualifier.
    pub qualifier: Qualifier,
}

/// The result of `check_host()` with what a report or header analysis needs to explain it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpfOutcome {
    /// The SPF result.
    pub result: SpfResult,
    /// The domain checked (the sender's domain, or the HELO domain).
    pub domain: String,
    /// The expanded `exp=` text on `fail`, when the record has a usable one.
    pub explanation: Option<String>,
    /// The term that matched, if any (none for `neutral` by default, `none` and errors).
    pub matched: Option<MatchedTerm>,
    /// Charged lookups (include, a, mx, ptr, exists, redirect) made.
    pub dns_lookups: u32,
    /// Void lookups met.
    pub void_lookups: u32,
    /// Why the result is `permerror` or `temperror`.
    pub error: Option<Problem>,
}

/// Runs `check_host()` for `request` (RFC 7208 §4).
pub async fn check_host(resolver: &dyn DnsResolver, request: &SpfRequest) -> SpfOutcome {
    let ip = canonical_ip(request.ip);
    let (local_part, sender_domain) = split_sender(&request.mail_from, &request.helo);
    let domain = strip_trailing_dot(&sender_domain).to_string();
    let timestamp = request.timestamp.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    });
    let mut evaluator = Evaluator {
        resolver,
        ip,
        base: MacroValues {
            sender: Some(format!("{local_part}@{sender_domain}")),
            local_part: Some(local_part),
            sender_domain: Some(sender_domain.clone()),
            domain: String::new(),
            ip: Some(ip),
            validated_domain: None,
            helo: Some(request.helo.clone()),
            receiver: request.receiver.clone(),
            timestamp: Some(timestamp),
        },
        lookups: 0,
        voids: 0,
        ptr_cache: None,
    };
    let mut outcome = SpfOutcome {
        result: SpfResult::None,
        domain: domain.clone(),
        explanation: None,
        matched: None,
        dns_lookups: 0,
        void_lookups: 0,
        error: None,
    };
    if !is_valid_initial_domain(&domain) {
        return outcome;
    }
    match evaluator.check(domain, 0, true).await {
        Ok(verdict) => {
            outcome.result = verdict.result;
            outcome.explanation = verdict.explanation;
            outcome.matched = verdict.matched;
        }
        Err(Stop::Perm(problem)) => {
            outcome.result = SpfResult::PermError;
            outcome.error = Some(problem);
        }
        Err(Stop::Temp(problem)) => {
            outcome.result = SpfResult::TempError;
            outcome.error = Some(problem);
        }
    }
    outcome.dns_lookups = evaluator.lookups;
    outcome.void_lookups = evaluator.voids;
    outcome
}

/// Splits MAIL FROM into local-part and domain; a missing local-part is `postmaster` (§4.3) and a
/// null reverse-path uses the HELO domain (§2.4).
fn split_sender(mail_from: &str, helo: &str) -> (String, String) {
    if mail_from.is_empty() {
        return ("postmaster".to_string(), helo.to_string());
    }
    match mail_from.rsplit_once('@') {
        Some((local, domain)) if !local.is_empty() => (local.to_string(), domain.to_string()),
        Some((_, domain)) => ("postmaster".to_string(), domain.to_string()),
        None => ("postmaster".to_string(), mail_from.to_string()),
    }
}

/// Why evaluation stopped early.
enum Stop {
    Perm(Problem),
    Temp(Problem),
}

struct Verdict {
    result: SpfResult,
    explanation: Option<String>,
    matched: Option<MatchedTerm>,
}

impl Verdict {
    fn none() -> Verdict {
        Verdict {
            result: SpfResult::None,
            explanation: None,
            matched: None,
        }
    }
}

type Step<T> = Result<T, Stop>;
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// PTR names of the client, validated by a forward lookup (for `ptr` and `%{p}`).
#[derive(Clone)]
struct PtrNames {
    void: bool,
    validated: Vec<String>,
}

struct Evaluator<'r> {
    resolver: &'r dyn DnsResolver,
    ip: IpAddr,
    base: MacroValues,
    lookups: u32,
    voids: u32,
    ptr_cache: Option<PtrNames>,
}

impl<'r> Evaluator<'r> {
    /// check_host() for one domain; boxed because include and redirect recurse.
    fn check(
        &mut self,
        domain: String,
        depth: u32,
        want_exp: bool,
    ) -> BoxFuture<'_, Step<Verdict>> {
        Box::pin(async move {
            if depth > MAX_RECURSION_DEPTH {
                return Err(Stop::Perm(Problem::error(
                    ProblemCode::IncludeLoop,
                    &domain,
                    "include/redirect nesting is too deep",
                )));
            }
            if !is_queryable(&domain) {
                return Ok(Verdict::none());
            }
            let record = match lookup_spf_record(self.resolver, &domain).await {
                RecordLookup::Found { record, .. } => record,
                RecordLookup::NotFound => return Ok(Verdict::none()),
                RecordLookup::Multiple { records, .. } => {
                    return Err(Stop::Perm(Problem::error(
                        ProblemCode::MultipleSpfRecords,
                        &domain,
                        format!(
                            "{} v=spf1 records at {domain}; there must be one",
                            records.len()
                        ),
                    )));
                }
                RecordLookup::Failed(error) => return Err(temp(&domain, &domain, &error)),
            };
            let record = parse_record(&record.text).map_err(|e| {
                Stop::Perm(Problem::error(
                    ProblemCode::SyntaxError,
                    &domain,
                    e.to_string(),
                ))
            })?;
            self.evaluate(record, domain, depth, want_exp).await
        })
    }

    async fn evaluate(
        &mut self,
        record: Record,
        domain: String,
        depth: u32,
        want_exp: bool,
    ) -> Step<Verdict> {
        for directive in record.directives() {
            if directive.mechanism.costs_lookup() {
                self.charge(&domain, &directive.text)?;
            }
            if self.matches(directive, &domain, depth).await? {
                let result = SpfResult::from(directive.qualifier);
                let explanation = if result == SpfResult::Fail && want_exp {
                    self.explain(&record, &domain).await
                } else {
                    None
                };
                return Ok(Verdict {
                    result,
                    explanation,
                    matched: Some(MatchedTerm {
                        domain,
                        term: directive.text.clone(),
                        qualifier: directive.qualifier,
                    }),
                });
            }
        }
        if let Some(target) = record.redirect().filter(|_| !record.has_all()) {
            self.charge(&domain, &format!("redirect={target}"))?;
            let verdict = match self.target_name(target, &domain).await {
                Some(name) => self.check(name, depth + 1, want_exp).await?,
                None => Verdict::none(),
            };
            if verdict.result == SpfResult::None {
                return Err(Stop::Perm(Problem::error(
                    ProblemCode::RedirectTargetWithoutSpf,
                    &domain,
                    format!("redirect={target}: the target has no SPF record"),
                )));
            }
            return Ok(verdict);
        }
        Ok(Verdict {
            result: SpfResult::Neutral,
            explanation: None,
            matched: None,
        })
    }

    fn charge(&mut self, domain: &str, term: &str) -> Step<()> {
        self.lookups += 1;
        if self.lookups > LOOKUP_LIMIT {
            return Err(Stop::Perm(Problem::error(
                ProblemCode::LookupLimitExceeded,
                domain,
                format!(
                    "'{term}' is lookup {}; the limit is {LOOKUP_LIMIT}",
                    self.lookups
                ),
            )));
        }
        Ok(())
    }

    /// The one place void lookups are counted.
    fn note_void(&mut self, domain: &str, name: &str) -> Step<()> {
        self.voids += 1;
        if self.voids > VOID_LOOKUP_LIMIT {
            return Err(Stop::Perm(Problem::error(
                ProblemCode::VoidLookupLimitExceeded,
                domain,
                format!(
                    "lookup of {name} is void lookup {}; the limit is {VOID_LOOKUP_LIMIT}",
                    self.voids
                ),
            )));
        }
        Ok(())
    }

    async fn matches(&mut self, directive: &Directive, domain: &str, depth: u32) -> Step<bool> {
        match &directive.mechanism {
            Mechanism::All => Ok(true),
            Mechanism::Ip4 { network, prefix } => {
                Ok(in_network(self.ip, IpAddr::V4(*network), *prefix))
            }
            Mechanism::Ip6 { network, prefix } => {
                Ok(in_network(self.ip, IpAddr::V6(*network), *prefix))
            }
            Mechanism::Include { domain: spec } => {
                let verdict = match self.target_name(spec, domain).await {
                    Some(name) => self.check(name, depth + 1, false).await?,
                    None => Verdict::none(),
                };
                match verdict.result {
                    SpfResult::Pass => Ok(true),
                    SpfResult::Fail | SpfResult::SoftFail | SpfResult::Neutral => Ok(false),
                    _ => Err(Stop::Perm(Problem::error(
                        ProblemCode::IncludeTargetWithoutSpf,
                        domain,
                        format!("{}: the target has no SPF record", directive.text),
                    ))),
                }
            }
            Mechanism::A { domain: spec, cidr } => {
                let Some(name) = self.optional_target(spec.as_ref(), domain).await else {
                    return Ok(false);
                };
                let addresses = self.term_query(domain, &name, self.address_type()).await?;
                Ok(self.any_address_matches(&addresses, cidr.v4, cidr.v6))
            }
            Mechanism::Mx { domain: spec, cidr } => {
                let Some(name) = self.optional_target(spec.as_ref(), domain).await else {
                    return Ok(false);
                };
                let records = self.term_query(domain, &name, RecordType::Mx).await?;
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
                // Lowest preference first, as a sending MTA would try them; the sort is stable
                // so equal preferences keep the answer's order.
                exchanges.sort_by_key(|(preference, _)| *preference);
                let total = exchanges.len();
                for (position, (_, exchange)) in exchanges.into_iter().enumerate() {
                    if position == MX_RECORD_LIMIT {
                        return Err(Stop::Perm(Problem::error(
                            ProblemCode::MxTooManyRecords,
                            domain,
                            format!(
                                "{name} has {total} MX records and none of the first {MX_RECORD_LIMIT} matched; an mx term may look up at most {MX_RECORD_LIMIT}"
                            ),
                        )));
                    }
                    if !is_queryable(&exchange) {
                        continue;
                    }
                    let addresses = match self.resolver.lookup(&exchange, self.address_type()).await
                    {
                        Ok(answer) => answer.records,
                        Err(DnsError::NxDomain) | Err(DnsError::InvalidName(_)) => Vec::new(),
                        Err(error) => return Err(temp(domain, &exchange, &error)),
                    };
                    if self.any_address_matches(&addresses, cidr.v4, cidr.v6) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Mechanism::Ptr { domain: spec } => {
                let Some(target) = self.optional_target(spec.as_ref(), domain).await else {
                    return Ok(false);
                };
                let names = self.ptr_names().await;
                if names.void {
                    self.note_void(domain, &reverse_name(self.ip))?;
                }
                Ok(names
                    .validated
                    .iter()
                    .any(|name| is_same_or_subdomain(name, &target)))
            }
            Mechanism::Exists { domain: spec } => {
                let Some(name) = self.target_name(spec, domain).await else {
                    return Ok(false);
                };
                let records = self.term_query(domain, &name, RecordType::A).await?;
                Ok(!records.is_empty())
            }
        }
    }

    fn address_type(&self) -> RecordType {
        match self.ip {
            IpAddr::V4(_) => RecordType::A,
            IpAddr::V6(_) => RecordType::Aaaa,
        }
    }

    fn any_address_matches(&self, records: &[RecordData], v4: u8, v6: u8) -> bool {
        records.iter().filter_map(RecordData::ip).any(|address| {
            let prefix = if address.is_ipv4() { v4 } else { v6 };
            in_network(self.ip, address, prefix)
        })
    }

    /// A term's own query: failures are temperror, empty answers are void lookups.
    async fn term_query(
        &mut self,
        domain: &str,
        name: &str,
        record_type: RecordType,
    ) -> Step<Vec<RecordData>> {
        let records = match self.resolver.lookup(name, record_type).await {
            Ok(answer) => answer
                .records
                .into_iter()
                .filter(|r| matches_type(r, record_type))
                .collect(),
            Err(DnsError::NxDomain) | Err(DnsError::InvalidName(_)) => Vec::new(),
            Err(error) => return Err(temp(domain, name, &error)),
        };
        if records.is_empty() {
            self.note_void(domain, name)?;
        }
        Ok(records)
    }

    /// The target of `a`, `mx` or `ptr`: the expanded domain-spec, or the current domain.
    async fn optional_target(
        &mut self,
        spec: Option<&MacroString>,
        domain: &str,
    ) -> Option<String> {
        match spec {
            Some(spec) => self.target_name(spec, domain).await,
            None => Some(domain.to_string()),
        }
    }

    /// Expands a domain-spec into a queryable name (§7.3 truncation), or `None` when it cannot be
    /// one (treated as a name that does not exist).
    async fn target_name(&mut self, spec: &MacroString, domain: &str) -> Option<String> {
        let values = self.values_for(spec, domain).await;
        let expanded = spec.expand(&values).ok()?;
        let name = truncate_left(strip_trailing_dot(&expanded)).to_string();
        is_queryable(&name).then_some(name)
    }

    async fn values_for(&mut self, string: &MacroString, domain: &str) -> MacroValues {
        let mut values = self.base.clone();
        values.domain = domain.to_string();
        if string.uses(MacroLetter::ValidatedDomain) {
            let names = self.ptr_names().await;
            values.validated_domain = Some(choose_validated(&names.validated, domain));
        }
        values
    }

    /// PTR names of the client that resolve back to it (at most ten checked); cached.
    async fn ptr_names(&mut self) -> PtrNames {
        if let Some(cached) = &self.ptr_cache {
            return cached.clone();
        }
        let names: Vec<String> = match self
            .resolver
            .lookup(&reverse_name(self.ip), RecordType::Ptr)
            .await
        {
            Ok(answer) => answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Ptr(name) => Some(strip_trailing_dot(name).to_string()),
                    _ => None,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let mut validated = Vec::new();
        for name in names.iter().take(PTR_NAME_LIMIT) {
            if !is_queryable(name) {
                continue;
            }
            // §5.5: a DNS error on this lookup skips the name.
            if let Ok(answer) = self.resolver.lookup(name, self.address_type()).await
                && answer
                    .records
                    .iter()
                    .filter_map(RecordData::ip)
                    .any(|a| a == self.ip)
            {
                validated.push(name.clone());
            }
        }
        let result = PtrNames {
            void: names.is_empty(),
            validated,
        };
        self.ptr_cache = Some(result.clone());
        result
    }

    /// The `exp=` text (§6.2); any failure means "no explanation", never an error.
    async fn explain(&mut self, record: &Record, domain: &str) -> Option<String> {
        let spec = record.explanation()?;
        let name = self.target_name(spec, domain).await?;
        let answer = self.resolver.lookup(&name, RecordType::Txt).await.ok()?;
        let mut texts = answer.records.iter().filter_map(|r| match r {
            RecordData::Txt(parts) => Some(parts.concat()),
            _ => None,
        });
        let text = texts.next()?;
        if texts.next().is_some() {
            return None;
        }
        let text = String::from_utf8(text).ok()?;
        let parsed = MacroString::parse(&text, MacroPlace::Explanation).ok()?;
        let values = self.values_for(&parsed, domain).await;
        parsed.expand(&values).ok()
    }
}

fn matches_type(data: &RecordData, record_type: RecordType) -> bool {
    matches!(
        (data, record_type),
        (RecordData::A(_), RecordType::A)
            | (RecordData::Aaaa(_), RecordType::Aaaa)
            | (RecordData::Mx { .. }, RecordType::Mx)
            | (RecordData::Txt(_), RecordType::Txt)
            | (RecordData::Ptr(_), RecordType::Ptr)
    )
}

/// §7.3: prefer the domain itself, then a subdomain of it, then any validated name.
fn choose_validated(validated: &[String], domain: &str) -> String {
    validated
        .iter()
        .find(|n| is_same_or_subdomain(n, domain) && n.len() == strip_trailing_dot(domain).len())
        .or_else(|| validated.iter().find(|n| is_same_or_subdomain(n, domain)))
        .or_else(|| validated.first())
        .cloned()
        .unwrap_or_else(|| "unknown".to_string())
}

fn temp(domain: &str, name: &str, error: &DnsError) -> Stop {
    Stop::Temp(Problem::error(
        ProblemCode::DnsTemporaryError,
        domain,
        format!("lookup of {name} failed: {error}"),
    ))
}
