//! The `api-tools` function: the DNS-resolving tools (`/tools/*`, `/dns-providers/detect`).

use mailward_http::AppState;
use utoipa_axum::router::OpenApiRouter;

/// This function's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    mailward_http::tool_routes()
}
