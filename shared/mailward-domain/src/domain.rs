//! The Domain resource's model (SPEC §2.1): a monitored domain, its options and its monitoring
//! state. Stored as JSON by the repository; the wire shape lives in `mailward-api-types`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// A DMARC policy value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Monitor only.
    None,
    /// Treat failing mail as suspicious.
    Quarantine,
    /// Reject failing mail.
    Reject,
}

impl Policy {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Quarantine => "quarantine",
            Policy::Reject => "reject",
        }
    }
}

/// The subdomain policy option: a policy, or `same` as the domain's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubdomainPolicy {
    /// Monitor only.
    None,
    /// Quarantine.
    Quarantine,
    /// Reject.
    Reject,
    /// Same as `policy`.
    Same,
}

/// `dmarc_options` (SPEC §2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DmarcOptions {
    /// Extra aggregate-report addresses besides Mailward's own.
    pub additional_emails: Vec<String>,
    /// Failure-report addresses (legacy `ruf`).
    pub legacy_ruf_emails: Vec<String>,
    /// The policy to publish.
    pub policy: Policy,
    /// 0-100. RFC 9989 removed `pct`: below 100 Mailward publishes `t=y` (one step weaker).
    pub pct: u8,
    /// Subdomain policy.
    pub sp: SubdomainPolicy,
    /// `aspf=s`.
    pub strict_spf: bool,
    /// `adkim=s`.
    pub strict_dkim: bool,
    /// Receive failure reports (RFC 9991) at Mailward: the record's `ruf` starts with the
    /// domain's failure-report address `ruf+<domain id>@<report domain>`. Off unless the
    /// domain opts in, so no published record changes on its own.
    #[serde(default)]
    pub failure_reports: bool,
}

impl Default for DmarcOptions {
    fn default() -> Self {
        Self {
            additional_emails: Vec::new(),
            legacy_ruf_emails: Vec::new(),
            policy: Policy::None,
            pct: 100,
            sp: SubdomainPolicy::Same,
            strict_spf: false,
            strict_dkim: false,
            failure_reports: false,
        }
    }
}

/// `spf_options` (SPEC §2.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpfOptions {
    /// Publish a flattened SPF record hosted by Mailward.
    pub force_flattening: bool,
    /// Whether Mailward manages the SPF record at all.
    pub enabled: bool,
    /// Optional notes per mechanism.
    pub mechanism_descriptions: Option<std::collections::BTreeMap<String, String>>,
}

/// The BIMI certificate and logo Mailward hosts for a domain, at URLs versioned by their
/// content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedBimiAssets {
    /// The content-derived version in the URLs.
    pub version: String,
    /// The leaf certificate's expiry: the hosted record turns to error
    /// (`certificate_invalid`) after it.
    #[serde(with = "time::serde::rfc3339")]
    pub not_after: OffsetDateTime,
}

/// `bimi_options` (SPEC §2.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BimiOptions {
    /// Whether BIMI is wanted.
    pub enabled: bool,
    /// SVG Tiny PS logo URL.
    pub logo: Option<String>,
    /// VMC/CMC certificate URL.
    pub certificate: Option<String>,
}

/// `monitoring_status` (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MonitoringStatus {
    /// Not evaluated yet.
    None,
    /// Added; waiting for the DMARC record with Mailward's report address.
    Pending,
    /// Full DMARC monitoring is in place.
    Setup,
    /// Was set up; the records no longer resolve as expected.
    Drifted,
    /// Monitoring could not be established or was lost.
    Failed,
}

/// `monitoring_failure_reason` values (SPEC §2.1; the service-named one is
/// `dmarc_record_missing_mailward_rua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    /// No name server answers for the domain.
    NameserversUnresolvable,
    /// No DMARC record.
    DmarcRecordMissing,
    /// A TXT record where Mailward expected its CNAME delegation.
    DmarcRecordAddedAsTxtNotCname,
    /// Only the parent (organizational) domain has a record.
    DmarcRecordOnParentOnly,
    /// The record lacks Mailward's aggregate-report address.
    DmarcRecordMissingMailwardRua,
    /// The record does not parse.
    DmarcRecordInvalid,
    /// More than one DMARC record.
    DmarcMultipleRecords,
}

