//! The four-stage rollout plan of a domain (SPEC §2.9): setup, alignment, enforcement,
//! monitoring. Built from the domain's tasks and observed policy; a step is listed while there
//! is work in it (`in_progress`: it has active tasks) or before it started (`upcoming`), and
//! leaves the plan when done; a stage is `completed` when none of its steps remain, the first
//! stage with steps left is `current`, later ones `pending`.

use crate::model::{Task, TaskStatus, TaskType, priority};
use mailward_audit::{Dimension, score};
use mailward_domain::domain::Policy;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A plan step (SPEC §2.9 PlanStep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanStep {
    /// Stable key, e.g. `dmarc-setup`.
    pub key: String,
    /// The task type that carries the step's work, when it has one.
    pub task_type: Option<TaskType>,
    pub title: String,
    pub description: String,
    /// 0 critical to 3 low: the most severe of its tasks, else the step's own.
    pub priority: u8,
    /// What completing it would add to the score.
    pub score_gain: u8,
    /// `in_progress` or `upcoming`.
    pub status: String,
    /// Its open and pending tasks (empty when upcoming).
    pub task_ids: Vec<Uuid>,
}

/// An optional step (SPEC §2.9 PlanOptionalStep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanOptionalStep {
    pub key: String,
    pub title: String,
    pub description: String,
    pub recommended: bool,
}

/// A plan stage (SPEC §2.9 PlanStage).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanStage {
    /// 1 to 4.
    pub number: u8,
    /// setup, alignment, enforcement or monitoring.
    pub key: String,
    pub title: String,
    pub description: String,
    /// completed, current or pending.
    pub status: String,
    pub steps: Vec<PlanStep>,
    pub optional_steps: Vec<PlanOptionalStep>,
}

/// What the plan is built from.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// The domain name.
    pub domain: &'a str,
    /// Parked domains have no steps.
    pub parked: bool,
    /// Whether the domain was evaluated at least once (before, every step is upcoming).
    pub evaluated: bool,
    /// Whether DMARC monitoring is set up (monitoring status `setup`).
    pub monitoring_set_up: bool,
    /// The DMARC policy observed in DNS.
    pub policy: Policy,
    /// Every task of the domain.
    pub tasks: &'a [Task],
    /// What the next policy up would stop of the last 30 days' reported mail, when reports
    /// exist (the enforcement impact).
    pub impact: Option<ImpactOutlook>,
}

/// The enforcement impact as the plan's enforcement stage reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImpactOutlook {
    /// The policy assessed (the next one up).
    pub policy: Policy,
    /// Messages of legitimate senders it would quarantine or reject.
    pub legitimate_affected: u64,
    /// Failing messages of everyone else (what enforcement is for).
    pub unknown_affected: u64,
}

impl ImpactOutlook {
    /// One sentence for the step moving to `policy`.
    fn sentence(&self) -> String {
        if self.legitimate_affected > 0 {
            format!(
                " Over the last 30 days it would stop {} messages of legitimate senders: fix their SPF or DKIM first.",
                self.legitimate_affected
            )
        } else {
            format!(
                " Over the last 30 days it would stop no legitimate mail ({} messages of unidentified sources).",
                self.unknown_affected
            )
        }
    }
}

/// The stages and the upcoming steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The current stage's number, or `None` when the journey ended (or the domain is parked and
    /// locked down).
    pub current_stage: Option<u8>,
    /// The four stages.
    pub stages: Vec<PlanStage>,
}

struct StepSpec {
    key: &'static str,
    types: &'static [TaskType],
    title: &'static str,
    description: &'static str,
    priority: u8,
}

const SETUP: &[StepSpec] = &[
    StepSpec {
        key: "dmarc-setup",
        types: &[TaskType::SetUpDmarcRecord, TaskType::UpdateDmarcRecord],
        title: "Publish DMARC with Mailward's report address",
        description: "A valid DMARC record at _dmarc with p=none and Mailward's rua, so aggregate reports show who sends as the domain.",
        priority: priority::CRITICAL,
    },
    StepSpec {
        key: "spf-setup",
        types: &[TaskType::SetUpSpfRecord],
        title: "Publish an SPF record",
        description: "One v=spf1 record naming the servers and services that send as the domain.",
        priority: priority::HIGH,
    },
    StepSpec {
        key: "mx-setup",
        types: &[TaskType::SetUpMxRecord],
        title: "Publish working MX records",
        description: "MX records naming the mail servers (or a null MX for a domain that receives no mail).",
        priority: priority::MEDIUM,
    },
    StepSpec {
        key: "dns-conflicts",
        types: &[TaskType::ResolveDnsConflict],
        title: "Resolve DNS conflicts",
        description: "Records that contradict each other or differ between name servers.",
        priority: priority::HIGH,
    },
];

