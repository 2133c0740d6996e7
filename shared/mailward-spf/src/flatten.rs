//! SPF flattening, behind hosted SPF: a source record's `include:`, `a` and `mx` mechanisms
//! resolved into the `ip4:`/`ip6:` networks they authorize, so that the records Mailward serves
//! stay within the ten-lookup limit of RFC 7208 §4.6.4, laid out as a chain of records each
//! small enough for a 512-octet UDP answer (§3.4).
//!
//! The customer publishes `v=spf1 [kept terms] include:<first served name> <all>`; the served
//! records are reached through that `include:`. An include matches only when the included check
//! passes, so what is served must be pass-qualified and must not depend on the domain being
//! evaluated. The rules that keep the meaning:
//!
//! - pass-qualified `ip4`/`ip6` are served as they are;
//! - pass-qualified `include:`, `a`, `mx` with a literal domain (or none: the customer's domain)
//!   are candidates for flattening; a candidate's tree is flattenable only when every term in
//!   it is a pass-qualified `ip4`/`ip6`/`a`/`mx`/`include`/`redirect` ahead of a non-pass `all`.
//!   A tree with `exists`, `ptr`, macros, other qualifiers, `+all`, or a missing, duplicate or
//!   unparsable record is served as the term itself, unchanged: receivers then see exactly what
//!   they saw before;
//! - every other mechanism (other qualifiers, `exists`, `ptr`, macro domains, whose meaning
//!   would change inside an include through `%{d}`) stays in the customer's own record, in front
//!   of the include;
//! - a `redirect=` of a record without `all` is flattened like an include, and the customer's
//!   record ends in `~all`; `exp=` and unknown modifiers are dropped.
//!
//! Without `force`, candidates are flattened most expensive first only until the whole fits
//! the limit; with it every flattenable one is. DNS failures fail the whole flattening: a
//! half-resolved tree is never served.

use crate::lookup_spf_record;
use crate::macros::{MacroPiece, MacroString};
use crate::parse::{DualCidr, Mechanism, Modifier, Qualifier, Term, parse_record};
use crate::select::RecordLookup;
use ipnet::IpNet;
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// The lookup limit the served chain respects (RFC 7208 §4.6.4).
pub const LOOKUP_LIMIT: u32 = 10;
/// Longest served record, in octets: a TXT answer this size fits a 512-octet UDP response.
pub const MAX_SERVED_LEN: usize = 450;
/// Deepest include nesting followed before a tree is served as itself.
const MAX_DEPTH: u8 = 10;
/// MX hosts resolved per `mx` mechanism (§4.6.4).
const MAX_MX_HOSTS: usize = 10;

/// Why flattening could not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlattenError {
    /// The source record does not parse.
    #[error("the source SPF record does not parse: {0}")]
    Syntax(String),
    /// DNS did not answer conclusively for a name in the tree.
    #[error("DNS did not answer for {name}: {error}")]
    Dns {
        /// The name asked for.
        name: String,
        /// The failure.
        error: DnsError,
    },
}

/// One term of the source record that authorizes senders through DNS, and what flattening
/// made of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlattenedTerm {
    /// The term as served when not flattened (`include:_spf.example.com`, `a:example.com`).
    pub term: String,
    /// Whether its networks are served instead of the term.
    pub flattened: bool,
    /// Lookups the term costs when served as itself (the term and its whole tree).
    pub lookups: u32,
    /// The networks the term authorizes, aggregated (`ip4:`/`ip6:` terms); empty when it
    /// cannot be flattened.
    pub networks: Vec<String>,
    /// Why it is served as itself, when it cannot be flattened.
    pub note: Option<String>,
}

/// One record of the served chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServedRecord {
    /// Where it is served.
    pub name: String,
    /// The TXT value.
    pub value: String,
}

/// The outcome of a flattening.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flattened {
    /// The record the customer publishes at the domain.
    pub customer_record: String,
    /// The chain Mailward serves, first record first.
    pub records: Vec<ServedRecord>,
    /// The candidates of the source, in source order.
    pub terms: Vec<FlattenedTerm>,
    /// Lookups a receiver makes evaluating the customer's record (§4.6.4 counting).
    pub lookups: u32,
}

