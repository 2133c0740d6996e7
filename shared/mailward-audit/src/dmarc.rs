//! The DMARC dimension: the domain's own record (`mailward_dmarc::discover_record`, CNAME
//! delegation and the multiple-record rule), the RFC 9989 policy tree walk
//! (`discover_policy`, for the organizational domain and an inherited policy) and external
//! report-destination authorization (`check_report_destinations`).
//!
//! Concurrency: discovery and the tree walk start together, and every name the walk may ask
//! (`walk_targets`, at most 8) is asked at once into the audit's memo, so the walk, which must
//! go one name at a time, finds its answers ready. As soon as the record is known, the same is
//! done for every external `rua`/`ruf` host's walk, with its authorization lookup
//! (`<domain>._report._dmarc.<host>`); the final `check_report_destinations` call then finds
//! every answer already asked. The chain is two rounds: the record, then the host walks. The
//! price is a few speculative queries when a walk would have stopped early (`psd=` records).
//!
//! Policy state: `reject`, `quarantine`, `none` (the applicable policy, from the domain's own
//! record or inherited from its organizational domain), `missing`, `invalid` (several records,
//! or a record that gives no DMARC processing) or `unknown` (a lookup failed).
//!
//! Monitoring state: `active` when the applicable record is the domain's own and has at least
//! one usable `rua` destination (same organization, or authorized); `inactive` with a reason
//! otherwise (reasons reuse SPEC §2.1's monitoring failure vocabulary where it fits:
//! `dmarc_record_missing`, `dmarc_multiple_records`, `dmarc_record_invalid`,
//! `dmarc_record_on_parent_only`, plus `rua_missing` and `rua_destination_unauthorized`);
//! `unknown` with `dns_lookup_failed`.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `dmarc_record_missing` | error | no record at the domain nor its organizational domain |
//! | `dmarc_multiple_records` | error | several `v=DMARC1` records: no policy applies |
//! | `dmarc_record_invalid` | error | the record gives no DMARC processing |
//! | `dmarc_dangling_cname` | error | `_dmarc` is a CNAME whose target has no record |
//! | `policy_none`, `policy_quarantine` | warning | below full reject (verdict `in progress`) |
//! | `testing_mode` | warning | `t=y` (verdict `in progress`) |
//! | `subdomain_policy_weaker` | warning | `sp` weaker than `p` |
//! | `dmarc_record_on_parent_only` | warning | policy inherited from the organizational domain |
//! | `rua_missing` | warning | no valid aggregate-report destination |
//! | `rua_destination_unauthorized` | warning | an external destination lacks `<domain>._report._dmarc.<host>` |
//! | `rua_authorization_unknown` | warning | that authorization lookup failed |
//! | `dmarc_near_miss_record` | warning | a TXT record at `_dmarc` mentions DMARC but is not valid |
//! | `dmarc_cname_delegated`, `dmarc_hosted` | info | CNAME delegation; into the hosted zone |
//! | `dns_lookup_failed` | warning | the record lookup (or the walk deciding it) failed: unknown, never missing |
//! | every `mailward_dmarc::IssueCode` | its severity | e.g. `invalid_uri` (error), `unknown_tag` (warning), `legacy_tag_pct` |

use crate::lookup::txt;
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings, Verdict};
use futures::future::{join_all, join3};
use mailward_dmarc::{
    Alignment, AuthorizationStatus, DestinationCheck, DiscoveryStatus, DmarcRecord, IssueCode,
    Policy, PolicyDiscovery, PolicySource, PolicyStatus, RecordDiscovery, ReportTag, Severity,
    check_report_destinations, discover_policy, discover_record, organizational_domain,
    walk_targets,
};
use mailward_domain::dns::DnsResolver;
use serde::{Deserialize, Serialize};

/// The applicable policy, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = DmarcPolicyState))]
#[serde(rename_all = "camelCase")]
pub enum PolicyState {
    /// `p=none`.
    None,
    /// `p=quarantine`.
    Quarantine,
    /// `p=reject`.
    Reject,
    /// No record.
    Missing,
    /// Several records, or a record without DMARC processing.
    Invalid,
    /// A lookup failed.
    Unknown,
}

/// Whether aggregate reports flow (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = DmarcMonitoringState))]
#[serde(rename_all = "camelCase")]
pub struct MonitoringState {
    /// active, inactive or unknown.
    pub status: String,
    /// Why not active.
    pub reason: Option<String>,
}