const ALIGNMENT: &[StepSpec] = &[
    StepSpec {
        key: "senders-confirm",
        types: &[
            TaskType::ConfirmSource,
            TaskType::ReviewUnusedSender,
            TaskType::CleanupSenderRecords,
        ],
        title: "Confirm who sends as the domain",
        description: "Confirm or discard each sender seen in aggregate reports.",
        priority: priority::MEDIUM,
    },
    StepSpec {
        key: "alignment-spf",
        types: &[
            TaskType::ReduceSpfLookups,
            TaskType::CleanupSpfRecord,
            TaskType::SourceFailingSpf,
        ],
        title: "Align SPF",
        description: "An SPF record within the lookup limit that passes for every confirmed sender.",
        priority: priority::HIGH,
    },
    StepSpec {
        key: "alignment-dkim",
        types: &[
            TaskType::SourceFailingDkim,
            TaskType::DkimSelectorNotImported,
        ],
        title: "Align DKIM",
        description: "Every confirmed sender signs with a DKIM key published under the domain.",
        priority: priority::HIGH,
    },
];

const MONITORING: &[StepSpec] = &[
    StepSpec {
        key: "mta-sts",
        types: &[TaskType::SetUpMtaSts],
        title: "Enforce encrypted delivery with MTA-STS",
        description: "An MTA-STS policy covering every MX host.",
        priority: priority::LOW,
    },
    StepSpec {
        key: "tls-rpt",
        types: &[TaskType::SetUpTlsRpt],
        title: "Receive TLS reports",
        description: "A TLS-RPT record so failed encrypted deliveries are reported.",
        priority: priority::LOW,
    },
    StepSpec {
        key: "mx-certificates",
        types: &[TaskType::FixMxCertificate],
        title: "Keep MX certificates valid",
        description: "Valid TLS certificates on every MX host.",
        priority: priority::HIGH,
    },
    StepSpec {
        key: "ttl",
        types: &[TaskType::UpdateTtl],
        title: "Keep TTLs short",
        description: "Record TTLs of at most a day, so changes reach receivers in time.",
        priority: priority::LOW,
    },
];

fn in_progress(spec: &StepSpec, tasks: &[Task]) -> Option<PlanStep> {
    let active: Vec<&Task> = tasks
        .iter()
        .filter(|t| spec.types.contains(&t.task_type) && t.status.is_active())
        .collect();
    if active.is_empty() {
        return None;
    }
    Some(PlanStep {
        key: spec.key.to_owned(),
        task_type: active.first().map(|t| t.task_type),
        title: spec.title.to_owned(),
        description: spec.description.to_owned(),
        priority: active
            .iter()
            .map(|t| t.priority)
            .min()
            .unwrap_or(spec.priority),
        score_gain: active
            .iter()
            .map(|t| u32::from(t.score_gain))
            .sum::<u32>()
            .min(100) as u8,
        status: "in_progress".into(),
        task_ids: active
            .iter()
            .filter(|t| t.status.is_open_work())
            .map(|t| t.id)
            .collect(),
    })
}

fn upcoming(spec: &StepSpec, score_gain: u8) -> PlanStep {
    PlanStep {
        key: spec.key.to_owned(),
        task_type: spec.types.first().copied(),
        title: spec.title.to_owned(),
        description: spec.description.to_owned(),
        priority: spec.priority,
        score_gain,
        status: "upcoming".into(),
        task_ids: Vec::new(),
    }
}

/// Score points a DMARC policy code costs (what moving past it gains).
fn dmarc_points(code: &str) -> u8 {
    u8::try_from(score::points(Dimension::Dmarc, code, false, true).clamp(0, 100)).unwrap_or(0)
}

fn stage_steps(specs: &[StepSpec], input: &PlanInput<'_>) -> Vec<PlanStep> {
    specs
        .iter()
        .filter_map(|spec| {
            in_progress(spec, input.tasks).or_else(|| (!input.evaluated).then(|| upcoming(spec, 0)))
        })
        .collect()
}

