//! [`detect`]: the bounded examination of one domain's labels.

use crate::DirectDns;
use crate::model::{Conflict, ConflictKind, NameserverAnswer, Protocol, ResolverAnswer};
use futures::future::join_all;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Default longest CNAME chain accepted before `cname_chain_too_deep`.
pub const DEFAULT_MAX_CNAME_CHAIN: usize = 8;
/// Default guard on any one question (the resolver's own timeout normally fires first).
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// DKIM selectors examined at most (the rest are ignored).
pub const MAX_DKIM_SELECTORS: usize = 16;
/// Authoritative nameserver addresses asked at most per label.
pub const MAX_NAMESERVERS: usize = 8;
/// Public resolvers asked at most.
pub const MAX_PUBLIC_RESOLVERS: usize = 8;
/// Expected delegations examined at most.
const MAX_DELEGATIONS: usize = 16;
/// Upper bound on `max_cname_chain`, whatever the caller asks.
const HARD_CHAIN_CAP: usize = 32;
/// Names walked up from a label looking for the zone's NS records.
const MAX_NS_WALK: usize = 12;

/// What to examine for one domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictInput {
    /// The domain (apex), e.g. `example.com`.
    pub domain: String,
    /// DKIM selectors to examine at `<selector>._domainkey.<domain>` (at most
    /// [`MAX_DKIM_SELECTORS`]).
    pub dkim_selectors: Vec<String>,
    /// Public resolvers to compare, as (name, address) (at most [`MAX_PUBLIC_RESOLVERS`]).
    pub public_resolvers: Vec<(String, SocketAddr)>,
    /// Records Mailward hosts, as (label, expected CNAME target, protocol): a label without
    /// that CNAME is `managed_delegation_missing`.
    pub expected_delegations: Vec<(String, String, Protocol)>,
    /// Longest CNAME chain accepted (default [`DEFAULT_MAX_CNAME_CHAIN`]).
    pub max_cname_chain: usize,
    /// The port authoritative nameservers are asked on (default 53).
    pub nameserver_port: u16,
    /// Per-address port overrides for nameservers (tests: fixture servers on random ports).
    pub nameserver_ports: Vec<(IpAddr, u16)>,
    /// Guard on any single question (default [`DEFAULT_QUERY_TIMEOUT`]); an expired guard
    /// counts as a timeout.
    pub query_timeout: Duration,
}

impl ConflictInput {
    /// An input for `domain` with no selectors, resolvers or delegations and the defaults.
    pub fn new(domain: &str) -> Self {
        Self {
            domain: canonical(domain),
            dkim_selectors: Vec::new(),
            public_resolvers: Vec::new(),
            expected_delegations: Vec::new(),
            max_cname_chain: DEFAULT_MAX_CNAME_CHAIN,
            nameserver_port: 53,
            nameserver_ports: Vec::new(),
            query_timeout: DEFAULT_QUERY_TIMEOUT,
        }
    }

    fn port_for(&self, ip: IpAddr) -> u16 {
        self.nameserver_ports
            .iter()
            .find(|(i, _)| *i == ip)
            .map_or(self.nameserver_port, |(_, p)| *p)
    }
}

/// One label to examine.
#[derive(Debug, Clone)]
struct Target {
    label: String,
    protocol: Protocol,
    delegation: Option<String>,
}

/// One authoritative nameserver address.
#[derive(Debug, Clone)]
struct Nameserver {
    host: String,
    addr: SocketAddr,
}

/// What one server said about a label.
#[derive(Debug, Clone, Default)]
struct Observation {
    cname: Vec<String>,
    txt: Vec<String>,
    /// The TXT answer is owned by the label itself (no CNAME was followed to reach it).
    txt_at_label: bool,
    answered: bool,
    timed_out: bool,
}

impl Observation {
    /// What is compared between servers: the CNAME when there is one (a recursive resolver
    /// follows it, an authoritative server may not), else the TXT set.
    fn key(&self) -> (Vec<String>, Vec<String>) {
        let mut cname = self.cname.clone();
        cname.sort();
        if !cname.is_empty() {
            return (cname, Vec::new());
        }
        let mut txt = self.txt.clone();
        txt.sort();
        (Vec::new(), txt)
    }

