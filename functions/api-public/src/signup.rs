//! Headless signup (SPEC §4.7, §5.5): `POST /signup` emails a six-digit code; `POST
//! /signup/verify` trades it for an organization, its first admin account and an API key.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::organizations::OrganizationWithKey;
use mailward_api_types::signup::{SignupRequest, SignupStarted, VerifyRequest};
use mailward_api_types::{ErrorBody, ThrottledBody};
use mailward_http::extract::Json;
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Routes};
use mailward_services::config::Scope;
use mailward_services::signup;

/// Starts a signup: validates, throttles per address, stores a challenge and emails the code.
#[utoipa::path(post, path = "/signup", tag = "signup", request_body = SignupRequest,
    description = "Emails a six-digit code valid for 15 minutes. Refuses disposable addresses (422 \
`disposable_email_domain`), more than the configured number of codes per address per hour (429 \
`signup_email_throttled`, default 5) and more than the `signup` bucket allows per client IP (429 \
`rate_limit_exceeded`). No account exists until the code is verified.",
    responses(
        (status = 201, description = "Code sent", body = SignupStarted),
        (status = 400, description = "Invalid field (`param` names it)", body = ErrorBody),
        (status = 422, description = "`disposable_email_domain`", body = ErrorBody),
        (status = 429, description = "`signup_email_throttled` (error body) or the `signup` bucket (rate-limit body)", body = ThrottledBody),
        (status = 503, description = "The email could not be sent", body = ErrorBody),
    ))]
pub async fn start_signup(
    State(app): State<AppState>,
    Extension(ClientIp(ip)): Extension<ClientIp>,
    log: Option<Extension<RateLimitLog>>,
    Json(body): Json<SignupRequest>,
) -> Result<(StatusCode, axum::Json<SignupStarted>), ApiError> {
    enforce_logged(
        &app,
        log.as_deref(),
        Scope::Signup,
        &mailward_http::rate_limit::client_subject(&ip),
    )
    .await?;
    let started = signup::start(&app, body).await?;
    Ok((StatusCode::CREATED, axum::Json(started)))
}

/// Verifies the code and creates the organization, admin account and API key.
#[utoipa::path(post, path = "/signup/verify", tag = "signup", request_body = VerifyRequest,
    description = "Succeeds once per signup, within 15 minutes and before the fifth incorrect code. \
An incorrect code answers 400 `signup_code_incorrect` with `details.attempts_remaining`; an unknown, \
expired or exhausted signup answers 400 `signup_challenge_invalid`. The response carries the \
organization and an organization-scoped read-write API key, shown exactly once. An address that \
already has an account gets a new organization on that account.",
    responses(
        (status = 201, description = "Organization and API key created", body = OrganizationWithKey),
        (status = 400, description = "`signup_code_incorrect`, `signup_challenge_invalid` or an invalid field", body = ErrorBody),
    ))]
pub async fn verify_signup(
    State(app): State<AppState>,
    Json(body): Json<VerifyRequest>,
) -> Result<(StatusCode, axum::Json<OrganizationWithKey>), ApiError> {
    let created = signup::verify(&app, body).await?;
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(start_signup))
        .routes(utoipa_axum::routes!(verify_signup))
}
