//! Report views (SPEC §2.12 DMARC summary window, §4.1 reports rows): the summary of a domain's
//! aggregate reports over a window, and its senders. Field names SPEC leaves out are chosen
//! here and documented on each field.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// Messages and pass shares of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PeriodFigures {
    /// First day (YYYY-MM-DD).
    pub date_from: String,
    /// Last day (YYYY-MM-DD).
    pub date_to: String,
    pub volume: u64,
    /// 0-100, two decimals, 0 without volume.
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
}

/// The window minus the previous period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PeriodDelta {
    pub volume: i64,
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
}

/// How the window's messages split (the five sum to `volume`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Totals {
    /// Passed DMARC (not overridden as forwarded).
    pub compliant: u64,
    /// Failed DMARC from a source that also sent DMARC-passing mail for the domain in the
    /// window: a known sender misconfigured for part of its mail.
    pub non_compliant: u64,
    /// Forwarded: overridden by the receiver as forwarded (forwarded, trusted_forwarder,
    /// mailing_list, or local_policy with an ARC pass), or failing DMARC from a forwarder's
    /// network (a forward-only service; a mailbox provider that also forwards, with a DKIM
    /// signature that survived). Each message counted once.
    pub forwarded: u64,
    /// Failed DMARC from a source never seen passing in the window: unidentified or spoofing.
    pub unknown: u64,
    /// Reported without a readable DMARC evaluation.
    pub undetermined: u64,
}

/// The domain's stored 14-day figures (as on the Domain).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StoredFigures {
    pub last_14_days_volume: u64,
    pub last_14_days_dmarc_pass_pct: f64,
    pub last_14_days_spf_pass_pct: f64,
    pub last_14_days_dkim_pass_pct: f64,
}

/// Whether the DMARC policy can safely move up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Recommendation {
    /// advance_recommended, hold or at_maximum.
    pub status: String,
    /// The policy to move to when advancing (quarantine or reject), else null.
    pub next_policy: Option<String>,
    /// Why, for a person.
    pub reason: String,
}

/// An open or pending task about a sender (at most 10 listed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProbeTask {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub task_type: String,
    pub priority: u8,
    pub description: String,
    pub source_alias: Option<String>,
    pub sending_domain: Option<String>,
}

/// The one thing to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NextAction {
    /// wait_for_reports, fix_failing_senders, advance_policy or keep_monitoring.
    pub code: String,
    pub message: String,
}

/// `GET /domains/{id}/reports/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReportSummary {
    pub domain_id: Uuid,
    pub domain: String,
    /// First day of the window (YYYY-MM-DD), clamped to the plan's retention.
    pub date_from: String,
    /// Always yesterday (YYYY-MM-DD, UTC).
    pub date_to: String,
    pub volume: u64,
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
    pub totals: Totals,
    /// The same number of days just before the window.
    pub previous_period: PeriodFigures,
    /// Window minus previous period.
    pub delta: PeriodDelta,
    pub stored: StoredFigures,
    /// The published DMARC policy the sweep observed: none, quarantine or reject.
    pub policy_state: String,
    /// The domain's monitoring status.
    pub monitoring_state: String,
    pub recommendation: Recommendation,
    /// Open and pending sender tasks, at most 10, most severe first.
    pub probe_tasks: Vec<ProbeTask>,
    /// How many there are in all.
    pub probe_tasks_total: u64,
    pub next_action: NextAction,
    /// Extension (tenant trust): the aggregate reports whose date range ends in the window,
    /// by whether their mail passed DKIM aligned with the reporter's From domain. Anyone can
    /// mail a report address, so unauthenticated reports may be forged; an authenticated
    /// report replaces an unauthenticated one of the same identity. Report files imported by
    /// an operator count as unauthenticated.
    pub reports_authenticated: u64,
    pub reports_unauthenticated: u64,
}

/// `period` of the report views.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SummaryParams {
    /// last_7_days (default), last_14_days or last_30_days.
    #[param(value_type = Option<SummaryPeriod>, inline)]
    pub period: Option<String>,
}

crate::words!(
    /// `period` of a domain's DMARC summary and senders.
    pub SummaryPeriod = ["last_7_days", "last_14_days", "last_30_days"]
);

