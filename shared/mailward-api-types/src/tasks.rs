//! Remediation tasks (SPEC §2.3, §4.3), the rollout plan (SPEC §2.9) and the change preview.

use crate::common::{Order, PageInfo};
use mailward_tasks::instructions::Instructions;
use mailward_tasks::plan::{PlanStage, PlanStep, ScanFindingItem};
use mailward_tasks::{ResolutionReason, TaskStatus, TaskType};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// The domain of a task (with `expand[]=domain`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TaskDomain {
    pub id: Uuid,
    pub url: String,
    /// none, quarantine or reject (observed).
    pub dmarc_policy: String,
    /// 0-100.
    pub score: u8,
}

/// The sender of a sender task (with `expand[]=source`): the catalogue source's SPEC §2.3
/// fields.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TaskSource {
    pub id: Uuid,
    pub name: String,
    pub homepage: Option<String>,
    /// Setup pages: `spf`, `dkim`, `combined` (each nullable).
    pub documentation: mailward_domain::sources::Documentation,
    pub category: String,
    pub forwarding_type: mailward_domain::sources::ForwardingType,
    pub spf_support: mailward_domain::sources::SupportLevel,
    pub spf_supported_methods: Vec<mailward_domain::sources::SpfMethod>,
    pub spf_support_options: mailward_domain::sources::SpfSupportOptions,
    pub dkim_support: mailward_domain::sources::SupportLevel,
    pub dkim_discovery_selectors: Vec<String>,
}

impl TaskSource {
    /// The view of a catalogue source.
    pub fn of(s: &mailward_domain::sources::Source) -> Self {
        Self {
            id: s.id,
            name: s.name.clone(),
            homepage: s.homepage.clone(),
            documentation: s.documentation.clone(),
            category: s.category.as_str().to_owned(),
            forwarding_type: s.forwarding_type,
            spf_support: s.spf_support,
            spf_supported_methods: s.spf_supported_methods.clone(),
            spf_support_options: s.spf_support_options.clone(),
            dkim_support: s.dkim_support,
            dkim_discovery_selectors: s.dkim_discovery_selectors.clone(),
        }
    }
}

/// A task (SPEC §2.3).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Task {
    pub id: Uuid,
    pub domain_id: Uuid,
    /// Only with `expand[]=domain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<TaskDomain>,
    /// What fixing it would add to the domain's score (0 for types the score does not
    /// measure); only with `expand[]=domain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_gain: Option<u8>,
    pub sending_domain: Option<String>,
    pub source_id: Option<Uuid>,
    /// Only with `expand[]=source` (null when the task is not about a sender).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Option<TaskSource>>,
    /// Only with `expand[]=instructions` on `GET /tasks/{id}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Instructions>,
    pub source_alias: Option<String>,
    /// 0 critical, 1 high, 2 medium, 3 low.
    pub priority: u8,
    /// Rollout position: 10 DMARC setup, 20 foundation, 30 alignment, 40 cleanup, 50
    /// enforcement, 60 hardening.
    pub sequence: u8,
    pub status: TaskStatus,
    #[serde(rename = "type")]
    pub task_type: TaskType,
    /// One sentence: which record, what is wrong, what to publish.
    pub description: String,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub snoozed_until: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub marked_pending_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub resolved_at: Option<OffsetDateTime>,
    pub resolution_reason: Option<ResolutionReason>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&mailward_tasks::Task> for Task {
    fn from(t: &mailward_tasks::Task) -> Self {
        Self {
            id: t.id,
            domain_id: t.domain_id,
            domain: None,
            score_gain: None,
            sending_domain: t.sending_domain.clone(),
            source_id: t.source_id,
            source: None,
            instructions: None,
            source_alias: t.source_alias.clone(),
            priority: t.priority,
            sequence: t.sequence,
            status: t.status,
            task_type: t.task_type,
            description: t.description.clone(),
            snoozed_until: t.snoozed_until,
            marked_pending_at: t.marked_pending_at,
            resolved_at: t.resolved_at,
            resolution_reason: t.resolution_reason,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

/// A page of tasks.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TaskList {
    pub data: Vec<Task>,
    pub page_info: PageInfo,
}

/// `GET /tasks` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListTasksParams {
    /// Statuses to list, comma-separated (open, snoozed, canceled, dismissed, pending, done);
    /// default `open,pending`.
    #[param(
        pattern = r"^\s*((open|snoozed|canceled|dismissed|pending|done)\s*(,\s*(open|snoozed|canceled|dismissed|pending|done)\s*)*)?$"
    )]
    pub statuses: Option<String>,
    /// Only the tasks of this domain.
    pub domain_id: Option<Uuid>,
    /// created_at, priority (default), resolved_at, sequence or status.
    #[param(value_type = Option<TaskSort>, inline)]
    pub sort: Option<String>,
    /// asc or desc; default asc for priority, sequence and status (most severe, earliest in
    /// the rollout, pending first), desc for created_at and resolved_at (newest first).
    #[param(value_type = Option<Order>, inline)]
    pub order: Option<String>,
    /// domain and/or source.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<TaskListExpand>, inline)]
    pub expand: Vec<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// `sort` of `GET /tasks`.
    pub TaskSort = mailward_tasks::sort::SORT_KEYS
);
crate::words!(
    /// `expand[]` of `GET /tasks`.
    pub TaskListExpand = ["domain", "source"]
);
crate::words!(
    /// `expand[]` of `GET /tasks/{id}`.
    pub TaskExpand = ["domain", "instructions", "source"]
);

