//! Single sign-on (an extension of SPEC §5): the organization's OpenID Connect connection
//! (`/sso`, administrators), and the trip to the provider (`/oauth/sso/start`, the provider's
//! return to `/oauth/sso/callback`).

use crate::pages::{error_line, page};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_api_types::identity::{SsoConnectionRequest, SsoConnectionView};
use mailward_domain::identity::SsoReturn;
use mailward_http::extract::{Json, Query};
use mailward_http::{ApiError, AppState, Principal, Routes, links};
use mailward_oauth::flow;
use mailward_oauth::signin;
use mailward_oauth::sso::{self, SsoError};
use serde::Deserialize;
use uuid::Uuid;

/// The organization's single sign-on connection.
#[utoipa::path(get, path = "/sso", tag = "organizations",
    security(("api_key" = []), ("session" = [])),
    description = "An extension of SPEC §5: the organization's OpenID Connect provider for single sign-on, with the redirect URI to register at the provider and, for each email domain, the TXT record that proves it. Administrators (or read-write keys) not limited to groups; 404 when none is configured.",
    responses(
        (status = 200, description = "The connection", body = SsoConnectionView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn get_sso(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<SsoConnectionView>, ApiError> {
    Ok(axum::Json(
        sso::get(&app, &principal, &links::base_url(&app.config)).await?,
    ))
}

/// Creates or updates the connection.
#[utoipa::path(post, path = "/sso", tag = "organizations",
    security(("api_key" = []), ("session" = [])),
    request_body = SsoConnectionRequest,
    description = "An extension of SPEC §5: creates the organization's OpenID Connect connection (`issuer`, `client_id` and `client_secret` required; the secret is sealed and never shown again) or updates the fields sent. Register the answer's `redirect_uri` at the provider. Each domain of `domains` is routed to the provider once its TXT record is published and `POST /sso/verify` saw it; a domain kept keeps its proof. `enforced` refuses emailed codes for the verified domains. `jit_role` lets a person of a verified domain who is not a member join with that role on their first sign-in (null: only members sign in). With `trust_provider_mfa`, an ID token whose `amr` contains `mfa`, or whose `acr` is one of `mfa_acr_values`, satisfies `require_mfa`; otherwise the person also needs Mailward's authenticator app. Sign-ins record `auth_provider` `google` or `microsoft` for those issuers, `oidc` for any other. Administrators (or read-write keys) not limited to groups.",
    responses(
        (status = 200, description = "The connection", body = SsoConnectionView),
        (status = 400, description = "`param` names the field", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, description = "Changed meanwhile", body = ErrorBody),
    ))]
pub async fn save_sso(
    State(app): State<AppState>,
    principal: Principal,
    Json(input): Json<SsoConnectionRequest>,
) -> Result<axum::Json<SsoConnectionView>, ApiError> {
    Ok(axum::Json(
        sso::save(&app, &principal, &links::base_url(&app.config), input).await?,
    ))
}

/// Removes the connection.
#[utoipa::path(delete, path = "/sso", tag = "organizations",
    security(("api_key" = []), ("session" = [])),
    description = "An extension of SPEC §5: removes the connection; its people sign in with emailed codes again.",
    responses(
        (status = 204, description = "Removed"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "Changed meanwhile", body = ErrorBody),
    ))]
pub async fn delete_sso(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<StatusCode, ApiError> {
    sso::delete(&app, &principal).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Looks for the domains' TXT proofs.
#[utoipa::path(post, path = "/sso/verify", tag = "organizations",
    security(("api_key" = []), ("session" = [])),
    description = "An extension of SPEC §5: asks DNS (uncached) for each unverified domain's TXT record (`txt_name`, `txt_value`) and routes the proven ones to the provider. A proven domain is also a verified domain of the organization for adding members (the tenant-trust rule). The answer is the connection.",
    responses(
        (status = 200, description = "The connection", body = SsoConnectionView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, description = "Changed meanwhile", body = ErrorBody),
    ))]
pub async fn verify_sso(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<SsoConnectionView>, ApiError> {
    Ok(axum::Json(
        sso::verify(&app, &principal, &links::base_url(&app.config)).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StartParams {
    /// The `signin_id` of `POST /oauth/session/start`.
    signin_id: Uuid,
}

fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, "no-store"),
        ],
    )
        .into_response()
}

fn refused(message: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "Single sign-on did not complete",
        &error_line(Some(message)),
    )
}

