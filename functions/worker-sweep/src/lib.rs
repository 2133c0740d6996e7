//! The `worker-sweep` function: the monitoring sweep's coordinator, run by an EventBridge
//! schedule. The sweep itself lives in `mailward_services::sweep`; the batches it enqueues are
//! evaluated by `worker-queue`.

use mailward_services::AppState;

/// Handles one scheduled event: enqueues every due domain in batches, and says how many.
pub async fn handle_schedule(state: &AppState) -> anyhow::Result<serde_json::Value> {
    let enqueued = mailward_services::sweep::coordinate(state).await?;
    Ok(serde_json::json!({ "enqueued": enqueued }))
}
