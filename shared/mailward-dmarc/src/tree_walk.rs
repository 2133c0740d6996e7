//! RFC 9989 policy discovery and organizational-domain discovery by the DNS tree walk
//! (§4.10), and the domain-existence test that decides whether `np` applies.
//!
//! # Our reading of RFC 9989 §4.10 (written down because the details matter)
//!
//! The walk, for a start domain `D` with `x` labels:
//! 1. Query `_dmarc.D`. Keep the TXT records that start with `v=DMARC1`; if more than one
//!    remains they are all discarded (this name then counts as "no record"). If exactly one
//!    remains and it says `psd=y` or `psd=n`, stop.
//! 2. Next target: if `x < 8`, drop the left-most label; if `x >= 8`, drop left-most labels
//!    until 7 remain (the label-skipping shortcut). Then query, filter and stop as in step 1,
//!    dropping one more label each time, until the walk stops or no labels remain.
//!
//! So a walk makes at most 8 queries (`1 + 7`), the last one at the TLD. A walk is not stopped
//! by a plain record: records found on the way are collected. A failed lookup (SERVFAIL,
//! timeout, ...) makes the rest of the walk unknowable, so the result is `indeterminate` rather
//! than "no record" (unless the policy is already settled, see below).
//!
//! Organizational domain (§4.10.2), over the single records collected, longest name first:
//! 1. a record with `psd=n`: that name;
//! 2. a record with `psd=y` at a name other than the start domain: the name one label below
//!    it on the path to the start domain (that name need not have been queried, nor have a
//!    record);
//! 3. otherwise the name with the fewest labels that has a record;
//! 4. if no record was found at all, the start domain itself.
//!
//! A `psd=y` record at the start domain stops the walk and (rules 2 and 3) makes the start
//! domain its own organizational domain.
//!
//! Policy (§4.10.1): the record at the start domain (the Author Domain) when it has exactly one,
//! with `p`; otherwise the organizational domain's record, else the public suffix domain's record
//! (the `psd=y` record that stopped the walk), with `sp` when the start domain exists and `np`
//! when it does not (each falling back as RFC 9989 says: `np` → `sp` → `p`). A record found at
//! an intermediate name that is neither of these is not used (a PSD policy is not used when the
//! organizational domain publishes one; an intermediate record below an organizational domain
//! is only reachable through the `psd=y` rule and is then ignored, as the text says).
//! When existence cannot be determined (DNS failure) we apply `sp` and say so
//! ([`DomainExistence::Unknown`]), because most audited names exist.

use crate::names::{DnsFailure, fold_nxdomain, label_count, last_labels, normalize_domain};
use crate::parse::{DmarcRecord, Policy, PsdFlag, parse_txt};
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use serde::Serialize;

/// The most queries a tree walk makes (RFC 9989 §4.10).
pub const MAX_WALK_QUERIES: usize = 8;

/// The names a walk from `domain` queries, in order, without the `_dmarc.` prefix
/// (at most [`MAX_WALK_QUERIES`]). Empty for a name that cannot be queried.
pub fn walk_targets(domain: &str) -> Vec<String> {
    let Some(domain) = normalize_domain(domain) else {
        return Vec::new();
    };
    let x = label_count(&domain);
    let mut targets = vec![domain.clone()];
    let mut remaining = if x >= 8 { 7 } else { x - 1 };
    while remaining > 0 && targets.len() < MAX_WALK_QUERIES {
        targets.push(last_labels(&domain, remaining));
        remaining -= 1;
    }
    targets
}

/// What one walk step found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum StepOutcome {
    /// No `v=DMARC1` record (NXDOMAIN, NODATA or unrelated TXT only).
    NoRecord,
    /// Exactly one `v=DMARC1` record.
    Record,
    /// Several `v=DMARC1` records: all discarded, the walk continues.
    MultipleRecords {
        /// How many.
        count: usize,
    },
    /// The lookup failed.
    LookupFailed {
        /// Why.
        failure: DnsFailure,
    },
}

