//! Lambda entry point of the `api-tools` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_tools::routes()).await
}
