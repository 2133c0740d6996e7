//! Lambda entry point of the `app-web` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(app_web::routes()).await
}
