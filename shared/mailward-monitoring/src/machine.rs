//! The `monitoring_status` state machine (SPEC §3) and the domain events it emits (SPEC §6.1).
//!
//! Why pure: the sweep must write a state change and its outbox events in one commit, and the
//! moves must be testable without DNS, storage or a clock. [`step`] takes the stored state, the
//! verdict, the freshly computed score and the time, and returns the next state, the events and
//! whether anything must be written.
//!
//! # Stated moves (SPEC §3), implemented as written
//!
//! | From | Verdict | To | Events |
//! |---|---|---|---|
//! | any | full monitoring, first time | setup | `domain.monitoring.activated`; `dmarc_verified_at` set |
//! | setup | records no longer resolve as expected | drifted | `domain.monitoring.drifted` |
//! | setup or pending | monitoring cannot be established or is lost | failed | `domain.monitoring.failed`; reason set |
//! | drifted or failed | full monitoring returns | setup | `domain.monitoring.recovered` |
//!
//! # Unstated moves: the choices and why
//!
//! 1. **`none` → `pending`** on the first evaluation that is not full monitoring, whatever the
//!    reason (even `nameservers_unresolvable`): a domain just added has had no chance to publish,
//!    and may not even be registered yet. `pending_since` is set then. With a zero grace window
//!    (`MAILWARD_PENDING_GRACE=0`, for tests and impatient operators) there is nothing to wait
//!    for: the first such evaluation fails the domain at once (`none` → `failed`).
//! 2. **`pending` → `failed` only after a grace window** ([`SweepRules::pending_grace`], 72 h by
//!    default) counted from the later of `created_at` and `pending_since`, so the grace is never
//!    shortened for a domain that sat in `none` (imported, or never swept). Within the window a
//!    pending domain stays pending, silently.
//! 3. **`setup` → `drifted` vs `setup` → `failed`** (see [`is_loss`]): drifted when a record
//!    still stands at `_dmarc.<domain>` but no longer matches (Mailward's `rua` removed, a TXT
//!    replacing the CNAME delegation, a record receivers cannot use): the customer edited
//!    something and reports may be flowing elsewhere. Failed when monitoring is lost entirely:
//!    record missing, several records (receivers apply no DMARC at all), only the parent has a
//!    record (the domain's own record is gone), name servers unresolvable. No grace applies to a
//!    set-up domain: it worked, so a definite breakage is news.
//! 4. **`drifted` + a loss** → `failed` (`domain.monitoring.failed`): the situation got worse;
//!    **`drifted` + another mismatch** stays drifted with the new reason and detail (only
//!    `domain.updated`). **`failed` + any reason** stays failed with the new reason and detail:
//!    `drifted` is defined for set-up domains, and moving a failed domain to drifted would report
//!    an improvement as a drift.
//! 5. **Indeterminate never changes anything visible**: not the status, reason, detail, policy
//!    or score (the score passed in was computed from the same failing DNS). It increments the
//!    hidden `consecutive_indeterminate` counter; [`Step::indeterminate_alert`] is true on the
//!    sweep where the streak reaches [`SweepRules::indeterminate_alert_after`] so the caller can
//!    log or open a task. A DNS timeout alone never flips a domain to failed or drifted, and a
//!    pending domain whose grace runs out during an outage fails on the next definite verdict.
//! 6. **Activation is tied to `dmarc_verified_at`**: `domain.monitoring.activated` fires exactly
//!    when `dmarc_verified_at` goes from null to set, which happens once and is never reset (no
//!    move clears it). So `pending` → `failed` → `setup` for a domain never set up before emits
//!    `activated`, not `recovered` ("returned to full monitoring" needs a previous setup).
//!    `recovered` fires for drifted/failed → setup of a domain verified before.
//! 7. **Reason and detail** are set in `drifted` and `failed` and cleared in every other status:
//!    SPEC ties the reason to failure; a pending domain is waiting, not failing (the records page
//!    says what to publish).
//! 8. **`dmarc_policy`** follows DNS on every definite verdict: the record's `p` under full
//!    monitoring, the policy in force (own or parent record) when not monitored, `none` when no
//!    record applies; a change emits `domain.policy_changed` with the old policy.
//! 9. **Score**: clamped to 0-100. A band crossing emits `domain.score_changed` with the previous
//!    score and band; any score change emits `domain.updated`.
//! 10. **`domain.updated`** fires whenever a visible field (status, reason, detail,
//!     `dmarc_verified_at`, `dmarc_policy`, score) changed; [`Step::changed`] is true whenever
//!     anything must be written, including the hidden `pending_since` and counter.