/// Builds the plan.
pub fn build(input: &PlanInput<'_>) -> Plan {
    let mut stages = vec![
        PlanStage {
            number: 1,
            key: "setup".into(),
            title: "Set up monitoring".into(),
            description: "Publish the records that let Mailward see every sender of the domain."
                .into(),
            status: String::new(),
            steps: Vec::new(),
            optional_steps: Vec::new(),
        },
        PlanStage {
            number: 2,
            key: "alignment".into(),
            title: "Align senders".into(),
            description: "Make every legitimate sender pass SPF or DKIM aligned with the domain."
                .into(),
            status: String::new(),
            steps: Vec::new(),
            optional_steps: Vec::new(),
        },
        PlanStage {
            number: 3,
            key: "enforcement".into(),
            title: "Enforce DMARC".into(),
            description:
                "Move the policy to quarantine, then to reject, once legitimate mail passes.".into(),
            status: String::new(),
            steps: Vec::new(),
            optional_steps: Vec::new(),
        },
        PlanStage {
            number: 4,
            key: "monitoring".into(),
            title: "Harden and keep watching".into(),
            description: "Protect inbound mail in transit and keep the set-up from drifting."
                .into(),
            status: String::new(),
            steps: Vec::new(),
            optional_steps: Vec::new(),
        },
    ];
    if input.parked {
        let locked = !input
            .tasks
            .iter()
            .any(|t| t.task_type == TaskType::LockdownDomain && t.status.is_active());
        for stage in &mut stages {
            stage.status = match (locked, stage.number) {
                (true, _) => "completed",
                (false, 1) => "current",
                (false, _) => "pending",
            }
            .into();
        }
        return Plan {
            current_stage: (!locked).then_some(1),
            stages,
        };
    }
    // Setup: DMARC is done only once monitoring is actually set up.
    let mut setup = stage_steps(SETUP, input);
    if input.evaluated && !input.monitoring_set_up && !setup.iter().any(|s| s.key == "dmarc-setup")
    {
        setup.insert(0, upcoming(&SETUP[0], 0));
    }
    stages[0].steps = setup;
    stages[1].steps = stage_steps(ALIGNMENT, input);
    // Enforcement: steps follow the observed policy.
    let mut enforcement = Vec::new();
    if input.policy == Policy::None {
        enforcement.push(PlanStep {
            key: "dmarc-quarantine".into(),
            task_type: Some(TaskType::UpdateDmarcRecord),
            title: "Move DMARC to quarantine".into(),
            description: format!(
                "Publish p=quarantine once the reports show every legitimate sender passing.{}",
                input
                    .impact
                    .filter(|i| i.policy == Policy::Quarantine)
                    .map(|i| i.sentence())
                    .unwrap_or_default()
            ),
            priority: priority::MEDIUM,
            score_gain: dmarc_points("policy_none")
                .saturating_sub(dmarc_points("policy_quarantine")),
            status: "upcoming".into(),
            task_ids: Vec::new(),
        });
    }
    if input.policy != Policy::Reject {
        enforcement.push(PlanStep {
            key: "dmarc-reject-full".into(),
            task_type: Some(TaskType::UpdateDmarcRecord),
            title: "Move DMARC to reject".into(),
            description: format!(
                "Publish p=reject for all mail, so forged mail is refused.{}",
                input
                    .impact
                    .filter(|i| i.policy == Policy::Reject)
                    .map(|i| i.sentence())
                    .unwrap_or_default()
            ),
            priority: priority::MEDIUM,
            score_gain: dmarc_points("policy_quarantine"),
            status: "upcoming".into(),
            task_ids: Vec::new(),
        });
    }
    stages[2].steps = enforcement;
    stages[3].steps = stage_steps(MONITORING, input);
    let enforced = input.policy != Policy::None;
    let bimi_open = input
        .tasks
        .iter()
        .any(|t| t.task_type == TaskType::SetUpBimi && t.status == TaskStatus::Open);
    stages[3].optional_steps.push(PlanOptionalStep {
        key: "bimi".into(),
        title: "Show the brand logo with BIMI".into(),
        description: format!(
            "A BIMI record at default._bimi.{} with an SVG Tiny PS logo (and a mark certificate for Gmail), once DMARC is enforced.",
            input.domain
        ),
        recommended: enforced && bimi_open,
    });
    let mut current = None;
    for stage in &mut stages {
        stage.status = if !stage.steps.is_empty() && current.is_none() {
            current = Some(stage.number);
            "current".into()
        } else if stage.steps.is_empty() && current.is_none() {
            "completed".into()
        } else {
            "pending".into()
        };
    }
    Plan {
        current_stage: current,
        stages,
    }
}

