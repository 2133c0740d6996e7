//! `POST /tools/header-analyze` (SPEC §4.8): what a message's headers say (parsed by
//! `mailward-headers`), and, unless asked not to, the live re-verification: every DKIM signature
//! and the ARC chain checked by `mail-auth` against keys fetched through our resolver port, SPF
//! evaluated by our evaluator for the connecting IP of the first trusted hop, and DMARC computed
//! with our RFC 9989 discovery and alignment.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mail_auth::arc::ChainValidation;
use mail_auth::common::crypto::Algorithm;
use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::dkim::DkimError;
use mail_auth::hickory_resolver::config::{ResolverConfig, ResolverOpts};
use mail_auth::hickory_resolver::proto::op::ResponseCode;
use mail_auth::{
    AuthenticatedMessage, DkimResult, DnsError as AuthDnsError, Error as AuthError,
    MessageAuthenticator, Parameters, ResolverCache, Txt,
};
use mailward_api_types::tools::{
    ArcCheck, DmarcCheck, DnsValidation, HeaderAlignment, HeaderAnalysis, HeaderAnalyzeRequest,
    HeaderSenderChecks, HeaderVerdicts, SignatureCheck, SpfCheck,
};
use mailward_dmarc::{
    Alignment, PolicyDiscovery, PolicyStatus, discover_policy, organizational_domain,
};
use mailward_dns::Budgeted;
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use mailward_headers::{Parsed, Verdict};
use mailward_spf::eval::{SpfRequest, check_host};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::OnceLock;

/// Shortest and longest accepted input, in characters (SPEC §4.8).
pub const HEADERS_MIN_CHARS: usize = 10;
/// See [`HEADERS_MIN_CHARS`].
pub const HEADERS_MAX_CHARS: usize = 100_000;
/// DNS queries one analysis may make (keys, SPF, the DMARC tree walk).
const QUERY_BUDGET: u32 = 80;
/// Distinct DKIM/ARC keys fetched at most.
const MAX_KEYS: usize = 20;

/// Analyzes pasted headers.
pub async fn analyze(
    app: &AppState,
    caller: &Caller,
    input: HeaderAnalyzeRequest,
) -> Result<HeaderAnalysis, ServiceError> {
    let chars = input.headers.chars().count();
    if !(HEADERS_MIN_CHARS..=HEADERS_MAX_CHARS).contains(&chars) {
        return Err(ServiceError::invalid(
            "headers",
            format!(
                "headers must be {HEADERS_MIN_CHARS} to {HEADERS_MAX_CHARS} characters (got {chars})"
            ),
        ));
    }
    let parsed_input = mailward_headers::parse(&input.headers)
        .map_err(|e| ServiceError::invalid("headers", e.to_string()))?;
    let parsed = parsed_input.parsed;
    let verdicts = verdicts(&parsed);
    let alignment = alignment(&parsed);
    let dns_validation = if input.include_dns_validation.unwrap_or(true) {
        Some(validate(app, &parsed, &parsed_input.crlf, &alignment).await)
    } else {
        None
    };
    let sender_checks = sender_checks(app, caller, &parsed, dns_validation.as_ref()).await;
    Ok(HeaderAnalysis {
        message: parsed,
        verdicts,
        alignment,
        dns_validation,
        sender_checks,
    })
}

/// The sender-requirement checks of the message, kept for the organization's domain it is
/// from (its From domain, or that name's organizational domain).
async fn sender_checks(
    app: &AppState,
    caller: &Caller,
    parsed: &Parsed,
    validation: Option<&DnsValidation>,
) -> HeaderSenderChecks {
    use crate::sender_requirements::headers;
    let mut checks = HeaderSenderChecks {
        one_click_unsubscribe: headers::one_click(parsed, validation),
        tls: headers::tls(spf_hop(parsed)),
        kept_for_domain_id: None,
    };
    let Some(from) = parsed.from_domain.clone() else {
        return checks;
    };
    let receiver = parsed.trusted_authserv_id.clone();
    let mut kept = headers::keep(app, caller, &from, &checks, receiver.clone()).await;
    if kept.is_none()
        && let Ok(org) = organizational_domain(app.resolver.as_ref(), &from).await
        && org != from
    {
        kept = headers::keep(app, caller, &org, &checks, receiver).await;
    }
    checks.kept_for_domain_id = kept;
    checks
}

fn word(v: Verdict) -> String {
    v.as_str().to_owned()
}