use crate::classify::Verdict;
use mailward_domain::domain::{FailureDetail, FailureReason, MonitoringStatus, Policy, ScoreBand};
use serde::{Deserialize, Serialize};
use time::{Duration, OffsetDateTime};

/// The part of a domain the sweep reads and writes; the caller copies it from and back into the
/// stored domain, so the machine never sees unrelated fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitoringState {
    /// `monitoring_status`.
    pub status: MonitoringStatus,
    /// `monitoring_failure_reason`.
    pub failure_reason: Option<FailureReason>,
    /// `monitoring_failure_detail`.
    pub failure_detail: Option<FailureDetail>,
    /// `dmarc_verified_at`: when the domain first reached `setup`; never reset.
    #[serde(with = "time::serde::rfc3339::option")]
    pub dmarc_verified_at: Option<OffsetDateTime>,
    /// `dmarc_policy`: the policy last observed in DNS.
    pub dmarc_policy: Policy,
    /// `score`, 0-100.
    pub score: u8,
    /// When the domain was added (the grace window counts from it at the earliest).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the domain entered `pending` (hidden; `None` outside `pending`).
    #[serde(with = "time::serde::rfc3339::option")]
    pub pending_since: Option<OffsetDateTime>,
    /// Indeterminate sweeps in a row (hidden; reset by any definite verdict).
    #[serde(default)]
    pub consecutive_indeterminate: u32,
}

impl MonitoringState {
    /// The state of a domain just added: `none`, no reason, no verification, policy `none`.
    pub fn new(created_at: OffsetDateTime, score: u8) -> Self {
        Self {
            status: MonitoringStatus::None,
            failure_reason: None,
            failure_detail: None,
            dmarc_verified_at: None,
            dmarc_policy: Policy::None,
            score: score.min(100),
            created_at,
            pending_since: None,
            consecutive_indeterminate: 0,
        }
    }
}

/// The sweep's tunables, so the local stack and tests can shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepRules {
    /// How long a pending domain may stay without full monitoring before it fails.
    pub pending_grace: Duration,
    /// Indeterminate sweeps in a row after which [`Step::indeterminate_alert`] is raised once.
    pub indeterminate_alert_after: u32,
}

impl Default for SweepRules {
    fn default() -> Self {
        Self {
            pending_grace: Duration::hours(72),
            indeterminate_alert_after: 3,
        }
    }
}

/// A domain event the sweep must write to the outbox (SPEC §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum MonitoringEvent {
    /// `domain.monitoring.activated`: full monitoring for the first time.
    Activated,
    /// `domain.monitoring.failed`: monitoring could not be established or was lost.
    Failed {
        /// The reason now on the domain.
        reason: FailureReason,
    },
    /// `domain.monitoring.drifted`: a set-up domain no longer resolves as expected.
    Drifted {
        /// The reason now on the domain.
        reason: FailureReason,
    },
    /// `domain.monitoring.recovered`: back to full monitoring after drift or failure.
    Recovered {
        /// The status left (drifted or failed).
        from: MonitoringStatus,
    },
    /// `domain.policy_changed`; `previous` goes into `data.previous_attributes.dmarc_policy`.
    PolicyChanged {
        /// The old policy.
        previous: Policy,
    },
    /// `domain.score_changed`: the band crossed; the previous score and band go into
    /// `data.previous_attributes`.
    ScoreBandChanged {
        /// The old score.
        previous_score: u8,
        /// The old band.
        previous_band: ScoreBand,
    },
    /// `domain.updated`: some visible field changed; `fields` names them (SPEC §2.1 names) so
    /// the caller can build `previous_attributes` from the previous state.
    Updated {
        /// Changed fields.
        fields: Vec<String>,
    },
}

