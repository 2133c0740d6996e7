//! The `api-domains` function: `/domains/**`.

use mailward_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// This function's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    mailward_http::domain_routes()
}
