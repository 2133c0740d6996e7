//! A person's own identity routes (an extension of SPEC §5): their dashboard sessions and
//! sign-out, and their authenticator app (TOTP, RFC 6238) with its recovery codes. These stay
//! open while an organization's MFA requirement holds the session at the door, so a member
//! can enrol and go on.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::identity::{
    MfaCodeRequest, MfaStatus, RecoveryCodes, SessionList, TotpEnrollment,
};
use mailward_http::auth::GatedPrincipal;
use mailward_http::extract::{Json, PathId};
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::client_subject;
use mailward_http::{ApiError, AppState, Routes};
use mailward_oauth::{mfa, sessions};

/// The signed-in person's live dashboard sessions.
#[utoipa::path(get, path = "/oauth/sessions", tag = "oauth",
    security(("session" = [])),
    description = "An extension: the signed-in person's live dashboard sessions in every organization, newest first, with `current` marking the one making the request and `amr` how each signed in. Sessions belong to a person: API keys get 403 `session_required`. Reachable while an organization's MFA requirement holds the session.",
    responses(
        (status = 200, description = "The sessions", body = SessionList),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn list_sessions(
    State(app): State<AppState>,
    principal: GatedPrincipal,
) -> Result<axum::Json<SessionList>, ApiError> {
    Ok(axum::Json(sessions::list(&app, &principal).await?))
}

/// Ends one of the person's sessions.
#[utoipa::path(delete, path = "/oauth/sessions/{id}", tag = "oauth",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    security(("session" = [])),
    description = "An extension: ends one of the signed-in person's sessions; its token answers 401 from its next request.",
    responses(
        (status = 204, description = "Ended"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn revoke_session(
    State(app): State<AppState>,
    principal: GatedPrincipal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    sessions::revoke(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Signs out.
#[utoipa::path(delete, path = "/oauth/session", tag = "oauth",
    security(("session" = [])),
    description = "An extension: signs out, ending the session the token names; the token answers 401 from its next request. A local operator token (`mailward token`) names no session and only expires.",
    responses(
        (status = 204, description = "Signed out"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn sign_out(
    State(app): State<AppState>,
    principal: GatedPrincipal,
) -> Result<StatusCode, ApiError> {
    sessions::sign_out(&app, &principal).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The person's second factor.
#[utoipa::path(get, path = "/account/mfa", tag = "oauth",
    security(("session" = [])),
    description = "An extension: whether the signed-in person has an authenticator app (confirmed or pending), how many recovery codes remain, and whether this session completed MFA. API keys are not people: they get 403 `session_required`, and an organization's MFA requirement never applies to them.",
    responses(
        (status = 200, description = "The status", body = MfaStatus),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub async fn mfa_status(
    State(app): State<AppState>,
    principal: GatedPrincipal,
) -> Result<axum::Json<MfaStatus>, ApiError> {
    let account = principal.require_person("second factors")?;
    let session_mfa = matches!(
        principal.credential,
        mailward_http::auth::Credential::Session { mfa: true, .. }
    );
    Ok(axum::Json(mfa::status(&app, account, session_mfa).await?))
}

/// Starts enrolling an authenticator app.
#[utoipa::path(post, path = "/account/mfa/totp", tag = "oauth",
    security(("session" = [])),
    description = "An extension: starts enrolling an authenticator app (TOTP, RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps, one step of drift accepted). Answers the secret, the `otpauth://` URI and the URI as an SVG QR code; nothing protects the account until `POST /account/mfa/totp/confirm` with a first code. Starting again replaces a pending enrolment; an account with a confirmed app gets 409 `mfa_already_enrolled`.",
    responses(
        (status = 200, description = "The pending authenticator", body = TotpEnrollment),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`mfa_already_enrolled`", body = ErrorBody),
    ))]
pub async fn start_totp(
    State(app): State<AppState>,
    principal: GatedPrincipal,
) -> Result<axum::Json<TotpEnrollment>, ApiError> {
    let account = principal.require_person("second factors")?;
    Ok(axum::Json(mfa::start(&app, account).await?))
}

/// Confirms the authenticator with its first code.
#[utoipa::path(post, path = "/account/mfa/totp/confirm", tag = "oauth",
    security(("session" = [])),
    request_body = MfaCodeRequest,
    description = "An extension: the app's current code confirms the pending authenticator. Answers ten single-use recovery codes, shown once (stored only as HMACs). The session that confirms counts as having completed MFA, so a member held by an organization's requirement goes on at once; later sign-ins ask for the app's code after the emailed one. Wrong codes are 400 `mfa_code_incorrect` and count toward the address's daily budget of wrong codes per client (shared with sign-in codes; past it 429).",
    responses(
        (status = 200, description = "The recovery codes", body = RecoveryCodes),
        (status = 400, description = "`param` code: `mfa_code_incorrect` or `mfa_code_reused`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`mfa_enrollment_not_started` or `mfa_already_enrolled`", body = ErrorBody),
        (status = 429, description = "The daily budget of wrong codes from this client", body = ErrorBody),
    ))]
pub async fn confirm_totp(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    principal: GatedPrincipal,
    Json(input): Json<MfaCodeRequest>,
) -> Result<axum::Json<RecoveryCodes>, ApiError> {
    let account = principal.require_person("second factors")?;
    let codes = mfa::confirm(&app, account, &input.code, &client_subject(&ip)).await?;
    sessions::mark_mfa(&app, &principal).await?;
    Ok(axum::Json(codes))
}

/// Removes the authenticator.
#[utoipa::path(post, path = "/account/mfa/totp/disable", tag = "oauth",
    security(("session" = [])),
    request_body = MfaCodeRequest,
    description = "An extension: a current app code (or a recovery code) removes the authenticator and its recovery codes; a pending enrolment is dropped with any code. Members of an organization that requires MFA are then held at its door again until they enrol.",
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "`param` code: `mfa_code_incorrect` or `mfa_code_reused`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`mfa_not_enrolled`", body = ErrorBody),
        (status = 429, description = "The daily budget of wrong codes from this client", body = ErrorBody),
    ))]
pub async fn disable_totp(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    principal: GatedPrincipal,
    Json(input): Json<MfaCodeRequest>,
) -> Result<StatusCode, ApiError> {
    let account = principal.require_person("second factors")?;
    mfa::disable(&app, account, &input.code, &client_subject(&ip)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Confirms the current session with a second factor.
#[utoipa::path(post, path = "/account/mfa/verify", tag = "oauth",
    security(("session" = [])),
    request_body = MfaCodeRequest,
    description = "An extension: an app code (or a recovery code) marks the current session as having completed MFA (`mfa_required` answers name this route). Each app code works once in its step.",
    responses(
        (status = 200, description = "The status, `session_mfa` true", body = MfaStatus),
        (status = 400, description = "`param` code: `mfa_code_incorrect` or `mfa_code_reused`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`mfa_not_enrolled`, or `session_not_stored` for a local operator token", body = ErrorBody),
        (status = 429, description = "The daily budget of wrong codes from this client", body = ErrorBody),
    ))]
pub async fn verify_mfa(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    principal: GatedPrincipal,
    Json(input): Json<MfaCodeRequest>,
) -> Result<axum::Json<MfaStatus>, ApiError> {
    Ok(axum::Json(
        sessions::step_up(&app, &principal, &input.code, &client_subject(&ip)).await?,
    ))
}

/// Replaces the recovery codes.
#[utoipa::path(post, path = "/account/mfa/recovery-codes", tag = "oauth",
    security(("session" = [])),
    request_body = MfaCodeRequest,
    description = "An extension: a current app code replaces every recovery code with ten new ones, shown once.",
    responses(
        (status = 200, description = "The new recovery codes", body = RecoveryCodes),
        (status = 400, description = "`param` code: `mfa_code_incorrect` or `mfa_code_reused`", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "`mfa_not_enrolled`", body = ErrorBody),
        (status = 429, description = "The daily budget of wrong codes from this client", body = ErrorBody),
    ))]
pub async fn regenerate_recovery_codes(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    principal: GatedPrincipal,
    Json(input): Json<MfaCodeRequest>,
) -> Result<axum::Json<RecoveryCodes>, ApiError> {
    let account = principal.require_person("second factors")?;
    Ok(axum::Json(
        mfa::regenerate(&app, account, &input.code, &client_subject(&ip)).await?,
    ))
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_sessions))
        .routes(utoipa_axum::routes!(revoke_session))
        .routes(utoipa_axum::routes!(sign_out))
        .routes(utoipa_axum::routes!(mfa_status))
        .routes(utoipa_axum::routes!(start_totp))
        .routes(utoipa_axum::routes!(confirm_totp))
        .routes(utoipa_axum::routes!(disable_totp))
        .routes(utoipa_axum::routes!(verify_mfa))
        .routes(utoipa_axum::routes!(regenerate_recovery_codes))
}