impl FailureReason {
    /// Every reason, in SPEC order.
    pub const ALL: [FailureReason; 7] = [
        FailureReason::NameserversUnresolvable,
        FailureReason::DmarcRecordMissing,
        FailureReason::DmarcRecordAddedAsTxtNotCname,
        FailureReason::DmarcRecordOnParentOnly,
        FailureReason::DmarcRecordMissingMailwardRua,
        FailureReason::DmarcRecordInvalid,
        FailureReason::DmarcMultipleRecords,
    ];

    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::NameserversUnresolvable => "nameservers_unresolvable",
            FailureReason::DmarcRecordMissing => "dmarc_record_missing",
            FailureReason::DmarcRecordAddedAsTxtNotCname => "dmarc_record_added_as_txt_not_cname",
            FailureReason::DmarcRecordOnParentOnly => "dmarc_record_on_parent_only",
            FailureReason::DmarcRecordMissingMailwardRua => "dmarc_record_missing_mailward_rua",
            FailureReason::DmarcRecordInvalid => "dmarc_record_invalid",
            FailureReason::DmarcMultipleRecords => "dmarc_multiple_records",
        }
    }
}

/// `monitoring_failure_detail` (SPEC §2.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FailureDetail {
    /// The record observed (verbatim), when there was one.
    pub observed: Option<String>,
    /// The aggregate-report address Mailward expected.
    pub expected_rua: Option<String>,
    /// The host the observation came from (e.g. the parent domain).
    pub from_hostname: Option<String>,
    /// How many records were seen.
    pub record_count: Option<u32>,
}

/// A score band (SPEC §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScoreBand {
    /// 0-39.
    Critical,
    /// 40-69.
    Bad,
    /// 70-89.
    Good,
    /// 90-100.
    Great,
}

impl ScoreBand {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreBand::Critical => "critical",
            ScoreBand::Bad => "bad",
            ScoreBand::Good => "good",
            ScoreBand::Great => "great",
        }
    }

    /// The band of a 0-100 score. Boundaries: critical < 40 ≤ bad < 70 ≤ good < 90 ≤ great.
    pub fn of(score: u8) -> Self {
        match score {
            0..=39 => ScoreBand::Critical,
            40..=69 => ScoreBand::Bad,
            70..=89 => ScoreBand::Good,
            _ => ScoreBand::Great,
        }
    }
}

pub use crate::names::normalize_domain_name;