    fn values(&self) -> Vec<String> {
        let (mut cname, txt) = self.key();
        cname.extend(txt);
        cname
    }
}

/// How the label's CNAME chain (seen through the resolver) ends.
#[derive(Debug, Clone, PartialEq)]
enum Chain {
    /// No CNAME at the label (the label may or may not exist).
    NoCname,
    /// A chain ending at an existing name.
    Resolves(Vec<String>),
    /// A chain ending in NXDOMAIN.
    Unresolvable(Vec<String>),
    /// Longer than allowed.
    TooDeep(Vec<String>),
    /// Loops back onto itself.
    Loop(Vec<String>),
    /// Could not find out (timeout, SERVFAIL...).
    Unknown,
}

/// Detects the DNS conflicts of one domain. `resolver` is the ordinary (recursive) resolver,
/// used for NS discovery, nameserver addresses, CNAME chains and the effective TXT set (pass an
/// uncached view for fresh results); `direct` asks each authoritative nameserver and public
/// resolver itself. Never fails: what could not be learned produces no conflict.
pub async fn detect(
    resolver: &dyn DnsResolver,
    direct: &dyn DirectDns,
    input: &ConflictInput,
) -> Vec<Conflict> {
    detect_with_coverage(resolver, direct, input)
        .await
        .conflicts
}

/// What one detection pass found, and where it could not look.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detection {
    /// The conflicts found.
    pub conflicts: Vec<Conflict>,
    /// Labels where some server gave no definitive answer (timeout, SERVFAIL...) or the CNAME
    /// chain or TXT set could not be read: a conflict previously seen there is not known to be
    /// resolved. The caller keeps such conflicts as they were.
    pub inconclusive_labels: Vec<String>,
}

/// As [`detect`], also saying which labels could not be examined fully.
pub async fn detect_with_coverage(
    resolver: &dyn DnsResolver,
    direct: &dyn DirectDns,
    input: &ConflictInput,
) -> Detection {
    let domain = canonical(&input.domain);
    if domain.is_empty() {
        return Detection::default();
    }
    let targets = targets(input, &domain);
    // Zone nameservers per label, discovered sequentially so the walk is shared.
    let mut memo: HashMap<String, Vec<Nameserver>> = HashMap::new();
    let mut per_label = Vec::with_capacity(targets.len());
    for target in &targets {
        let servers = nameservers_for(resolver, input, &target.label, &mut memo).await;
        per_label.push(servers);
    }
    let resolvers: Vec<&(String, SocketAddr)> = input
        .public_resolvers
        .iter()
        .take(MAX_PUBLIC_RESOLVERS)
        .collect();
    let checks = targets
        .iter()
        .zip(per_label.iter())
        .map(|(target, servers)| examine(resolver, direct, input, target, servers, &resolvers));
    let mut detection = Detection::default();
    for (target, (conflicts, inconclusive)) in targets.iter().zip(join_all(checks).await) {
        detection.conflicts.extend(conflicts);
        if inconclusive {
            detection.inconclusive_labels.push(target.label.clone());
        }
    }
    detection
}

fn targets(input: &ConflictInput, domain: &str) -> Vec<Target> {
    let mut out = vec![
        target(format!("_dmarc.{domain}"), Protocol::Dmarc),
        target(domain.to_owned(), Protocol::Spf),
        target(format!("default._bimi.{domain}"), Protocol::Bimi),
        target(format!("_mta-sts.{domain}"), Protocol::MtaSts),
    ];
    let mut selectors: Vec<String> = Vec::new();
    for selector in &input.dkim_selectors {
        let selector = canonical(selector);
        if selector.is_empty() || selectors.contains(&selector) {
            continue;
        }
        if selectors.len() >= MAX_DKIM_SELECTORS {
            break;
        }
        selectors.push(selector);
    }
    out.extend(
        selectors
            .into_iter()
            .map(|s| target(format!("{s}._domainkey.{domain}"), Protocol::Dkim)),
    );
    for (label, expected, protocol) in input.expected_delegations.iter().take(MAX_DELEGATIONS) {
        let label = canonical(label);
        if label.is_empty() {
            continue;
        }
        let expected = canonical(expected);
        match out.iter_mut().find(|t| t.label == label) {
            Some(existing) => existing.delegation = Some(expected),
            None => out.push(Target {
                label,
                protocol: *protocol,
                delegation: Some(expected),
            }),
        }
    }
    out
}

