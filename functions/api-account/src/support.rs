//! Support (SPEC §4.5): tickets with Mailward's support staff, the unread count, and attachment
//! upload forms.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::support::{
    CreateTicketRequest, ListTicketsParams, PresignRequest, PresignedUpload, ReplyRequest, Ticket,
    TicketList, TicketMessage, UnreadCount,
};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::support;

/// Opens a ticket.
#[utoipa::path(post, path = "/support/tickets", tag = "support", request_body = CreateTicketRequest,
    description = "Editors, administrators or read-write keys. `subject` 1-200 characters, `body` \
1-10,000; `attachments` up to 5 object keys uploaded through POST /support/presigned-url (400 \
naming `attachments` when a key is not an uploaded attachment of this organization). Answers the \
ticket with its first message.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = Ticket), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn open_ticket(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateTicketRequest>,
) -> Result<(StatusCode, axum::Json<Ticket>), ApiError> {
    let ticket = support::open(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(ticket)))
}

/// Lists tickets.
#[utoipa::path(get, path = "/support/tickets", tag = "support", params(ListTicketsParams),
    description = "The tickets the caller sees (all of the organization's; a member limited to \
groups sees the ones they opened), most recently active first, each with `unread_count`. \
`status` open|closed filters.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TicketList), (status = 400, body = ErrorBody)))]
pub async fn list_tickets(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ListTicketsParams>,
) -> Result<axum::Json<TicketList>, ApiError> {
    Ok(axum::Json(support::list(&app, &principal, &params).await?))
}

/// One ticket with its messages.
#[utoipa::path(get, path = "/support/tickets/{id}", tag = "support",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    description = "The ticket and its messages, oldest first. Reading does not mark support \
replies read: POST /support/tickets/{id}/read does.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Ticket), (status = 404, body = ErrorBody)))]
pub async fn get_ticket(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<Ticket>, ApiError> {
    Ok(axum::Json(support::get(&app, &principal, id).await?))
}

/// Replies on a ticket.
#[utoipa::path(post, path = "/support/tickets/{id}/replies", tag = "support", request_body = ReplyRequest,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    description = "Editors, administrators or read-write keys. `body` 1-10,000 characters, \
`attachments` as on creation. A closed ticket opens again.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = TicketMessage), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn reply_ticket(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<ReplyRequest>,
) -> Result<(StatusCode, axum::Json<TicketMessage>), ApiError> {
    let message = support::reply(&app, &principal, id, body).await?;
    Ok((StatusCode::CREATED, axum::Json(message)))
}

/// Marks a ticket's support replies read.
#[utoipa::path(post, path = "/support/tickets/{id}/read", tag = "support",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    description = "Any member who sees the ticket, viewers included (reading is not changing the \
organization). Answers the unread count that remains across visible tickets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = UnreadCount), (status = 404, body = ErrorBody)))]
pub async fn read_ticket(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<UnreadCount>, ApiError> {
    support::mark_read(&app, &principal, id).await?;
    Ok(axum::Json(support::unread_count(&app, &principal).await?))
}

/// The unread count.
#[utoipa::path(get, path = "/support/unread-count", tag = "support",
    description = "Support replies not read yet, across the tickets the caller sees.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = UnreadCount)))]
pub async fn unread_count(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<UnreadCount>, ApiError> {
    Ok(axum::Json(support::unread_count(&app, &principal).await?))
}

/// An upload form for an attachment.
#[utoipa::path(post, path = "/support/presigned-url", tag = "support", request_body = PresignRequest,
    description = "Editors, administrators or read-write keys. `file_name` 1-255 characters \
without path separators; `mime_type` image/png, image/jpeg, image/gif, image/webp or \
application/pdf. Answers a form valid 15 minutes: POST `url` as multipart/form-data with every \
field of `fields`, then the file in a part named `file`. The storage enforces the policy itself \
(the key, the declared type, 1 byte to 10 MB): on AWS an S3 presigned POST with a \
content-length-range condition, on the local stack its signed `/uploads` route. Then list `key` \
in a ticket's or reply's `attachments`. 503 when no object store is configured.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = PresignedUpload), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn presigned_url(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<PresignRequest>,
) -> Result<axum::Json<PresignedUpload>, ApiError> {
    Ok(axum::Json(support::presign(&app, &principal, body).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_tickets, open_ticket))
        .routes(utoipa_axum::routes!(get_ticket))
        .routes(utoipa_axum::routes!(reply_ticket))
        .routes(utoipa_axum::routes!(read_ticket))
        .routes(utoipa_axum::routes!(unread_count))
        .routes(utoipa_axum::routes!(presigned_url))
}