/// A monitored domain as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    pub id: Uuid,
    pub org_id: Uuid,
    /// The normalised name.
    pub url: String,
    pub group_id: Option<Uuid>,
    pub is_parked: bool,
    pub dmarc_options: DmarcOptions,
    pub spf_options: SpfOptions,
    pub bimi_options: BimiOptions,
    pub target_spf: Option<String>,
    /// The policy last observed in DNS (`none` until one is seen).
    pub dmarc_policy: Policy,
    pub monitoring_status: MonitoringStatus,
    pub monitoring_failure_reason: Option<FailureReason>,
    pub monitoring_failure_detail: Option<FailureDetail>,
    pub score: u8,
    /// The registrar, as RDAP last named it (`mailward_rdap`); kept when a lookup fails.
    pub registrar: Option<String>,
    /// When an RDAP lookup last answered for the domain (the next is due a week later).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub registrar_checked_at: Option<OffsetDateTime>,
    /// When an RDAP lookup was last tried, answered or not (a failed one waits a day).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub registrar_tried_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_setup_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_verified_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_checked_at: Option<OffsetDateTime>,
    /// When the sweep should evaluate the domain next (indexed; due domains are found without a
    /// table scan).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub next_check_at: Option<OffsetDateTime>,
    /// While set and in the future, a sweep worker owns the domain: no second worker evaluates
    /// it concurrently.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub sweep_claimed_until: Option<OffsetDateTime>,
    /// Since when the domain has been `pending` (for the grace window before `failed`).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub pending_since: Option<OffsetDateTime>,
    /// Sweeps in a row whose DNS answers were inconclusive.
    #[serde(default)]
    pub consecutive_indeterminate: u32,
    /// Unresolved DNS conflicts (SPEC §2.2 shape, with occurrence count and first/last detection
    /// times), as the last sweep found them; resolved ones leave the list.
    #[serde(default)]
    pub dns_conflicts: Vec<crate::conflicts::StoredConflict>,
    /// Record purposes (dmarc, spf, dkim, mta_sts, bimi) confirmed by a verification pass, so a
    /// later comparison can tell `drifted` from `pending`.
    #[serde(default)]
    pub verified_purposes: Vec<crate::purpose::Purpose>,
    /// DKIM selectors the last probe found keys at. The sweep re-checks these every pass and
    /// probes the whole selector catalogue only now and then (see `dkim_full_probe_at`): the
    /// catalogue costs two queries per selector, most of a domain's DNS work.
    #[serde(default)]
    pub dkim_selectors_seen: Vec<String>,
    /// When the whole selector catalogue was last probed without a failed lookup.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub dkim_full_probe_at: Option<OffsetDateTime>,
    /// Open work among the domain's tasks (open or pending, opportunities excluded), kept in
    /// the same commit as every task change.
    #[serde(default)]
    pub open_tasks_count: u32,
    /// The most severe priority among that open work (0 critical), or none.
    #[serde(default)]
    pub highest_open_task_priority: Option<u8>,
    /// Whether the rollout plan proposes next steps for this domain (`None`: the
    /// organization's setting).
    #[serde(default)]
    pub agent_proposals_enabled: Option<bool>,
    /// The last fetch of the BIMI mark certificate (about daily, when the record names one).
    #[serde(default)]
    pub vmc_check: Option<crate::certificates::VmcCheck>,
    /// The last probe of the MX hosts' TLS certificates (about daily, where the probe runs).
    #[serde(default)]
    pub mx_tls_check: Option<crate::certificates::MxTlsCheck>,
    /// Aggregate-report counts of the 14 days up to `as_of`, refreshed as reports arrive.
    #[serde(default)]
    pub report_figures: Option<ReportFigures>,
    /// The first UTC day an aggregate report covered (`yyyy-mm-dd`).
    #[serde(default)]
    pub monitoring_since: Option<String>,
    /// Hosted DMARC is on: Mailward serves the record behind the customer's `_dmarc` CNAME.
    #[serde(default)]
    pub is_dmarc_managed: bool,
    /// Where the hosted DMARC record stands (`managed_dns_status.dmarc`).
    #[serde(default)]
    pub managed_dmarc: ManagedRecord,
    /// Hosted SPF is on (`spf_options.enabled`): Mailward serves the flattened record the
    /// customer's SPF record includes.
    #[serde(default)]
    pub is_spf_managed: bool,
    /// Where the hosted SPF record stands (`managed_dns_status.spf`).
    #[serde(default)]
    pub managed_spf: ManagedRecord,
    /// With hosted SPF, the record the customer publishes at the domain (one `include:` of
    /// the served chain, after any term that must stay in their own record).
    #[serde(default)]
    pub hosted_spf_record: Option<String>,
    /// Hosted BIMI is on: Mailward serves `default._bimi` (behind the customer's CNAME) with
    /// the certificate and logo it hosts.
    #[serde(default)]
    pub is_bimi_managed: bool,
    /// Where the hosted BIMI record stands (`managed_dns_status.bimi`).
    #[serde(default)]
    pub managed_bimi: ManagedRecord,
    /// The hosted certificate and logo.
    #[serde(default)]
    pub bimi_assets: Option<HostedBimiAssets>,
    /// Hosted MTA-STS is on.
    #[serde(default)]
    pub is_mta_sts_managed: bool,
    /// Where the hosted MTA-STS records stand (`managed_dns_status.mta_sts`).
    #[serde(default)]
    pub managed_mta_sts: ManagedRecord,
    /// The hosted policy, while hosting is on.
    #[serde(default)]
    pub mta_sts: Option<crate::mta_sts::HostedMtaSts>,
    /// The domain has live hosted DKIM keys.
    #[serde(default)]
    pub is_dkim_managed: bool,
    /// Where its hosted DKIM keys stand together (`managed_dns_status.dkim`).
    #[serde(default)]
    pub managed_dkim: ManagedRecord,
    /// The RFC 9989 report-destination authorization for this name is published in the
    /// service's zone (the sweep publishes it while false).
    #[serde(default)]
    pub reports_authorized: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// SPEC §2.1 `managed_dns_status` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManagedStatus {
    /// Not hosted, or not checked yet.
    #[default]
    Unknown,
    /// Served by Mailward; the customer's CNAME is not seen in live DNS yet.
    Syncing,
    /// Served, and the customer's CNAME points at it.
    Ready,
    /// Something is wrong; `error_reason` says what.
    Error,
}