/// One query of the walk, kept as evidence for the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkStep {
    /// The domain this step is about.
    pub domain: String,
    /// What was found.
    pub outcome: StepOutcome,
    /// The record, for [`StepOutcome::Record`].
    pub record: Option<DmarcRecord>,
    /// The CNAME chain followed (empty when none).
    pub cname_chain: Vec<String>,
}

/// How the walk ended overall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyStatus {
    /// A policy record applies (see its status: it may still give no DMARC processing).
    Found,
    /// No policy record anywhere on the walk: DMARC does not apply.
    NoPolicy,
    /// A lookup failed before the answer was settled.
    Indeterminate,
}

/// Where the applicable policy record was published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicySource {
    /// The domain itself.
    AuthorDomain,
    /// Its organizational domain.
    OrganizationalDomain,
    /// A public suffix domain (`psd=y`) above it.
    PublicSuffixDomain,
}

/// Which tag of the policy record applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyTag {
    /// `p`: the record is the domain's own.
    P,
    /// `sp`: an existing subdomain of the policy domain.
    Sp,
    /// `np`: a non-existent subdomain of the policy domain.
    Np,
}

/// Which §4.10.2 rule chose the organizational domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OrgDomainRule {
    /// A `psd=n` record.
    PsdN,
    /// One label below a `psd=y` record.
    BelowPsd,
    /// The record with the fewest labels.
    FewestLabels,
    /// No record found: the start domain.
    StartDomain,
}

/// Whether a domain exists, in RFC 9989's sense (a non-existent domain has NXDOMAIN or NODATA
/// for A, AAAA and MX).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DomainExistence {
    /// At least one A, AAAA or MX record.
    Exists,
    /// NXDOMAIN or NODATA for all three.
    DoesNotExist,
    /// A lookup failed and none of the others proved existence.
    Unknown,
    /// Not asked (the policy came from the domain's own record, so `p` applies anyway).
    NotChecked,
}

/// The result of policy discovery for one domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyDiscovery {
    /// The domain (normalized).
    pub domain: String,
    /// Every query made, in order.
    pub steps: Vec<WalkStep>,
    /// Overall outcome.
    pub status: PolicyStatus,
    /// The applicable record.
    pub record: Option<DmarcRecord>,
    /// The domain that published it.
    pub policy_domain: Option<String>,
    /// Whether it came from the domain itself, its organizational domain or a PSD.
    pub source: Option<PolicySource>,
    /// Which of p/sp/np applies.
    pub applicable_tag: Option<PolicyTag>,
    /// The policy value of that tag (`None` when the record gives no DMARC processing).
    pub policy: Option<Policy>,
    /// True with `t=y`: receivers apply [`PolicyDiscovery::enforced_policy`] instead.
    pub testing: bool,
    /// The policy actually requested of receivers (one step weaker under `t=y`).
    pub enforced_policy: Option<Policy>,
    /// The organizational domain; `None` when a failed lookup left it unknown.
    pub organizational_domain: Option<String>,
    /// The rule that chose it.
    pub org_domain_rule: Option<OrgDomainRule>,
    /// The existence verdict used to choose between `sp` and `np`.
    pub existence: DomainExistence,
    /// The first failure met, if any.
    pub failure: Option<DnsFailure>,
}