/// `GET /tasks/{id}` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskExpandParams {
    /// domain, instructions and/or source.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]", value_type = Vec<TaskExpand>, inline)]
    pub expand: Vec<String>,
}

/// `POST /tasks/{id}` body: any subset.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTaskRequest {
    /// The new status.
    pub status: Option<TaskStatus>,
    /// With status `snoozed`: when the task wakes (in the future, at most 90 days ahead;
    /// default 7 days from now).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub snoozed_until: Option<OffsetDateTime>,
    /// confirm_source tasks only: stop counting the sender against SPF.
    pub ignore_spf: Option<bool>,
    /// confirm_source tasks only: stop counting the sender against DKIM.
    pub ignore_dkim: Option<bool>,
    /// confirm_source tasks only: confirm the sender.
    pub confirm_source: Option<bool>,
    /// confirm_source tasks only: the sender is in use.
    pub confirm_source_in_use: Option<bool>,
}

/// The saved onboarding scan (SPEC §2.9 `scan_findings`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ScanFindings {
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub scanned_at: OffsetDateTime,
    pub items: Vec<ScanFindingItem>,
}

/// A domain's rollout plan (SPEC §2.9).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DomainPlan {
    pub domain_id: Uuid,
    pub domain: String,
    pub is_parked: bool,
    /// False means the plan is not being worked: `upcoming_steps` is then empty.
    pub agent_proposals_enabled: bool,
    /// 1-4, or null when the journey ended (or a parked domain is locked down).
    pub current_stage: Option<u8>,
    /// The four stages: setup, alignment, enforcement, monitoring.
    pub stages: Vec<PlanStage>,
    /// Steps not started yet, across stages.
    pub upcoming_steps: Vec<PlanStep>,
    /// The onboarding scan the domain was added with (`use_stored_scan`), or null.
    pub scan_findings: Option<ScanFindings>,
}

/// A proposed DKIM key.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DkimProposal {
    /// The selector (`<selector>._domainkey.<domain>`): DNS labels of letters, digits,
    /// hyphens and underscores.
    #[schema(
        pattern = r"^\s*[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\s*$"
    )]
    pub selector: String,
    /// The TXT value (`v=DKIM1; k=...; p=...`).
    #[schema(value_type = RecordText)]
    pub value: String,
}

/// `POST /domains/{id}/preview` body: proposed record values; each replaces what DNS serves for
/// its purpose, the rest is read from live DNS.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    /// The DMARC TXT value for `_dmarc.<domain>`.
    #[schema(value_type = Option<RecordText>)]
    pub dmarc: Option<String>,
    /// The SPF TXT value for the domain (replaces every `v=spf1` record there).
    #[schema(value_type = Option<RecordText>)]
    pub spf: Option<String>,
    /// DKIM keys (at most 10).
    #[serde(default)]
    #[schema(max_items = 10)]
    pub dkim: Vec<DkimProposal>,
    /// The MTA-STS TXT value for `_mta-sts.<domain>`.
    #[schema(value_type = Option<RecordText>)]
    pub mta_sts: Option<String>,
    /// The TLS-RPT TXT value for `_smtp._tls.<domain>`.
    #[schema(value_type = Option<RecordText>)]
    pub tls_rpt: Option<String>,
    /// The BIMI TXT value for `default._bimi.<domain>`.
    #[schema(value_type = Option<RecordText>)]
    pub bimi: Option<String>,
}