impl ManagedStatus {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            ManagedStatus::Unknown => "unknown",
            ManagedStatus::Syncing => "syncing",
            ManagedStatus::Ready => "ready",
            ManagedStatus::Error => "error",
        }
    }
}

/// One hosted record's state: its status, when it last entered `syncing`, and why it is in
/// error (SPEC §2.1 `*_error_reason`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedRecord {
    pub status: ManagedStatus,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub since: Option<OffsetDateTime>,
    /// Why `status` is error (none otherwise, or for an error older than reason tracking).
    #[serde(default, deserialize_with = "known_reason")]
    pub error_reason: Option<HostingErrorReason>,
    /// Since when the hourly check could not tell whether the record is in place (DNS not
    /// answering); none while checks answer. Long enough, the record is `check_failed`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub unchecked_since: Option<OffsetDateTime>,
}

/// Why a hosted record is in error (SPEC §2.1 `*_error_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostingErrorReason {
    /// The customer's CNAME was never seen within the verification window.
    SetupTimeout,
    /// A verified CNAME stopped pointing at the service.
    Drift,
    /// The certificate of the hosted policy or mark could not be issued or is not valid.
    CertificateInvalid,
    /// Conflicting records at the host (a TXT where the CNAME belongs).
    RecordConflict,
    /// The delegation to the hosted record is missing.
    DelegationMissing,
    /// Mailward could not write the hosted record into its zone.
    PublishFailed,
    /// A hosted DKIM key is unusable.
    DkimKeyError,
    /// The check of the record failed.
    CheckFailed,
}

impl HostingErrorReason {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SetupTimeout => "setup_timeout",
            Self::Drift => "drift",
            Self::CertificateInvalid => "certificate_invalid",
            Self::RecordConflict => "record_conflict",
            Self::DelegationMissing => "delegation_missing",
            Self::PublishFailed => "publish_failed",
            Self::DkimKeyError => "dkim_key_error",
            Self::CheckFailed => "check_failed",
        }
    }
}

/// A stored reason this version does not know reads as none (an error without a tracked
/// reason), never as an unreadable domain.
fn known_reason<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<HostingErrorReason>, D::Error> {
    let raw: Option<serde_json::Value> = Option::deserialize(deserializer)?;
    Ok(raw.and_then(|v| serde_json::from_value(v).ok()))
}

