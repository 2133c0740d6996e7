//! `GET /health-check`.

use axum::Json;
use mailward_api_types::Health;
use mailward_http::Routes;

/// Liveness: answers without touching any backing service, so a load balancer never marks the
/// service down because of a slow dependency.
#[utoipa::path(get, path = "/health-check", tag = "health",
    responses((status = 200, description = "The service is up", body = Health)))]
pub async fn health_check() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(health_check))
}
