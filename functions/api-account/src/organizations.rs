//! Organizations (SPEC §4.2): create, update, delete (asynchronous) and dismiss onboarding.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::organizations::{
    CreateOrganizationRequest, Organization, OrganizationCreated, UpdateOrganizationRequest,
};
use mailward_api_types::{EmptyBody, ErrorBody};
use mailward_http::extract::{Json, OptionalJson, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::organizations;

/// Creates another organization. With a session the caller becomes its administrator; with an
/// API key the calling organization's administrators do, and the response carries a key.
#[utoipa::path(post, path = "/organizations", tag = "organizations", request_body = CreateOrganizationRequest,
    description = "Administrators or read-write API keys. With an API key `invite_email` must be \
omitted or null (400 naming `invite_email` otherwise); the calling organization's administrators \
become the new organization's administrators and the response carries `api_key`, a read-write key \
for the new organization shown once. With a session the signed-in person becomes its administrator; \
`invite_email` invites a second administrator: an existing account that already shares an \
organization with the signed-in person joins at once, anyone else (tenant trust) gets an emailed \
invitation and joins only by accepting it. \
Administrators limited to groups get 403. An organization creates at most 100 organizations \
through API keys (those it created and has not deleted): past that, 409 \
`organization_limit_reached` (a signed-in administrator is not limited).",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 201, body = OrganizationCreated),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody),
    ))]
pub async fn create_organization(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateOrganizationRequest>,
) -> Result<(StatusCode, axum::Json<OrganizationCreated>), ApiError> {
    let created = organizations::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Updates an organization.
#[utoipa::path(post, path = "/organizations/{id}", tag = "organizations", request_body = UpdateOrganizationRequest,
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Administrators or read-write API keys. Any other organization's id answers 404. \
`require_mfa` may be changed only by an administrator's signed-in session whose sign-in completed \
MFA (`amr` contains `mfa`); otherwise 403 `mfa_confirmation_required`. A concurrent update answers \
409 `conflict`. Emits `organization.updated` when something changed.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = Organization),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn update_organization(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateOrganizationRequest>,
) -> Result<axum::Json<Organization>, ApiError> {
    Ok(axum::Json(
        organizations::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes an organization asynchronously.
#[utoipa::path(delete, path = "/organizations/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Administrators or read-write API keys. Answers 202 at once: from then on every \
credential of the organization answers 401, and a background job removes all of its data (keys, \
memberships, settings). Repeating the call answers 404.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 202, description = "Deletion accepted"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub async fn delete_organization(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    organizations::delete(&app, &principal, id).await?;
    Ok(StatusCode::ACCEPTED)
}

/// Dismisses onboarding (idempotent: the first timestamp is kept).
#[utoipa::path(post, path = "/organizations/{id}/onboarding/dismiss", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id: the credential's own")),
    description = "Any credential of the organization that can read domains (read-only keys and \
viewers included). Repeating it keeps the first timestamp and changes nothing.",
    security(("api_key" = []), ("session" = [])),
    responses(
        (status = 200, body = Organization),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn dismiss_onboarding(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    OptionalJson(_): OptionalJson<EmptyBody>,
) -> Result<axum::Json<Organization>, ApiError> {
    Ok(axum::Json(
        organizations::dismiss_onboarding(&app, &principal, id).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(create_organization))
        .routes(utoipa_axum::routes!(
            update_organization,
            delete_organization
        ))
        .routes(utoipa_axum::routes!(dismiss_onboarding))
}