/// Message counts of a domain's aggregate reports over a 14-day window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportFigures {
    /// The window's last day (`yyyy-mm-dd`, yesterday when computed).
    pub as_of: String,
    /// Every message reported in the window.
    pub volume: u64,
    /// The compliant and non-compliant messages (SPEC §2.12): what the pass percentages count
    /// (SPEC §2.1); forwarded, unknown and undetermined mail is left out of them.
    #[serde(default)]
    pub counted: u64,
    /// Of `counted`: the DMARC passes (the compliant messages).
    pub dmarc_pass: u64,
    /// Of `counted`: the aligned SPF passes.
    pub spf_aligned_pass: u64,
    /// Of `counted`: the aligned DKIM passes.
    pub dkim_aligned_pass: u64,
    /// Whether these were summed over the whole window's rows. A report added to them makes
    /// them approximate (its sources can turn earlier unknown failures non-compliant) until
    /// the domain's next sweep sums the window again.
    #[serde(default)]
    pub exact: bool,
}

impl ReportFigures {
    /// The figures of `rows`, taken as a whole window ending `as_of`: a failing row counts
    /// as non-compliant when its source passed DMARC in any of the rows.
    pub fn of_rows<'a>(
        as_of: String,
        rows: impl Iterator<Item = &'a crate::reports::SourceDay> + Clone,
    ) -> Self {
        let passing: std::collections::HashSet<&str> = rows
            .clone()
            .filter(|r| r.dmarc_pass > 0)
            .map(|r| r.source_ip.as_str())
            .collect();
        let mut f = Self {
            as_of,
            exact: true,
            ..Self::default()
        };
        for r in rows {
            let split = r.split(passing.contains(r.source_ip.as_str()));
            f.volume += r.volume;
            f.counted += split.counted();
            f.dmarc_pass += split.compliant;
            f.spf_aligned_pass += r.spf_aligned_pass.min(split.compliant);
            f.dkim_aligned_pass += r.dkim_aligned_pass.min(split.compliant);
        }
        f
    }

    /// These figures with `added`'s counts on top (no longer exact).
    pub fn plus(&self, added: &Self) -> Self {
        Self {
            as_of: self.as_of.clone(),
            volume: self.volume + added.volume,
            counted: self.counted + added.counted,
            dmarc_pass: self.dmarc_pass + added.dmarc_pass,
            spf_aligned_pass: self.spf_aligned_pass + added.spf_aligned_pass,
            dkim_aligned_pass: self.dkim_aligned_pass + added.dkim_aligned_pass,
            exact: false,
        }
    }

    /// `part` of the counted messages in percent, two decimals (0 without any).
    pub fn pct(&self, part: u64) -> f64 {
        if self.counted == 0 {
            0.0
        } else {
            (part as f64 * 10_000.0 / self.counted as f64).round() / 100.0
        }
    }
}

impl Domain {
    /// A domain just added to an organization: default options, nothing observed yet
    /// (`monitoring_status` none, score 0), due for its first evaluation at `now`.
    pub fn new(id: Uuid, org_id: Uuid, url: String, now: OffsetDateTime) -> Self {
        Self {
            id,
            org_id,
            url,
            group_id: None,
            is_parked: false,
            dmarc_options: DmarcOptions::default(),
            spf_options: SpfOptions::default(),
            bimi_options: BimiOptions::default(),
            target_spf: None,
            dmarc_policy: Policy::None,
            monitoring_status: MonitoringStatus::None,
            monitoring_failure_reason: None,
            monitoring_failure_detail: None,
            score: 0,
            registrar: None,
            registrar_checked_at: None,
            registrar_tried_at: None,
            dmarc_setup_at: None,
            dmarc_verified_at: None,
            last_checked_at: None,
            next_check_at: Some(now),
            sweep_claimed_until: None,
            pending_since: None,
            consecutive_indeterminate: 0,
            verified_purposes: Vec::new(),
            dkim_selectors_seen: Vec::new(),
            dkim_full_probe_at: None,
            open_tasks_count: 0,
            highest_open_task_priority: None,
            agent_proposals_enabled: None,
            vmc_check: None,
            mx_tls_check: None,
            report_figures: None,
            monitoring_since: None,
            is_dmarc_managed: false,
            managed_dmarc: ManagedRecord::default(),
            reports_authorized: false,
            is_dkim_managed: false,
            managed_dkim: ManagedRecord::default(),
            is_spf_managed: false,
            managed_spf: ManagedRecord::default(),
            is_bimi_managed: false,
            managed_bimi: ManagedRecord::default(),
            bimi_assets: None,
            is_mta_sts_managed: false,
            managed_mta_sts: ManagedRecord::default(),
            mta_sts: None,
            hosted_spf_record: None,
            dns_conflicts: Vec::new(),
            created_at: now,
            updated_at: now,
        }
    }

