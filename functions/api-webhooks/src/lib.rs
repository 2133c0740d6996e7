//! The `api-webhooks` function: `/webhook-endpoints` and `/webhook-events`.

use mailward_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// This function's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    mailward_http::webhook_routes()
}
