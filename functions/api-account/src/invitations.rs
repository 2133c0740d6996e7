//! Invitations (SPEC §4.2): invite a person without an account by email, resend, revoke, and
//! accept with the emailed single-use token.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::admin::{
    AcceptInvitationRequest, CreateInvitationRequest, Invitation, InvitationAccepted,
};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_http::extract::{Json, PathId};
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::config::Scope;
use mailward_services::invitations;

/// Lists pending invitations.
#[utoipa::path(get, path = "/invitations", tag = "invitations",
    description = "Administrators or read-write keys, not limited to groups. The pending \
(unexpired, unaccepted, unrevoked) invitations, oldest first. `sent_at` is null when the email \
failed (`upstream_failure`): resend it.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = [Invitation]), (status = 403, body = ErrorBody)))]
pub async fn list_invitations(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<Vec<Invitation>>, ApiError> {
    Ok(axum::Json(invitations::list(&app, &principal).await?))
}

/// Invites a person.
#[utoipa::path(post, path = "/invitations", tag = "invitations", request_body = CreateInvitationRequest,
    description = "Administrators or read-write keys, not limited to groups. Stores the invitation \
(`invitation.created`), then emails a single-use acceptance token (see POST \
/invitations/accept). `roles` at least one of admin, editor, viewer; `groups` ids of this \
organization's groups; `ttl_sec` 86400-2592000 (default 1209600, 14 days). Refusals: 409 \
`invitation_invitee_exists` (the address has an account: use POST /members); 403 \
`invitation_domain_not_allowed` (API keys only: the address's domain is no existing member's \
email domain; sessions are exempt); 409 `invitation_exists` (a pending invitation to the same \
address: resend it); 503 `upstream_failure` (the email could not be sent; the invitation may \
exist without it, so list invitations before retrying, since a retry creates a second one). Counts \
in the `invite` bucket per caller (with POST /members; 30 an hour): 429 past it.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 201, body = Invitation),
        (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 429, body = RateLimitBody), (status = 503, body = ErrorBody),
    ))]
pub async fn create_invitation(
    State(app): State<AppState>,
    principal: Principal,
    log: Option<Extension<RateLimitLog>>,
    Json(body): Json<CreateInvitationRequest>,
) -> Result<(StatusCode, axum::Json<Invitation>), ApiError> {
    enforce_logged(&app, log.as_deref(), Scope::Invite, &principal.subject()).await?;
    let created = invitations::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Sends an invitation again.
#[utoipa::path(post, path = "/invitations/{id}/resend", tag = "invitations",
    params(("id" = uuid::Uuid, Path, description = "Invitation id (from GET /invitations)")),
    description = "Administrators or read-write keys, not limited to groups. Emails a new token \
(the earlier one stops working) and renews the expiry by the invitation's `ttl_sec`. The email \
goes first: 503 `upstream_failure` means it failed and the invitation still stands with its \
earlier link and expiry.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Sent"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn resend_invitation(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    invitations::resend(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Revokes a pending invitation.
#[utoipa::path(delete, path = "/invitations/{id}", tag = "invitations",
    params(("id" = uuid::Uuid, Path, description = "Invitation id (from GET /invitations)")),
    description = "Administrators or read-write keys, not limited to groups. Its token stops \
working. Emits `invitation.revoked`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Revoked"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn revoke_invitation(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    invitations::revoke(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Accepts an invitation.
#[utoipa::path(post, path = "/invitations/accept", tag = "invitations", request_body = AcceptInvitationRequest,
    description = "Public: the emailed token is the credential, and works once. Creates the \
invitee's account when the address has none, makes it a member with the invited roles and \
groups (`member.added`; there is no invitation.accepted event) and consumes the invitation. An \
unknown, expired, revoked or used token answers 400 `invitation_token_invalid` naming `token`. \
Attempts count against the per-IP `signup` bucket.",
    responses(
        (status = 201, body = InvitationAccepted),
        (status = 400, body = ErrorBody),
        (status = 429, body = RateLimitBody),
    ))]
pub async fn accept_invitation(
    State(app): State<AppState>,
    Extension(ClientIp(ip)): Extension<ClientIp>,
    log: Option<Extension<RateLimitLog>>,
    Json(body): Json<AcceptInvitationRequest>,
) -> Result<(StatusCode, axum::Json<InvitationAccepted>), ApiError> {
    enforce_logged(
        &app,
        log.as_deref(),
        Scope::Signup,
        &mailward_http::rate_limit::client_subject(&ip),
    )
    .await?;
    let accepted = invitations::accept(&app, body).await?;
    Ok((StatusCode::CREATED, axum::Json(accepted)))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_invitations, create_invitation))
        .routes(utoipa_axum::routes!(resend_invitation))
        .routes(utoipa_axum::routes!(revoke_invitation))
        .routes(utoipa_axum::routes!(accept_invitation))
}