fn target(label: String, protocol: Protocol) -> Target {
    Target {
        label,
        protocol,
        delegation: None,
    }
}

/// Lower-case, no surrounding blanks, no trailing dot.
fn canonical(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

fn parent(name: &str) -> Option<&str> {
    name.split_once('.')
        .map(|(_, rest)| rest)
        .filter(|rest| rest.contains('.'))
}

async fn guarded<F>(timeout: Duration, query: F) -> Result<Answer, DnsError>
where
    F: Future<Output = Result<Answer, DnsError>>,
{
    tokio::time::timeout(timeout, query)
        .await
        .unwrap_or(Err(DnsError::Timeout))
}

/// The authoritative nameservers of the zone holding `label`: walk up until NS answers.
async fn nameservers_for(
    resolver: &dyn DnsResolver,
    input: &ConflictInput,
    label: &str,
    memo: &mut HashMap<String, Vec<Nameserver>>,
) -> Vec<Nameserver> {
    let mut visited = Vec::new();
    let mut name = Some(label.to_owned());
    let mut found = Vec::new();
    for _ in 0..MAX_NS_WALK {
        let Some(current) = name.take() else { break };
        if let Some(known) = memo.get(&current) {
            found = known.clone();
            break;
        }
        visited.push(current.clone());
        match guarded(
            input.query_timeout,
            resolver.lookup(&current, RecordType::Ns),
        )
        .await
        {
            Ok(answer) if answer.cname_chain.is_empty() && !answer.records.is_empty() => {
                found = addresses(resolver, input, &answer.records).await;
                break;
            }
            Ok(_) | Err(DnsError::NxDomain) => name = parent(&current).map(str::to_owned),
            Err(_) => break,
        }
    }
    for name in visited {
        memo.insert(name, found.clone());
    }
    found
}

async fn addresses(
    resolver: &dyn DnsResolver,
    input: &ConflictInput,
    records: &[RecordData],
) -> Vec<Nameserver> {
    let mut hosts: Vec<String> = records
        .iter()
        .filter_map(|r| match r {
            RecordData::Ns(host) => Some(canonical(host)),
            _ => None,
        })
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts.truncate(MAX_NAMESERVERS);
    let lookups = hosts.iter().map(|host| async move {
        let (v4, v6) = tokio::join!(
            guarded(input.query_timeout, resolver.lookup(host, RecordType::A)),
            guarded(input.query_timeout, resolver.lookup(host, RecordType::Aaaa)),
        );
        let ips: Vec<IpAddr> = [v4, v6]
            .into_iter()
            .flat_map(|r| r.map(|a| a.records).unwrap_or_default())
            .filter_map(|r| r.ip())
            .collect();
        (host.clone(), ips)
    });
    let mut out = Vec::new();
    for (host, ips) in join_all(lookups).await {
        for ip in ips {
            if out.len() < MAX_NAMESERVERS {
                out.push(Nameserver {
                    host: host.clone(),
                    addr: SocketAddr::new(ip, input.port_for(ip)),
                });
            }
        }
    }
    out
}

/// Asks one server for the label's CNAME and TXT.
async fn observe(
    direct: &dyn DirectDns,
    timeout: Duration,
    server: SocketAddr,
    label: &str,
) -> Observation {
    let (cname, txt) = tokio::join!(
        guarded(timeout, direct.ask(server, label, RecordType::Cname)),
        guarded(timeout, direct.ask(server, label, RecordType::Txt)),
    );
    let definitive = |r: &Result<Answer, DnsError>| matches!(r, Ok(_) | Err(DnsError::NxDomain));
    let timed_out =
        matches!(cname, Err(DnsError::Timeout)) || matches!(txt, Err(DnsError::Timeout));
    let answered = definitive(&cname) && definitive(&txt);
    let mut obs = Observation {
        answered,
        timed_out,
        ..Observation::default()
    };
    if let Ok(answer) = &cname {
        obs.cname = answer
            .records
            .iter()
            .filter_map(|r| match r {
                RecordData::Cname(t) => Some(canonical(t)),
                _ => None,
            })
            .collect();
    }
    if let Ok(answer) = &txt {
        if obs.cname.is_empty()
            && let Some(first) = answer.cname_chain.first()
        {
            obs.cname.push(canonical(first));
        }
        obs.txt = answer
            .records
            .iter()
            .filter_map(RecordData::txt_value)
            .collect();
        obs.txt_at_label = answer.cname_chain.is_empty();
    }
    obs
}

/// Follows the label's CNAME chain through the resolver, one hop per question.
async fn walk_chain(resolver: &dyn DnsResolver, input: &ConflictInput, label: &str) -> Chain {
    let max = input.max_cname_chain.min(HARD_CHAIN_CAP);
    let mut chain: Vec<String> = Vec::new();
    let mut current = label.to_owned();
    loop {
        match guarded(
            input.query_timeout,
            resolver.lookup(&current, RecordType::Cname),
        )
        .await
        {
            Ok(answer) => {
                let next = answer.records.iter().find_map(|r| match r {
                    RecordData::Cname(t) => Some(canonical(t)),
                    _ => None,
                });
                let Some(next) = next else {
                    return if chain.is_empty() {
                        Chain::NoCname
                    } else {
                        Chain::Resolves(chain)
                    };
                };
                let looped = next == label || chain.contains(&next);
                chain.push(next.clone());
                if looped {
                    return Chain::Loop(chain);
                }
                if chain.len() > max {
                    return Chain::TooDeep(chain);
                }
                current = next;
            }
            Err(DnsError::NxDomain) if chain.is_empty() => return Chain::NoCname,
            Err(DnsError::NxDomain) => return Chain::Unresolvable(chain),
            Err(_) => return Chain::Unknown,
        }
    }
}

/// The version tag of a protocol's records, when it has one we count.
fn version_tag(protocol: Protocol) -> Option<(&'static str, ConflictKind)> {
    match protocol {
        Protocol::Dmarc => Some(("v=dmarc1", ConflictKind::MultipleDmarcRecords)),
        Protocol::Spf => Some(("v=spf1", ConflictKind::MultipleSpfRecords)),
        Protocol::Bimi => Some(("v=bimi1", ConflictKind::MultipleBimiRecords)),
        Protocol::MtaSts | Protocol::Dkim => None,
    }
}

fn has_tag(value: &str, tag: &str) -> bool {
    let lower = value.trim_start().to_ascii_lowercase();
    match lower.strip_prefix(tag) {
        Some(rest) => rest.is_empty() || rest.starts_with(';') || rest.starts_with(' '),
        None => false,
    }
}

/// Values not shared by every observation, in first-seen order.
fn differing(observations: &[&Observation]) -> Vec<String> {
    let sets: Vec<Vec<String>> = observations.iter().map(|o| o.values()).collect();
    let mut out: Vec<String> = Vec::new();
    for set in &sets {
        for value in set {
            if !out.contains(value) && !sets.iter().all(|s| s.contains(value)) {
                out.push(value.clone());
            }
        }
    }
    out
}

fn distinct_keys<'a>(
    observations: impl Iterator<Item = &'a Observation>,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut keys = Vec::new();
    for obs in observations {
        let key = obs.key();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

async fn examine(
    resolver: &dyn DnsResolver,
    direct: &dyn DirectDns,
    input: &ConflictInput,
    target: &Target,
    nameservers: &[Nameserver],
    resolvers: &[&(String, SocketAddr)],
) -> (Vec<Conflict>, bool) {
    let label = target.label.as_str();
    let timeout = input.query_timeout;
    let auth_queries = nameservers
        .iter()
        .map(|ns| observe(direct, timeout, ns.addr, label));
    let public_queries = resolvers
        .iter()
        .map(|(_, addr)| observe(direct, timeout, *addr, label));
    let (auth, public, chain, txt) = tokio::join!(
        join_all(auth_queries),
        join_all(public_queries),
        walk_chain(resolver, input, label),
        guarded(timeout, resolver.lookup(label, RecordType::Txt)),
    );
    // Some server gave no definitive answer, or the chain or effective TXT set is unknown: a
    // conflict not seen this time may still be there.
    let inconclusive = auth.iter().chain(public.iter()).any(|o| !o.answered)
        || chain == Chain::Unknown
        || matches!(&txt, Err(e) if !matches!(e, DnsError::NxDomain));
    let authoritative_nameservers: Vec<NameserverAnswer> = nameservers
        .iter()
        .zip(auth.iter())
        .map(|(ns, obs)| NameserverAnswer {
            nameserver: ns.host.clone(),
            ip: ns.addr.ip().to_string(),
            cname: obs.cname.clone(),
            txt: obs.txt.clone(),
            answered: obs.answered,
            timed_out: obs.timed_out,
        })
        .collect();
    let public_resolvers: Vec<ResolverAnswer> = resolvers
        .iter()
        .zip(public.iter())
        .map(|((name, addr), obs)| ResolverAnswer {
            resolver: name.clone(),
            ip: addr.ip().to_string(),
            cname: obs.cname.clone(),
            txt: obs.txt.clone(),
            answered: obs.answered,
            timed_out: obs.timed_out,
        })
        .collect();
    let make = |kind: ConflictKind, records: Vec<String>, detail: &str| {
        let text = texts(kind, target.protocol, label, detail);
        Conflict {
            label: label.to_owned(),
            protocol: target.protocol,
            kind,
            summary: text.summary,
            rfc: text.rfc.to_owned(),
            consequence: text.consequence,
            remediation: text.remediation,
            conflicting_records: records,
            authoritative_nameservers: authoritative_nameservers.clone(),
            public_resolvers: public_resolvers.clone(),
        }
    };
    let mut out = Vec::new();

    // A CNAME beside other data (or several CNAMEs), as the authoritative servers serve it.
    let mut mixed: Vec<String> = Vec::new();
    for obs in auth.iter().filter(|o| o.answered) {
        let with_txt = obs.txt_at_label && !obs.txt.is_empty();
        if !obs.cname.is_empty() && (with_txt || obs.cname.len() > 1) {
            for value in obs.cname.iter().chain(obs.txt.iter().filter(|_| with_txt)) {
                if !mixed.contains(value) {
                    mixed.push(value.clone());
                }
            }
        }
    }
    if !mixed.is_empty() {
        out.push(make(ConflictKind::CnameWithOtherData, mixed, ""));
    }

    // Several records carrying the protocol's version tag.
    if let (Some((tag, kind)), Ok(answer)) = (version_tag(target.protocol), &txt) {
        let tagged: Vec<String> = answer
            .records
            .iter()
            .filter_map(RecordData::txt_value)
            .filter(|v| has_tag(v, tag))
            .collect();
        if tagged.len() > 1 {
            out.push(make(kind, tagged, ""));
        }
    }

    // The CNAME chain.
    match &chain {
        Chain::Unresolvable(hops) => out.push(make(
            ConflictKind::CnameTargetUnresolvable,
            hops.clone(),
            hops.last().map_or("", String::as_str),
        )),
        Chain::TooDeep(hops) => out.push(make(
            ConflictKind::CnameChainTooDeep,
            hops.clone(),
            &format!(
                "longer than {} aliases",
                input.max_cname_chain.min(HARD_CHAIN_CAP)
            ),
        )),
        Chain::Loop(hops) => out.push(make(
            ConflictKind::CnameChainTooDeep,
            hops.clone(),
            "loops back onto itself",
        )),
        Chain::NoCname | Chain::Resolves(_) | Chain::Unknown => {}
    }

    // Authoritative servers disagreeing (servers that did not answer are not a disagreement).
    let answered_auth: Vec<&Observation> = auth.iter().filter(|o| o.answered).collect();
    if distinct_keys(answered_auth.iter().copied()).len() > 1 {
        out.push(make(
            ConflictKind::AuthoritativeDisagreement,
            differing(&answered_auth),
            "",
        ));
    }

    // Public resolvers disagreeing with each other or with the authoritative answer set.
    let answered_public: Vec<&Observation> = public.iter().filter(|o| o.answered).collect();
    let auth_keys = distinct_keys(answered_auth.iter().copied());
    let public_keys = distinct_keys(answered_public.iter().copied());
    let diverges = public_keys.len() > 1
        || (!auth_keys.is_empty() && public_keys.iter().any(|k| !auth_keys.contains(k)));
    if diverges {
        let all: Vec<&Observation> = answered_auth
            .iter()
            .chain(answered_public.iter())
            .copied()
            .collect();
        out.push(make(ConflictKind::ResolverDivergence, differing(&all), ""));
    }

    // The delegation to Mailward.
    if let Some(expected) = &target.delegation {
        let current = match &chain {
            Chain::NoCname => Some(None),
            Chain::Resolves(h) | Chain::Unresolvable(h) | Chain::TooDeep(h) | Chain::Loop(h) => {
                Some(h.first().cloned())
            }
            Chain::Unknown => None,
        };
        if let Some(current) = current
            && current.as_deref() != Some(expected.as_str())
        {
            let mut records: Vec<String> = current.into_iter().collect();
            if records.is_empty()
                && let Ok(answer) = &txt
            {
                records.extend(answer.records.iter().filter_map(RecordData::txt_value));
            }
            out.push(make(
                ConflictKind::ManagedDelegationMissing,
                records,
                expected,
            ));
        }
    }
    (out, inconclusive)
}

struct Texts {
    summary: String,
    rfc: &'static str,
    consequence: String,
    remediation: String,
}

fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Dmarc => "DMARC",
        Protocol::Spf => "SPF",
        Protocol::Bimi => "BIMI",
        Protocol::MtaSts => "MTA-STS",
        Protocol::Dkim => "DKIM",
    }
}

