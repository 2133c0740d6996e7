//! SCIM 2.0 (RFC 7644) for the organization's identity provider, an extension beyond SPEC §5
//! with its own credential (`scim_token`: `Authorization: Bearer mwscim_…`) and SCIM's own
//! methods (PUT replaces, PATCH modifies), media type (`application/scim+json`) and error body.
//! Also the token routes `/scim-tokens*` for administrators.

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_api_types::identity::{
    ScimErrorBody, ScimObject, ScimTokenList, ScimTokenRequest, ScimTokenView,
};
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes, links};
use mailward_services::caller::Caller;
use mailward_services::scim::{self, Kind, Page, ScimError};
use serde::Deserialize;
use serde_json::Value;

const SCIM_JSON: &str = "application/scim+json";

/// A SCIM answer: the body with SCIM's media type.
fn scim_response(status: u16, body: &Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        [(header::CONTENT_TYPE, HeaderValue::from_static(SCIM_JSON))],
        body.to_string(),
    )
        .into_response()
}

fn error_response(e: &ScimError) -> Response {
    let mut response = scim_response(e.status, &e.body());
    if e.status == 401 {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"Mailward SCIM\""),
        );
    }
    response
}

/// The caller of a SCIM route: the organization whose SCIM token was presented.
pub struct ScimCaller(Caller);

impl FromRequestParts<AppState> for ScimCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        let unauthorized = |detail: &str| {
            error_response(&ScimError {
                status: 401,
                scim_type: None,
                detail: detail.to_owned(),
            })
        };
        let Some(token) = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
        else {
            return Err(unauthorized(
                "send a SCIM token as Authorization: Bearer mwscim_… (POST /scim-tokens)",
            ));
        };
        match scim::authenticate(app, token.trim()).await {
            Ok(Some(caller)) => Ok(ScimCaller(caller)),
            Ok(None) => Err(unauthorized("the SCIM token is unknown or was deleted")),
            Err(e) => Err(error_response(&e.into())),
        }
    }
}

/// A SCIM request body: JSON as `application/scim+json` or `application/json`.
fn body(bytes: &Bytes) -> Result<Value, ScimError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ScimError::bad("invalidSyntax", format!("the body is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(ScimError::bad("invalidSyntax", "the body is a JSON object"));
    }
    Ok(value)
}

fn reply(result: Result<Value, ScimError>) -> Response {
    match result {
        Ok(value) => scim_response(200, &value),
        Err(e) => error_response(&e),
    }
}

fn created(result: Result<(u16, Value), ScimError>) -> Response {
    match result {
        Ok((status, value)) => {
            let mut response = scim_response(status, &value);
            if let Some(location) = value["meta"]["location"].as_str()
                && let Ok(v) = HeaderValue::from_str(location)
            {
                response.headers_mut().insert(header::LOCATION, v);
            }
            response
        }
        Err(e) => error_response(&e),
    }
}

fn no_content(result: Result<(), ScimError>) -> Response {
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => error_response(&e),
    }
}

/// The query of a SCIM list (documentation: the route reads it into a `Page` itself, to
/// answer SCIM's error body).
#[allow(dead_code)]
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// `userName eq "…"` or `externalId eq "…"` (Users), `displayName eq "…"` (Groups).
    filter: Option<String>,
    /// 1-based index of the first result (default 1).
    #[serde(rename = "startIndex")]
    #[param(rename = "startIndex", minimum = 1)]
    start_index: Option<usize>,
    /// Results per page (default and most 200).
    #[param(minimum = 0)]
    count: Option<usize>,
}

fn list_params(raw: Option<&str>) -> Result<Page, ScimError> {
    let mut p = Page::default();
    let number = |name: &str, v: &str| {
        v.parse::<usize>()
            .map_err(|_| ScimError::bad("invalidValue", format!("{name} is a whole number")))
    };
    for (k, v) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        match k.as_ref() {
            "filter" => p.filter = Some(v.into_owned()),
            "startIndex" => p.start_index = Some(number("startIndex", &v)?),
            "count" => p.count = Some(number("count", &v)?),
            _ => {}
        }
    }
    Ok(p)
}