impl MonitoringEvent {
    /// The catalogue name (`mailward_domain::events`).
    pub fn name(&self) -> &'static str {
        use mailward_domain::events::types;
        match self {
            MonitoringEvent::Activated => types::DOMAIN_MONITORING_ACTIVATED,
            MonitoringEvent::Failed { .. } => types::DOMAIN_MONITORING_FAILED,
            MonitoringEvent::Drifted { .. } => types::DOMAIN_MONITORING_DRIFTED,
            MonitoringEvent::Recovered { .. } => types::DOMAIN_MONITORING_RECOVERED,
            MonitoringEvent::PolicyChanged { .. } => types::DOMAIN_POLICY_CHANGED,
            MonitoringEvent::ScoreBandChanged { .. } => types::DOMAIN_SCORE_CHANGED,
            MonitoringEvent::Updated { .. } => types::DOMAIN_UPDATED,
        }
    }
}

/// The catalogue names of `events`, in order: what the caller writes as outbox event types.
pub fn events_to_names(events: &[MonitoringEvent]) -> Vec<&'static str> {
    events.iter().map(MonitoringEvent::name).collect()
}

/// The result of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The state to store.
    pub next: MonitoringState,
    /// The events to write in the same commit, specific ones first, `domain.updated` last.
    pub events: Vec<MonitoringEvent>,
    /// True when `next` differs from the previous state (hidden fields included): write it.
    pub changed: bool,
    /// True on the sweep where the indeterminate streak reaches the alert threshold.
    pub indeterminate_alert: bool,
}

/// True for the reasons that mean monitoring is lost entirely (a set-up domain goes to
/// `failed`), false for a record that still stands but no longer matches (`drifted`).
pub fn is_loss(reason: FailureReason) -> bool {
    match reason {
        FailureReason::NameserversUnresolvable
        | FailureReason::DmarcRecordMissing
        | FailureReason::DmarcMultipleRecords
        | FailureReason::DmarcRecordOnParentOnly => true,
        FailureReason::DmarcRecordAddedAsTxtNotCname
        | FailureReason::DmarcRecordMissingMailwardRua
        | FailureReason::DmarcRecordInvalid => false,
    }
}