/// The parsed tags shown by the audit (defaults applied; `pct` only from the legacy tag).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DmarcTags {
    /// The effective `p`.
    pub p: Option<String>,
    /// `sp` as written.
    pub sp: Option<String>,
    /// `np` as written.
    pub np: Option<String>,
    /// Legacy `pct` (RFC 7489), or null.
    pub pct: Option<u8>,
    /// `fo` (default `0`).
    pub fo: String,
    /// Aggregate report URIs as written.
    pub rua: Vec<String>,
    /// Failure report URIs as written.
    pub ruf: Vec<String>,
    /// `r` or `s`.
    pub adkim: String,
    /// `r` or `s`.
    pub aspf: String,
    /// `t=y`.
    pub t: bool,
}

/// One report destination's authorization verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReportDestination {
    /// rua or ruf.
    pub tag: String,
    /// The URI as written.
    pub uri: String,
    /// The destination host.
    pub host: String,
    /// not_required, authorized, unauthorized or unknown.
    pub status: String,
}

/// The `dmarc` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DmarcResult {
    /// Score, verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The applicable policy.
    pub policy_state: PolicyState,
    /// Whether reports flow.
    pub monitoring_state: MonitoringState,
    /// The applicable record.
    pub record: Option<String>,
    /// Every `v=DMARC1` record at `_dmarc.<domain>`.
    pub records: Vec<String>,
    /// Parsed tags of the applicable record.
    pub tags: Option<DmarcTags>,
    /// True when `_dmarc.<domain>` is a CNAME.
    pub is_cname: bool,
    /// True when that CNAME points into the hosted DMARC zone.
    pub is_hosted: bool,
    /// The CNAME target.
    pub cname_target: Option<String>,
    /// The domain that published the applicable record.
    pub policy_domain: Option<String>,
    /// The organizational domain (RFC 9989 tree walk), when known.
    pub organizational_domain: Option<String>,
    /// `rua`/`ruf` authorization verdicts.
    pub report_destinations: Vec<ReportDestination>,
}

/// Raw results.
#[derive(Debug, Clone)]
pub(crate) struct DmarcRaw {
    pub(crate) record: RecordDiscovery,
    pub(crate) policy: PolicyDiscovery,
    pub(crate) destinations: Vec<DestinationCheck>,
}

/// Discovery, tree walk and destination checks (see the module docs for the ordering).
pub(crate) async fn gather(resolver: &dyn DnsResolver, domain: &str) -> DmarcRaw {
    let record_and_warmup = async {
        let record = discover_record(resolver, domain).await;
        if let Some(r) = &record.record {
            let hosts = external_hosts(r, domain);
            join_all(hosts.iter().map(|host| async move {
                let auth = format!("{domain}._report._dmarc.{host}");
                let _ = join3(
                    prefetch_walk(resolver, host),
                    organizational_domain(resolver, host),
                    txt(resolver, &auth),
                )
                .await;
            }))
            .await;
        }
        record
    };
    let (record, policy, ()) = join3(
        record_and_warmup,
        discover_policy(resolver, domain),
        prefetch_walk(resolver, domain),
    )
    .await;
    let applicable = applicable_record(&record, &policy);
    let destinations = match applicable {
        Some((r, policy_domain)) => {
            check_report_destinations(
                resolver,
                &policy_domain,
                policy.organizational_domain.as_deref(),
                &r,
            )
            .await
        }
        None => Vec::new(),
    };
    DmarcRaw {
        record,
        policy,
        destinations,
    }
}

/// Asks every name of `domain`'s RFC 9989 tree walk at once (at most 8), so the walk itself,
/// which must go one name at a time, finds its answers in the memo.
async fn prefetch_walk(resolver: &dyn DnsResolver, domain: &str) {
    join_all(
        walk_targets(domain)
            .into_iter()
            .map(|t| async move { txt(resolver, &format!("_dmarc.{t}")).await }),
    )
    .await;
}

fn external_hosts(record: &DmarcRecord, domain: &str) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for uri in record.rua.iter().chain(&record.ruf) {
        if let Some(h) = uri.host.as_ref().filter(|_| uri.valid)
            && h != domain
            && !hosts.contains(h)
            && hosts.len() < 10
        {
            hosts.push(h.clone());
        }
    }
    hosts
}