async fn list(kind: Kind, app: &AppState, caller: &Caller, query: Option<&str>) -> Response {
    match list_params(query) {
        Ok(page) => reply(kind.list(app, caller, &base(app), &page).await),
        Err(e) => error_response(&e),
    }
}

async fn create(kind: Kind, app: &AppState, caller: &Caller, bytes: &Bytes) -> Response {
    match body(bytes) {
        Ok(value) => created(kind.create(app, caller, &base(app), &value).await),
        Err(e) => error_response(&e),
    }
}

async fn change(
    kind: Kind,
    app: &AppState,
    caller: &Caller,
    target: (&str, bool),
    bytes: &Bytes,
) -> Response {
    match body(bytes) {
        Ok(value) => reply(kind.change(app, caller, &base(app), target, &value).await),
        Err(e) => error_response(&e),
    }
}

fn base(app: &AppState) -> String {
    links::base_url(&app.config)
}

/// The answers of the SCIM discovery routes.
#[derive(utoipa::IntoResponses)]
pub enum ScimReadAnswers {
    #[response(
        status = 200,
        description = "The document",
        content_type = "application/scim+json"
    )]
    Ok(ScimObject),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
}

/// The answers of a SCIM list.
#[derive(utoipa::IntoResponses)]
pub enum ScimListAnswers {
    #[response(
        status = 200,
        description = "A list response",
        content_type = "application/scim+json"
    )]
    Ok(ScimObject),
    #[response(
        status = 400,
        description = "`invalidFilter` or `invalidValue`",
        content_type = "application/scim+json"
    )]
    BadRequest(ScimErrorBody),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
}

/// The answers of a SCIM read.
#[derive(utoipa::IntoResponses)]
pub enum ScimGetAnswers {
    #[response(
        status = 200,
        description = "The resource",
        content_type = "application/scim+json"
    )]
    Ok(ScimObject),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
    #[response(
        status = 404,
        description = "Not found here",
        content_type = "application/scim+json"
    )]
    NotFound(ScimErrorBody),
}

/// The answers of a SCIM creation.
#[derive(utoipa::IntoResponses)]
pub enum ScimCreateAnswers {
    #[response(
        status = 201,
        description = "The resource",
        content_type = "application/scim+json"
    )]
    Created(ScimObject),
    #[response(
        status = 400,
        description = "`invalidValue`, `invalidSyntax` or `invalidPath`",
        content_type = "application/scim+json"
    )]
    BadRequest(ScimErrorBody),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
    #[response(
        status = 403,
        description = "A User not at a verified domain of the organization",
        content_type = "application/scim+json"
    )]
    Forbidden(ScimErrorBody),
    #[response(
        status = 409,
        description = "`uniqueness`: provisioned already, or a group of that name exists",
        content_type = "application/scim+json"
    )]
    Conflict(ScimErrorBody),
}

/// The answers of a SCIM replacement or modification.
#[derive(utoipa::IntoResponses)]
pub enum ScimChangeAnswers {
    #[response(
        status = 200,
        description = "The resource",
        content_type = "application/scim+json"
    )]
    Ok(ScimObject),
    #[response(
        status = 400,
        description = "`invalidValue`, `invalidSyntax`, `invalidPath`, `noTarget`, or `mutability` (the last administrator, or a User's userName)",
        content_type = "application/scim+json"
    )]
    BadRequest(ScimErrorBody),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
    #[response(
        status = 404,
        description = "Not found here",
        content_type = "application/scim+json"
    )]
    NotFound(ScimErrorBody),
    #[response(
        status = 409,
        description = "Changed meanwhile",
        content_type = "application/scim+json"
    )]
    Conflict(ScimErrorBody),
}

