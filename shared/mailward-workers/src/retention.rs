//! The data lifecycle, run daily (EventBridge `{"job": "retention"}` on AWS, the local
//! stack's daily timer, `mailward retention`): what an organization's plan no longer keeps is
//! deleted, not only hidden.
//!
//! | Data | Kept |
//! |---|---|
//! | aggregate-report rows, day totals, report marks; TLS reports | the plan's window (`Entitlements::retention_days`: 30 days free, 365 paid, and the paid window 30 days after paid entitlements end) |
//! | DNS snapshots | the plan's window; each record type's latest snapshot always |
//! | activity log entries | [`ACTIVITY_DAYS`] on every plan (the audit trail outlives the free window) |
//! | raw report deliveries (`reports/raw/<day>/`) | [`RAW_DELIVERY_DAYS`] (on AWS also an S3 lifecycle rule) |
//! | organization export archives (`exports/<day>/`) | `mailward_services::exports::ARCHIVE_DAYS` (likewise) |
//! | TLS reports uploaded over HTTPS and never imported (`uploads/tlsrpt/<day>/`) | [`UPLOAD_DAYS`] (likewise) |
//! | failure reports | 7 days free, 30 paid, by their item TTL (`mailward_domain::failure_reports`) |
//! | webhook delivery records | 30 days (SPEC §8.2), by their item TTL |
//!
//! Each organization's pass is also the migration job of the per-domain partitions
//! (`mailward_store::domain_data`): it first moves what an older version wrote into the
//! organization's partition, and empties the partitions of deleted domains.
//!
//! [`coordinate`] queues one [`RetentionJob`] per organization and removes old raw deliveries
//! (they are shared by every organization a report is addressed to); [`apply`] is one
//! organization's pass. Both are idempotent: a pass that stops half-way is finished by the next.

use mailward_app::AppState;
pub use mailward_app::jobs::RetentionJob;
use mailward_domain::model::OrgState;
use mailward_domain::reports::day_string;
use mailward_store::{domain_data, domains, orgs, retention};
use time::Duration;
use uuid::Uuid;

/// Days an activity log entry is kept, on every plan.
pub const ACTIVITY_DAYS: i64 = 400;

/// Days a raw report delivery is kept (enough to import it again after a reader fix; the rows
/// it produced follow each organization's window).
pub const RAW_DELIVERY_DAYS: i64 = 30;

/// Where raw deliveries are kept, one folder per day of receipt.
pub const RAW_PREFIX: &str = "reports/raw/";

/// What one organization's pass removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Removed {
    /// Aggregate-report items (row chunks, day totals, report marks).
    pub report_items: usize,
    /// TLS reports.
    pub tls_reports: usize,
    /// DNS snapshots.
    pub snapshots: usize,
    /// Activity log items (entries and their references).
    pub activity_items: usize,
    /// Items an older version left in the organization's partition, moved into their domain's
    /// (`mailward_store::domain_data`: this pass is that layout's migration job).
    pub moved_items: usize,
    /// Items of deleted domains' partitions.
    pub gone_items: usize,
    /// Domain list cards built for an organization from before cards
    /// (`mailward_store::domains::build_cards`: this pass is their migration job).
    pub cards_built: usize,
}

/// Queues every organization's pass and removes raw deliveries past their age. Returns how
/// many passes were queued and how many raw deliveries were removed.
pub async fn coordinate(state: &AppState) -> anyhow::Result<(usize, usize)> {
    let mut queued = 0;
    for org in orgs::list_all(state.store.as_ref()).await? {
        if org.state == OrgState::Deleting {
            continue;
        }
        mailward_services::job::enqueue(state, &RetentionJob { org_id: org.id }, 0).await?;
        queued += 1;
    }
    let raw = remove_raw_deliveries(state).await?
        + remove_older(
            state,
            EXPORTS_PREFIX,
            mailward_services::exports::ARCHIVE_DAYS,
        )
        .await?
        + remove_older(state, UPLOADS_PREFIX, UPLOAD_DAYS).await?;
    tracing::info!(
        retention.queued = queued,
        retention.raw_removed = raw,
        "retention coordinated"
    );
    Ok((queued, raw))
}

