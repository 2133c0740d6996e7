//! Members (SPEC §4.2): list, add an existing account, change roles and groups, remove, and
//! the members' MFA statuses.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::admin::{AddMemberRequest, Member, MemberMfaStatus, UpdateMemberRequest};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_http::extract::{Json, PathId};
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::config::Scope;
use mailward_services::members::{self, Added};

/// Lists the members.
#[utoipa::path(get, path = "/members", tag = "members",
    description = "Every member of the organization, oldest first: `id` (the account id, used by \
the member routes), `email`, `roles`, `groups` (empty: every domain) and `auth_provider` \
(`email_code`, `google` or `microsoft`; every account signs in with an emailed code today). \
Members limited to groups get 403.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = [Member]), (status = 403, body = ErrorBody)))]
pub async fn list_members(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<Vec<Member>>, ApiError> {
    Ok(axum::Json(members::list(&app, &principal).await?))
}

/// Adds an existing account as a member.
#[utoipa::path(post, path = "/members", tag = "members", request_body = AddMemberRequest,
    description = "Administrators or read-write keys, not limited to groups. `email` must belong \
to an existing account: otherwise 400 `parameter_invalid_or_missing` with `param: email` (invite \
the person with POST /invitations instead). Tenant trust (extension): an account is added at \
once only when it already shares an organization with the caller (the caller's own organizations; \
for an API key, this organization, its parent and its children) or its address is at a verified \
domain of this organization (monitoring set up, or hosted DMARC ready); anyone else is invited: \
201 with `status: pending_acceptance`, an invitation emailed to the account (listed by GET \
/invitations, `invitation.created`), granting nothing until accepted; a second add before then \
answers 409 `invitation_exists`. Otherwise `status` is `active`. 201 when the account was added (`member.added`); 200 \
when it was a member already, with `roles` and `groups` applied (`member.updated` if they \
changed). `roles` holds at least one of admin, editor, viewer; `groups` are ids of this \
organization's groups (400 naming `groups` otherwise). Demoting the last administrator answers \
409 `last_admin`. Counts in the `invite` bucket per caller (with POST /invitations; 30 an hour), \
so addresses cannot be tried in bulk.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 201, description = "Added", body = Member),
        (status = 429, body = RateLimitBody),
        (status = 200, description = "Already a member; roles and groups applied", body = Member),
        (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn add_member(
    State(app): State<AppState>,
    principal: Principal,
    log: Option<axum::Extension<RateLimitLog>>,
    Json(body): Json<AddMemberRequest>,
) -> Result<(StatusCode, axum::Json<Member>), ApiError> {
    enforce_logged(&app, log.as_deref(), Scope::Invite, &principal.subject()).await?;
    Ok(match members::add(&app, &principal, body).await? {
        Added::Created(m) => (StatusCode::CREATED, axum::Json(m)),
        Added::Existing(m) => (StatusCode::OK, axum::Json(m)),
        Added::Pending(m) => (StatusCode::CREATED, axum::Json(m)),
    })
}

/// Changes a member's roles and groups.
#[utoipa::path(post, path = "/members/{id}", tag = "members", request_body = UpdateMemberRequest,
    params(("id" = uuid::Uuid, Path, description = "Member (account) id")),
    description = "Administrators or read-write keys, not limited to groups. `roles` (at least \
one) and `groups` replace the member's; omitted fields stay. The last administrator is never \
demoted: 409 `last_admin`. The change applies to the member's next request. Emits \
`member.updated` with `previous_attributes`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Member), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_member(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateMemberRequest>,
) -> Result<axum::Json<Member>, ApiError> {
    Ok(axum::Json(
        members::update(&app, &principal, id, body).await?,
    ))
}

/// Removes a member.
#[utoipa::path(delete, path = "/members/{id}", tag = "members",
    params(("id" = uuid::Uuid, Path, description = "Member (account) id")),
    description = "Administrators or read-write keys, not limited to groups. The member's sessions \
stop working at once; the account itself stays (it may belong to other organizations). The last \
administrator is never removed: 409 `last_admin`. Emits `member.removed`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn remove_member(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    members::remove(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The members' MFA statuses.
#[utoipa::path(get, path = "/members/mfa/statuses", tag = "members",
    description = "Administrators or read-write keys, not limited to groups. Per member: \
`member_id`, `email`, `mfa_enabled` (a sign-in with a second factor was seen), `mfa_seen_at`, and \
`blocked_by_requirement` (the organization requires MFA and the member has not used it yet).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = [MemberMfaStatus]), (status = 403, body = ErrorBody)))]
pub async fn mfa_statuses(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<Vec<MemberMfaStatus>>, ApiError> {
    Ok(axum::Json(members::mfa_statuses(&app, &principal).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_members, add_member))
        .routes(utoipa_axum::routes!(update_member, remove_member))
        .routes(utoipa_axum::routes!(mfa_statuses))
}
