//! A person's connections (one per consent to the connector client): listed and revoked in the
//! application. Revoking one makes its next MCP call answer 401 and its refresh token invalid.

use mailward_api_types::oauth::{Connection as ConnectionView, ConnectionList};
use mailward_app::caller::{Caller, Credential};
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::state::AppState;
use mailward_store::oauth;
use uuid::Uuid;

fn person(caller: &Caller) -> Result<Uuid, ServiceError> {
    match caller.credential {
        Credential::Session { account_id, .. } => Ok(account_id),
        Credential::ApiKey { .. } => Err(ServiceError::new(
            ErrorKind::Forbidden,
            "session_required",
            "connections belong to a person: call this with a dashboard session (Bearer), not an API key",
        )),
    }
}

/// `GET /oauth/connections`: the caller's connections, newest first.
pub async fn list(app: &AppState, caller: &Caller) -> Result<ConnectionList, ServiceError> {
    let account = person(caller)?;
    let mut data: Vec<ConnectionView> = oauth::list_connections(app.store.as_ref(), account)
        .await?
        .into_iter()
        .map(|c| ConnectionView {
            id: c.id,
            organization_id: c.org_id,
            client_id: c.client_id,
            scopes: c.scopes,
            resource: c.resource,
            created_at: c.created_at,
            last_used_at: c.last_used_at,
        })
        .collect();
    data.sort_by_key(|c| std::cmp::Reverse(c.created_at));
    Ok(ConnectionList { data })
}

/// `DELETE /oauth/connections/{id}`: revokes one of the caller's connections.
pub async fn revoke(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    let account = person(caller)?;
    if oauth::get_connection(app.store.as_ref(), account, id)
        .await?
        .is_none()
    {
        return Err(ServiceError::not_found("connection"));
    }
    oauth::delete_connection(app.store.as_ref(), account, id).await?;
    tracing::info!(connection.id = %id, "OAuth connection revoked by its owner");
    Ok(())
}
