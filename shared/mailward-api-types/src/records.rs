//! Records guidance and verification (SPEC §2.5, §4.1): what a domain should publish compared
//! with live DNS, the verification answer and the SPF diagnostics.

use crate::tools::DetectedDnsProvider;
use mailward_plan::{Purpose, RecordState, Warning};
use serde::Serialize;
use utoipa::ToSchema;

/// `GET /domains/{id}/dns-records` response.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnsRecordsResponse {
    /// SPEC §2.5 records (plus `live_values`, what DNS serves now), delete entries right after
    /// the record they concern.
    pub records: Vec<RecordState>,
    /// Every required record is verified.
    pub all_verified: bool,
    /// Read before publishing, e.g. `enforcing_policy_without_working_auth`, or
    /// `domain_does_not_exist` when the name is NXDOMAIN.
    pub warnings: Vec<Warning>,
    /// The DNS host, from the domain's NS records.
    pub dns_provider: DetectedDnsProvider,
}

/// `POST /domains/{id}/verify` response.
#[derive(Debug, Serialize, ToSchema)]
pub struct VerifyResponse {
    /// Always false: the pass runs during the request.
    pub queued: bool,
    /// Purposes confirmed during this pass (only those; never `tls_rpt` or `mta_sts_policy`).
    pub verified: std::collections::BTreeMap<Purpose, bool>,
    /// `{dmarc, spf, dkim, mta_sts, bimi}` booleans: true when confirmed in this pass.
    pub results: mailward_plan::Results,
}

/// A suggested next step for the SPF record.
#[derive(Debug, Serialize, ToSchema)]
pub struct NextAction {
    /// Stable code: `publish_spf_record`, `merge_spf_records`, `fix_spf_syntax`,
    /// `reduce_spf_lookups`, `tighten_all`, `retry_later`, `review_warnings` or `none`.
    pub code: String,
    /// For a person.
    pub message: String,
}

/// Hosted (flattened) SPF state.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostedSpf {
    /// Whether hosted SPF is on (`spf_options.enabled`).
    pub enabled: bool,
    /// Whether every flattenable include is flattened, even when the record would fit the
    /// lookup limit without it (`spf_options.force_flattening`).
    pub force_flattening: bool,
    /// True once the domain's live SPF record includes the served chain (`status` ready).
    pub active: bool,
    /// `managed_dns_status.spf`: unknown|syncing|ready|error.
    pub status: String,
    /// `spf_error_reason` when `status` is error.
    pub error_reason: Option<String>,
    /// The name the customer's record includes (`<owner>._spf.<hosted zone>`), when on.
    pub include: Option<String>,
    /// The record to publish at the domain, when on.
    pub record: Option<String>,
    /// The chain Mailward serves, first record first (empty when off).
    pub served_records: Vec<ServedSpfRecord>,
    /// Lookups a receiver makes evaluating the customer's record (at most 10 unless terms
    /// that cannot be flattened already exceed it).
    pub lookup_count: Option<u32>,
    /// The source record's terms that authorize senders through DNS, and whether each is
    /// flattened.
    pub terms: Vec<HostedSpfTerm>,
    /// When the served records were last flattened (hourly while hosting is on).
    #[schema(format = DateTime)]
    pub flattened_at: Option<String>,
    /// Recent changes of a sending service's ranges seen by re-flattening, newest first.
    pub range_changes: Vec<SpfRangeChangeView>,
}

/// One record of the served SPF chain.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServedSpfRecord {
    /// Where Mailward serves it.
    pub name: String,
    /// The TXT value.
    pub value: String,
}

/// A term of the flattened source record.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostedSpfTerm {
    /// `include:…`, `a:…` or `mx:…` as written in the source record.
    pub term: String,
    /// Its networks are served in place of the term.
    pub flattened: bool,
    /// Lookups the term would cost served as itself.
    pub lookups: u32,
    /// How many networks it authorizes (0 when it cannot be flattened).
    pub networks: usize,
    /// Why it is served as itself (macros, `exists`, `+all`, no record…).
    pub note: Option<String>,
    /// `spf_options.mechanism_descriptions` entry for the term, if any.
    pub description: Option<String>,
    /// When re-flattening last saw its networks change.
    #[schema(format = DateTime)]
    pub changed_at: Option<String>,
}

/// A change of a term's networks.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpfRangeChangeView {
    /// The term.
    pub term: String,
    /// When it was seen.
    #[schema(format = DateTime)]
    pub at: String,
    /// Networks that appeared.
    pub added: Vec<String>,
    /// Networks that went away.
    pub removed: Vec<String>,
}

/// `GET /domains/{domainId}/spf` response (SPEC §2.13 content).
#[derive(Debug, Serialize, ToSchema)]
pub struct SpfDiagnostics {
    /// The audit of the live record and its whole lookup tree (flattened: `domain`, `record`,
    /// `records`, `ttl`, `health`, lookup and void-lookup counts, `tree`, `problems`).
    #[serde(flatten)]
    pub audit: mailward_spf::SpfAudit,
    /// Hosted SPF.
    pub hosted_spf: HostedSpf,
    /// What to do next.
    pub next_action: NextAction,
}

/// `POST /domains/{id}/hosted-dmarc` response.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostedDmarcResponse {
    /// True once live DNS shows `_dmarc.<domain>` as a CNAME to Mailward's target.
    pub hosted_dmarc_active: bool,
    /// The CNAME to publish at `_dmarc.<domain>` (the record Mailward serves behind it is
    /// rebuilt from the current `dmarc_options`).
    pub record: mailward_plan::ExpectedRecord,
    /// What to do, for a person: publish the CNAME and delete any DMARC TXT at that host.
    pub instructions: String,
    /// The domain after the change (`is_dmarc_managed`, `managed_dns_status.dmarc`).
    pub domain: crate::domains::Domain,
}
