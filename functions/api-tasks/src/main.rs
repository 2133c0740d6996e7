//! Lambda entry point of the `api-tasks` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_tasks::routes()).await
}