    /// The aggregate-report address Mailward reads for this domain, on the service's report
    /// host: `rua+<domain id>@<report_domain>` (the id, not the name, so a report is attributed
    /// to exactly this domain of this organization).
    pub fn monitoring_email(&self, report_domain: &str) -> String {
        format!("rua+{}@{}", self.id.simple(), report_domain)
    }
}

/// The failure-report address of a domain whose DMARC record names Mailward for them: its
/// aggregate-report address with the `ruf` tag (`ruf+<domain id>@<report domain>`).
pub fn failure_address(monitoring_email: &str) -> Option<String> {
    let (local, host) = monitoring_email.trim().rsplit_once('@')?;
    let id = local.strip_prefix("rua+")?;
    Some(format!("ruf+{id}@{host}"))
}

/// The domain id a report address names: `rua+<domain id>@<report_domain>` (the form of
/// [`Domain::monitoring_email`]) or its failure-report twin `ruf+<domain id>@…`; host and local
/// part compared case-insensitively, angle brackets allowed; else `None`.
pub fn report_address_domain(address: &str, report_domain: &str) -> Option<Uuid> {
    let address = address.trim().trim_start_matches('<').trim_end_matches('>');
    let (local, host) = address.rsplit_once('@')?;
    if !host
        .trim_end_matches('.')
        .eq_ignore_ascii_case(report_domain.trim_end_matches('.'))
    {
        return None;
    }
    let (tag, id) = local.split_once('+')?;
    if !(tag.eq_ignore_ascii_case("rua") || tag.eq_ignore_ascii_case("ruf")) || id.len() != 32 {
        return None;
    }
    Uuid::try_parse(id).ok()
}

impl MonitoringStatus {
    /// The wire word (`none`, `pending`, `setup`, `drifted`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            MonitoringStatus::None => "none",
            MonitoringStatus::Pending => "pending",
            MonitoringStatus::Setup => "setup",
            MonitoringStatus::Drifted => "drifted",
            MonitoringStatus::Failed => "failed",
        }
    }

    /// Whether monitoring is set up (`setup` or `drifted`): the "configured" group of the
    /// `status` sort.
    pub fn is_configured(self) -> bool {
        matches!(self, MonitoringStatus::Setup | MonitoringStatus::Drifted)
    }
}

