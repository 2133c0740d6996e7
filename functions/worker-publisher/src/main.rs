//! Lambda entry point of the `worker-publisher` function.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    mailward_lambda::run_events(|state, event: serde_json::Value| async move {
        Ok(worker_publisher::handle_stream_batch(&state, event).await)
    })
    .await
}