/// One move of the machine; see the module docs for every rule.
pub fn step(
    previous: &MonitoringState,
    verdict: &Verdict,
    score: u8,
    now: OffsetDateTime,
    config: &SweepRules,
) -> Step {
    let mut next = previous.clone();
    let mut events = Vec::new();
    let mut indeterminate_alert = false;

    // No record of its own, parents unknown: not monitored, with the reason and policy already
    // known when a parent's record was seen before (so a failing parent lookup never flips it).
    let resolved;
    let verdict = match verdict {
        Verdict::NoOwnRecord { detail } => {
            let parent_known = previous.failure_reason
                == Some(FailureReason::DmarcRecordOnParentOnly)
                && matches!(
                    previous.status,
                    MonitoringStatus::Failed | MonitoringStatus::Drifted
                );
            resolved = if parent_known {
                Verdict::NotMonitored {
                    reason: FailureReason::DmarcRecordOnParentOnly,
                    detail: previous.failure_detail.clone().unwrap_or(detail.clone()),
                    policy: Some(previous.dmarc_policy),
                }
            } else {
                Verdict::NotMonitored {
                    reason: FailureReason::DmarcRecordMissing,
                    detail: detail.clone(),
                    policy: Some(previous.dmarc_policy),
                }
            };
            &resolved
        }
        other => other,
    };

    match verdict {
        Verdict::Indeterminate { .. } => {
            next.consecutive_indeterminate = previous.consecutive_indeterminate.saturating_add(1);
            indeterminate_alert =
                next.consecutive_indeterminate == config.indeterminate_alert_after;
            // Nothing visible changes, the score included.
            let changed = next != *previous;
            return Step {
                next,
                events,
                changed,
                indeterminate_alert,
            };
        }
        Verdict::FullMonitoring { policy } => {
            next.consecutive_indeterminate = 0;
            next.status = MonitoringStatus::Setup;
            next.failure_reason = None;
            next.failure_detail = None;
            next.pending_since = None;
            next.dmarc_policy = *policy;
            if previous.dmarc_verified_at.is_none() {
                next.dmarc_verified_at = Some(now);
                events.push(MonitoringEvent::Activated);
            } else if matches!(
                previous.status,
                MonitoringStatus::Drifted | MonitoringStatus::Failed
            ) {
                events.push(MonitoringEvent::Recovered {
                    from: previous.status,
                });
            }
        }
        // Resolved into `NotMonitored` above.
        Verdict::NoOwnRecord { .. } => {}
        Verdict::NotMonitored {
            reason,
            detail,
            policy,
        } => {
            next.consecutive_indeterminate = 0;
            next.dmarc_policy = policy.unwrap_or(Policy::None);
            let fail = |next: &mut MonitoringState| {
                next.status = MonitoringStatus::Failed;
                next.failure_reason = Some(*reason);
                next.failure_detail = Some(detail.clone());
                next.pending_since = None;
            };
            match previous.status {
                // Enters `pending` now; with no grace window at all (`pending_grace` zero) it
                // fails in the same step rather than a sweep period later.
                MonitoringStatus::None if config.pending_grace > Duration::ZERO => {
                    next.status = MonitoringStatus::Pending;
                    next.pending_since = Some(now);
                    next.failure_reason = None;
                    next.failure_detail = None;
                }
                MonitoringStatus::None => {
                    fail(&mut next);
                    events.push(MonitoringEvent::Failed { reason: *reason });
                }
                MonitoringStatus::Pending => {
                    let start = match previous.pending_since {
                        Some(since) if since > previous.created_at => since,
                        _ => previous.created_at,
                    };
                    let deadline = start.checked_add(config.pending_grace);
                    if deadline.is_some_and(|d| now >= d) {
                        fail(&mut next);
                        events.push(MonitoringEvent::Failed { reason: *reason });
                    } else {
                        next.failure_reason = None;
                        next.failure_detail = None;
                    }
                }
                MonitoringStatus::Setup => {
                    if is_loss(*reason) {
                        fail(&mut next);
                        events.push(MonitoringEvent::Failed { reason: *reason });
                    } else {
                        next.status = MonitoringStatus::Drifted;
                        next.failure_reason = Some(*reason);
                        next.failure_detail = Some(detail.clone());
                        events.push(MonitoringEvent::Drifted { reason: *reason });
                    }
                }
                MonitoringStatus::Drifted => {
                    if is_loss(*reason) {
                        fail(&mut next);
                        events.push(MonitoringEvent::Failed { reason: *reason });
                    } else {
                        next.failure_reason = Some(*reason);
                        next.failure_detail = Some(detail.clone());
                    }
                }
                MonitoringStatus::Failed => fail(&mut next),
            }
        }
    }

    if next.dmarc_policy != previous.dmarc_policy {
        events.push(MonitoringEvent::PolicyChanged {
            previous: previous.dmarc_policy,
        });
    }
    next.score = score.min(100);
    let previous_band = ScoreBand::of(previous.score);
    if ScoreBand::of(next.score) != previous_band {
        events.push(MonitoringEvent::ScoreBandChanged {
            previous_score: previous.score,
            previous_band,
        });
    }
    let fields = visible_changes(previous, &next);
    if !fields.is_empty() {
        events.push(MonitoringEvent::Updated { fields });
    }
    let changed = next != *previous;
    Step {
        next,
        events,
        changed,
        indeterminate_alert,
    }
}

/// SPEC §2.1 names of the visible fields that differ.
fn visible_changes(a: &MonitoringState, b: &MonitoringState) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |differs: bool, name: &str| {
        if differs {
            out.push(name.to_string());
        }
    };
    check(a.status != b.status, "monitoring_status");
    check(
        a.failure_reason != b.failure_reason,
        "monitoring_failure_reason",
    );
    check(
        a.failure_detail != b.failure_detail,
        "monitoring_failure_detail",
    );
    check(
        a.dmarc_verified_at != b.dmarc_verified_at,
        "dmarc_verified_at",
    );
    check(a.dmarc_policy != b.dmarc_policy, "dmarc_policy");
    check(a.score != b.score, "score");
    check(
        ScoreBand::of(a.score) != ScoreBand::of(b.score),
        "score_band",
    );
    out
}
