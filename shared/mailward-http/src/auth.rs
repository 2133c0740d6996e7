//! Credentials (SPEC §5): API keys over HTTP Basic and dashboard session JWTs over Bearer.
//!
//! The request middleware resolves the `Authorization` header once into a [`ResolvedAuth`]
//! (so the global rate limit can be keyed by key or subject); handlers then take a [`Principal`]
//! extractor, which turns "no credential" or "rejected credential" into the 401 of SPEC §7.3 and
//! enforces the version header for API keys (SPEC §9.3). The organization a handler acts on is
//! always `Principal::org_id`: it comes from the credential, never from the request.

use crate::error::ApiError;
use crate::version::{missing_version, requested_version};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mailward_api_types::ApiVersion;
use mailward_domain::identity::amr_has_mfa;
use mailward_domain::model::{OrgState, Role};
use mailward_services::AppState;
pub use mailward_services::caller::{Caller, Credential};
use mailward_store::{accounts, api_keys, identity, orgs};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

/// JWT issuer of dashboard sessions.
pub const JWT_ISSUER: &str = "mailward";
/// JWT audience of dashboard sessions (the REST API).
pub const JWT_AUDIENCE: &str = "mailward-api";

/// An authenticated caller, as the route extractor yields it: the service-layer [`Caller`]
/// (organization from the credential, permission checks) after the version header and the
/// `api_key` bucket were enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub Caller);

impl std::ops::Deref for Principal {
    type Target = Caller;

    fn deref(&self) -> &Caller {
        &self.0
    }
}

/// Dashboard session claims.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionClaims {
    /// The account id.
    pub sub: Uuid,
    /// The organization the session is scoped to.
    pub org: Uuid,
    /// The role in that organization.
    pub role: Role,
    /// Authentication methods; `mfa` when a second factor was used.
    #[serde(default)]
    pub amr: Vec<String>,
    /// Issuer.
    pub iss: String,
    /// Audience.
    pub aud: String,
    /// Issued at (Unix seconds).
    pub iat: i64,
    /// Expiry (Unix seconds).
    pub exp: i64,
    /// The stored dashboard session (`POST /oauth/session` always sets it; it is checked at
    /// every request, so sign-out and revocation end the token at once). Tokens without it
    /// are the local CLI's operator tokens (`mailward token`), which only expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<Uuid>,
}

/// Why a signed-in member of an organization that requires MFA is held at the door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MfaGate {
    /// The person has no authenticator: enrol first (403 `mfa_enrollment_required`).
    Enroll,
    /// The person has one, but this session did not use it (403 `mfa_required`).
    StepUp,
}

impl MfaGate {
    /// The 403 a gated session gets on every route but its own identity routes.
    pub fn refusal(self) -> ApiError {
        let (code, message, next) = match self {
            MfaGate::Enroll => (
                "mfa_enrollment_required",
                "this organization requires multi-factor authentication: enrol an authenticator app first (POST /account/mfa/totp, then POST /account/mfa/totp/confirm)",
                "/account/mfa/totp",
            ),
            MfaGate::StepUp => (
                "mfa_required",
                "this organization requires multi-factor authentication: confirm this session with a code from your authenticator app (POST /account/mfa/verify) or sign in again with it",
                "/account/mfa/verify",
            ),
        };
        ApiError::new(StatusCode::FORBIDDEN, code, message).details(json!({ "next": next }))
    }
}

/// Signs a session token. The dashboard's identity provider does this in production; the local
/// stack's `mailward token` command and the tests use it directly.
pub fn mint_session_token(
    secret: &[u8],
    claims: &SessionClaims,
) -> Result<String, jsonwebtoken::errors::Error> {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )
}

fn verify_session_token(secret: &[u8], token: &str) -> Option<SessionClaims> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_issuer(&[JWT_ISSUER]);
    validation.set_audience(&[JWT_AUDIENCE]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.leeway = 30;
    jsonwebtoken::decode::<SessionClaims>(token, &DecodingKey::from_secret(secret), &validation)
        .ok()
        .map(|data| data.claims)
}

