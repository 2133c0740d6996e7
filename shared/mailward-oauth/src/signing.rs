//! The access-token signing keys: ES256 (P-256) keys generated on first use, stored sealed with
//! the server secret, published as a JWKS, and rotated on demand (`mailward oauth-rotate-key`):
//! a new key signs from then on, the old one keeps verifying until the tokens it signed expired.

use super::{ACCESS_TOKEN_TTL_SECS, OAuthError};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mailward_app::secret_box;
use mailward_app::state::AppState;
use mailward_domain::model::Role;
use mailward_domain::oauth::SigningKey;
use mailward_store::oauth;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use time::Duration;
use uuid::Uuid;

/// The claims of an MCP access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    /// Issuer: `{auth_url}`.
    pub iss: String,
    /// Audience: the MCP resource it was issued for (`{mcp_url}` or its directory).
    pub aud: String,
    /// The account.
    pub sub: Uuid,
    /// The organization the person picked (none: a hosted connector's token for the directory
    /// endpoint, resolved to the person's single organization at each call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<Uuid>,
    /// The person's role there when the token was issued (the membership can only lower it).
    pub role: Role,
    /// Space-separated scopes.
    pub scope: String,
    /// The connection (refresh-token family) it belongs to: revoking it refuses this token.
    pub cid: Uuid,
    /// The client it was issued to.
    pub client_id: String,
    /// Issued at.
    pub iat: i64,
    /// Expiry.
    pub exp: i64,
    /// Token id.
    pub jti: Uuid,
    /// RFC 8176 methods of the sign-in behind the connection (`otp`, and `mfa` when a second
    /// factor was used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
}

fn generate(app: &AppState) -> Result<SigningKey, OAuthError> {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| OAuthError::new("server_error", "could not generate a signing key"))?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
        .map_err(|_| OAuthError::new("server_error", "could not read the signing key"))?;
    // Uncompressed point: 0x04 || x (32 bytes) || y (32 bytes).
    let point = pair.public_key().as_ref();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let sealed = secret_box::seal(&app.config.secret_key, &b64.encode(pkcs8.as_ref()))
        .map_err(|e| OAuthError::new("server_error", e))?;
    Ok(SigningKey {
        kid: hex::encode(mailward_domain::secrets::random_bytes(8)),
        sealed_pkcs8: sealed,
        x: b64.encode(&point[1..33]),
        y: b64.encode(&point[33..65]),
        created_at: app.clock.now(),
        retired_at: None,
    })
}

/// The key that signs now, created on first use.
async fn current(app: &AppState) -> Result<SigningKey, OAuthError> {
    let store = app.store.as_ref();
    if let Some(key) = oauth::signing_keys(store)
        .await?
        .into_iter()
        .find(|k| k.retired_at.is_none())
    {
        return Ok(key);
    }
    oauth::put_signing_key(store, &generate(app)?).await?;
    // Two first calls may both have generated one: both are valid, the newest signs.
    oauth::signing_keys(store)
        .await?
        .into_iter()
        .find(|k| k.retired_at.is_none())
        .ok_or_else(|| OAuthError::new("server_error", "no signing key"))
}

/// Starts signing with a new key; the previous ones retire (they verify until their tokens
/// expired). Returns the new key id.
pub async fn rotate(app: &AppState) -> Result<String, OAuthError> {
    let store = app.store.as_ref();
    let fresh = generate(app)?;
    oauth::put_signing_key(store, &fresh).await?;
    for mut old in oauth::signing_keys(store).await? {
        if old.kid != fresh.kid && old.retired_at.is_none() {
            old.retired_at = Some(app.clock.now());
            oauth::save_signing_key(store, &old).await?;
        }
    }
    Ok(fresh.kid)
}

/// Whether a key may still verify tokens at `now`.
fn verifies(app: &AppState, key: &SigningKey) -> bool {
    key.retired_at
        .is_none_or(|r| app.clock.now() - r < Duration::seconds(ACCESS_TOKEN_TTL_SECS + 60))
}

/// The JWKS (RFC 7517) of the keys that verify tokens now.
pub async fn jwks(app: &AppState) -> Result<Value, OAuthError> {
    current(app).await?;
    let keys: Vec<Value> = oauth::signing_keys(app.store.as_ref())
        .await?
        .into_iter()
        .filter(|k| verifies(app, k))
        .map(|k| {
            json!({"kty": "EC", "crv": "P-256", "x": k.x, "y": k.y, "kid": k.kid, "use": "sig", "alg": "ES256"})
        })
        .collect();
    Ok(json!({ "keys": keys }))
}

/// Signs an access token with the current key.
pub async fn mint(app: &AppState, claims: &AccessClaims) -> Result<String, OAuthError> {
    let key = current(app).await?;
    let pkcs8 = secret_box::open(&app.config.secret_key, &key.sealed_pkcs8)
        .ok()
        .and_then(|b| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(b)
                .ok()
        })
        .ok_or_else(|| OAuthError::new("server_error", "the signing key cannot be opened"))?;
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(key.kid.clone());
    header.typ = Some("at+jwt".into());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&pkcs8))
        .map_err(|e| OAuthError::new("server_error", format!("could not sign: {e}")))
}

/// Why an access token was refused (the MCP endpoints answer 401 with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    /// Not a JWT of ours, a bad signature, an unknown key.
    #[error("the access token is not valid")]
    Invalid,
    /// Past its expiry.
    #[error("the access token expired; refresh it")]
    Expired,
    /// Issued for another resource.
    #[error("the access token was issued for another resource")]
    WrongAudience,
}

/// Verifies an access token's signature, issuer, expiry and audience (one of `audiences`).
pub async fn verify(
    app: &AppState,
    token: &str,
    issuer: &str,
    audiences: &[String],
) -> Result<Result<AccessClaims, TokenRejection>, OAuthError> {
    let Ok(header) = jsonwebtoken::decode_header(token) else {
        return Ok(Err(TokenRejection::Invalid));
    };
    if header.alg != Algorithm::ES256 {
        return Ok(Err(TokenRejection::Invalid));
    }
    let Some(kid) = header.kid else {
        return Ok(Err(TokenRejection::Invalid));
    };
    let keys = oauth::signing_keys(app.store.as_ref()).await?;
    let Some(key) = keys.iter().find(|k| k.kid == kid && verifies(app, k)) else {
        return Ok(Err(TokenRejection::Invalid));
    };
    let Ok(decoding) = DecodingKey::from_ec_components(&key.x, &key.y) else {
        return Ok(Err(TokenRejection::Invalid));
    };
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_issuer(&[issuer]);
    validation.validate_aud = false;
    validation.validate_exp = false;
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let claims = match jsonwebtoken::decode::<AccessClaims>(token, &decoding, &validation) {
        Ok(data) => data.claims,
        Err(_) => return Ok(Err(TokenRejection::Invalid)),
    };
    // Expiry against the service clock (tests move it), with 30 s of leeway.
    if claims.exp + 30 < app.clock.unix() {
        return Ok(Err(TokenRejection::Expired));
    }
    if !audiences.contains(&claims.aud) {
        return Ok(Err(TokenRejection::WrongAudience));
    }
    Ok(Ok(claims))
}
