//! The monitoring sweep's coordination (SPEC §3, §6.5): which domains are due, in batches on the
//! jobs queue ([`coordinate`], run by the schedule), each batch's domains evaluated a few at a
//! time ([`run_batch`], the job), and a whole sweep run by hand ([`sweep_by_hand`]:
//! `mailward sweep`, the tests). One domain's evaluation is the operation
//! `mailward_services::evaluation::evaluate`.

use futures::StreamExt as _;
use mailward_app::AppState;
pub use mailward_app::jobs::SweepBatch;
use mailward_domain::domain::MonitoringStatus;
use mailward_services::evaluation::{BATCH_SIZE, Swept, evaluate as sweep_domain};
use mailward_store::{domains, keys};
use uuid::Uuid;

/// Domains of one batch evaluated at once (each makes tens of DNS queries).
pub const BATCH_CONCURRENCY: usize = 8;

/// Batches [`sweep_now`] runs at once (as a pool of queue workers would).
pub const PARALLEL_BATCHES: usize = 10;

/// Write units a second the sweep may spend on one organization's partition key: half of
/// DynamoDB's 1,000 per key, the rest left to people's changes and report imports. Every
/// evaluation writes the domain's item there (its claim, then its commit), and a first
/// evaluation also opens the domain's tasks with their activity entries.
pub const ORG_UNITS_PER_SECOND: u32 = 500;

/// Write units one evaluation costs the organization's key (measured with
/// `tests/api/api/write_load.rs`, which fails if either grows past these; 4 and 30 measured):
/// a steady one rewrites the domain item twice (claim and commit, about 2 KB each), a first
/// one also opens its tasks with their activity entries and rewrites the domain's list card
/// (status, score and policy change).
pub const STEADY_UNITS: u32 = 5;
/// See [`STEADY_UNITS`].
pub const FIRST_UNITS: u32 = 32;

/// Seconds of one coordinator pass an organization's batches are spread over (under the
/// sweep's 5-minute period, so no batch is still waiting when the next pass starts). What does
/// not fit stays due and goes in the next pass: 500 units a second over 270 s is 27,000 steady
/// evaluations (a 10,000-domain organization swept every 5 minutes fits), or 4,200 first ones.
pub const PASS_SECONDS: u32 = 270;