/// The credential as resolved by the middleware, before any route decided it needs one.
#[derive(Debug, Clone)]
pub enum ResolvedAuth {
    /// No `Authorization` header.
    Anonymous,
    /// A valid credential (the version is checked later by [`Principal`]).
    Valid {
        org_id: Uuid,
        credential: Credential,
        /// The groups a member is limited to (`None`: every domain).
        groups: Option<Vec<Uuid>>,
        /// Set when the organization requires MFA and this session has not completed it.
        mfa_gate: Option<MfaGate>,
        /// Staff's reason, while Mailward staff hold the organization suspended: the API
        /// then answers reads only.
        suspended: Option<String>,
    },
    /// A credential was sent and refused; the message says why (SPEC §7.3).
    Rejected(&'static str),
}

/// Resolves the `Authorization` header. Store failures surface as an error (503), not a 401.
pub async fn resolve(state: &AppState, headers: &HeaderMap) -> Result<ResolvedAuth, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(ResolvedAuth::Anonymous);
    };
    let Ok(value) = value.to_str() else {
        return Ok(ResolvedAuth::Rejected(
            "the Authorization header is malformed",
        ));
    };
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if scheme.eq_ignore_ascii_case("basic") {
        let Some(key) = basic_user(rest.trim()) else {
            return Ok(ResolvedAuth::Rejected(
                "the Basic credential is malformed; send the API key as the user name with an empty password",
            ));
        };
        let Some(lookup) = api_keys::find_by_key(state.store.as_ref(), &key).await? else {
            return Ok(ResolvedAuth::Rejected(
                "the API key was rejected: it is invalid, rotated or revoked",
            ));
        };
        let Some(org) = usable_org(state, lookup.org_id).await? else {
            return Ok(ResolvedAuth::Rejected(
                "the API key was rejected: its organization is deleted",
            ));
        };
        return Ok(ResolvedAuth::Valid {
            org_id: lookup.org_id,
            groups: None,
            // API keys are not people: the MFA requirement does not apply to them.
            mfa_gate: None,
            suspended: org.suspension.map(|s| s.reason),
            credential: Credential::ApiKey {
                key_id: lookup.key_id,
                access: lookup.access,
            },
        });
    }
    if scheme.eq_ignore_ascii_case("bearer") {
        return resolve_session(state, rest.trim()).await;
    }
    Ok(ResolvedAuth::Rejected(
        "unsupported Authorization scheme; use Basic (API key) or Bearer (session)",
    ))
}

/// Resolves a dashboard session token: the REST API's Bearer credential, and the web
/// application's session cookie (which carries the same token and authenticates `/app/` only).
pub async fn resolve_session(state: &AppState, token: &str) -> Result<ResolvedAuth, ApiError> {
    let Some(claims) = verify_session_token(&state.config.secret_key, token) else {
        return Ok(ResolvedAuth::Rejected(
            "the bearer token is invalid or expired",
        ));
    };
    // The membership must still exist: a removed member's token stops working at once.
    let Some(membership) =
        accounts::membership(state.store.as_ref(), claims.org, claims.sub).await?
    else {
        return Ok(ResolvedAuth::Rejected(
            "the bearer token's account is not a member of its organization",
        ));
    };
    let Some(org) = orgs::get(state.store.as_ref(), claims.org)
        .await?
        .filter(|o| o.value.state == OrgState::Active)
    else {
        return Ok(ResolvedAuth::Rejected(
            "the bearer token's organization is deleted",
        ));
    };
    let mfa = match claims.sid {
        // The stored session is authoritative: it ends at sign-out or revocation, and a
        // step-up with an app code marks it as MFA.
        Some(sid) => match identity::session(state.store.as_ref(), claims.sub, sid).await? {
            Some(session) if session.value.org_id == claims.org => session.value.mfa(),
            _ => {
                return Ok(ResolvedAuth::Rejected(
                    "the session was signed out or revoked; sign in again",
                ));
            }
        },
        None => amr_has_mfa(&claims.amr),
    };
    // The stored membership is authoritative for the role; the claim cannot escalate it.
    let role = claimed_or_weakest_granted(&membership.roles, claims.role);
    if mfa && membership.mfa_seen_at.is_none() {
        // The member's MFA status (`GET /members/mfa/statuses`): noted once, best effort.
        if let Err(e) =
            accounts::note_mfa(state.store.as_ref(), &membership, state.clock.now()).await
        {
            tracing::debug!(error = %e, "could not note a member's MFA sign-in");
        }
    }
    let mfa_gate = if org.value.require_mfa && !mfa {
        Some(
            if identity::has_totp(state.store.as_ref(), claims.sub).await? {
                MfaGate::StepUp
            } else {
                MfaGate::Enroll
            },
        )
    } else {
        None
    };
    Ok(ResolvedAuth::Valid {
        org_id: claims.org,
        groups: membership.group_limit(),
        mfa_gate,
        suspended: org.value.suspension.map(|s| s.reason),
        credential: Credential::Session {
            account_id: claims.sub,
            role,
            mfa,
            session_id: claims.sid,
        },
    })
}