/// The record that applies and the domain that published it: the domain's own, else the one
/// the tree walk found at the organizational (or public suffix) domain.
fn applicable_record(
    record: &RecordDiscovery,
    policy: &PolicyDiscovery,
) -> Option<(DmarcRecord, String)> {
    if let Some(r) = &record.record {
        return Some((r.clone(), record.domain.clone()));
    }
    if record.status != DiscoveryStatus::NoRecord || record.dangling_cname {
        return None;
    }
    match (&policy.record, &policy.policy_domain, policy.source) {
        (
            Some(r),
            Some(d),
            Some(PolicySource::OrganizationalDomain | PolicySource::PublicSuffixDomain),
        ) => Some((r.clone(), d.clone())),
        _ => None,
    }
}

fn policy_str(p: Policy) -> String {
    p.as_str().to_string()
}

fn alignment(a: Alignment) -> String {
    match a {
        Alignment::Relaxed => "r",
        Alignment::Strict => "s",
    }
    .to_string()
}

fn tags(r: &DmarcRecord) -> DmarcTags {
    DmarcTags {
        p: r.p.map(policy_str),
        sp: r.sp.map(policy_str),
        np: r.np.map(policy_str),
        pct: r.pct,
        fo: r.fo.clone(),
        rua: r.rua.iter().map(|u| u.raw.clone()).collect(),
        ruf: r.ruf.iter().map(|u| u.raw.clone()).collect(),
        adkim: alignment(r.adkim),
        aspf: alignment(r.aspf),
        t: r.testing,
    }
}

fn monitoring(status: &str, reason: Option<&str>) -> MonitoringState {
    MonitoringState {
        status: status.to_string(),
        reason: reason.map(str::to_string),
    }
}

