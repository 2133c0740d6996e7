//! Lambda entry point of the `worker-publisher` function.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    mailward_lambda::run_stream_publisher().await
}