fn texts(kind: ConflictKind, protocol: Protocol, label: &str, detail: &str) -> Texts {
    let p = protocol_name(protocol);
    match kind {
        ConflictKind::CnameWithOtherData => Texts {
            summary: format!("{label} has a CNAME record together with other records."),
            rfc: "RFC 1034 §3.6.2; RFC 2181 §10.1",
            consequence: format!(
                "A name with a CNAME may hold no other data. Resolvers may return either the \
                 alias or the other records, so receivers see an unpredictable {p} record."
            ),
            remediation: format!(
                "Keep either the CNAME or the TXT record at {label}, not both: delete the one \
                 you do not intend to use at your DNS provider."
            ),
        },
        ConflictKind::MultipleDmarcRecords => Texts {
            summary: format!("{label} publishes more than one DMARC record."),
            rfc: "RFC 9989 §4.10 (RFC 7489 §6.6.3 step 5)",
            consequence: "With more than one v=DMARC1 record, policy discovery fails and \
                          receivers apply no DMARC policy and send no reports."
                .to_owned(),
            remediation: format!(
                "Delete all but one v=DMARC1 TXT record at {label}; merge any tags you need \
                 into the one you keep."
            ),
        },
        ConflictKind::MultipleSpfRecords => Texts {
            summary: format!("{label} publishes more than one SPF record."),
            rfc: "RFC 7208 §4.5",
            consequence: "With more than one v=spf1 record, SPF evaluation returns permerror \
                          and receivers treat the domain's SPF as broken."
                .to_owned(),
            remediation: format!(
                "Merge the mechanisms of every v=spf1 TXT record at {label} into a single \
                 record and delete the others."
            ),
        },
        ConflictKind::MultipleBimiRecords => Texts {
            summary: format!("{label} publishes more than one BIMI record."),
            rfc: "draft-brand-indicators-for-message-identification §4 (one assertion record per selector)",
            consequence: "Receivers cannot tell which BIMI record applies and show no logo."
                .to_owned(),
            remediation: format!("Keep exactly one v=BIMI1 TXT record at {label}."),
        },
        ConflictKind::CnameTargetUnresolvable => Texts {
            summary: format!("The CNAME chain of {label} ends at {detail}, which does not exist."),
            rfc: "RFC 1034 §3.6.2",
            consequence: format!(
                "Lookups of {label} end in NXDOMAIN, so receivers find no {p} record."
            ),
            remediation: format!(
                "Point the CNAME at {label} to a name that exists (check for typos in the \
                 target), or replace it with the record itself."
            ),
        },
        ConflictKind::CnameChainTooDeep => Texts {
            summary: format!("The CNAME chain of {label} is {detail}."),
            rfc: "RFC 1034 §3.6.2 and §5.2.2 (alias chains must end; loops are errors)",
            consequence: format!(
                "Resolvers give up on long or looping alias chains, so receivers find no {p} \
                 record."
            ),
            remediation: format!(
                "Point the CNAME at {label} directly at the final name that holds the record, \
                 removing intermediate aliases and any loop."
            ),
        },
        ConflictKind::AuthoritativeDisagreement => Texts {
            summary: format!("The authoritative nameservers give different answers for {label}."),
            rfc: "RFC 1034 §4.3.5; RFC 1996 (every authoritative server of a zone serves the same data)",
            consequence: format!(
                "Receivers get a different {p} record depending on which nameserver they reach, \
                 so results change from message to message."
            ),
            remediation: "Make every nameserver listed in the domain's NS records serve the same \
                          zone: check that secondary servers transfer from the primary, and \
                          remove nameservers of a provider you no longer use from the \
                          delegation at your registrar."
                .to_owned(),
        },
        ConflictKind::ResolverDivergence => Texts {
            summary: format!("Public resolvers give different answers for {label}."),
            rfc: "RFC 1034 §4.3.5; RFC 2181 §8 (cached data lives until its TTL expires)",
            consequence: format!(
                "Receivers using different resolvers see different {p} records until caches \
                 expire."
            ),
            remediation: format!(
                "If you changed {label} recently, wait for the old record's TTL to pass; if \
                 the difference persists, check that every nameserver of the domain serves \
                 the new record."
            ),
        },
        ConflictKind::ManagedDelegationMissing => Texts {
            summary: format!("{label} is not delegated to Mailward."),
            rfc: "RFC 1034 §3.6.2 (the CNAME that delegates the record)",
            consequence: format!(
                "Mailward hosts this {p} record, but receivers do not reach it, so changes made \
                 in Mailward do not take effect."
            ),
            remediation: format!(
                "Publish a CNAME record at {label} pointing to {detail}, and delete any other \
                 record at {label}."
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_match_only_whole_versions() {
        assert!(has_tag("v=DMARC1; p=none", "v=dmarc1"));
        assert!(has_tag("v=spf1 -all", "v=spf1"));
        assert!(has_tag("v=spf1", "v=spf1"));
        assert!(!has_tag("v=spf10 -all", "v=spf1"));
        assert!(!has_tag("google-site-verification=x", "v=spf1"));
    }

    #[test]
    fn parent_stops_below_the_tld() {
        assert_eq!(parent("_dmarc.example.com"), Some("example.com"));
        assert_eq!(parent("example.com"), None);
    }

    #[test]
    fn targets_cap_and_merge() {
        let mut input = ConflictInput::new("Example.COM.");
        input.dkim_selectors = (0..40).map(|i| format!("s{i}")).collect();
        input.expected_delegations = vec![(
            "_dmarc.example.com".into(),
            "example.com.dmarc.mailward.test".into(),
            Protocol::Dmarc,
        )];
        let t = targets(&input, "example.com");
        assert_eq!(t.len(), 4 + MAX_DKIM_SELECTORS);
        assert_eq!(
            t[0].delegation.as_deref(),
            Some("example.com.dmarc.mailward.test")
        );
    }
}