/// Builds the `dmarc` object. `hosted_suffix` is the service's hosted DMARC zone.
pub(crate) fn assess(raw: &DmarcRaw, hosted_suffix: Option<&str>) -> DmarcResult {
    let rd = &raw.record;
    let mut findings = Findings::default();
    let cname_target = rd.cname.as_ref().map(|c| c.target.clone());
    let is_cname = rd.cname.is_some();
    let is_hosted = match (&rd.cname, hosted_suffix) {
        (Some(c), Some(s)) if !s.trim().is_empty() => c.points_into(s),
        _ => false,
    };
    if is_cname {
        findings.info("dmarc_cname_delegated");
    }
    if is_hosted {
        findings.info("dmarc_hosted");
    }
    let mut out = DmarcResult {
        assessment: Findings::default().verdict_with(Dimension::Dmarc, Verdict::Pass),
        policy_state: PolicyState::Unknown,
        monitoring_state: monitoring("unknown", Some(DNS_LOOKUP_FAILED)),
        record: None,
        records: rd.records.iter().map(|r| r.raw.clone()).collect(),
        tags: None,
        is_cname,
        is_hosted,
        cname_target,
        policy_domain: None,
        organizational_domain: raw.policy.organizational_domain.clone(),
        report_destinations: raw
            .destinations
            .iter()
            .map(|d| ReportDestination {
                tag: match d.tag {
                    ReportTag::Rua => "rua",
                    ReportTag::Ruf => "ruf",
                }
                .to_string(),
                uri: d.uri.clone(),
                host: d.host.clone(),
                status: match d.status {
                    AuthorizationStatus::NotRequired => "not_required",
                    AuthorizationStatus::Authorized => "authorized",
                    AuthorizationStatus::Unauthorized => "unauthorized",
                    AuthorizationStatus::Unknown => "unknown",
                }
                .to_string(),
            })
            .collect(),
    };
    let mut inherited = false;
    let applicable = match rd.status {
        DiscoveryStatus::LookupFailed => {
            findings.warning(DNS_LOOKUP_FAILED);
            None
        }
        DiscoveryStatus::MultipleRecords => {
            findings.error("dmarc_multiple_records");
            out.policy_state = PolicyState::Invalid;
            out.monitoring_state = monitoring("inactive", Some("dmarc_multiple_records"));
            None
        }
        DiscoveryStatus::Found => rd.record.clone().map(|r| (r, rd.domain.clone())),
        DiscoveryStatus::NoRecord => {
            if !rd.near_misses.is_empty() {
                findings.warning("dmarc_near_miss_record");
            }
            if rd.dangling_cname {
                findings.error("dmarc_dangling_cname");
                out.policy_state = PolicyState::Missing;
                out.monitoring_state = monitoring("inactive", Some("dmarc_record_missing"));
                None
            } else if let Some(found) = applicable_record(rd, &raw.policy) {
                inherited = true;
                Some(found)
            } else if raw.policy.status == PolicyStatus::Indeterminate {
                findings.warning(DNS_LOOKUP_FAILED);
                None
            } else {
                findings.error("dmarc_record_missing");
                out.policy_state = PolicyState::Missing;
                out.monitoring_state = monitoring("inactive", Some("dmarc_record_missing"));
                None
            }
        }
    };
    let mut below_reject = false;
    if let Some((record, policy_domain)) = applicable {
        out.record = Some(record.raw.clone());
        out.tags = Some(tags(&record));
        out.policy_domain = Some(policy_domain);
        for issue in &record.issues {
            if matches!(issue.code, IssueCode::TestingMode) {
                continue;
            }
            match issue.severity {
                Severity::Error => findings.error(issue.code.as_str()),
                Severity::Warning => findings.warning(issue.code.as_str()),
                Severity::Info => findings.info(issue.code.as_str()),
            }
        }
        let policy = if inherited {
            raw.policy.policy
        } else {
            record.p
        };
        if !record.is_usable() || policy.is_none() {
            findings.error("dmarc_record_invalid");
            out.policy_state = PolicyState::Invalid;
            out.monitoring_state = monitoring("inactive", Some("dmarc_record_invalid"));
        } else {
            out.policy_state = match policy {
                Some(Policy::Reject) => PolicyState::Reject,
                Some(Policy::Quarantine) => {
                    findings.warning("policy_quarantine");
                    below_reject = true;
                    PolicyState::Quarantine
                }
                _ => {
                    findings.warning("policy_none");
                    below_reject = true;
                    PolicyState::None
                }
            };
            if record.testing {
                findings.warning("testing_mode");
                below_reject = true;
            }
            if let (Some(sp), Some(p)) = (record.sp, record.p)
                && sp < p
                && !inherited
            {
                findings.warning("subdomain_policy_weaker");
            }
            if inherited {
                findings.warning("dmarc_record_on_parent_only");
            }
            let valid_rua = record.rua.iter().any(|u| u.valid);
            let rua_checks: Vec<&DestinationCheck> = raw
                .destinations
                .iter()
                .filter(|d| d.tag == ReportTag::Rua)
                .collect();
            if raw
                .destinations
                .iter()
                .any(|d| d.status == AuthorizationStatus::Unauthorized)
            {
                findings.warning("rua_destination_unauthorized");
            }
            if raw
                .destinations
                .iter()
                .any(|d| d.status == AuthorizationStatus::Unknown)
            {
                findings.warning("rua_authorization_unknown");
            }
            let flowing = rua_checks.iter().any(|d| {
                matches!(
                    d.status,
                    AuthorizationStatus::NotRequired | AuthorizationStatus::Authorized
                )
            });
            let unknown = rua_checks
                .iter()
                .any(|d| d.status == AuthorizationStatus::Unknown);
            if !valid_rua {
                findings.warning("rua_missing");
            }
            out.monitoring_state = if inherited {
                monitoring("inactive", Some("dmarc_record_on_parent_only"))
            } else if !valid_rua {
                monitoring("inactive", Some("rua_missing"))
            } else if flowing {
                monitoring("active", None)
            } else if unknown {
                monitoring("unknown", Some(DNS_LOOKUP_FAILED))
            } else {
                monitoring("inactive", Some("rua_destination_unauthorized"))
            };
        }
    }
    let status = if !findings.errors.is_empty() {
        Verdict::Fail
    } else if below_reject {
        Verdict::InProgress
    } else {
        findings.verdict()
    };
    out.assessment = findings.verdict_with(Dimension::Dmarc, status);
    out
}

/// Whether DMARC is enforced (quarantine or reject, not in testing) for other dimensions (BIMI
/// needs it); `None` when the policy is unknown because the lookup failed, so a DNS failure is
/// never reported as "not enforced".
pub(crate) fn enforced(result: &DmarcResult) -> Option<bool> {
    if result.policy_state == PolicyState::Unknown {
        return None;
    }
    Some(
        matches!(
            result.policy_state,
            PolicyState::Quarantine | PolicyState::Reject
        ) && !result.tags.as_ref().is_some_and(|t| t.t),
    )
}
