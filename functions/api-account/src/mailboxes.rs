//! Report mailbox connections (an extension beyond SPEC §5): `/mailbox-connections`,
//! `/mailbox-connections/{id}` and `/mailbox-connections/{id}/poll`.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::mailboxes::{
    CreateMailboxConnection, MailboxConnection, MailboxConnectionList, UpdateMailboxConnection,
};
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::mailboxes;

/// The organization's report mailbox connections.
#[utoipa::path(get, path = "/mailbox-connections", tag = "organizations",
    description = "Extension beyond SPEC §5. Every report mailbox the organization connected, \
oldest first (at most 10): where it is, how Mailward signs in (never the password, client \
secret or refresh token), its status (`pending`, `active`, `credentials_refused`, `error`, \
`paused`) with the last error, when it was last read and is read next, and what the last poll \
and all polls did (`messages`, `imported`, `duplicate`, `unattributed`, `refused`). Any member \
or key reads.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MailboxConnectionList)))]
pub async fn list_mailbox_connections(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<MailboxConnectionList>, ApiError> {
    Ok(axum::Json(mailboxes::list(&app, &principal).await?))
}

/// Connects a report mailbox.
#[utoipa::path(post, path = "/mailbox-connections", tag = "organizations",
    request_body = CreateMailboxConnection,
    description = "Extension beyond SPEC §5. Administrators not limited to groups (or read-write \
keys). Connects the organization's own report mailbox, which Mailward then reads every \
`poll_interval_minutes` (default 60, 5 to 1440) and imports its aggregate, TLS and failure \
reports for this organization alone: a report about a domain the organization does not watch \
counts as `unattributed` and is imported for no one. `provider` `imap` reads a server over TLS \
from the first byte (`host`, `port` default 993, the login `user`, `mailbox` default INBOX) \
with `auth` `{\"type\": \"password\", \"password\"}` or `{\"type\": \"oauth2\", \"mechanism\": \
\"xoauth2\"|\"oauthbearer\", \"token_url\", \"client_id\", \"client_secret\", \"refresh_token\", \
\"scope\"}` (SASL XOAUTH2, or OAUTHBEARER of RFC 7628, for Microsoft 365 and Google Workspace \
where IMAP passwords are off); `microsoft_graph` reads a Microsoft 365 mailbox (`user` its \
address, or `me` for a delegated token; `mailbox` a folder, default inbox) through the Graph \
mail API with `oauth2`. The refresh token is one the person obtained once through the \
provider's device or authorization-code flow with offline access; Mailward exchanges it for \
an access token at every poll and keeps a rotated one. Secrets are sealed at rest and never \
answered. Without `move_to` the mailbox is only read (IMAP `EXAMINE` and `BODY.PEEK`), never \
changed; with it, processed reports are moved there. The host must be public: an address \
Mailward does not connect to is refused (400 naming `host`, or `credentials_refused` when the \
name resolves only to such addresses). 201 with the connection `pending`; its first read is \
queued at once, and its `status` says within seconds whether the server let Mailward in. 400 \
names the field (`name`, `provider`, `host`, `port`, `user`, `mailbox`, `move_to`, \
`poll_interval_minutes`, `auth.type`, `auth.password`, `auth.mechanism`, `auth.token_url`, \
`auth.client_id`, `auth.client_secret`, `auth.refresh_token`, `auth.scope`); 422 \
`mailbox_connection_limit` past 10 connections.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = MailboxConnection), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_mailbox_connection(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateMailboxConnection>,
) -> Result<(StatusCode, axum::Json<MailboxConnection>), ApiError> {
    Ok((
        StatusCode::CREATED,
        axum::Json(mailboxes::create(&app, &principal, body).await?),
    ))
}

/// One report mailbox connection.
#[utoipa::path(get, path = "/mailbox-connections/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Mailbox connection id")),
    description = "Extension beyond SPEC §5. One connection, its status and its counts.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MailboxConnection), (status = 404, body = ErrorBody)))]
pub async fn get_mailbox_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<MailboxConnection>, ApiError> {
    Ok(axum::Json(mailboxes::get(&app, &principal, id).await?))
}

/// Changes a report mailbox connection.
#[utoipa::path(post, path = "/mailbox-connections/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Mailbox connection id")),
    request_body = UpdateMailboxConnection,
    description = "Extension beyond SPEC §5. Administrators not limited to groups. Changes the \
fields given. `auth` replaces the sign-in and its secrets whole, and a connection whose \
credentials were refused is read again; a new `host`, `port`, `user` or `mailbox` is read from \
its start (reports already imported count as duplicates, never twice). `paused` true stops \
polling, false resumes it; `move_to` `\"\"` stops moving processed reports. 400 names the \
field; 409 when the connection changed meanwhile.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MailboxConnection), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_mailbox_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateMailboxConnection>,
) -> Result<axum::Json<MailboxConnection>, ApiError> {
    Ok(axum::Json(
        mailboxes::update(&app, &principal, id, body).await?,
    ))
}

/// Removes a report mailbox connection.
#[utoipa::path(delete, path = "/mailbox-connections/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Mailbox connection id")),
    description = "Extension beyond SPEC §5. Administrators not limited to groups. Deletes the \
connection with its stored secrets (revoke the grant at the provider too); the reports it \
imported stay.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_mailbox_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    mailboxes::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Reads a report mailbox now.
#[utoipa::path(post, path = "/mailbox-connections/{id}/poll", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Mailbox connection id")),
    description = "Extension beyond SPEC §5. Editors, administrators or read-write keys. Queues \
a read of the mailbox now (not for members limited to groups), beside the schedule; 202 with the connection as it is (read it again \
for the outcome). 422 `mailbox_not_polled` for a paused connection or one whose credentials \
were refused (resume it, or replace its `auth`, first).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 202, body = MailboxConnection), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn poll_mailbox_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<(StatusCode, axum::Json<MailboxConnection>), ApiError> {
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(mailboxes::poll_now(&app, &principal, id).await?),
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(
            list_mailbox_connections,
            create_mailbox_connection
        ))
        .routes(utoipa_axum::routes!(
            get_mailbox_connection,
            update_mailbox_connection,
            delete_mailbox_connection
        ))
        .routes(utoipa_axum::routes!(poll_mailbox_connection))
}
