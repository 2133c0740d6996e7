//! Tasks as stored and as the engine reasons about them (SPEC §2.3).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// What a task asks for (SPEC §2.3 TaskType).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskType {
    /// Fix a broken or bloated SPF record (several records, syntax, `+all`, dead includes).
    CleanupSpfRecord,
    /// Confirm (or discard) a sender seen in aggregate reports.
    ConfirmSource,
    /// Lock a domain that sends no mail down (reject DMARC, `-all` SPF, null MX).
    LockdownDomain,
    /// Bring the SPF record under the 10-lookup limit.
    ReduceSpfLookups,
    /// Publish a DMARC record.
    SetUpDmarcRecord,
    /// A confirmed sender's mail fails DKIM.
    SourceFailingDkim,
    /// A confirmed sender's mail fails SPF.
    SourceFailingSpf,
    /// Publish working MX records.
    SetUpMxRecord,
    /// Publish an SPF record.
    SetUpSpfRecord,
    /// Fix the DMARC record (invalid, several, missing Mailward's report address).
    UpdateDmarcRecord,
    /// Lower a record's TTL so changes take effect in time.
    UpdateTtl,
    /// Publish (or repair) MTA-STS.
    SetUpMtaSts,
    /// Publish (or repair) TLS-RPT.
    SetUpTlsRpt,
    /// Resolve a DNS conflict (SPEC §2.2).
    ResolveDnsConflict,
    /// A sender stopped sending.
    ReviewUnusedSender,
    /// Remove records of senders no longer used.
    CleanupSenderRecords,
    /// An MX host's TLS certificate is invalid or expiring.
    FixMxCertificate,
    /// The BIMI mark certificate (VMC) is expired or expiring.
    RenewVmcCertificate,
    /// A DKIM selector seen in reports is not known to Mailward.
    DkimSelectorNotImported,
    /// An opportunity: show the brand logo with BIMI.
    SetUpBimi,
    /// A mailbox provider's sender requirement is not met (an extension beyond SPEC §2.3,
    /// added as §9.6 allows): one task per requirement, naming the providers and their codes.
    MeetSenderRequirement,
}

impl TaskType {
    /// Every type, in the order of SPEC §2.3.
    pub const ALL: [TaskType; 21] = [
        TaskType::CleanupSpfRecord,
        TaskType::ConfirmSource,
        TaskType::LockdownDomain,
        TaskType::ReduceSpfLookups,
        TaskType::SetUpDmarcRecord,
        TaskType::SourceFailingDkim,
        TaskType::SourceFailingSpf,
        TaskType::SetUpMxRecord,
        TaskType::SetUpSpfRecord,
        TaskType::UpdateDmarcRecord,
        TaskType::UpdateTtl,
        TaskType::SetUpMtaSts,
        TaskType::SetUpTlsRpt,
        TaskType::ResolveDnsConflict,
        TaskType::ReviewUnusedSender,
        TaskType::CleanupSenderRecords,
        TaskType::FixMxCertificate,
        TaskType::RenewVmcCertificate,
        TaskType::DkimSelectorNotImported,
        TaskType::SetUpBimi,
        TaskType::MeetSenderRequirement,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::CleanupSpfRecord => "cleanup_spf_record",
            TaskType::ConfirmSource => "confirm_source",
            TaskType::LockdownDomain => "lockdown_domain",
            TaskType::ReduceSpfLookups => "reduce_spf_lookups",
            TaskType::SetUpDmarcRecord => "set_up_dmarc_record",
            TaskType::SourceFailingDkim => "source_failing_dkim",
            TaskType::SourceFailingSpf => "source_failing_spf",
            TaskType::SetUpMxRecord => "set_up_mx_record",
            TaskType::SetUpSpfRecord => "set_up_spf_record",
            TaskType::UpdateDmarcRecord => "update_dmarc_record",
            TaskType::UpdateTtl => "update_ttl",
            TaskType::SetUpMtaSts => "set_up_mta_sts",
            TaskType::SetUpTlsRpt => "set_up_tls_rpt",
            TaskType::ResolveDnsConflict => "resolve_dns_conflict",
            TaskType::ReviewUnusedSender => "review_unused_sender",
            TaskType::CleanupSenderRecords => "cleanup_sender_records",
            TaskType::FixMxCertificate => "fix_mx_certificate",
            TaskType::RenewVmcCertificate => "renew_vmc_certificate",
            TaskType::DkimSelectorNotImported => "dkim_selector_not_imported",
            TaskType::SetUpBimi => "set_up_bimi",
            TaskType::MeetSenderRequirement => "meet_sender_requirement",
        }
    }

    /// Whether an open task of this type is work to do, counted in the domain's
    /// `open_tasks_count` and severity. Opportunities (BIMI) are offered, not owed.
    pub fn is_work(self) -> bool {
        !matches!(self, TaskType::SetUpBimi)
    }

    /// Whether the task is about a sender seen in aggregate reports (evidence from reports, not
    /// DNS).
    pub fn is_sender_task(self) -> bool {
        matches!(
            self,
            TaskType::ConfirmSource
                | TaskType::SourceFailingDkim
                | TaskType::SourceFailingSpf
                | TaskType::ReviewUnusedSender
                | TaskType::CleanupSenderRecords
                | TaskType::DkimSelectorNotImported
        )
    }
}

