//! Lambda entry point of the `worker-ingest` function.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    mailward_lambda::run_events(|state, event: serde_json::Value| async move {
        worker_ingest::handle_sns_event(&state, &event)
            .await
            .map_err(|e| lambda_runtime::Error::from(format!("{e:#}")))
    })
    .await
}
