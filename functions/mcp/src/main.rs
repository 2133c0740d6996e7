//! Lambda entry point of the `mcp` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(mcp::routes()).await
}