/// The verdicts of the trusted Authentication-Results (DKIM passes when any signature passed).
fn verdicts(parsed: &Parsed) -> HeaderVerdicts {
    let trusted: Vec<_> = parsed
        .authentication_results
        .iter()
        .filter(|a| a.trusted)
        .collect();
    let first = |method: &str| {
        trusted
            .iter()
            .find_map(|a| a.first(method))
            .map_or(Verdict::Unknown, |r| r.result)
    };
    let dkim_results: Vec<Verdict> = trusted
        .iter()
        .flat_map(|a| a.results.iter().filter(|r| r.method == "dkim"))
        .map(|r| r.result)
        .collect();
    let dkim = if dkim_results.contains(&Verdict::Pass) {
        Verdict::Pass
    } else {
        dkim_results.first().copied().unwrap_or(Verdict::Unknown)
    };
    HeaderVerdicts {
        spf: word(first("spf")),
        dkim: word(dkim),
        dmarc: word(first("dmarc")),
        arc: word(first("arc")),
        trusted_authserv_id: parsed.trusted_authserv_id.clone(),
    }
}

fn domain_of(address: &str) -> Option<String> {
    address
        .rsplit_once('@')
        .map(|(_, d)| d.trim_end_matches(['.', '>']).to_ascii_lowercase())
        .filter(|d| !d.is_empty())
}

/// The envelope sender: the Return-Path, else `smtp.mailfrom` of the trusted results.
fn mail_from(parsed: &Parsed) -> Option<String> {
    parsed.return_path.clone().or_else(|| {
        parsed
            .authentication_results
            .iter()
            .filter(|a| a.trusted)
            .find_map(|a| a.first("spf"))
            .and_then(|r| r.properties.get("smtp.mailfrom").cloned())
    })
}

fn alignment(parsed: &Parsed) -> HeaderAlignment {
    let from = parsed.from_domain.clone();
    let mail_from_domain = mail_from(parsed).as_deref().and_then(domain_of);
    let dkim_domains: Vec<String> = parsed
        .dkim_signatures
        .iter()
        .filter_map(|s| s.domain.clone())
        .collect();
    HeaderAlignment {
        spf_strict: match (&from, &mail_from_domain) {
            (Some(f), Some(m)) => Some(f == m),
            _ => None,
        },
        dkim_strict: from
            .as_ref()
            .is_some_and(|f| dkim_domains.iter().any(|d| d == f)),
        from_domain: from,
        mail_from_domain,
        dkim_domains,
    }
}

/// A read-only TXT cache holding exactly the keys fetched for this message.
struct FetchedKeys(HashMap<Box<str>, Txt>);

impl ResolverCache<Box<str>, Txt> for FetchedKeys {
    fn get<Q>(&self, name: &Q) -> Option<Txt>
    where
        Box<str>: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.0.get(name).cloned()
    }

    fn remove<Q>(&self, _name: &Q) -> Option<Txt>
    where
        Box<str>: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        None
    }

    fn insert(&self, _key: Box<str>, _value: Txt, _valid_until: std::time::Instant) {}
}

/// An authenticator whose own resolver has no servers: every key comes from [`FetchedKeys`]
/// (fetched through our resolver port); anything else fails as a temporary error.
fn authenticator() -> Option<&'static MessageAuthenticator> {
    static AUTH: OnceLock<Option<MessageAuthenticator>> = OnceLock::new();
    AUTH.get_or_init(|| {
        MessageAuthenticator::new(
            ResolverConfig::from_name_servers(Vec::new()),
            ResolverOpts::default(),
        )
        .ok()
    })
    .as_ref()
}

/// The TXT answer for a key name, as `mail-auth` wants it.
fn key_answer(answer: Result<Vec<RecordData>, DnsError>) -> Txt {
    match answer {
        Ok(records) => {
            let mut last = AuthError::Dns(AuthDnsError::RecordNotFound(ResponseCode::NoError));
            for record in records {
                if let RecordData::Txt(strings) = record {
                    let joined: Vec<u8> = strings.concat();
                    match DomainKey::parse(&joined) {
                        Ok(key) => return Txt::from(Ok::<_, AuthError>(key)),
                        Err(e) => last = e,
                    }
                }
            }
            Txt::Error(last)
        }
        Err(DnsError::NxDomain) => Txt::Error(AuthError::Dns(AuthDnsError::RecordNotFound(
            ResponseCode::NXDomain,
        ))),
        Err(e) => Txt::Error(AuthError::Dns(AuthDnsError::Resolver(e.to_string()))),
    }
}