/// Task priority (SPEC §2.3): 0 critical, 1 high, 2 medium, 3 low.
pub mod priority {
    /// Mail is not protected or not monitored at all.
    pub const CRITICAL: u8 = 0;
    /// Something breaks authentication for some mail.
    pub const HIGH: u8 = 1;
    /// A weakness.
    pub const MEDIUM: u8 = 2;
    /// Hardening and opportunities.
    pub const LOW: u8 = 3;
}

/// Rollout positions (SPEC §2.3 `sequence`): lower first.
pub mod sequence {
    /// DMARC setup.
    pub const DMARC_SETUP: u8 = 10;
    /// Foundation records (SPF, MX, conflicts, lockdown).
    pub const FOUNDATION: u8 = 20;
    /// SPF/DKIM alignment.
    pub const ALIGNMENT: u8 = 30;
    /// Cleanup.
    pub const CLEANUP: u8 = 40;
    /// Enforcement.
    pub const ENFORCEMENT: u8 = 50;
    /// Hardening (MTA-STS, TLS-RPT, BIMI, certificates, TTLs).
    pub const HARDENING: u8 = 60;
}

/// Task status (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// To do.
    Open,
    /// Put aside until `snoozed_until`.
    Snoozed,
    /// Closed by the service: no longer applicable.
    Canceled,
    /// Closed by a person.
    Dismissed,
    /// A person says it is done; the service's check has not confirmed it yet.
    Pending,
    /// Resolved.
    Done,
}

impl TaskStatus {
    /// Every status.
    pub const ALL: [TaskStatus; 6] = [
        TaskStatus::Open,
        TaskStatus::Snoozed,
        TaskStatus::Canceled,
        TaskStatus::Dismissed,
        TaskStatus::Pending,
        TaskStatus::Done,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Open => "open",
            TaskStatus::Snoozed => "snoozed",
            TaskStatus::Canceled => "canceled",
            TaskStatus::Dismissed => "dismissed",
            TaskStatus::Pending => "pending",
            TaskStatus::Done => "done",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(raw: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// Still being worked on (open, snoozed or pending): the service keeps checking it.
    pub fn is_active(self) -> bool {
        matches!(
            self,
            TaskStatus::Open | TaskStatus::Snoozed | TaskStatus::Pending
        )
    }

    /// Counted as open work on the domain (`open_tasks_count`): open or pending (a person says
    /// it is fixed, the service has not seen it yet). Snoozed work is put aside.
    pub fn is_open_work(self) -> bool {
        matches!(self, TaskStatus::Open | TaskStatus::Pending)
    }
}

/// Why a task is done (SPEC §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ResolutionReason {
    /// The service's own check found the problem gone.
    Verified,
    /// A person or API caller marked it done with no check.
    Manual,
}

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: Uuid,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    #[serde(rename = "type")]
    pub task_type: TaskType,
    /// Which problem of its type the task is about (one task per problem): the type itself, or
    /// e.g. a conflict's label and kind.
    pub problem_key: String,
    pub status: TaskStatus,
    pub priority: u8,
    pub sequence: u8,
    pub description: String,
    /// What fixing it would add to the domain's score, as of the last evaluation.
    #[serde(default)]
    pub score_gain: u8,
    #[serde(default)]
    pub sending_domain: Option<String>,
    #[serde(default)]
    pub source_id: Option<Uuid>,
    #[serde(default)]
    pub source_alias: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub snoozed_until: Option<OffsetDateTime>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub marked_pending_at: Option<OffsetDateTime>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub resolved_at: Option<OffsetDateTime>,
    #[serde(default)]
    pub resolution_reason: Option<ResolutionReason>,
    /// When the task entered its current status (task events wait for it to hold).
    #[serde(with = "time::serde::rfc3339")]
    pub status_since: OffsetDateTime,
    /// Whether subscribers were told the task is open (`task.opened`/`task.reopened` emitted and
    /// not yet followed by a closing event): closing a task nobody heard of emits nothing.
    #[serde(default)]
    pub announced_open: bool,
    /// Whether `task.opened` was ever emitted (a later announcement is then `task.reopened`).
    #[serde(default)]
    pub ever_announced: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}
