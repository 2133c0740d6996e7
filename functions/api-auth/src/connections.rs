//! `GET /oauth/connections` and `DELETE /oauth/connections/{id}`: the assistants a person
//! connected, and revoking one (its next MCP call answers 401).

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::oauth::ConnectionList;
use mailward_http::extract::PathId;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_oauth::connections;

/// The caller's connections.
#[utoipa::path(get, path = "/oauth/connections", tag = "oauth",
    security(("session" = [])),
    description = "The assistants the signed-in person connected through the connector client (every organization), newest first. Connections belong to a person: API keys get 403 `session_required`.",
    responses(
        (status = 200, description = "The connections", body = ConnectionList),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn list_connections(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<ConnectionList>, ApiError> {
    Ok(axum::Json(connections::list(&app, &principal).await?))
}

/// Revokes one of the caller's connections.
#[utoipa::path(delete, path = "/oauth/connections/{id}", tag = "oauth",
    params(("id" = uuid::Uuid, Path, description = "Connection id")),
    security(("session" = [])),
    description = "Revokes the connection: its refresh token stops working and its next MCP call answers 401 (every call checks the connection). Every assistant sharing it loses access.",
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn revoke_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    connections::revoke(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_connections))
        .routes(utoipa_axum::routes!(revoke_connection))
}
