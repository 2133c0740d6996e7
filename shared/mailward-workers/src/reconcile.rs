//! The hourly reconciliation of hosted records (SPEC §3: "managed record error | hourly
//! reconciliation | record works again | ready"), run by its own EventBridge schedule, the
//! local stack's hourly interval, or `mailward reconcile`. Its coordinator also queues the
//! scheduled reports that are due.
//!
//! Every domain with something hosted is re-checked and repaired: hosted DMARC (the record
//! republished when stale, the delegation read again), DKIM keys, hosted SPF (re-flattened, with
//! the senders' range changes), MTA-STS (MX changes followed, retired policies withdrawn) and
//! BIMI (the record, the CNAME, the certificate's expiry), each emitting
//! `domain.hosted_record.ready|error` when its state moves. Like the sweep, the coordinator
//! only enqueues batches on the jobs queue; the queue worker runs them.

use futures::StreamExt as _;
pub use mailward_app::jobs::{RECONCILE_BATCH, ReconcileBatch};
use mailward_services::state::AppState;
use mailward_store::{domains, keys};
use uuid::Uuid;

/// How often the schedule runs.
pub const PERIOD_SECS: u64 = 3600;
/// Domains per batch.
const BATCH_SIZE: usize = 25;
/// Domains reconciled at once within a batch.
const CONCURRENCY: usize = 4;
/// A "now" beyond every next-check time: the sweep index then lists every domain.
const EVERY_DOMAIN: i64 = 999_999_999_999;

/// Every domain of every organization.
async fn every_domain(state: &AppState) -> anyhow::Result<Vec<(Uuid, Uuid)>> {
    let mut all = Vec::new();
    for shard in 0..keys::SWEEP_SHARDS {
        let mut cursor = None;
        loop {
            let (page, next) =
                domains::due(state.store.as_ref(), shard, EVERY_DOMAIN, 100, cursor).await?;
            all.extend(page);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    Ok(all)
}

/// Enqueues every domain in batches (the schedule's entry).
pub async fn coordinate(state: &AppState) -> anyhow::Result<usize> {
    let all = every_domain(state).await?;
    let _now = state.clock.unix();
    for chunk in all.chunks(BATCH_SIZE) {
        let batch = ReconcileBatch {
            domains: chunk.to_vec(),
        };
        mailward_services::job::enqueue(state, &batch, 0).await?;
    }
    tracing::info!(reconcile.domains = all.len(), "reconciliation coordinated");
    // The same hourly schedule sends the scheduled reports that are due.
    let reports = crate::scheduled_reports::queue_due(state).await?;
    tracing::info!(reports, "scheduled reports due queued");
    Ok(all.len())
}

/// Reconciles every domain inline (`mailward reconcile`, tests); the number of domains.
pub async fn reconcile_now(state: &AppState) -> anyhow::Result<usize> {
    let all = every_domain(state).await?;
    let count = all.len();
    run_batch(state, ReconcileBatch { domains: all }).await?;
    Ok(count)
}

/// Runs one batch.
pub async fn run_batch(state: &AppState, batch: ReconcileBatch) -> anyhow::Result<()> {
    let results: Vec<anyhow::Result<()>> = futures::stream::iter(batch.domains)
        .map(|(org, id)| async move { reconcile_domain(state, org, id).await })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect()
}

/// Re-checks and repairs what one domain hosts.
pub async fn reconcile_domain(state: &AppState, org: Uuid, id: Uuid) -> anyhow::Result<()> {
    let Some(current) = domains::get(state.store.as_ref(), org, id).await? else {
        return Ok(()); // deleted meanwhile
    };
    let domain = current.value;
    let now = state.clock.now();
    mailward_services::domains::hosting::dmarc::reconcile_dmarc_alone(state, &domain, now).await;
    mailward_services::domains::hosting::dkim_keys::reconcile(state, &domain, now).await;
    mailward_services::domains::hosting::spf::reconcile(state, &domain, now).await;
    mailward_services::domains::hosting::mta_sts::reconcile(state, &domain, now).await;
    mailward_services::domains::hosting::bimi::reconcile(state, &domain, now).await;
    // The hosted records' states (and the policy host's certificate) as just reconciled.
    let trigger = mailward_domain::alerts::Trigger::Reconcile;
    if let Err(e) = mailward_services::alerts::evaluate(state, org, id, trigger).await {
        tracing::warn!(domain.id = %id, error = %e, "alert rules could not be evaluated");
    }
    Ok(())
}
