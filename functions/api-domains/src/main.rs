//! Lambda entry point of the `api-domains` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_domains::routes()).await
}