impl BimiOptions {
    /// The BIMI TXT value for these options, when a logo is set (`a=` only with a certificate).
    pub fn txt_value(&self) -> Option<String> {
        let logo = self.logo.as_deref()?;
        Some(match self.certificate.as_deref() {
            Some(cert) => format!("v=BIMI1; l={logo}; a={cert}"),
            None => format!("v=BIMI1; l={logo}"),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn report_addresses_name_one_domain_id_on_the_report_host_only() {
        use super::*;
        let id = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
        let d = Domain::new(
            id,
            Uuid::nil(),
            "example.com".into(),
            OffsetDateTime::UNIX_EPOCH,
        );
        let address = d.monitoring_email("reports.mailward.test");
        assert_eq!(
            report_address_domain(&address, "reports.mailward.test"),
            Some(id)
        );
        let upper = format!("<{}>", address.to_ascii_uppercase());
        assert_eq!(
            report_address_domain(&upper, "reports.mailward.test."),
            Some(id)
        );
        // The failure-report twin names the same domain.
        let ruf = failure_address(&address).unwrap();
        assert!(ruf.starts_with("ruf+"));
        assert_eq!(
            report_address_domain(&ruf, "reports.mailward.test"),
            Some(id)
        );
        for other in [
            address.replace("reports.mailward.test", "evil.test"),
            address.replace("rua+", "ruX+"),
            address.replace("rua+", "rua"),
            format!("rua+{}@reports.mailward.test", id.hyphenated()),
            "rua+zz@reports.mailward.test".into(),
            "postmaster@reports.mailward.test".into(),
            String::new(),
        ] {
            assert_eq!(
                report_address_domain(&other, "reports.mailward.test"),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn wire_words_are_the_serde_names() {
        use super::*;
        let word = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
        for r in FailureReason::ALL {
            assert_eq!(r.as_str(), word(serde_json::to_value(r).unwrap()));
        }
        for b in [
            ScoreBand::Critical,
            ScoreBand::Bad,
            ScoreBand::Good,
            ScoreBand::Great,
        ] {
            assert_eq!(b.as_str(), word(serde_json::to_value(b).unwrap()));
        }
        for m in [
            ManagedStatus::Unknown,
            ManagedStatus::Syncing,
            ManagedStatus::Ready,
            ManagedStatus::Error,
        ] {
            assert_eq!(m.as_str(), word(serde_json::to_value(m).unwrap()));
        }
        for m in [
            MonitoringStatus::None,
            MonitoringStatus::Pending,
            MonitoringStatus::Setup,
            MonitoringStatus::Drifted,
            MonitoringStatus::Failed,
        ] {
            assert_eq!(m.as_str(), word(serde_json::to_value(m).unwrap()));
        }
    }

    use super::*;

    #[test]
    fn names_are_normalised_or_refused() {
        assert_eq!(
            normalize_domain_name(" Example.COM. ").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            normalize_domain_name("mail.example.co.uk").as_deref(),
            Some("mail.example.co.uk")
        );
        for bad in [
            "",
            "com",
            "exa mple.com",
            "-a.com",
            "a..com",
            "1.2.3.4",
            "_dmarc.example.com",
            &format!("{}.com", "a".repeat(64)),
        ] {
            assert_eq!(normalize_domain_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn bands_follow_their_boundaries() {
        assert_eq!(ScoreBand::of(0), ScoreBand::Critical);
        assert_eq!(ScoreBand::of(39), ScoreBand::Critical);
        assert_eq!(ScoreBand::of(40), ScoreBand::Bad);
        assert_eq!(ScoreBand::of(70), ScoreBand::Good);
        assert_eq!(ScoreBand::of(90), ScoreBand::Great);
        assert_eq!(ScoreBand::of(100), ScoreBand::Great);
    }

    #[test]
    fn hosting_reasons_read_back_and_an_unknown_one_reads_as_none() {
        for reason in [
            HostingErrorReason::SetupTimeout,
            HostingErrorReason::Drift,
            HostingErrorReason::CertificateInvalid,
            HostingErrorReason::RecordConflict,
            HostingErrorReason::DelegationMissing,
            HostingErrorReason::PublishFailed,
            HostingErrorReason::DkimKeyError,
            HostingErrorReason::CheckFailed,
        ] {
            let record = ManagedRecord {
                status: ManagedStatus::Error,
                since: None,
                error_reason: Some(reason),
                unchecked_since: None,
            };
            let json = serde_json::to_value(&record).unwrap();
            assert_eq!(json["error_reason"], reason.as_str());
            let back: ManagedRecord = serde_json::from_value(json).unwrap();
            assert_eq!(back, record);
        }
        let stored = serde_json::json!({"status": "error", "error_reason": "gremlins"});
        let read: ManagedRecord = serde_json::from_value(stored).unwrap();
        assert_eq!(
            (read.status, read.error_reason),
            (ManagedStatus::Error, None)
        );
        let bare: ManagedRecord =
            serde_json::from_value(serde_json::json!({"status": "ready"})).unwrap();
        assert_eq!(bare.error_reason, None);
    }
}