/// Splits due domains into batches with their delay in seconds: each organization's domains
/// spread so that no second holds more than [`ORG_UNITS_PER_SECOND`] of its evaluations'
/// units, over at most [`PASS_SECONDS`]; the domains of one second of every organization are
/// packed together in batches of [`BATCH_SIZE`]. Returns the batches and how many domains were
/// left for the next pass.
pub fn plan_batches(due: Vec<domains::Due>) -> (Vec<(u64, SweepBatch)>, usize) {
    let mut by_org: std::collections::BTreeMap<Uuid, Vec<domains::Due>> = Default::default();
    for d in due {
        by_org.entry(d.org).or_default().push(d);
    }
    let mut by_second: std::collections::BTreeMap<u32, Vec<(Uuid, Uuid)>> = Default::default();
    let mut deferred = 0;
    for domains in by_org.into_values() {
        let (mut second, mut spent) = (0, 0);
        for d in domains {
            let cost = if d.first { FIRST_UNITS } else { STEADY_UNITS };
            if spent + cost > ORG_UNITS_PER_SECOND {
                (second, spent) = (second + 1, 0);
            }
            if second >= PASS_SECONDS {
                deferred += 1;
                continue;
            }
            spent += cost;
            by_second.entry(second).or_default().push((d.org, d.id));
        }
    }
    let batches = by_second
        .into_iter()
        .flat_map(|(second, domains)| {
            domains
                .chunks(BATCH_SIZE)
                .map(|chunk| {
                    let batch = SweepBatch {
                        domains: chunk.to_vec(),
                    };
                    (u64::from(second), batch)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    (batches, deferred)
}

/// Finds every due domain and enqueues batches, each organization's paced by
/// [`plan_batches`]. Returns how many domains were enqueued.
pub async fn coordinate(state: &AppState) -> anyhow::Result<usize> {
    let now = state.clock.unix();
    let mut due_all = Vec::new();
    for shard in 0..keys::SWEEP_SHARDS {
        let mut cursor = None;
        loop {
            let (due, next) =
                domains::due_domains(state.store.as_ref(), shard, now, 500, cursor).await?;
            due_all.extend(due);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    let (batches, deferred) = plan_batches(due_all);
    let mut enqueued = 0;
    for (delay, batch) in batches {
        enqueued += batch.domains.len();
        mailward_services::job::enqueue(state, &batch, delay).await?;
    }
    tracing::info!(
        sweep.enqueued = enqueued,
        sweep.deferred = deferred,
        "sweep coordinated"
    );
    // The report mailboxes organizations connected ride on the sweep's schedule. A failure
    // costs a poll, never the sweep.
    match crate::mailboxes::coordinate(state).await {
        Ok(queued) if queued > 0 => {
            tracing::info!(mailboxes.queued = queued, "mailbox polls queued")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "the mailbox polls could not be queued"),
    }
    Ok(enqueued)
}

/// Evaluates one batch, a few domains at a time. Any domain's store failure fails the batch so
/// the queue retries it (evaluations are idempotent).
pub async fn run_batch(state: &AppState, batch: SweepBatch) -> anyhow::Result<()> {
    run_batch_outcomes(state, batch).await.map(|_| ())
}

/// [`run_batch`], saying what became of each domain.
async fn run_batch_outcomes(
    state: &AppState,
    batch: SweepBatch,
) -> anyhow::Result<Vec<((Uuid, Uuid), Swept)>> {
    let mut orgs: Vec<uuid::Uuid> = batch.domains.iter().map(|(org, _)| *org).collect();
    orgs.sort_unstable();
    orgs.dedup();
    let mut skipped = std::collections::HashSet::new();
    for org in &orgs {
        skipped.extend(not_swept(state, *org).await?);
    }
    let domains: Vec<(Uuid, Uuid)> = batch
        .domains
        .into_iter()
        .filter(|(_, id)| !skipped.contains(id))
        .collect();
    let results: Vec<anyhow::Result<((Uuid, Uuid), Swept)>> = futures::stream::iter(domains)
        .map(|(org, id)| async move {
            sweep_domain(state, org, id)
                .await
                .map(|swept| ((org, id), swept))
        })
        .buffer_unordered(BATCH_CONCURRENCY)
        .collect()
        .await;
    // The daily task digests ride on the sweep's schedule: the first batch of the day of each
    // organization queues its digest. A failure costs a digest, never the sweep.
    for org in orgs {
        if let Err(e) = crate::notifications::digest::schedule(state, org).await {
            tracing::warn!(org.id = %org, error = %e, "the task digest could not be scheduled");
        }
    }
    results.into_iter().collect()
}

/// The domains of `org` not to sweep: all of them while the organization is not serviced
/// (switched off by the customer, suspended by staff, being deleted); else those beyond its
/// plan's domain cap (the newest ones, after a downgrade): they stay readable but are not
/// swept until the count fits. Organizations on the largest plan are not counted (its cap is
/// far above what one organization holds).
async fn not_swept(state: &AppState, org: Uuid) -> anyhow::Result<Vec<Uuid>> {
    let serviced = mailward_store::orgs::get(state.store.as_ref(), org)
        .await?
        .is_some_and(|o| o.value.is_serviced());
    // The list cards (id and creation time), not the domains: this runs for every batch, and
    // an organization over its cap can hold 100,000 domains of ~4 KB.
    if !serviced {
        let cards = mailward_store::card_cache::all_cards(state.store.as_ref(), org).await?;
        return Ok(cards.iter().map(|d| d.id).collect());
    }
    let (ent, _) = mailward_services::usage::entitlements(state, org).await?;
    let largest = mailward_domain::billing::plan_table(mailward_domain::model::PricingType::Msp).1;
    if ent.domain_cap >= largest
        || domains::count(state.store.as_ref(), org).await? <= ent.domain_cap
    {
        return Ok(Vec::new());
    }
    let cards = mailward_store::card_cache::all_cards(state.store.as_ref(), org).await?;
    let mut list: Vec<(time::OffsetDateTime, Uuid)> =
        cards.iter().map(|d| (d.created_at, d.id)).collect();
    list.sort_unstable();
    let cap = usize::try_from(ent.domain_cap).unwrap_or(usize::MAX);
    Ok(list.into_iter().skip(cap).map(|(_, id)| id).collect())
}

/// Runs one whole sweep in this process and returns when every due domain was evaluated (what
/// the tests do): the same index walk as [`coordinate`], but each batch runs inline instead of
/// through the queue, so nothing else (a queue worker of a running server) can still be
/// finishing it when this returns. A domain another worker holds is waited for (up to a
/// minute), and one that changed while being evaluated (a background job of the same process
/// wrote it: its pass is superseded, and it stays due) is evaluated again, a few times at most.
/// Returns how many domains were due.
pub async fn sweep_now(state: &AppState) -> anyhow::Result<usize> {
    let wait = std::time::Duration::from_secs(60);
    let mut report = sweep_by_hand(state, SweepScope::Due, wait).await?;
    let due = report.domains;
    for _ in 0..5 {
        if report.superseded == 0 {
            break;
        }
        report = sweep_by_hand(state, SweepScope::Due, wait).await?;
    }
    Ok(due)
}

/// Which domains a sweep run by hand evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepScope {
    /// Those whose next check is due, as the scheduled sweep does.
    Due,
    /// Every monitored domain, now (`mailward sweep`: a person asking for a check).
    All,
}

/// What a sweep run by hand did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepReport {
    /// Domains in scope.
    pub domains: usize,
    /// The monitoring status of each domain evaluated and stored.
    pub evaluated: Vec<MonitoringStatus>,
    /// Domains another worker was still evaluating when this sweep gave up waiting, with the end
    /// of that worker's claim.
    pub busy: Vec<(Uuid, time::OffsetDateTime)>,
    /// Domains that changed while being evaluated (a person's edit won): the next pass evaluates
    /// them again.
    pub superseded: usize,
    /// Domains deleted before their turn.
    pub gone: usize,
    /// Domains found claimed by another worker and evaluated once it had finished.
    pub waited: usize,
}

/// Runs a sweep in this process (`mailward sweep`, the tests): every domain in `scope`, inline.
/// A domain another worker is evaluating (a running server's sweep holds its claim) is tried
/// again once that claim is released or expires, for up to `wait_for_claims`; what is still
/// claimed then is reported, never skipped silently.
pub async fn sweep_by_hand(
    state: &AppState,
    scope: SweepScope,
    wait_for_claims: std::time::Duration,
) -> anyhow::Result<SweepReport> {
    let now = match scope {
        SweepScope::Due => state.clock.unix(),
        SweepScope::All => i64::MAX,
    };
    // Collect every shard first: evaluating a domain moves its index entry.
    let mut due_all = Vec::new();
    for shard in 0..keys::SWEEP_SHARDS {
        let mut cursor = None;
        loop {
            let (due, next) = domains::due(state.store.as_ref(), shard, now, 100, cursor).await?;
            due_all.extend(due);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
    }
    let mut report = SweepReport {
        domains: due_all.len(),
        ..SweepReport::default()
    };
    let mut pending = due_all;
    let give_up = std::time::Instant::now() + wait_for_claims;
    let mut first_pass = true;
    loop {
        let batches: Vec<SweepBatch> = pending
            .chunks(BATCH_SIZE)
            .map(|chunk| SweepBatch {
                domains: chunk.to_vec(),
            })
            .collect();
        let mut running = futures::stream::iter(batches)
            .map(|batch| run_batch_outcomes(state, batch))
            .buffer_unordered(PARALLEL_BATCHES);
        let mut busy = Vec::new();
        while let Some(result) = running.next().await {
            for (domain, swept) in result? {
                match swept {
                    Swept::Evaluated(status) => {
                        report.evaluated.push(status);
                        report.waited += usize::from(!first_pass);
                    }
                    Swept::Busy(until) => busy.push((domain, until)),
                    Swept::Superseded => report.superseded += 1,
                    Swept::Gone => report.gone += 1,
                }
            }
        }
        if busy.is_empty() || std::time::Instant::now() >= give_up {
            report.busy = busy
                .into_iter()
                .map(|((_, id), until)| (id, until))
                .collect();
            return Ok(report);
        }
        // A claim is released when its evaluation commits (seconds); poll until then.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        pending = busy.into_iter().map(|(domain, _)| domain).collect();
        first_pass = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(org: u128, id: u128, first: bool) -> domains::Due {
        domains::Due {
            org: Uuid::from_u128(org),
            id: Uuid::from_u128(id),
            first,
        }
    }

    /// Units each organization spends in each second of the plan.
    fn units(plan: &[(u64, SweepBatch)], first: &[Uuid]) -> HashMap<(Uuid, u64), u32> {
        let mut spent: HashMap<(Uuid, u64), u32> = HashMap::new();
        for (delay, batch) in plan {
            for (org, id) in &batch.domains {
                let cost = if first.contains(id) {
                    FIRST_UNITS
                } else {
                    STEADY_UNITS
                };
                *spent.entry((*org, *delay)).or_default() += cost;
            }
        }
        spent
    }
    use std::collections::HashMap;

    #[test]
    fn each_organization_is_paced_and_small_ones_share_batches() {
        let mut list: Vec<_> = (0..1_000).map(|i| due(1, i, false)).collect();
        list.extend((0..30).map(|i| due(100 + i, 10_000 + i, false)));
        let (plan, deferred) = plan_batches(list);
        assert_eq!(deferred, 0);
        assert!(plan.iter().all(|(_, b)| b.domains.len() <= BATCH_SIZE));
        let planned: usize = plan.iter().map(|(_, b)| b.domains.len()).sum();
        assert_eq!(planned, 1_030, "every domain planned once");
        assert!(
            units(&plan, &[])
                .values()
                .all(|u| *u <= ORG_UNITS_PER_SECOND)
        );
        // 1,000 steady evaluations at 50 a second: 20 seconds.
        let per_second = ORG_UNITS_PER_SECOND / STEADY_UNITS;
        assert_eq!(
            plan.iter().map(|(d, _)| *d).max(),
            Some(u64::from(1_000 / per_second - 1))
        );
        // The 30 one-domain organizations ride in the first second's batches, not 30 batches.
        let first: usize = plan.iter().filter(|(d, _)| *d == 0).count();
        assert_eq!(first, (per_second as usize + 30).div_ceil(BATCH_SIZE));
    }

    #[test]
    fn first_evaluations_cost_more_and_what_does_not_fit_waits_for_the_next_pass() {
        let list: Vec<_> = (0..20_000).map(|i| due(1, i, i % 2 == 0)).collect();
        let firsts: Vec<Uuid> = list.iter().filter(|d| d.first).map(|d| d.id).collect();
        let (plan, deferred) = plan_batches(list);
        assert!(
            units(&plan, &firsts)
                .values()
                .all(|u| *u <= ORG_UNITS_PER_SECOND)
        );
        assert_eq!(
            plan.iter().map(|(d, _)| *d).max(),
            Some(u64::from(PASS_SECONDS - 1))
        );
        let planned: usize = plan.iter().map(|(_, b)| b.domains.len()).sum();
        assert!(deferred > 0);
        assert_eq!(planned + deferred, 20_000);
    }
}