/// The answers of a SCIM deletion.
#[derive(utoipa::IntoResponses)]
pub enum ScimDeleteAnswers {
    #[response(status = 204, description = "Deleted")]
    Deleted,
    #[response(
        status = 400,
        description = "`mutability`: the last administrator",
        content_type = "application/scim+json"
    )]
    BadRequest(ScimErrorBody),
    #[response(
        status = 401,
        description = "No or an unknown SCIM token",
        content_type = "application/scim+json"
    )]
    Unauthorized(ScimErrorBody),
    #[response(
        status = 404,
        description = "Not found here",
        content_type = "application/scim+json"
    )]
    NotFound(ScimErrorBody),
    #[response(
        status = 409,
        description = "Changed meanwhile",
        content_type = "application/scim+json"
    )]
    Conflict(ScimErrorBody),
}

/// The service provider's configuration.
#[utoipa::path(get, path = "/scim/v2/ServiceProviderConfig", tag = "scim",
    security(("scim_token" = [])),
    description = "SCIM extension (see the `scim` tag): what this server supports (PATCH and filters with `eq`; no bulk, sort, ETags or password change). RFC 7643 §5.",
    responses(ScimReadAnswers))]
pub async fn scim_service_provider_config(
    State(app): State<AppState>,
    _caller: ScimCaller,
) -> Response {
    scim_response(200, &scim::service_provider_config(&base(&app)))
}

/// The resource types.
#[utoipa::path(get, path = "/scim/v2/ResourceTypes", tag = "scim",
    security(("scim_token" = [])),
    description = "SCIM extension: `User` at `/Users` and `Group` at `/Groups` (RFC 7643 §6), as a list response.",
    responses(ScimReadAnswers))]
pub async fn scim_resource_types(State(app): State<AppState>, _caller: ScimCaller) -> Response {
    let all = scim::resource_types(&base(&app));
    scim_response(200, &scim::list_response(all, 1, scim::MAX_COUNT))
}

/// The schemas.
#[utoipa::path(get, path = "/scim/v2/Schemas", tag = "scim",
    security(("scim_token" = [])),
    description = "SCIM extension: the User and Group schemas (RFC 7643 §7 and §8.7.1) reduced to the attributes Mailward keeps: `userName` (the email address, at a verified domain of the organization), `name.givenName`, `name.familyName`, `displayName`, `active`, `emails` (the userName), `roles` (admin, editor or viewer; viewer when none is sent), `groups` (read-only; set through Groups), `externalId`; Group `displayName` and `members`.",
    responses(ScimReadAnswers))]
pub async fn scim_schemas(State(app): State<AppState>, _caller: ScimCaller) -> Response {
    let all = scim::schemas(&base(&app));
    scim_response(200, &scim::list_response(all, 1, scim::MAX_COUNT))
}

/// One resource type.
#[utoipa::path(get, path = "/scim/v2/ResourceTypes/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "`User` or `Group`")),
    description = "SCIM extension: one resource type (RFC 7644 §4).",
    responses(ScimGetAnswers))]
pub async fn scim_resource_type(
    State(app): State<AppState>,
    _caller: ScimCaller,
    Path(id): Path<String>,
) -> Response {
    by_id(scim::resource_types(&base(&app)), &id, "resource type")
}

/// One schema.
#[utoipa::path(get, path = "/scim/v2/Schemas/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The schema URI")),
    description = "SCIM extension: one schema (RFC 7644 §4), by its URI.",
    responses(ScimGetAnswers))]
pub async fn scim_schema(
    State(app): State<AppState>,
    _caller: ScimCaller,
    Path(id): Path<String>,
) -> Response {
    by_id(scim::schemas(&base(&app)), &id, "schema")
}

fn by_id(all: Vec<Value>, id: &str, what: &str) -> Response {
    match all.into_iter().find(|item| item["id"] == id) {
        Some(item) => scim_response(200, &item),
        None => error_response(&ScimError::not_found(what)),
    }
}

/// Lists users.
#[utoipa::path(get, path = "/scim/v2/Users", tag = "scim",
    security(("scim_token" = [])), params(ListParams),
    description = "SCIM extension: the people the identity provider provisioned (active or not), oldest first; `filter` `userName eq \"…\"` (case-insensitive) or `externalId eq \"…\"`; any other filter is 400 `invalidFilter`.",
    responses(ScimListAnswers))]
pub async fn scim_list_users(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    list(Kind::Users, &app, &caller, query.as_deref()).await
}

