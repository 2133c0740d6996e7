//! The `worker-sweep` function: the coordinators of the monitoring sweep and of the hourly
//! hosted-record reconciliation, run by EventBridge schedules. The coordination lives in `mailward_workers::sweep` (one domain's evaluation in
//! `mailward_services::evaluation`); the batches it enqueues are
//! evaluated by `worker-queue`.

use mailward_services::AppState;

/// Handles one scheduled event: enqueues every due domain in batches, and says how many. The
/// hourly schedule's event carries `{"job": "reconcile"}`: then every domain is enqueued for
/// the hosted-record reconciliation instead; the daily one's `{"job": "retention"}` queues each
/// organization's data-lifecycle pass and removes old raw deliveries.
pub async fn handle_schedule(
    state: &AppState,
    event: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    if event.get("job").and_then(|j| j.as_str()) == Some("reconcile") {
        let enqueued = mailward_workers::reconcile::coordinate(state).await?;
        return Ok(serde_json::json!({ "reconcile_enqueued": enqueued }));
    }
    if event.get("job").and_then(|j| j.as_str()) == Some("retention") {
        let (queued, raw) = mailward_workers::retention::coordinate(state).await?;
        return Ok(serde_json::json!({ "retention_enqueued": queued, "raw_removed": raw }));
    }
    let enqueued = mailward_workers::sweep::coordinate(state).await?;
    // The deployment-wide figures (sweep lag, queue depths) to CloudWatch, every five minutes.
    if let Err(e) = mailward_services::metrics::refresh_gauges(state).await {
        tracing::warn!(error = %e, "the operator's gauges could not be read");
    }
    Ok(serde_json::json!({ "enqueued": enqueued }))
}