/// Looks up `_dmarc.<name>` and classifies the answer into a walk step.
async fn query_step(resolver: &dyn DnsResolver, name: &str) -> WalkStep {
    let mut step = WalkStep {
        domain: name.to_string(),
        outcome: StepOutcome::NoRecord,
        record: None,
        cname_chain: Vec::new(),
    };
    let query = format!("_dmarc.{name}");
    if normalize_domain(&query).is_none() {
        step.outcome = StepOutcome::LookupFailed {
            failure: DnsFailure::InvalidName,
        };
        return step;
    }
    match fold_nxdomain(resolver.lookup(&query, RecordType::Txt).await) {
        Err(failure) => step.outcome = StepOutcome::LookupFailed { failure },
        Ok(None) => {}
        Ok(Some(answer)) => {
            step.cname_chain = answer.cname_chain.clone();
            let mut records: Vec<DmarcRecord> = answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Txt(strings) => Some(parse_txt(strings)),
                    _ => None,
                })
                .filter(DmarcRecord::is_dmarc)
                .collect();
            match records.len() {
                0 => {}
                1 => {
                    step.outcome = StepOutcome::Record;
                    step.record = records.pop();
                }
                count => step.outcome = StepOutcome::MultipleRecords { count },
            }
        }
    }
    step
}

/// The raw walk: the steps taken, stopping at a `psd=y|n` record or the first failure.
async fn walk(resolver: &dyn DnsResolver, domain: &str) -> Vec<WalkStep> {
    let mut steps = Vec::new();
    for target in walk_targets(domain) {
        let step = query_step(resolver, &target).await;
        let stop = match &step.outcome {
            StepOutcome::LookupFailed { .. } => true,
            StepOutcome::Record => step
                .record
                .as_ref()
                .is_some_and(|r| matches!(r.psd, PsdFlag::Yes | PsdFlag::No)),
            _ => false,
        };
        steps.push(step);
        if stop {
            break;
        }
    }
    steps
}

/// §4.10.2 over completed steps. `None` when a failure left it unknown.
fn select_org_domain(domain: &str, steps: &[WalkStep]) -> Option<(String, OrgDomainRule)> {
    if steps
        .iter()
        .any(|s| matches!(s.outcome, StepOutcome::LookupFailed { .. }))
    {
        return None;
    }
    let with_record: Vec<(&WalkStep, &DmarcRecord)> = steps
        .iter()
        .filter_map(|s| s.record.as_ref().map(|r| (s, r)))
        .collect();
    for (step, record) in &with_record {
        if record.psd == PsdFlag::No {
            return Some((step.domain.clone(), OrgDomainRule::PsdN));
        }
        if record.psd == PsdFlag::Yes && step.domain != domain {
            let below = last_labels(domain, label_count(&step.domain) + 1);
            return Some((below, OrgDomainRule::BelowPsd));
        }
    }
    if let Some((step, _)) = with_record.last() {
        return Some((step.domain.clone(), OrgDomainRule::FewestLabels));
    }
    Some((domain.to_string(), OrgDomainRule::StartDomain))
}

/// The organizational domain of `domain` by the tree walk (used for relaxed alignment and for
/// report authorization). `Err` when a lookup failed.
pub async fn organizational_domain(
    resolver: &dyn DnsResolver,
    domain: &str,
) -> Result<String, DnsFailure> {
    let Some(domain) = normalize_domain(domain) else {
        return Err(DnsFailure::InvalidName);
    };
    let steps = walk(resolver, &domain).await;
    match select_org_domain(&domain, &steps) {
        Some((org, _)) => Ok(org),
        None => Err(steps
            .iter()
            .find_map(|s| match &s.outcome {
                StepOutcome::LookupFailed { failure } => Some(failure.clone()),
                _ => None,
            })
            .unwrap_or(DnsFailure::Other)),
    }
}

/// Whether `domain` exists in RFC 9989's sense: any A, AAAA or MX record means yes; NXDOMAIN
/// or NODATA for all three means no; otherwise unknown. Decides whether `np` or `sp` applies.
pub async fn domain_exists(resolver: &dyn DnsResolver, domain: &str) -> DomainExistence {
    let Some(domain) = normalize_domain(domain) else {
        return DomainExistence::Unknown;
    };
    let mut failed = false;
    for record_type in [RecordType::A, RecordType::Aaaa, RecordType::Mx] {
        match fold_nxdomain(resolver.lookup(&domain, record_type).await) {
            Ok(Some(answer)) if !answer.records.is_empty() => return DomainExistence::Exists,
            Ok(_) => {}
            Err(_) => failed = true,
        }
    }
    if failed {
        DomainExistence::Unknown
    } else {
        DomainExistence::DoesNotExist
    }
}