/// Fetches every key the message's DKIM and ARC signatures name.
async fn fetch_keys(resolver: &dyn DnsResolver, names: Vec<String>) -> FetchedKeys {
    let lookups = names.into_iter().take(MAX_KEYS).map(|name| async move {
        let answer = resolver
            .lookup(&name, RecordType::Txt)
            .await
            .map(|a| a.records);
        (format!("{name}.").into_boxed_str(), key_answer(answer))
    });
    FetchedKeys(
        futures::future::join_all(lookups)
            .await
            .into_iter()
            .collect(),
    )
}

/// A verifier result in RFC 8601 words. A body hash that does not verify and an expired
/// signature are failures (RFC 6376 §6.1.1, §6.1.3: PERMFAIL); a signature that cannot be read
/// at all is a permanent error.
fn result_word(result: &DkimResult) -> (&'static str, Option<String>) {
    match result {
        DkimResult::Pass => ("pass", None),
        DkimResult::Neutral(
            e @ AuthError::Dkim(DkimError::FailedBodyHashMatch | DkimError::SignatureExpired),
        ) => ("fail", Some(e.to_string())),
        DkimResult::Neutral(e) => ("permerror", Some(e.to_string())),
        DkimResult::Fail(e) => ("fail", Some(e.to_string())),
        DkimResult::PermError(e) => ("permerror", Some(e.to_string())),
        DkimResult::TempError(e) => ("temperror", Some(e.to_string())),
        DkimResult::None => ("none", None),
    }
}

/// Whether two domains align: equal (strict), or the same organizational domain (relaxed).
async fn aligns(
    resolver: &dyn DnsResolver,
    mode: Alignment,
    from: &str,
    from_org: Option<&str>,
    other: &str,
) -> bool {
    if from.eq_ignore_ascii_case(other) {
        return true;
    }
    if mode == Alignment::Strict {
        return false;
    }
    match (from_org, organizational_domain(resolver, other).await.ok()) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(&b),
        _ => false,
    }
}

/// The hop whose connecting IP SPF judges: where the trusted receiver accepted the message
/// (the earliest hop received by a host of its domain); without a trusted receiver, the last
/// hop with an address.
fn spf_hop(parsed: &Parsed) -> Option<&mailward_headers::Hop> {
    let service = parsed
        .trusted_authserv_id
        .as_deref()
        .map(mailward_headers::service_domain);
    let by_receiver = service.as_ref().and_then(|s| {
        parsed.received_hops.iter().find(|h| {
            h.from_ip.is_some()
                && h.by
                    .as_deref()
                    .map(mailward_headers::service_domain)
                    .as_ref()
                    == Some(s)
        })
    });
    by_receiver.or_else(|| {
        parsed
            .received_hops
            .iter()
            .rev()
            .find(|h| h.from_ip.is_some())
    })
}

/// The RFC 8617 structure checks `mail-auth` leaves out, on the raw ARC headers: each ARC-Seal
/// and ARC-Message-Signature is a valid tag list (RFC 6376 §3.2: tag names `ALPHA *(ALPHA /
/// DIGIT / "_")`, no empty tag, no tag twice) with its required tags, a message signature never
/// signs ARC-Seal, and a seal or results header never stands without a message signature.
fn arc_structure_problem(headers: &[(&[u8], &[u8])]) -> Option<String> {
    let mut seals = 0;
    let mut signatures = 0;
    let mut results = 0;
    for (name, value) in headers {
        let name = String::from_utf8_lossy(name).trim().to_ascii_lowercase();
        let (label, required): (&str, &[&str]) = match name.as_str() {
            "arc-seal" => {
                seals += 1;
                ("ARC-Seal", &["a", "b", "cv", "d", "i", "s"])
            }
            "arc-message-signature" => {
                signatures += 1;
                (
                    "ARC-Message-Signature",
                    &["a", "b", "bh", "d", "h", "i", "s"],
                )
            }
            "arc-authentication-results" => {
                results += 1;
                continue;
            }
            _ => continue,
        };
        let text = String::from_utf8_lossy(value);
        let text = text.trim();
        let body = text.strip_suffix(';').unwrap_or(text);
        let mut seen: Vec<String> = Vec::new();
        for spec in body.split(';') {
            let Some((tag, tag_value)) = spec.split_once('=') else {
                return Some(format!(
                    "{label} has an empty or malformed tag ({:?})",
                    spec.trim()
                ));
            };
            let tag = tag.trim();
            let valid = tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Some(format!("{label} has an invalid tag name {tag:?}"));
            }
            if seen.iter().any(|t| t == tag) {
                return Some(format!("{label} has the tag {tag}= twice"));
            }
            if tag == "h"
                && label == "ARC-Message-Signature"
                && tag_value
                    .split(':')
                    .any(|h| h.trim().eq_ignore_ascii_case("arc-seal"))
            {
                return Some("ARC-Message-Signature signs ARC-Seal, which RFC 8617 forbids".into());
            }
            seen.push(tag.to_owned());
        }
        if let Some(missing) = required.iter().find(|r| !seen.iter().any(|t| t == *r)) {
            return Some(format!("{label} lacks the required tag {missing}="));
        }
    }
    if (seals > 0 || results > 0) && signatures == 0 {
        return Some("an ARC set lacks its ARC-Message-Signature".into());
    }
    None
}