/// The claimed role if the membership grants it, else the membership's weakest-privilege role.
fn claimed_or_weakest_granted(granted: &[Role], claimed: Role) -> Role {
    if granted.contains(&claimed) {
        return claimed;
    }
    for role in [Role::Viewer, Role::Editor, Role::Admin] {
        if granted.contains(&role) {
            return role;
        }
    }
    Role::Viewer
}

/// The organization, unless it is gone or being deleted.
async fn usable_org(
    state: &AppState,
    org: Uuid,
) -> Result<Option<mailward_domain::model::Organization>, ApiError> {
    Ok(orgs::get(state.store.as_ref(), org)
        .await?
        .filter(|o| o.value.state == OrgState::Active)
        .map(|o| o.value))
}

fn basic_user(encoded: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (user, _password) = text.split_once(':').unwrap_or((text.as_str(), ""));
    (!user.is_empty()).then(|| user.to_owned())
}

/// The 401 of SPEC §7.3 / §5.11: `WWW-Authenticate` naming Basic and Bearer (Bearer alone for a
/// browser fetch, so the browser shows no password prompt) and a documentation link.
pub fn unauthorized(state: &AppState, headers: &HeaderMap, message: &'static str) -> ApiError {
    let browser_fetch = headers
        .get("sec-fetch-mode")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|mode| !mode.eq_ignore_ascii_case("navigate"));
    let challenge = if browser_fetch {
        HeaderValue::from_static("Bearer realm=\"Mailward\"")
    } else {
        HeaderValue::from_static("Basic realm=\"Mailward\", Bearer realm=\"Mailward\"")
    };
    ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
        .details(json!({
            "documentation": format!("{}/docs/authentication", crate::links::base_url(&state.config)),
        }))
        .header(header::WWW_AUTHENTICATE, challenge)
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        principal(parts, state, false).await
    }
}

/// A signed-in caller on the routes that stay open while an organization's MFA requirement
/// holds the session at the door: the person's own second factor, sessions and sign-out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatedPrincipal(pub Caller);

impl std::ops::Deref for GatedPrincipal {
    type Target = Caller;

    fn deref(&self) -> &Caller {
        &self.0
    }
}

impl FromRequestParts<AppState> for GatedPrincipal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        principal(parts, state, true)
            .await
            .map(|p| GatedPrincipal(p.0))
    }
}

