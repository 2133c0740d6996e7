//! `POST /oauth/session/start` and `POST /oauth/session`: a dashboard session (a Bearer token
//! for the REST API) from the same emailed-code sign-in as the authorization server. This is
//! how a person gets a session; `mailward token` stays for scripts on the local stack.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::oauth::{Session, SessionRequest, SessionStartRequest, SessionStarted};
use mailward_api_types::{ErrorBody, RateLimitBody, ThrottledBody};
use mailward_http::auth::{JWT_AUDIENCE, JWT_ISSUER, SessionClaims, mint_session_token};
use mailward_http::extract::Json;
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Routes};
use mailward_oauth::{session, sessions};
use mailward_services::config::Scope;

pub use mailward_oauth::sessions::SESSION_TTL_SECS;

/// Emails a sign-in code.
#[utoipa::path(post, path = "/oauth/session/start", tag = "oauth", security(()),
    request_body = SessionStartRequest,
    description = "Sends a six-digit sign-in code to the address when a Mailward account uses it; the answer is the same either way. Throttled per client address (the `signup` bucket, and `signin`, shared by every sign-in step; IPv6 clients per /64) and per address.",
    responses(
        (status = 202, description = "Started", body = SessionStarted),
        (status = 400, description = "`param` email", body = ErrorBody),
        (status = 429, description = "Too many codes for the address (error body), or the `signup` or `signin` bucket of the client address (rate-limit body)", body = ThrottledBody),
    ))]
pub async fn start_session(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    Json(input): Json<SessionStartRequest>,
) -> Result<(StatusCode, axum::Json<SessionStarted>), ApiError> {
    let client = mailward_http::rate_limit::client_subject(&ip);
    enforce_logged(&app, log.as_deref(), Scope::Signup, &client).await?;
    enforce_logged(&app, log.as_deref(), Scope::Signin, &client).await?;
    let started = session::start(&app, input).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(started)))
}

/// Trades the code for a session token.
#[utoipa::path(post, path = "/oauth/session", tag = "oauth", security(()),
    request_body = SessionRequest,
    description = "Checks the emailed code (five wrong codes end the sign-in) and answers a Bearer token for the REST API, scoped to the organization (`organization_id`, needed when the account has several) and the person's role there; it lives eight hours. The token names a stored session (`sid`): it ends at sign-out (`DELETE /oauth/session`) or revocation (`DELETE /oauth/sessions/{id}`), at its next request. When the account has an authenticator app, a right code alone answers 403 `mfa_required` (`param` mfa_code, `details.signin_id`): send `mfa_code` (the app's current code, or a recovery code) with the same `signin_id`, with or without `code`; the token then carries `amr` [\"otp\", \"mfa\"] (RFC 8176). A wrong `mfa_code` is 400 `mfa_code_incorrect` and counts toward the sign-in's five and the daily budget below; an app code already used in its 30-second step is 400 `mfa_code_reused`. Counts in the `signin` bucket per client address (IPv6 per /64). An address takes at most 20 wrong codes a day from one client address, across sign-ins: past that, codes for it from there are refused until the end of the UTC day, even a right one (429, `scope` `signin`), and the address's owner is mailed once. Other clients are not affected, so a stranger cannot lock the owner out.",
    responses(
        (status = 200, description = "The session", body = Session),
        (status = 400, description = "`param` code, mfa_code, signin_id or organization_id", body = ErrorBody),
        (status = 403, description = "Not a member of an active organization (`organization_required`), or the second factor is needed (`mfa_required`)", body = ErrorBody),
        (status = 429, description = "The `signin` bucket, or the address's daily budget of wrong codes from this client (scope `signin`)", body = RateLimitBody),
    ))]
pub async fn create_session(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    headers: axum::http::HeaderMap,
    Json(input): Json<SessionRequest>,
) -> Result<axum::Json<Session>, ApiError> {
    let client = mailward_http::rate_limit::client_subject(&ip);
    enforce_logged(&app, log.as_deref(), Scope::Signin, &client).await?;
    let signed_in = match session::finish(&app, input, &client).await {
        Ok(found) => found,
        Err(e) if e.code() == "rate_limit_exceeded" => {
            let retry = e.retry_after_secs().unwrap_or(3600);
            return Err(mailward_http::rate_limit::too_many_requests(
                mailward_http::rate_limit::BucketState {
                    scope: Scope::Signin,
                    limit: mailward_oauth::signin::SIGNIN_FAILURE_BUDGET as u32,
                    window_secs: 86_400,
                    remaining: 0,
                    reset_secs: u32::try_from(retry).unwrap_or(u32::MAX),
                    exceeded: true,
                },
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let membership = &signed_in.membership;
    let user_agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let stored = sessions::open(
        &app,
        signed_in.account.id,
        membership.org_id,
        signed_in.amr.clone(),
        &signed_in.provider,
        user_agent,
    )
    .await?;
    let role = membership.role();
    let claims = SessionClaims {
        sub: signed_in.account.id,
        org: membership.org_id,
        role,
        amr: signed_in.amr,
        iss: JWT_ISSUER.into(),
        aud: JWT_AUDIENCE.into(),
        iat: stored.created_at.unix_timestamp(),
        exp: stored.expires_at.unix_timestamp(),
        sid: Some(stored.id),
    };
    let token = mint_session_token(&app.config.secret_key, &claims).map_err(ApiError::internal)?;
    Ok(axum::Json(Session {
        token,
        token_type: "Bearer".into(),
        expires_in: SESSION_TTL_SECS,
        organization_id: membership.org_id,
        role: role.as_str().to_owned(),
    }))
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(start_session))
        .routes(utoipa_axum::routes!(create_session))
}
