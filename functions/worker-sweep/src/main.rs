//! Lambda entry point of the `worker-sweep` function.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    mailward_lambda::run_sweep_coordinator().await
}