/// The live re-verification: keys fetched once, then DKIM, ARC, SPF and DMARC in turn.
async fn validate(
    app: &AppState,
    parsed: &Parsed,
    crlf: &[u8],
    alignment: &HeaderAlignment,
) -> DnsValidation {
    let resolver = Budgeted::new(app.resolver.as_ref(), QUERY_BUDGET);
    let message = AuthenticatedMessage::parse_with_opts(crlf, None, false);
    let keys = fetch_keys(&resolver, key_names(message.as_ref())).await;
    let author = Author::discover(&resolver, parsed.from_domain.clone()).await;
    let mut dkim = Vec::new();
    let mut arc = ArcCheck {
        result: "none".into(),
        sets: parsed.arc_sets,
        latest_cv: None,
        detail: None,
    };
    if let (Some(m), Some(auth)) = (&message, authenticator()) {
        dkim = check_dkim(auth, m, &keys, parsed, &resolver, &author).await;
        arc = check_arc(auth, m, &keys, arc).await;
    }
    let spf = check_spf(&resolver, parsed, alignment, &author).await;
    let dmarc = author.dmarc(&spf, &dkim);
    DnsValidation {
        dkim,
        arc,
        spf,
        dmarc,
    }
}

/// Whether a received message passed DKIM aligned with its From domain (relaxed: the same
/// organizational domain, RFC 9989 discovery): what makes a report's mail authenticated. Keys
/// and organizational domains are read through the resolver port; a message without a DKIM
/// signature, or without exactly one From address, is not (and asks nothing).
pub async fn dkim_aligned_with_from(app: &AppState, raw: &[u8]) -> bool {
    if !has_dkim_signature_header(raw) {
        return false;
    }
    let Some(message) = AuthenticatedMessage::parse_with_opts(raw, None, false) else {
        return false;
    };
    let [from] = message.from.as_slice() else {
        return false;
    };
    let Some((_, from_domain)) = from.rsplit_once('@') else {
        return false;
    };
    let from_domain = from_domain.trim_end_matches('.').to_ascii_lowercase();
    let Some(auth) = authenticator().filter(|_| !message.dkim_headers.is_empty()) else {
        return false;
    };
    let resolver = Budgeted::new(app.resolver.as_ref(), QUERY_BUDGET);
    let keys = fetch_keys(&resolver, key_names(Some(&message))).await;
    let outputs = auth
        .verify_dkim(Parameters::new(&message).with_txt_cache(&keys))
        .await;
    let passing: Vec<&str> = outputs
        .iter()
        .filter(|o| *o.result() == DkimResult::Pass)
        .filter_map(|o| o.signature().map(|s| s.d.as_str()))
        .collect();
    if passing.is_empty() {
        return false;
    }
    let from_org = organizational_domain(&resolver, &from_domain).await.ok();
    for domain in passing {
        if aligns(
            &resolver,
            Alignment::Relaxed,
            &from_domain,
            from_org.as_deref(),
            domain,
        )
        .await
        {
            return true;
        }
    }
    false
}

