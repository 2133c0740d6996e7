//! Lambda entry point of the `api-auth` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_auth::routes()).await
}
