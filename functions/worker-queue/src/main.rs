//! Lambda entry point of the `worker-queue` function.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    mailward_lambda::run_queue_worker().await
}