/// Sends the browser to the organization's provider.
#[utoipa::path(get, path = "/oauth/sso/start", tag = "oauth", security(()),
    params(StartParams),
    description = "An extension: the `sso_url` of `POST /oauth/session/start`. Redirects the browser to the organization's OpenID Connect provider (authorization code with PKCE S256, `state` and `nonce`, `login_hint` the address); the provider returns to `/oauth/sso/callback`.",
    responses(
        (status = 303, description = "To the provider"),
        (status = 400, description = "`signin_id` missing or not a UUID (JSON naming it)", body = ErrorBody),
        (status = 404, description = "Unknown or expired sign-in, or no single sign-on for its address (a page)", content_type = "text/html"),
        (status = 503, description = "The provider's discovery document could not be read (a page)", content_type = "text/html"),
    ))]
pub async fn start(State(app): State<AppState>, Query(params): Query<StartParams>) -> Response {
    let not_found = |message: &str| {
        page(
            StatusCode::NOT_FOUND,
            "Single sign-on did not start",
            &error_line(Some(message)),
        )
    };
    let Ok(Some(email)) = signin::challenge_email(&app, params.signin_id).await else {
        return not_found("This sign-in is unknown or expired; start again.");
    };
    let connection = match sso::route(&app, &email).await {
        Ok(Some(c)) => c,
        Ok(None) => return not_found("No single sign-on is set up for this address."),
        Err(e) => {
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Single sign-on is unavailable",
                &error_line(Some(e.message())),
            );
        }
    };
    let base = links::base_url(&app.config);
    match sso::begin(
        &app,
        &base,
        &connection,
        &email,
        SsoReturn::Session(params.signin_id),
    )
    .await
    {
        Ok(url) => see_other(&url),
        Err(e) => page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Single sign-on is unavailable",
            &error_line(Some(e.message())),
        ),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CallbackParams {
    /// The `state` sent to the provider (used once).
    state: Option<String>,
    /// The authorization code.
    code: Option<String>,
    /// The provider's error, when it refused.
    error: Option<String>,
}

/// The provider's return.
#[utoipa::path(get, path = "/oauth/sso/callback", tag = "oauth", security(()),
    params(CallbackParams),
    description = "An extension: the redirect URI to register at the provider. Takes the `state` once (a replay is refused), trades the code with the PKCE verifier and the client's credentials, and checks the ID token: the provider's JWKS signature (asymmetric algorithms only), `iss`, `aud` (and `azp`), `exp` and `iat` by the service clock, the `nonce`, and a verified email at one of the connection's verified domains. The person must be a member, or join with `jit_role`. A dashboard sign-in then completes with `POST /oauth/session` and its `signin_id`; the MCP consent pages continue in the browser; a sign-in started on the web application's page returns the browser to `/app/sign-in/sso`, which opens its session.",
    responses(
        (status = 200, description = "Signed in (a page), or the next sign-in page", content_type = "text/html"),
        (status = 400, description = "Refused: unknown or used state, the provider's error, a token that failed a check, or a person who may not sign in (a page)", content_type = "text/html"),
    ))]
pub async fn callback(
    State(app): State<AppState>,
    Query(params): Query<CallbackParams>,
) -> Response {
    let base = links::base_url(&app.config);
    let Some(state) = params.state.as_deref() else {
        return refused(&SsoError::State.to_string());
    };
    let (attempt, result) = match sso::finish(
        &app,
        &base,
        state,
        params.code.as_deref(),
        params.error.as_deref(),
    )
    .await
    {
        Ok(done) => done,
        Err(e) => return refused(&e.to_string()),
    };
    match attempt.ret {
        SsoReturn::Session(id) => match signin::complete_with_sso(&app, id, result).await {
            Ok(()) => page(
                StatusCode::OK,
                "You are signed in",
                "<p>Your organization's identity provider signed you in. Go back to where you started the sign-in: it completes there.</p>",
            ),
            Err(e) => refused(&e.to_string()),
        },
        SsoReturn::Web(id) => match signin::complete_with_sso(&app, id, result).await {
            Ok(()) => see_other(&format!("{base}/app/sign-in/sso?signin={id}")),
            Err(e) => refused(&e.to_string()),
        },
        SsoReturn::Consent(sealed) => {
            let Some(state) = flow::open(&app, &sealed) else {
                return refused("The sign-in took too long; start again from your assistant.");
            };
            crate::authorize::after_sso(&app, state, &attempt.email, result).await
        }
    }
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(get_sso, save_sso, delete_sso))
        .routes(utoipa_axum::routes!(verify_sso))
        .routes(utoipa_axum::routes!(start))
        .routes(utoipa_axum::routes!(callback))
}
