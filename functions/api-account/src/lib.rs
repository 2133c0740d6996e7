//! The `api-account` function: `/api-keys` and `/organizations`.

use mailward_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// This function's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    mailward_http::account_routes()
}