/// Whether the header block of `raw` (what precedes the first empty line, within its first
/// 256 KiB) holds a `DKIM-Signature` field: a cheap look before parsing, so a report file
/// (XML, a zip) costs nothing.
fn has_dkim_signature_header(raw: &[u8]) -> bool {
    let head = &raw[..raw.len().min(256 * 1024)];
    let end = head
        .windows(2)
        .position(|w| w == b"\n\n" || w == b"\n\r")
        .unwrap_or(head.len());
    let head = &head[..end];
    const FIELD: &[u8] = b"dkim-signature:";
    head.starts_with(b"DKIM-Signature:")
        || head.split(|&b| b == b'\n').any(|line| {
            line.len() >= FIELD.len() && line[..FIELD.len()].eq_ignore_ascii_case(FIELD)
        })
}

/// The keys to fetch: every DKIM signature's, every ARC seal's and message signature's.
fn key_names(message: Option<&AuthenticatedMessage<'_>>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let Some(m) = message else {
        return names;
    };
    let pairs = m
        .dkim_headers
        .iter()
        .map(|h| (h.header.s.clone(), h.header.d.clone()))
        .chain(
            m.ams_headers
                .iter()
                .map(|h| (h.header.s.clone(), h.header.d.clone())),
        )
        .chain(
            m.as_headers
                .iter()
                .map(|h| (h.header.s.clone(), h.header.d.clone())),
        );
    for (s, d) in pairs {
        let name = format!("{s}._domainkey.{d}").to_ascii_lowercase();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The From domain, its organizational domain and its DMARC policy: what alignment is judged
/// against.
struct Author {
    domain: Option<String>,
    org: Option<String>,
    policy: Option<PolicyDiscovery>,
    adkim: Alignment,
    aspf: Alignment,
}

impl Author {
    async fn discover(resolver: &dyn DnsResolver, domain: Option<String>) -> Self {
        let (policy, org) = match &domain {
            Some(f) => (
                Some(discover_policy(resolver, f).await),
                organizational_domain(resolver, f).await.ok(),
            ),
            None => (None, None),
        };
        let record = policy.as_ref().and_then(|p| p.record.as_ref());
        Self {
            adkim: record.map_or(Alignment::Relaxed, |r| r.adkim),
            aspf: record.map_or(Alignment::Relaxed, |r| r.aspf),
            domain,
            org,
            policy,
        }
    }

    /// Whether `other` aligns with the From domain in `mode` (none without a From domain).
    async fn aligns(
        &self,
        resolver: &dyn DnsResolver,
        mode: Alignment,
        other: &str,
    ) -> Option<bool> {
        match &self.domain {
            Some(f) => Some(aligns(resolver, mode, f, self.org.as_deref(), other).await),
            None => None,
        }
    }

    /// DMARC's verdict from the aligned SPF and DKIM results.
    fn dmarc(&self, spf: &SpfCheck, dkim: &[SignatureCheck]) -> DmarcCheck {
        let spf_aligned = spf.result == "pass" && spf.aligned == Some(true);
        let dkim_aligned = dkim
            .iter()
            .any(|d| d.result == "pass" && d.aligned == Some(true));
        let policy = self.policy.as_ref();
        DmarcCheck {
            domain: self.domain.clone(),
            record: policy
                .and_then(|p| p.record.as_ref())
                .map(|r| r.raw.clone()),
            policy_domain: policy.and_then(|p| p.policy_domain.clone()),
            policy: policy.and_then(|p| p.policy).map(|p| p.as_str().to_owned()),
            result: match policy.map(|p| p.status) {
                None => "none".into(),
                Some(PolicyStatus::NoPolicy) => "none".into(),
                Some(PolicyStatus::Indeterminate) => "temperror".into(),
                Some(PolicyStatus::Found) if spf_aligned || dkim_aligned => "pass".into(),
                Some(PolicyStatus::Found) => "fail".into(),
            },
            spf_aligned,
            dkim_aligned,
        }
    }
}

/// Every DKIM signature verified, with the tags the parser read and its alignment.
async fn check_dkim(
    auth: &MessageAuthenticator,
    m: &AuthenticatedMessage<'_>,
    keys: &FetchedKeys,
    parsed: &Parsed,
    resolver: &dyn DnsResolver,
    author: &Author,
) -> Vec<SignatureCheck> {
    let outputs = auth
        .verify_dkim(Parameters::new(m).with_txt_cache(keys))
        .await;
    let mut tags = parsed.dkim_signatures.clone();
    let mut dkim = Vec::new();
    for output in &outputs {
        let (result, detail) = result_word(output.result());
        let Some(sig) = output.signature() else {
            dkim.push(SignatureCheck {
                domain: String::new(),
                selector: String::new(),
                algorithm: String::new(),
                canonicalization: String::new(),
                body_length: None,
                result: result.into(),
                detail,
                aligned: None,
            });
            continue;
        };
        let position = tags.iter().position(|t| {
            t.domain.as_deref() == Some(sig.d.as_str())
                && t.selector
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                    == Some(sig.s.as_str())
        });
        let tag = position.map(|p| tags.remove(p)).unwrap_or_default();
        dkim.push(SignatureCheck {
            domain: sig.d.clone(),
            selector: sig.s.clone(),
            algorithm: tag.algorithm.unwrap_or_default(),
            canonicalization: tag.canonicalization,
            body_length: (sig.l > 0).then_some(sig.l),
            result: result.into(),
            detail,
            aligned: author.aligns(resolver, author.adkim, &sig.d).await,
        });
    }
    dkim
}

/// The ARC chain: its structure first, then the seals and message signatures.
async fn check_arc(
    auth: &MessageAuthenticator,
    m: &AuthenticatedMessage<'_>,
    keys: &FetchedKeys,
    mut arc: ArcCheck,
) -> ArcCheck {
    if let Some(problem) = arc_structure_problem(&m.headers) {
        arc.result = "fail".into();
        arc.detail = Some(problem);
        return arc;
    }
    if m.as_headers.is_empty() && m.ams_headers.is_empty() {
        return arc;
    }
    let output = auth
        .verify_arc(Parameters::new(m).with_txt_cache(keys))
        .await;
    let (result, detail) = result_word(output.result());
    arc.latest_cv = output.sets().last().map(|s| {
        match s.seal.header.cv {
            ChainValidation::None => "none",
            ChainValidation::Fail => "fail",
            ChainValidation::Pass => "pass",
        }
        .to_owned()
    });
    // RFC 8617 §4.1.3 and §5.1.2: ARC signatures use rsa-sha256 only.
    let other_algorithm = m
        .as_headers
        .iter()
        .map(|h| h.header.a)
        .chain(m.ams_headers.iter().map(|h| h.header.a))
        .any(|a| a != Algorithm::RsaSha256);
    (arc.result, arc.detail) = match result {
        "pass" if other_algorithm => (
            "fail".into(),
            Some("an ARC set is signed with an algorithm other than rsa-sha256, the only one RFC 8617 defines".into()),
        ),
        "pass" => ("pass".into(), None),
        "none" => ("none".into(), None),
        _ => ("fail".into(), detail.or(Some(result.to_owned()))),
    };
    arc
}

/// SPF for the connecting IP of the first trusted hop.
async fn check_spf(
    resolver: &dyn DnsResolver,
    parsed: &Parsed,
    alignment: &HeaderAlignment,
    author: &Author,
) -> SpfCheck {
    let hop = spf_hop(parsed);
    let ip: Option<IpAddr> = hop
        .and_then(|h| h.from_ip.as_deref())
        .and_then(|i| i.parse().ok());
    let envelope = mail_from(parsed).unwrap_or_default();
    let helo = hop
        .and_then(|h| h.helo.clone().or_else(|| h.from.clone()))
        .unwrap_or_default();
    match ip {
        Some(ip) if !envelope.is_empty() || !helo.is_empty() => {
            let outcome = check_host(resolver, &SpfRequest::mail_from(ip, &envelope, &helo)).await;
            SpfCheck {
                ip: Some(ip.to_string()),
                hop: hop.map(|h| h.hop),
                result: outcome.result.as_str().to_owned(),
                aligned: author.aligns(resolver, author.aspf, &outcome.domain).await,
                domain: Some(outcome.domain),
            }
        }
        _ => SpfCheck {
            ip: ip.map(|i| i.to_string()),
            hop: hop.map(|h| h.hop),
            domain: alignment.mail_from_domain.clone(),
            result: "unknown".into(),
            aligned: None,
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_header_block_with_a_dkim_signature_is_parsed() {
        use super::has_dkim_signature_header as has;
        assert!(has(b"DKIM-Signature: v=1\r\nFrom: a@b\r\n\r\nbody"));
        assert!(has(b"Received: x\r\ndkim-signature: v=1\r\n\r\n"));
        assert!(!has(b"From: a@b\r\n\r\nDKIM-Signature: in the body\r\n"));
        assert!(!has(b"<?xml version=\"1.0\"?><feedback>"));
        assert!(!has(b""));
    }
}