/// Flattens `source` (a whole `v=spf1` record of `domain`) into a served chain named by
/// `names` (`names(0)` is what the customer's record includes).
pub async fn flatten(
    resolver: &dyn DnsResolver,
    domain: &str,
    source: &str,
    force: bool,
    names: &(dyn Fn(usize) -> String + Sync),
) -> Result<Flattened, FlattenError> {
    let record = parse_record(source.trim()).map_err(|e| FlattenError::Syntax(e.message))?;
    let domain = normalize(domain);
    let mut direct: Vec<IpNet> = Vec::new();
    let mut customer_terms: Vec<String> = Vec::new();
    let mut customer_cost = 0u32;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut all = "~all".to_owned();
    for term in &record.terms {
        match term {
            Term::Directive(d) => {
                if let Mechanism::All = d.mechanism {
                    if d.qualifier == Qualifier::Fail {
                        all = "-all".to_owned();
                    }
                    break;
                }
                if d.qualifier != Qualifier::Pass {
                    customer_cost += u32::from(d.mechanism.costs_lookup());
                    customer_terms.push(d.text.clone());
                    continue;
                }
                match &d.mechanism {
                    Mechanism::Ip4 { network, prefix } => {
                        direct.extend(IpNet::new((*network).into(), *prefix).ok());
                    }
                    Mechanism::Ip6 { network, prefix } => {
                        direct.extend(IpNet::new((*network).into(), *prefix).ok());
                    }
                    Mechanism::Include { domain: spec } => match literal(spec) {
                        Some(target) => {
                            let tree = resolve_record(resolver, target.clone(), 1).await?;
                            candidates.push(Candidate::new(format!("include:{target}"), tree));
                        }
                        None => {
                            customer_cost += 1;
                            customer_terms.push(d.text.clone());
                        }
                    },
                    Mechanism::A { domain: spec, cidr } | Mechanism::Mx { domain: spec, cidr } => {
                        let mx = matches!(d.mechanism, Mechanism::Mx { .. });
                        let target = match spec {
                            None => Some(domain.clone()),
                            Some(spec) => literal(spec),
                        };
                        let Some(target) = target else {
                            customer_cost += 1;
                            customer_terms.push(d.text.clone());
                            continue;
                        };
                        let networks = hosts(resolver, &target, mx, *cidr).await?;
                        let name = if mx { "mx" } else { "a" };
                        candidates.push(Candidate::new(
                            format!("{name}:{target}{}", cidr_suffix(*cidr)),
                            Tree {
                                networks,
                                opaque: None,
                                cost: 0,
                            },
                        ));
                    }
                    Mechanism::Ptr { .. } | Mechanism::Exists { .. } => {
                        customer_cost += 1;
                        customer_terms.push(d.text.clone());
                    }
                    Mechanism::All => {}
                }
            }
            Term::Modifier(Modifier::Redirect { domain: spec }) if !record.has_all() => {
                match literal(spec) {
                    Some(target) => {
                        let tree = resolve_record(resolver, target.clone(), 1).await?;
                        candidates.push(Candidate::new(format!("include:{target}"), tree));
                    }
                    None => {
                        customer_cost += 1;
                        customer_terms.push(format!("include:{spec}"));
                    }
                }
            }
            Term::Modifier(_) => {}
        }
    }
    let mut chosen: Vec<bool> = candidates
        .iter()
        .map(|c| force && c.tree.opaque.is_none())
        .collect();
    loop {
        let (records, kept_cost) = layout(&direct, &candidates, &chosen, names);
        let lookups = customer_cost + kept_cost + u32::try_from(records.len()).unwrap_or(u32::MAX);
        let next = candidates
            .iter()
            .enumerate()
            .filter(|(i, c)| !chosen[*i] && c.tree.opaque.is_none())
            .max_by_key(|(i, c)| (c.served_cost(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        match next {
            Some(i) if lookups > LOOKUP_LIMIT => chosen[i] = true,
            _ => {
                let mut customer = vec!["v=spf1".to_owned()];
                customer.extend(customer_terms);
                customer.push(format!("include:{}", names(0)));
                customer.push(all);
                let terms = candidates
                    .into_iter()
                    .zip(chosen)
                    .map(|(c, flattened)| c.report(flattened))
                    .collect();
                return Ok(Flattened {
                    customer_record: customer.join(" "),
                    records,
                    terms,
                    lookups,
                });
            }
        }
    }
}

/// A candidate term of the source record with its resolved tree.
struct Candidate {
    term: String,
    tree: Tree,
}

impl Candidate {
    fn new(term: String, tree: Tree) -> Candidate {
        Candidate { term, tree }
    }

    /// Lookups the term costs served as itself.
    fn served_cost(&self) -> u32 {
        1 + self.tree.cost
    }

    fn report(self, flattened: bool) -> FlattenedTerm {
        FlattenedTerm {
            lookups: self.served_cost(),
            networks: match self.tree.opaque {
                None => render(&IpNet::aggregate(&self.tree.networks)),
                Some(_) => Vec::new(),
            },
            note: self.tree.opaque,
            term: self.term,
            flattened,
        }
    }
}

/// What a record's tree authorizes.
struct Tree {
    /// The networks of its pass-qualified terms.
    networks: Vec<IpNet>,
    /// Set when the tree cannot be flattened, with the reason.
    opaque: Option<String>,
    /// Lookup terms inside the tree (not counting the term that reaches it).
    cost: u32,
}

/// The served chain for a choice of flattened candidates, and the lookups of the terms kept
/// as themselves.
fn layout(
    direct: &[IpNet],
    candidates: &[Candidate],
    chosen: &[bool],
    names: &(dyn Fn(usize) -> String + Sync),
) -> (Vec<ServedRecord>, u32) {
    let mut networks: Vec<IpNet> = direct.to_vec();
    let mut kept: Vec<String> = Vec::new();
    let mut kept_cost = 0u32;
    for (c, flattened) in candidates.iter().zip(chosen) {
        if *flattened {
            networks.extend(c.tree.networks.iter().copied());
        } else {
            kept.push(c.term.clone());
            kept_cost += c.served_cost();
        }
    }
    let mut terms = render(&IpNet::aggregate(&networks));
    terms.extend(kept);
    let mut parts: Vec<Vec<String>> = vec![Vec::new()];
    let mut length = "v=spf1".len();
    for term in terms {
        let room = MAX_SERVED_LEN
            .saturating_sub(" include:".len() + names(parts.len()).len() + " -all".len());
        let current = parts.last_mut().expect("one part at least");
        if !current.is_empty() && length + 1 + term.len() > room {
            length = "v=spf1".len();
            parts.push(Vec::new());
        }
        length += 1 + term.len();
        parts.last_mut().expect("one part at least").push(term);
    }
    let count = parts.len();
    let records = parts
        .into_iter()
        .enumerate()
        .map(|(i, mut terms)| {
            terms.insert(0, "v=spf1".to_owned());
            if i + 1 < count {
                terms.push(format!("include:{}", names(i + 1)));
            }
            terms.push("-all".to_owned());
            ServedRecord {
                name: names(i),
                value: terms.join(" "),
            }
        })
        .collect();
    (records, kept_cost)
}

type TreeFuture<'a> = Pin<Box<dyn Future<Output = Result<Tree, FlattenError>> + Send + 'a>>;

/// Resolves the SPF record at `name` into the networks it authorizes.
fn resolve_record(resolver: &dyn DnsResolver, name: String, depth: u8) -> TreeFuture<'_> {
    Box::pin(async move {
        let opaque = |why: String| Tree {
            networks: Vec::new(),
            opaque: Some(why),
            cost: 0,
        };
        if depth > MAX_DEPTH {
            return Ok(opaque(format!(
                "includes nest deeper than {MAX_DEPTH} at {name}"
            )));
        }
        let text = match lookup_spf_record(resolver, &name).await {
            RecordLookup::Found { record, .. } => record.text,
            RecordLookup::NotFound => return Ok(opaque(format!("{name} has no SPF record"))),
            RecordLookup::Multiple { .. } => {
                return Ok(opaque(format!("{name} has more than one SPF record")));
            }
            RecordLookup::Failed(error) => return Err(FlattenError::Dns { name, error }),
        };
        let Ok(record) = parse_record(&text) else {
            return Ok(opaque(format!("the SPF record of {name} does not parse")));
        };
        let mut tree = Tree {
            networks: Vec::new(),
            opaque: None,
            cost: 0,
        };
        let refuse = |tree: &mut Tree, why: String| {
            tree.opaque.get_or_insert(why);
        };
        for term in &record.terms {
            match term {
                Term::Directive(d) => {
                    tree.cost += u32::from(d.mechanism.costs_lookup());
                    if let Mechanism::All = d.mechanism {
                        if d.qualifier == Qualifier::Pass {
                            refuse(&mut tree, format!("{name} authorizes every host (+all)"));
                        }
                        break;
                    }
                    if d.qualifier != Qualifier::Pass {
                        refuse(&mut tree, format!("{name} has a non-pass term {}", d.text));
                        continue;
                    }
                    match &d.mechanism {
                        Mechanism::Ip4 { network, prefix } => {
                            tree.networks
                                .extend(IpNet::new((*network).into(), *prefix).ok());
                        }
                        Mechanism::Ip6 { network, prefix } => {
                            tree.networks
                                .extend(IpNet::new((*network).into(), *prefix).ok());
                        }
                        Mechanism::Include { domain } => match literal(domain) {
                            Some(target) => {
                                let sub = resolve_record(resolver, target, depth + 1).await?;
                                merge(&mut tree, sub);
                            }
                            None => refuse(&mut tree, format!("{name} uses a macro: {}", d.text)),
                        },
                        Mechanism::A { domain, cidr } | Mechanism::Mx { domain, cidr } => {
                            let target = match domain {
                                None => Some(name.clone()),
                                Some(spec) => literal(spec),
                            };
                            match target {
                                Some(target) => {
                                    let mx = matches!(d.mechanism, Mechanism::Mx { .. });
                                    let found = hosts(resolver, &target, mx, *cidr).await?;
                                    tree.networks.extend(found);
                                }
                                None => {
                                    refuse(&mut tree, format!("{name} uses a macro: {}", d.text))
                                }
                            }
                        }
                        Mechanism::Ptr { .. } | Mechanism::Exists { .. } => {
                            refuse(&mut tree, format!("{name} has {}", d.text));
                        }
                        Mechanism::All => {}
                    }
                }
                Term::Modifier(Modifier::Redirect { domain }) if !record.has_all() => {
                    tree.cost += 1;
                    match literal(domain) {
                        Some(target) => {
                            let sub = resolve_record(resolver, target, depth + 1).await?;
                            merge(&mut tree, sub);
                        }
                        None => refuse(&mut tree, format!("{name} redirects through a macro")),
                    }
                }
                Term::Modifier(_) => {}
            }
        }
        Ok(tree)
    })
}

/// Adds an included tree to its parent.
fn merge(tree: &mut Tree, sub: Tree) {
    tree.cost += sub.cost;
    tree.networks.extend(sub.networks);
    if let Some(why) = sub.opaque {
        tree.opaque.get_or_insert(why);
    }
}

/// The networks an `a` or `mx` mechanism authorizes.
async fn hosts(
    resolver: &dyn DnsResolver,
    target: &str,
    mx: bool,
    cidr: DualCidr,
) -> Result<Vec<IpNet>, FlattenError> {
    let names = if mx {
        let mut exchanges: Vec<(u16, String)> = answer(resolver, target, RecordType::Mx)
            .await?
            .into_iter()
            .filter_map(|r| match r {
                RecordData::Mx {
                    preference,
                    exchange,
                } if !exchange.is_empty() && exchange != "." => Some((preference, exchange)),
                _ => None,
            })
            .collect();
        exchanges.sort();
        exchanges
            .into_iter()
            .take(MAX_MX_HOSTS)
            .map(|(_, e)| e)
            .collect()
    } else {
        vec![target.to_owned()]
    };
    let mut networks = Vec::new();
    for host in names {
        for (kind, prefix) in [(RecordType::A, cidr.v4), (RecordType::Aaaa, cidr.v6)] {
            for record in answer(resolver, &host, kind).await? {
                if let Some(ip) = record.ip() {
                    networks.extend(IpNet::new(ip, prefix).ok().map(|n| n.trunc()));
                }
            }
        }
    }
    Ok(networks)
}

/// An answer's records; a name that does not exist has none.
async fn answer(
    resolver: &dyn DnsResolver,
    name: &str,
    kind: RecordType,
) -> Result<Vec<RecordData>, FlattenError> {
    match resolver.lookup(name, kind).await {
        Ok(answer) => Ok(answer.records),
        Err(DnsError::NxDomain | DnsError::InvalidName(_)) => Ok(Vec::new()),
        Err(error) => Err(FlattenError::Dns {
            name: name.to_owned(),
            error,
        }),
    }
}

/// The domain a macro-free domain-spec names, normalized.
fn literal(spec: &MacroString) -> Option<String> {
    if spec.has_expressions() {
        return None;
    }
    let text: String = spec
        .pieces()
        .iter()
        .map(|p| match p {
            MacroPiece::Literal(s) => s.as_str(),
            MacroPiece::Expression(_) => "",
        })
        .collect();
    Some(normalize(&text))
}

fn normalize(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// The `/v4//v6` suffix of an `a`/`mx` term, empty for the defaults.
fn cidr_suffix(cidr: DualCidr) -> String {
    let mut s = String::new();
    if cidr.v4 != 32 {
        s.push_str(&format!("/{}", cidr.v4));
    }
    if cidr.v6 != 128 {
        s.push_str(&format!("//{}", cidr.v6));
    }
    s
}

/// `ip4:`/`ip6:` terms for networks, host routes without their prefix.
fn render(networks: &[IpNet]) -> Vec<String> {
    networks
        .iter()
        .map(|n| match n {
            IpNet::V4(v4) if v4.prefix_len() == 32 => format!("ip4:{}", v4.addr()),
            IpNet::V4(v4) => format!("ip4:{v4}"),
            IpNet::V6(v6) if v6.prefix_len() == 128 => format!("ip6:{}", v6.addr()),
            IpNet::V6(v6) => format!("ip6:{v6}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use mailward_domain::dns::Answer;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Fake(HashMap<(String, RecordType), Vec<RecordData>>);

    impl Fake {
        fn txt(mut self, name: &str, value: &str) -> Fake {
            self.0
                .entry((name.to_owned(), RecordType::Txt))
                .or_default()
                .push(RecordData::Txt(vec![value.as_bytes().to_vec()]));
            self
        }
        fn a(mut self, name: &str, ip: &str) -> Fake {
            self.0
                .entry((name.to_owned(), RecordType::A))
                .or_default()
                .push(RecordData::A(ip.parse().unwrap()));
            self
        }
    }

    #[async_trait]
    impl DnsResolver for Fake {
        async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
            if name == "down.example" {
                return Err(DnsError::ServFail);
            }
            let records = self
                .0
                .get(&(name.to_owned(), record_type))
                .cloned()
                .unwrap_or_default();
            Ok(Answer {
                records,
                ttl: None,
                cname_chain: Vec::new(),
            })
        }
    }

    fn names(i: usize) -> String {
        if i == 0 {
            "d.test._spf.zone".to_owned()
        } else {
            format!("s{}.d.test._spf.zone", i + 1)
        }
    }

    fn providers(n: usize) -> Fake {
        let mut fake = Fake::default();
        for p in 0..n {
            fake = fake
                .txt(
                    &format!("_spf.p{p}.test"),
                    &format!("v=spf1 include:_a.p{p}.test include:_b.p{p}.test ~all"),
                )
                .txt(
                    &format!("_a.p{p}.test"),
                    &format!("v=spf1 ip4:10.{q}.0.0/16 ip4:10.{q}.1.0/24 -all", q = 2 * p),
                )
                .txt(
                    &format!("_b.p{p}.test"),
                    &format!(
                        "v=spf1 ip6:2001:db8:{q}::/48 a:mail.p{p}.test -all",
                        q = 2 * p
                    ),
                )
                .a(&format!("mail.p{p}.test"), &format!("192.0.2.{}", 2 * p));
        }
        fake
    }

    #[tokio::test]
    async fn eight_providers_fit_the_limit() {
        let fake = providers(8);
        let includes: Vec<String> = (0..8).map(|p| format!("include:_spf.p{p}.test")).collect();
        let source = format!("v=spf1 ip4:198.51.100.7 {} -all", includes.join(" "));
        let out = flatten(&fake, "d.test", &source, false, &names)
            .await
            .unwrap();
        assert!(out.lookups <= LOOKUP_LIMIT, "{out:?}");
        assert_eq!(out.customer_record, "v=spf1 include:d.test._spf.zone -all");
        assert!(out.records.iter().all(|r| r.value.len() <= MAX_SERVED_LEN));
        // Expensive first, only as many as needed: each costs 4 served as itself.
        let flattened = out.terms.iter().filter(|t| t.flattened).count();
        assert!((1..8).contains(&flattened), "{out:?}");
        let served: String = out
            .records
            .iter()
            .map(|r| r.value.clone())
            .collect::<Vec<_>>()
            .join(" ");
        // /24 inside the /16 is aggregated away.
        assert!(
            served.contains("ip4:10.0.0.0/16") && !served.contains("10.0.1.0/24"),
            "{served}"
        );
        assert!(served.contains("ip4:198.51.100.7 "));

        let forced = flatten(&fake, "d.test", &source, true, &names)
            .await
            .unwrap();
        assert!(forced.terms.iter().all(|t| t.flattened));
        assert_eq!(forced.lookups, u32::try_from(forced.records.len()).unwrap());
        let all: String = forced.records.iter().map(|r| r.value.clone()).collect();
        for p in 0..8 {
            assert!(all.contains(&format!("ip4:192.0.2.{} ", 2 * p)), "{all}");
        }
    }

    #[tokio::test]
    async fn long_lists_chain_within_record_size() {
        let mut fake = Fake::default();
        let ranges: Vec<String> = (0..120).map(|i| format!("ip4:10.{i}.0.0/24")).collect();
        fake = fake.txt(
            "_spf.big.test",
            &format!("v=spf1 {} -all", ranges.join(" ")),
        );
        let out = flatten(
            &fake,
            "d.test",
            "v=spf1 include:_spf.big.test ~all",
            true,
            &names,
        )
        .await
        .unwrap();
        assert!(out.records.len() > 1);
        assert!(out.records.iter().all(|r| r.value.len() <= MAX_SERVED_LEN));
        for (i, r) in out.records.iter().enumerate() {
            assert_eq!(r.name, names(i));
            let chained = r.value.contains(&format!("include:{}", names(i + 1)));
            assert_eq!(chained, i + 1 < out.records.len());
        }
        let count: usize = out
            .records
            .iter()
            .map(|r| r.value.matches("ip4:").count())
            .sum();
        assert_eq!(count, 120);
        assert_eq!(out.customer_record, "v=spf1 include:d.test._spf.zone ~all");
    }

    #[tokio::test]
    async fn meaning_is_kept() {
        let fake = Fake::default()
            .txt("_spf.macro.test", "v=spf1 exists:%{i}._spf.macro.test -all")
            .txt("_spf.open.test", "v=spf1 +all")
            .a("d.test", "203.0.113.5");
        let source = "v=spf1 -ip4:192.0.2.1 a include:_spf.macro.test include:_spf.open.test include:_spf.none.test exists:%{i}.x.test ?all";
        let out = flatten(&fake, "d.test", source, true, &names)
            .await
            .unwrap();
        assert_eq!(
            out.customer_record,
            "v=spf1 -ip4:192.0.2.1 exists:%{i}.x.test include:d.test._spf.zone ~all"
        );
        let by_term = |t: &str| out.terms.iter().find(|x| x.term == t).unwrap().clone();
        assert!(by_term("a:d.test").flattened);
        assert!(!by_term("include:_spf.macro.test").flattened);
        assert!(
            by_term("include:_spf.open.test")
                .note
                .unwrap()
                .contains("+all")
        );
        assert!(
            by_term("include:_spf.none.test")
                .note
                .unwrap()
                .contains("no SPF record")
        );
        let served = &out.records[0].value;
        assert!(served.contains("ip4:203.0.113.5"), "{served}");
        assert!(served.contains("include:_spf.macro.test"), "{served}");
        // Unflattenable includes cost their own lookups.
        assert_eq!(out.lookups, 1 + 1 + 2 + 1 + 1);
    }

    #[tokio::test]
    async fn dns_failure_fails_the_whole() {
        let fake = Fake::default().txt("_spf.p.test", "v=spf1 a:down.example -all");
        let err = flatten(
            &fake,
            "d.test",
            "v=spf1 include:_spf.p.test -all",
            true,
            &names,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, FlattenError::Dns { .. }));
        let err = flatten(&fake, "d.test", "v=spf1 include:", false, &names).await;
        assert!(matches!(err, Err(FlattenError::Syntax(_))));
    }
}
