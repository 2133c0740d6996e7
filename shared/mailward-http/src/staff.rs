//! The staff credential (an extension beyond SPEC §5): a bearer token from `POST
//! /staff/session` (the emailed code, then the authenticator app), for the `/staff/...` routes
//! only. It names no organization; its audience (`mailward-staff`) makes every other route
//! refuse it, and customer credentials never open a staff route.

use crate::auth::JWT_ISSUER;
use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mailward_services::AppState;
use mailward_services::caller::StaffMember;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The audience of staff tokens.
pub const STAFF_AUDIENCE: &str = "mailward-staff";

/// How long a staff token lives (one hour: staff sign in again, with their app, each time).
pub const STAFF_TOKEN_TTL_SECS: i64 = 3600;

#[derive(Debug, Serialize, Deserialize)]
struct StaffClaims {
    sub: Uuid,
    email: String,
    iss: String,
    aud: String,
    iat: i64,
    exp: i64,
}

/// A staff token for `member`, issued at `now` (unix seconds).
pub fn mint_staff_token(secret: &[u8], member: &StaffMember, now: i64) -> Result<String, ApiError> {
    let claims = StaffClaims {
        sub: member.account_id,
        email: member.email.clone(),
        iss: JWT_ISSUER.into(),
        aud: STAFF_AUDIENCE.into(),
        iat: now,
        exp: now + STAFF_TOKEN_TTL_SECS,
    };
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret),
    )
    .map_err(ApiError::internal)
}

/// A request made with a staff token whose person is still on the staff list.
#[derive(Debug, Clone)]
pub struct StaffPrincipal(pub StaffMember);

fn refused(message: &'static str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
}

impl FromRequestParts<AppState> for StaffPrincipal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            })
            .ok_or_else(|| refused("send a staff token (POST /staff/session) as a bearer token"))?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[JWT_ISSUER]);
        validation.set_audience(&[STAFF_AUDIENCE]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 30;
        let claims = jsonwebtoken::decode::<StaffClaims>(
            token,
            &DecodingKey::from_secret(&state.config.secret_key),
            &validation,
        )
        .map_err(|_| refused("the staff token is invalid or expired"))?
        .claims;
        // Checked at every request: someone taken off the staff list loses access at once.
        if !state.config.is_staff(&claims.email) {
            return Err(refused("this person is no longer on the staff list"));
        }
        Ok(Self(StaffMember {
            account_id: claims.sub,
            email: claims.email,
        }))
    }
}