async fn principal(
    parts: &mut Parts,
    state: &AppState,
    allow_gate: bool,
) -> Result<Principal, ApiError> {
    let resolved = parts
        .extensions
        .get::<ResolvedAuth>()
        .cloned()
        .unwrap_or(ResolvedAuth::Anonymous);
    match resolved {
        ResolvedAuth::Anonymous => Err(unauthorized(
            state,
            &parts.headers,
            "no credential was sent; send an API key with HTTP Basic (key as user name, empty password)",
        )),
        ResolvedAuth::Rejected(message) => Err(unauthorized(state, &parts.headers, message)),
        ResolvedAuth::Valid {
            org_id,
            credential,
            groups,
            mfa_gate,
            ..
        } => {
            if let Some(gate) = mfa_gate.filter(|_| !allow_gate) {
                return Err(gate.refusal());
            }
            let requested = requested_version(&parts.headers)?;
            let version = match (&credential, requested) {
                (_, Some(v)) => v,
                (Credential::Session { .. }, None) => ApiVersion::LATEST,
                (Credential::ApiKey { .. }, None) => return Err(missing_version()),
            };
            let principal = Principal(Caller {
                org_id,
                credential,
                version,
                groups,
            });
            if let Credential::ApiKey { .. } = principal.credential {
                crate::rate_limit::enforce(
                    state,
                    parts,
                    mailward_services::config::Scope::ApiKey,
                    &principal.subject(),
                )
                .await?;
            }
            Ok(principal)
        }
    }
}

/// An optional credential (SPEC §4.8 "optional auth"): anonymous calls are `None`; a credential
/// that is sent must still be valid (401 otherwise) and API keys still need the version header.
#[derive(Debug, Clone)]
pub struct OptionalPrincipal(pub Option<Principal>);

impl OptionalPrincipal {
    /// The caller, when a credential was sent.
    pub fn caller(&self) -> Option<&Caller> {
        self.0.as_ref().map(|p| &p.0)
    }
}

impl FromRequestParts<AppState> for OptionalPrincipal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        match parts.extensions.get::<ResolvedAuth>() {
            None | Some(ResolvedAuth::Anonymous) => Ok(OptionalPrincipal(None)),
            Some(_) => Principal::from_request_parts(parts, state)
                .await
                .map(|p| OptionalPrincipal(Some(p))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_user_reads_the_key_as_user_name() {
        let enc = base64::engine::general_purpose::STANDARD.encode("mw_abc:");
        assert_eq!(basic_user(&enc).as_deref(), Some("mw_abc"));
        let enc = base64::engine::general_purpose::STANDARD.encode("mw_abc");
        assert_eq!(basic_user(&enc).as_deref(), Some("mw_abc"));
        assert_eq!(basic_user("!!!"), None);
        let enc = base64::engine::general_purpose::STANDARD.encode(":pw");
        assert_eq!(basic_user(&enc), None);
    }

    #[test]
    fn session_tokens_round_trip_and_reject_tampering() {
        let claims = SessionClaims {
            sub: Uuid::new_v4(),
            org: Uuid::new_v4(),
            role: Role::Admin,
            amr: vec!["pwd".into(), "mfa".into()],
            iss: JWT_ISSUER.into(),
            aud: JWT_AUDIENCE.into(),
            iat: time::OffsetDateTime::now_utc().unix_timestamp(),
            exp: time::OffsetDateTime::now_utc().unix_timestamp() + 600,
            sid: None,
        };
        let token = mint_session_token(b"0123456789abcdef0123456789abcdef", &claims).unwrap();
        assert_eq!(
            verify_session_token(b"0123456789abcdef0123456789abcdef", &token),
            Some(claims.clone())
        );
        assert_eq!(
            verify_session_token(b"another-secret-another-secret-xx", &token),
            None
        );
        let expired = SessionClaims {
            exp: claims.iat - 3600,
            ..claims
        };
        let token = mint_session_token(b"0123456789abcdef0123456789abcdef", &expired).unwrap();
        assert_eq!(
            verify_session_token(b"0123456789abcdef0123456789abcdef", &token),
            None
        );
    }

    #[test]
    fn a_claim_cannot_escalate_the_stored_role() {
        assert_eq!(
            claimed_or_weakest_granted(&[Role::Viewer], Role::Admin),
            Role::Viewer
        );
        assert_eq!(
            claimed_or_weakest_granted(&[Role::Admin], Role::Admin),
            Role::Admin
        );
        assert_eq!(
            claimed_or_weakest_granted(&[Role::Editor, Role::Admin], Role::Editor),
            Role::Editor
        );
    }
}