/// The steps still to start, across stages (SPEC §2.9 `upcoming_steps`); empty for a parked
/// domain or when proposals are off.
pub fn upcoming_steps(plan: &Plan, parked: bool, proposals_enabled: bool) -> Vec<PlanStep> {
    if parked || !proposals_enabled {
        return Vec::new();
    }
    plan.stages
        .iter()
        .flat_map(|s| s.steps.iter())
        .filter(|s| s.status == "upcoming")
        .cloned()
        .collect()
}

/// One finding of the onboarding scan (SPEC §2.9 `scan_findings.items`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanFindingItem {
    /// Stable within the domain (derived from the finding's key).
    pub id: Uuid,
    pub title: String,
    /// What the scan saw.
    pub detail: String,
    /// The problem's key (its task type, or type and subject).
    pub code: String,
    /// open, verifying, snoozed, ticket_completed, upcoming, waiting, optional or review.
    pub status: String,
    /// What to do about it.
    pub guidance: String,
    /// The tasks about it, with their status.
    pub tasks: Vec<ScanFindingTask>,
    pub task_types: Vec<TaskType>,
}

/// A task linked to a scan finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScanFindingTask {
    pub id: Uuid,
    pub status: TaskStatus,
}

/// The status of a scan finding given the tasks about its problem now.
fn finding_status(problem: &crate::problems::Problem, tasks: &[&Task]) -> &'static str {
    if problem.task_type == TaskType::SetUpBimi {
        return "optional";
    }
    if problem.task_type.is_sender_task() {
        return "review";
    }
    let Some(task) = tasks.first() else {
        return "upcoming";
    };
    match task.status {
        TaskStatus::Open => "open",
        TaskStatus::Pending => "verifying",
        TaskStatus::Snoozed => "snoozed",
        TaskStatus::Done => "ticket_completed",
        TaskStatus::Canceled | TaskStatus::Dismissed => "waiting",
    }
}

/// The findings of a saved onboarding scan (its problems, derived as the sweep would), each
/// linked to today's tasks about the same problem.
pub fn scan_findings(
    domain_id: Uuid,
    scan_problems: &[crate::problems::Problem],
    tasks: &[Task],
) -> Vec<ScanFindingItem> {
    scan_problems
        .iter()
        .map(|problem| {
            let related: Vec<&Task> = tasks
                .iter()
                .filter(|t| t.task_type == problem.task_type && t.problem_key == problem.key)
                .collect();
            ScanFindingItem {
                id: Uuid::new_v5(&domain_id, problem.key.as_bytes()),
                title: title_of(problem.task_type).to_owned(),
                detail: problem.description.clone(),
                code: problem.key.clone(),
                status: finding_status(problem, &related).to_owned(),
                guidance: crate::instructions::guidance(problem.task_type).to_owned(),
                tasks: related
                    .iter()
                    .map(|t| ScanFindingTask {
                        id: t.id,
                        status: t.status,
                    })
                    .collect(),
                task_types: vec![problem.task_type],
            }
        })
        .collect()
}

/// A short title for a task type.
pub fn title_of(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::CleanupSpfRecord => "Clean up the SPF record",
        TaskType::ConfirmSource => "Confirm a sender",
        TaskType::LockdownDomain => "Lock the domain down",
        TaskType::ReduceSpfLookups => "Reduce SPF lookups",
        TaskType::SetUpDmarcRecord => "Publish a DMARC record",
        TaskType::SourceFailingDkim => "Fix a sender's DKIM",
        TaskType::SourceFailingSpf => "Fix a sender's SPF",
        TaskType::SetUpMxRecord => "Publish MX records",
        TaskType::SetUpSpfRecord => "Publish an SPF record",
        TaskType::UpdateDmarcRecord => "Fix the DMARC record",
        TaskType::UpdateTtl => "Lower record TTLs",
        TaskType::SetUpMtaSts => "Set up MTA-STS",
        TaskType::SetUpTlsRpt => "Set up TLS-RPT",
        TaskType::ResolveDnsConflict => "Resolve a DNS conflict",
        TaskType::ReviewUnusedSender => "Review an unused sender",
        TaskType::CleanupSenderRecords => "Remove records of unused senders",
        TaskType::FixMxCertificate => "Fix an MX certificate",
        TaskType::RenewVmcCertificate => "Renew the BIMI certificate",
        TaskType::DkimSelectorNotImported => "Import a DKIM selector",
        TaskType::SetUpBimi => "Show the logo with BIMI",
        TaskType::MeetSenderRequirement => "Meet a mailbox provider's sender requirement",
    }
}