/// Provisions a user.
#[utoipa::path(post, path = "/scim/v2/Users", tag = "scim",
    security(("scim_token" = [])),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "A User: `userName` (the email address) required"),
    description = "SCIM extension: provisions a person. The address must be at a verified domain of the organization (the single sign-on TXT proof, or a monitored domain), else 403. An account is created when none uses the address; the person joins with `roles` (viewer when none is sent) unless `active` is false. A member who was added otherwise is adopted (managed by SCIM from then on). Provisioned members without groups see no domain (the empty list that means every domain for other members does not apply).",
    responses(ScimCreateAnswers))]
pub async fn scim_create_user(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    bytes: Bytes,
) -> Response {
    create(Kind::Users, &app, &caller, &bytes).await
}

/// Reads a user.
#[utoipa::path(get, path = "/scim/v2/Users/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The User id (the account id)")),
    description = "SCIM extension: one provisioned User.",
    responses(ScimGetAnswers))]
pub async fn scim_get_user(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
) -> Response {
    reply(Kind::Users.get(&app, &caller, &base(&app), &id).await)
}

/// Replaces a user.
#[utoipa::path(put, path = "/scim/v2/Users/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The User id")),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "The whole User"),
    description = "SCIM extension: replaces the User's attributes (roles not sent are kept; `userName` cannot change: 400 `mutability`). `active` false deprovisions as DELETE does but keeps the User; true makes the person a member again with their roles and groups.",
    responses(ScimChangeAnswers))]
pub async fn scim_replace_user(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    change(Kind::Users, &app, &caller, (&id, false), &bytes).await
}

/// Modifies a user.
#[utoipa::path(patch, path = "/scim/v2/Users/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The User id")),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "A PatchOp: `Operations` of `add`, `replace` or `remove`, with or without `path`"),
    description = "SCIM extension: RFC 7644 §3.5.2 on `active`, `roles`, `displayName`, `externalId`, `name.givenName`, `name.familyName`. `active` false deprovisions (the membership goes with the person's sessions and MCP connections for the organization, at once; never the last administrator: 400 `mutability`).",
    responses(ScimChangeAnswers))]
pub async fn scim_patch_user(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    change(Kind::Users, &app, &caller, (&id, true), &bytes).await
}

/// Deprovisions a user.
#[utoipa::path(delete, path = "/scim/v2/Users/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The User id")),
    description = "SCIM extension: deprovisions: the membership is removed and the person's dashboard sessions and MCP connections for the organization end at once (their next call answers 401). Never the last administrator: 400 `mutability`.",
    responses(ScimDeleteAnswers))]
pub async fn scim_delete_user(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
) -> Response {
    no_content(Kind::Users.delete(&app, &caller, &id).await)
}

/// Lists groups.
#[utoipa::path(get, path = "/scim/v2/Groups", tag = "scim",
    security(("scim_token" = [])), params(ListParams),
    description = "SCIM extension: the organization's groups with their members (the members whose group limits include them); `filter` `displayName eq \"…\"`.",
    responses(ScimListAnswers))]
pub async fn scim_list_groups(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    list(Kind::Groups, &app, &caller, query.as_deref()).await
}

/// Creates a group.
#[utoipa::path(post, path = "/scim/v2/Groups", tag = "scim",
    security(("scim_token" = [])),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "A Group: `displayName`, optional `members`"),
    description = "SCIM extension: a new Mailward group; its `members` (existing members' ids) get it among their group limits.",
    responses(ScimCreateAnswers))]
pub async fn scim_create_group(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    bytes: Bytes,
) -> Response {
    create(Kind::Groups, &app, &caller, &bytes).await
}

/// Reads a group.
#[utoipa::path(get, path = "/scim/v2/Groups/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The Group id (the group's id)")),
    description = "SCIM extension: one group with its members.",
    responses(ScimGetAnswers))]
pub async fn scim_get_group(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
) -> Response {
    reply(Kind::Groups.get(&app, &caller, &base(&app), &id).await)
}

/// Replaces a group.
#[utoipa::path(put, path = "/scim/v2/Groups/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The Group id")),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "The whole Group"),
    description = "SCIM extension: the name and the whole member list (members left out lose the group from their limits).",
    responses(ScimChangeAnswers))]
