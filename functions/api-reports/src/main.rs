//! Lambda entry point of the `api-reports` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_reports::routes()).await
}
