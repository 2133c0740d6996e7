//! The `api-public` function: `/health-check`, `/signup`, `/signup/verify` and `/swagger.json`,
//! plus the JSON 404 for unknown paths (it owns API Gateway's `$default` route).

use mailward_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// This function's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    mailward_http::public_routes()
}