pub async fn scim_replace_group(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    change(Kind::Groups, &app, &caller, (&id, false), &bytes).await
}

/// Modifies a group.
#[utoipa::path(patch, path = "/scim/v2/Groups/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The Group id")),
    request_body(content((ScimObject = "application/scim+json"), (ScimObject = "application/json")), description = "A PatchOp on `displayName` or `members` (add, remove, replace, `members[value eq \"…\"]`)"),
    description = "SCIM extension: renames the group, or adds, removes or replaces members (their group limits follow).",
    responses(ScimChangeAnswers))]
pub async fn scim_patch_group(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Response {
    change(Kind::Groups, &app, &caller, (&id, true), &bytes).await
}

/// Deletes a group.
#[utoipa::path(delete, path = "/scim/v2/Groups/{id}", tag = "scim",
    security(("scim_token" = [])),
    params(("id" = String, Path, description = "The Group id")),
    description = "SCIM extension: deletes the Mailward group (as `DELETE /groups/{id}` does).",
    responses(ScimDeleteAnswers))]
pub async fn scim_delete_group(
    State(app): State<AppState>,
    ScimCaller(caller): ScimCaller,
    Path(id): Path<String>,
) -> Response {
    no_content(Kind::Groups.delete(&app, &caller, &id).await)
}

/// Creates a SCIM token.
#[utoipa::path(post, path = "/scim-tokens", tag = "scim",
    security(("api_key" = []), ("session" = [])),
    request_body = ScimTokenRequest,
    description = "An extension: a SCIM bearer token for the organization's identity provider, shown once in `token` (stored as a digest). Administrators (or read-write keys) not limited to groups; at most 10 per organization (409 `limit_reached`).",
    responses(
        (status = 201, description = "The token", body = ScimTokenView),
        (status = 400, description = "`param` name", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`limit_reached`", body = ErrorBody),
    ))]
pub async fn create_scim_token(
    State(app): State<AppState>,
    principal: Principal,
    Json(input): Json<ScimTokenRequest>,
) -> Result<(StatusCode, axum::Json<ScimTokenView>), ApiError> {
    Ok((
        StatusCode::CREATED,
        axum::Json(scim::create_token(&app, &principal, input).await?),
    ))
}

/// Lists the SCIM tokens.
#[utoipa::path(get, path = "/scim-tokens", tag = "scim",
    security(("api_key" = []), ("session" = [])),
    description = "An extension: the organization's SCIM tokens (never the token itself), newest first. Administrators (or read-write keys) not limited to groups.",
    responses(
        (status = 200, description = "The tokens", body = ScimTokenList),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn list_scim_tokens(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<ScimTokenList>, ApiError> {
    Ok(axum::Json(scim::list_tokens(&app, &principal).await?))
}

/// Deletes a SCIM token.
#[utoipa::path(delete, path = "/scim-tokens/{id}", tag = "scim",
    params(("id" = uuid::Uuid, Path, description = "Token id")),
    security(("api_key" = []), ("session" = [])),
    description = "An extension: the token stops working at once.",
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn delete_scim_token(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    scim::delete_token(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(scim_service_provider_config))
        .routes(utoipa_axum::routes!(scim_resource_types))
        .routes(utoipa_axum::routes!(scim_schemas))
        .routes(utoipa_axum::routes!(scim_resource_type))
        .routes(utoipa_axum::routes!(scim_schema))
        .routes(utoipa_axum::routes!(scim_list_users, scim_create_user))
        .routes(utoipa_axum::routes!(
            scim_get_user,
            scim_replace_user,
            scim_patch_user,
            scim_delete_user
        ))
        .routes(utoipa_axum::routes!(scim_list_groups, scim_create_group))
        .routes(utoipa_axum::routes!(
            scim_get_group,
            scim_replace_group,
            scim_patch_group,
            scim_delete_group
        ))
        .routes(utoipa_axum::routes!(create_scim_token, list_scim_tokens))
        .routes(utoipa_axum::routes!(delete_scim_token))
}
