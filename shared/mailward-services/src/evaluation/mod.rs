//! One domain's evaluation: the sweep's unit of work (SPEC §3), as named steps.
//!
//! 1. [`claim`]: a version-checked write of `sweep_claimed_until`, so two workers never evaluate
//!    one domain at once (a deleted or claimed domain ends the pass here);
//! 2. [`observe`]: everything read from the world, nothing written: the DMARC observation and
//!    its verdict (uncached DNS), the audit for the score with the DKIM selectors remembered,
//!    DNS conflicts when the pass's DNS was conclusive, the certificates due a check, and from
//!    the store the senders, the open tasks and the latest snapshots;
//! 3. [`reconcile`]: the records Mailward serves for the domain that the pass keeps right
//!    (hosted DMARC's delegation state, the report authorization);
//! 4. [`derive`]: pure: the state machine's move, the domain's next fields, the merged conflicts,
//!    the task writes and the snapshots to record: tested without storage;
//! 5. [`commit`]: one transaction with the outbox events and activity entries, then what
//!    follows it (task-event checks, the report window's slide);
//! 6. [`registrar`]: when due, the registrar from RDAP, a bounded lookup and a write of its
//!    own after the commit, so the pass never waits on a registry to be stored.
//!
//! [`plan`] is what an evaluation is made of for the records guidance and the change preview
//! too: the plan's context, the planned records, the resolver that notes TTLs.

pub mod claim;
pub mod commit;
pub mod derive;
pub mod observe;
pub mod plan;
pub mod reconcile;
pub mod registrar;

use crate::state::AppState;
pub use mailward_app::jobs::{SWEEP_BATCH, SweepBatch};
use mailward_domain::domain::MonitoringStatus;
pub use plan::{TtlRecorder, dkim_from_audit, plan_context, planned_records};
use uuid::Uuid;

/// Domains per batch message.
pub const BATCH_SIZE: usize = 25;

/// How long a claim protects a domain from a second worker.
pub const CLAIM_SECS: i64 = 300;

/// Queues an evaluation of these domains now (a sweep batch on the jobs queue), so a domain
/// just added shows its real status and score within seconds instead of after the next sweep
/// period. Best effort: when the queue is unavailable the periodic sweep still picks the
/// domains up (they are due at once), so a failure is logged, not returned.
pub async fn evaluate_soon(state: &AppState, domains: &[(Uuid, Uuid)]) {
    if !state.config.evaluate_new_domains {
        return;
    }
    for chunk in domains.chunks(BATCH_SIZE) {
        let batch = SweepBatch {
            domains: chunk.to_vec(),
        };
        let sent = crate::job::enqueue(state, &batch, 0).await;
        if let Err(error) = sent {
            tracing::warn!(domains = chunk.len(), %error, "could not queue the evaluation of new domains; the next sweep will evaluate them");
        }
    }
}

/// What became of one domain in a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swept {
    /// Evaluated and stored; its monitoring status after the pass.
    Evaluated(MonitoringStatus),
    /// Another worker holds the domain's claim until this instant: not evaluated by this one.
    Busy(time::OffsetDateTime),
    /// Evaluated, but the domain changed meanwhile (a person's edit): the next pass evaluates it
    /// again.
    Superseded,
    /// Deleted before it could be evaluated.
    Gone,
}

/// Evaluates one domain end to end: claim, observe, reconcile, derive, commit, then the
/// registrar when due.
pub async fn evaluate(state: &AppState, org: Uuid, id: Uuid) -> anyhow::Result<Swept> {
    let now = state.clock.now();
    let claimed = match claim::claim(state, org, id, now).await? {
        Ok(claimed) => claimed,
        Err(swept) => return Ok(swept),
    };
    let observed = observe::observe(state, &claimed.domain, now).await?;
    let hosted = reconcile::reconcile(state, &claimed.domain, &observed, now).await;
    let derived = derive::derive(&state.config, &claimed.domain, &observed, &hosted, now)?;
    let swept = commit::commit(state, &claimed, &derived, now).await?;
    commit::after(state, &claimed.domain, &derived, now).await;
    let organizational = observed
        .audit
        .as_ref()
        .and_then(|a| a.dmarc.as_ref())
        .and_then(|d| d.organizational_domain.as_deref());
    registrar::refresh(state, &claimed.domain, organizational, now).await;
    Ok(swept)
}