/// Every organization's pass and the raw deliveries, inline (the CLI and the tests).
pub async fn run_now(state: &AppState) -> anyhow::Result<(Removed, usize)> {
    let mut total = Removed::default();
    for org in orgs::list_all(state.store.as_ref()).await? {
        let removed = apply(state, org.id).await?;
        total.report_items += removed.report_items;
        total.tls_reports += removed.tls_reports;
        total.snapshots += removed.snapshots;
        total.activity_items += removed.activity_items;
        total.moved_items += removed.moved_items;
        total.gone_items += removed.gone_items;
        total.cards_built += removed.cards_built;
    }
    let exports = remove_older(
        state,
        EXPORTS_PREFIX,
        mailward_services::exports::ARCHIVE_DAYS,
    )
    .await?
        + remove_older(state, UPLOADS_PREFIX, UPLOAD_DAYS).await?;
    Ok((total, remove_raw_deliveries(state).await? + exports))
}

/// One organization's pass: its window read from the billing entitlements now.
pub async fn apply(state: &AppState, org: Uuid) -> anyhow::Result<Removed> {
    let store = state.store.as_ref();
    let Some(current) = orgs::get(store, org).await? else {
        return Ok(Removed::default());
    };
    if current.value.state == OrgState::Deleting {
        return Ok(Removed::default());
    }
    let (ent, _) = mailward_services::usage::entitlements(state, org).await?;
    let now = state.clock.now();
    let keep_from = now.date() - Duration::days(ent.retention_days);
    let window_start = now - Duration::days(ent.retention_days);
    let mut removed = Removed::default();
    removed.gone_items += domain_data::purge_gone(store, org).await?;
    removed.cards_built += domains::build_cards(store, org).await?;
    for domain in domains::list(store, org).await? {
        removed.moved_items += domain_data::migrate_domain(store, org, domain.id).await?;
        let rows = retention::report_data_before(store, org, domain.id, keep_from).await?;
        let changed = mailward_store::report_versions::report_domains(
            rows.iter().map(|(pk, sk)| (pk.as_str(), sk.as_str())),
        );
        removed.report_items += retention::delete_all(store, rows).await?;
        mailward_store::report_versions::bump(store, &changed).await;
        let tls = retention::tls_reports_before(store, org, domain.id, keep_from).await?;
        removed.tls_reports += retention::delete_all(store, tls).await?;
        let old = retention::snapshots_before(store, org, domain.id, window_start).await?;
        removed.snapshots += retention::delete_all(store, old).await?;
    }
    let activity =
        retention::activity_before(store, org, now - Duration::days(ACTIVITY_DAYS)).await?;
    removed.activity_items += retention::delete_all(store, activity).await?;
    tracing::info!(org.id = %org, keep_from = %day_string(keep_from), ?removed, "retention applied");
    Ok(removed)
}

/// Where organization export archives are kept, one folder per day of the request.
pub const EXPORTS_PREFIX: &str = "exports/";

/// Where TLS reports uploaded over HTTPS wait for their import (`uploads/tlsrpt/<day>/…`).
pub const UPLOADS_PREFIX: &str = "uploads/tlsrpt/";

/// Days a leftover upload (one whose import failed for good) is kept.
pub const UPLOAD_DAYS: i64 = 7;

/// Removes the raw deliveries received more than [`RAW_DELIVERY_DAYS`] ago.
async fn remove_raw_deliveries(state: &AppState) -> anyhow::Result<usize> {
    remove_older(state, RAW_PREFIX, RAW_DELIVERY_DAYS).await
}

/// Removes the objects under `prefix` whose day folder (`<prefix><yyyy-mm-dd>/…`) is more
/// than `days` old. Without an object store there is nothing to remove.
async fn remove_older(state: &AppState, prefix: &str, days: i64) -> anyhow::Result<usize> {
    let Some(objects) = state.objects.as_ref() else {
        return Ok(0);
    };
    let oldest_kept = day_string(state.clock.now().date() - Duration::days(days));
    let mut removed = 0;
    for key in objects.list(prefix).await? {
        let day = key[prefix.len()..].split('/').next().unwrap_or_default();
        // Days are `yyyy-mm-dd`, so their byte order is their time order.
        if day.len() == 10 && day < oldest_kept.as_str() {
            objects.delete(&key).await?;
            removed += 1;
        }
    }
    Ok(removed)
}