crate::schema_type!(
    /// A proposed record's text: 1 to 4080 bytes without control characters, surrounding
    /// spaces trimmed (whether receivers could use it is in the answer's findings).
    pub RecordText = crate::constraints::text(1, 4080)
);
crate::schema_type!(
    /// The body of `POST /domains/{id}/preview`: at least one record proposed (a value for
    /// dmarc, spf, mta_sts, tls_rpt or bimi, or a DKIM key); 400 naming `dmarc` otherwise.
    pub PreviewBody = crate::constraints::refined("PreviewRequest", {
        let text = || utoipa::openapi::Ref::from_schema_name("RecordText");
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(crate::constraints::carries("dmarc", text(), &[]))
            .item(crate::constraints::carries("spf", text(), &[]))
            .item(crate::constraints::carries("mta_sts", text(), &[]))
            .item(crate::constraints::carries("tls_rpt", text(), &[]))
            .item(crate::constraints::carries("bimi", text(), &[]))
            .item(crate::constraints::carries(
                "dkim",
                utoipa::openapi::schema::ArrayBuilder::new()
                    .items(utoipa::openapi::Ref::from_schema_name("DkimProposal"))
                    .min_items(Some(1)),
                &[],
            ))
    });
    uses PreviewRequest
);

/// What a proposed record's own parser says of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProposedRecordFinding {
    /// dmarc, spf, dkim, mta_sts, tls_rpt or bimi.
    pub record: String,
    /// Where it would be published.
    pub host: String,
    /// Whether receivers could use it.
    pub valid: bool,
    /// The parser's findings (errors and warnings), for a person.
    pub messages: Vec<String>,
}

/// A score and its band.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PreviewScore {
    /// 0-100.
    pub score: u8,
    /// critical, bad, good or great.
    pub score_band: String,
}

/// A task the change would close or open.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PreviewTask {
    /// The existing task (closing), or null (opening).
    pub task_id: Option<Uuid>,
    #[serde(rename = "type")]
    pub task_type: TaskType,
    pub priority: u8,
    pub description: String,
}

/// The verdict of each dimension.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PreviewVerdicts {
    pub mx: mailward_audit::Verdict,
    pub spf: mailward_audit::Verdict,
    pub dkim: mailward_audit::Verdict,
    pub dmarc: mailward_audit::Verdict,
    pub bimi: mailward_audit::Verdict,
    pub mta_sts: mailward_audit::Verdict,
    pub tls_rpt: mailward_audit::Verdict,
}

/// `POST /domains/{id}/preview` answer: the domain as it would be with the proposed records.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PreviewResponse {
    /// The domain's score now.
    pub current: PreviewScore,
    /// The score with the proposed records.
    pub proposed: PreviewScore,
    /// Each dimension's verdict with the proposed records.
    pub verdicts: PreviewVerdicts,
    /// The SPF record's whole tree with the proposed records: lookup count, limit, tree and
    /// problems, as `GET /domains/{id}/spf` gives them.
    pub spf: mailward_spf::SpfAudit,
    /// Open tasks the change would resolve.
    pub tasks_closing: Vec<PreviewTask>,
    /// Tasks the change would open.
    pub tasks_opening: Vec<PreviewTask>,
    /// The records guidance's warnings with the proposed records.
    pub warnings: Vec<mailward_plan::Warning>,
    /// What each proposed record's parser says.
    pub records: Vec<ProposedRecordFinding>,
    /// When the proposed DMARC record enforces (p=quarantine or p=reject): what that policy
    /// would quarantine or reject of the last 30 days' mail, as
    /// `GET /domains/{id}/reports/enforcement-impact` gives it; null otherwise.
    pub enforcement_impact: Option<crate::reports::EnforcementImpact>,
}