/// RFC 9989 policy discovery for `domain`: the applicable record, where it came from, the
/// organizational domain and which of p/sp/np applies. See the module docs for the reading of
/// the RFC. At most [`MAX_WALK_QUERIES`] TXT queries, plus up to three existence queries when
/// the policy comes from a parent domain.
pub async fn discover_policy(resolver: &dyn DnsResolver, domain: &str) -> PolicyDiscovery {
    let normalized = normalize_domain(domain);
    let mut out = PolicyDiscovery {
        domain: normalized
            .clone()
            .unwrap_or_else(|| domain.trim().to_ascii_lowercase()),
        steps: Vec::new(),
        status: PolicyStatus::Indeterminate,
        record: None,
        policy_domain: None,
        source: None,
        applicable_tag: None,
        policy: None,
        testing: false,
        enforced_policy: None,
        organizational_domain: None,
        org_domain_rule: None,
        existence: DomainExistence::NotChecked,
        failure: None,
    };
    let Some(domain) = normalized else {
        out.failure = Some(DnsFailure::InvalidName);
        return out;
    };
    out.steps = walk(resolver, &domain).await;
    out.failure = out.steps.iter().find_map(|s| match &s.outcome {
        StepOutcome::LookupFailed { failure } => Some(failure.clone()),
        _ => None,
    });
    let org = select_org_domain(&domain, &out.steps);
    if let Some((org_domain, rule)) = &org {
        out.organizational_domain = Some(org_domain.clone());
        out.org_domain_rule = Some(*rule);
    }

    // 1. The domain's own record.
    let own = out
        .steps
        .first()
        .filter(|s| s.domain == domain)
        .and_then(|s| s.record.clone());
    let (record, policy_domain, source) = if let Some(record) = own {
        (record, domain.clone(), PolicySource::AuthorDomain)
    } else {
        let Some((org_domain, _)) = org else {
            // A failure before the answer was settled.
            return out;
        };
        let org_record = out
            .steps
            .iter()
            .find(|s| s.domain == org_domain)
            .and_then(|s| s.record.clone());
        let psd_record = out.steps.iter().find_map(|s| {
            s.record
                .as_ref()
                .filter(|r| r.psd == PsdFlag::Yes && s.domain != domain)
                .map(|r| (s.domain.clone(), r.clone()))
        });
        match (org_record, psd_record) {
            (Some(record), _) => (record, org_domain, PolicySource::OrganizationalDomain),
            (None, Some((psd_domain, record))) => {
                (record, psd_domain, PolicySource::PublicSuffixDomain)
            }
            (None, None) => {
                out.status = PolicyStatus::NoPolicy;
                return out;
            }
        }
    };

    let tag = if source == PolicySource::AuthorDomain {
        PolicyTag::P
    } else {
        out.existence = domain_exists(resolver, &domain).await;
        if out.existence == DomainExistence::DoesNotExist {
            PolicyTag::Np
        } else {
            PolicyTag::Sp
        }
    };
    out.policy = match tag {
        PolicyTag::P => record.p,
        PolicyTag::Sp => record.effective_sp(),
        PolicyTag::Np => record.effective_np(),
    };
    out.testing = record.testing && record.is_usable();
    out.enforced_policy = out
        .policy
        .map(|p| if out.testing { p.one_step_weaker() } else { p });
    out.status = PolicyStatus::Found;
    out.applicable_tag = Some(tag);
    out.policy_domain = Some(policy_domain);
    out.source = Some(source);
    out.record = Some(record);
    out
}
