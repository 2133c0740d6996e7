//! Lambda entry point of the `api-report-pdf` function.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    mailward_lambda::run_http(api_report_pdf::routes()).await
}
