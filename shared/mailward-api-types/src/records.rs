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
    /// Whether the domain asked for hosted, flattened SPF (`spf_options.force_flattening`).
    pub requested: bool,
    /// Whether Mailward serves it. Hosted SPF is not available yet, so this is always false.
    pub active: bool,
    /// `managed_dns_status.spf`: unknown until hosting exists.
    pub status: String,
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