/// `GET /domains/{id}/reports/senders` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SendersParams {
    /// last_7_days (default), last_14_days or last_30_days.
    #[param(value_type = Option<SummaryPeriod>, inline)]
    pub period: Option<String>,
    /// Most senders listed, 1-20 (default 20), highest volume first.
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 20)]
    pub limit: Option<u32>,
}

/// One sending source (by IP) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SenderEntry {
    /// The sending IP.
    pub source_ip: String,
    pub volume: u64,
    /// Share of the window's volume, 0-100.
    pub share_pct: f64,
    pub dmarc_pass_pct: f64,
    pub spf_pass_pct: f64,
    pub dkim_pass_pct: f64,
    /// RFC5322.From domains it sent as.
    pub header_from: Vec<String>,
    /// Envelope domains seen.
    pub envelope_from: Vec<String>,
    /// DKIM signers seen (`domain/selector`).
    pub dkim_signers: Vec<String>,
    /// Last day seen (YYYY-MM-DD).
    pub last_seen: String,
    /// Who owns the address (an extension), when its sender keeps it (a sender keeps 50
    /// addresses); null otherwise.
    pub network: Option<crate::senders::SourceNetworkView>,
}

/// `GET /domains/{id}/reports/senders`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SendersView {
    pub date_from: String,
    pub date_to: String,
    /// Volume across every sender of the window.
    pub total_volume: u64,
    /// Distinct senders in the window.
    pub sender_count: u64,
    /// True when more senders exist than listed.
    pub truncated: bool,
    pub senders: Vec<SenderEntry>,
}

/// `GET /domains/{id}/reports/enforcement-impact` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImpactParams {
    /// quarantine or reject; default: the next policy up from the published one (reject at
    /// the top).
    #[param(value_type = Option<ImpactPolicy>, inline)]
    pub policy: Option<String>,
}

crate::words!(
    /// `policy` of the enforcement impact.
    pub ImpactPolicy = ["quarantine", "reject"]
);

/// One sender's share of what enforcement would stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImpactSender {
    /// The DomainSource id (`GET /domains/{id}/sources`), null for an address not tied to one.
    pub sender_id: Option<Uuid>,
    /// Catalogue name, sending domain or address.
    pub name: String,
    pub sending_domain: Option<String>,
    pub is_known: bool,
    /// confirmed, discarded or requires_confirmation (requires_confirmation when unidentified).
    pub confirmation_status: String,
    /// True for mail someone wants delivered: a confirmed sender, a recognised one not
    /// discarded, or one seen passing DMARC in the window.
    pub legitimate: bool,
    /// Messages in the window.
    pub volume: u64,
    /// Messages the policy would quarantine or reject (failing, not forwarded).
    pub affected: u64,
    /// Forwarded messages (reported separately: receivers' forwarding overrides decide them).
    pub forwarded: u64,
    /// Aligned pass shares, 0-100.
    pub spf_aligned_pct: f64,
    pub dkim_aligned_pct: f64,
    /// Why its mail fails: spf_not_aligned, dkim_not_aligned (both when neither aligns).
    pub reasons: Vec<String>,
}

/// `GET /domains/{id}/reports/enforcement-impact`: what moving the policy now would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EnforcementImpact {
    pub domain_id: Uuid,
    pub domain: String,
    /// The policy evaluated (quarantine or reject).
    pub policy: String,
    /// The policy published now (none, quarantine or reject).
    pub current_policy: String,
    /// The last 30 days (clamped to retention), ending yesterday.
    pub date_from: String,
    pub date_to: String,
    pub volume: u64,
    /// Messages from legitimate senders.
    pub legitimate_volume: u64,
    /// Legitimate messages the policy would quarantine or reject.
    pub legitimate_affected: u64,
    /// `legitimate_affected` as a share of `legitimate_volume`, 0-100.
    pub legitimate_affected_pct: f64,
    /// Failing messages from everyone else: what enforcement is for.
    pub unknown_affected: u64,
    /// Forwarded messages, kept out of both counts.
    pub forwarded: u64,
    /// True when no legitimate mail would be affected (and there is report data).
    pub safe: bool,
    /// Senders with affected mail, most affected first (at most 20).
    pub senders: Vec<ImpactSender>,
    /// Whether more senders had affected mail than listed.
    pub truncated: bool,
}
