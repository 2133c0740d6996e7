//! Single sign-on through an organization's OpenID Connect provider (an extension): the
//! administrator's connection (issuer, client, sealed secret, the email domains it covers, each
//! proven by a TXT record), routing a sign-in by the email's domain, the authorization code
//! flow with PKCE S256, `state` (single use) and `nonce`, and the ID token checked against the
//! provider's JWKS, issuer, audience, expiry (by the service clock) and nonce. The outcome is an
//! account (an existing member, or a just-in-time one) and the RFC 8176 methods to record.

use mailward_api_types::admin::RoleView;
use mailward_api_types::identity::{SsoConnectionRequest, SsoConnectionView, SsoDomainView};
use mailward_app::activity::{self, Change};
use mailward_app::caller::Caller;
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::secret_box;
use mailward_app::state::AppState;
use mailward_domain::admin::ActorType;
use mailward_domain::dns::RecordType;
use mailward_domain::identity::{
    AMR_FED, AMR_MFA, SsoAttempt, SsoConnection, SsoDomain, SsoResult, SsoReturn, provider_kind,
};
use mailward_domain::model::{Account, Membership, Role};
use mailward_domain::secrets;
use mailward_store::{accounts, identity};
use serde::Deserialize;
use serde_json::Value;
use time::Duration;
use uuid::Uuid;

/// How long a trip to the provider may take.
pub const ATTEMPT_TTL_SECS: i64 = 600;
/// Seconds of clock difference tolerated on the ID token's `exp` and `iat`.
pub const LEEWAY_SECS: i64 = 60;
/// Largest document read from a provider.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The redirect URI to register at the provider.
pub fn redirect_uri(base: &str) -> String {
    format!("{}/oauth/sso/callback", base.trim_end_matches('/'))
}

/// Where the TXT proof of `domain` goes.
pub fn txt_name(domain: &str) -> String {
    format!("_mailward-sso.{domain}")
}

/// The TXT value proving `domain` for `org`: derived from the deployment's secret, so only the
/// organization it was shown to can be proven by it.
pub fn txt_value(app: &AppState, org: Uuid, domain: &str) -> String {
    let mac = secrets::hmac_sha256_hex(
        &app.config.secret_key,
        format!("sso-domain:{org}:{domain}").as_bytes(),
    );
    format!("mailward-sso={}", &mac[..32])
}

fn view(app: &AppState, base: &str, c: &SsoConnection) -> SsoConnectionView {
    let secret =
        secret_box::open(&app.config.secret_key, &c.sealed_client_secret).unwrap_or_default();
    SsoConnectionView {
        issuer: c.issuer.clone(),
        client_id: c.client_id.clone(),
        client_secret_last_four: secrets::last_four(&secret),
        redirect_uri: redirect_uri(base),
        provider: provider_kind(&c.issuer).to_owned(),
        domains: c
            .domains
            .iter()
            .map(|d| SsoDomainView {
                name: d.name.clone(),
                verified: d.verified_at.is_some(),
                verified_at: d.verified_at,
                txt_name: txt_name(&d.name),
                txt_value: txt_value(app, c.org_id, &d.name),
            })
            .collect(),
        enforced: c.enforced,
        jit_role: c.jit_role.map(RoleView::from),
        trust_provider_mfa: c.trust_provider_mfa,
        mfa_acr_values: c.mfa_acr_values.clone(),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}

fn not_configured() -> ServiceError {
    ServiceError::not_found("single sign-on connection")
}

/// `GET /sso`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    base: &str,
) -> Result<SsoConnectionView, ServiceError> {
    caller.require_org_admin()?;
    let connection = identity::sso(app.store.as_ref(), caller.org_id)
        .await?
        .ok_or_else(not_configured)?;
    Ok(view(app, base, &connection.value))
}

fn check_issuer(raw: &str, allow_loopback: bool) -> Result<String, ServiceError> {
    if raw.chars().count() > 512 {
        return Err(ServiceError::invalid("issuer", "at most 512 characters"));
    }
    let url = mailward_app::outbound::client::check_url(raw, allow_loopback)
        .map_err(|e| ServiceError::invalid("issuer", format!("issuer: {e}")))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ServiceError::invalid(
            "issuer",
            "the issuer has no query or fragment (OpenID Connect Discovery §2)",
        ));
    }
    Ok(raw.trim().to_owned())
}

fn check_domains(raw: &[String]) -> Result<Vec<String>, ServiceError> {
    let mut out: Vec<String> = Vec::new();
    for (i, name) in raw.iter().enumerate() {
        let normal = mailward_domain::names::normalize_domain_name(name)
            .ok_or_else(|| ServiceError::invalid(format!("domains[{i}]"), "not a domain name"))?;
        if !out.contains(&normal) {
            out.push(normal);
        }
    }
    if out.len() > 20 {
        return Err(ServiceError::invalid("domains", "at most 20 domains"));
    }
    Ok(out)
}

/// `POST /sso`: creates or updates the connection. A domain added starts unverified; a domain
/// kept keeps its proof.
pub async fn save(
    app: &AppState,
    caller: &Caller,
    base: &str,
    input: SsoConnectionRequest,
) -> Result<SsoConnectionView, ServiceError> {
    caller.require_org_admin()?;
    let store = app.store.as_ref();
    let current = identity::sso(store, caller.org_id).await?;
    let now = app.clock.now();
    let mut next = match &current {
        Some(c) => c.value.clone(),
        None => {
            let (Some(_), Some(_), Some(_)) =
                (&input.issuer, &input.client_id, &input.client_secret)
            else {
                let missing = if input.issuer.is_none() {
                    "issuer"
                } else if input.client_id.is_none() {
                    "client_id"
                } else {
                    "client_secret"
                };
                return Err(ServiceError::invalid(
                    missing,
                    format!("{missing} is required to create the connection"),
                ));
            };
            SsoConnection {
                org_id: caller.org_id,
                issuer: String::new(),
                client_id: String::new(),
                sealed_client_secret: String::new(),
                domains: Vec::new(),
                enforced: false,
                jit_role: None,
                trust_provider_mfa: false,
                mfa_acr_values: Vec::new(),
                created_at: now,
                updated_at: now,
            }
        }
    };
    let previously: Vec<String> = next
        .domains
        .iter()
        .filter(|d| d.verified_at.is_some())
        .map(|d| d.name.clone())
        .collect();
    apply(app, &mut next, &input)?;
    next.updated_at = now;
    persist(app, caller, &next, current.map(|c| c.version), &previously).await?;
    Ok(view(app, base, &next))
}

/// Applies the fields sent to the connection, each checked (`param` names the field).
fn apply(
    app: &AppState,
    next: &mut SsoConnection,
    input: &SsoConnectionRequest,
) -> Result<(), ServiceError> {
    if let Some(issuer) = &input.issuer {
        next.issuer = check_issuer(issuer, app.config.outbound.allow_loopback)?;
    }
    if let Some(client_id) = &input.client_id {
        let trimmed = client_id.trim();
        if trimmed.is_empty()
            || client_id.chars().count() > 256
            || client_id.chars().any(char::is_control)
        {
            return Err(ServiceError::invalid(
                "client_id",
                "1 to 256 characters without control characters",
            ));
        }
        next.client_id = client_id.trim().to_owned();
    }
    if let Some(secret) = &input.client_secret {
        if secret.is_empty() || secret.chars().count() > 1024 {
            return Err(ServiceError::invalid(
                "client_secret",
                "1 to 1024 characters",
            ));
        }
        next.sealed_client_secret =
            secret_box::seal(&app.config.secret_key, secret).map_err(ServiceError::unavailable)?;
    }
    if let Some(domains) = &input.domains {
        let names = check_domains(domains)?;
        next.domains = names
            .into_iter()
            .map(|name| SsoDomain {
                verified_at: next
                    .domains
                    .iter()
                    .find(|d| d.name == name)
                    .and_then(|d| d.verified_at),
                name,
            })
            .collect();
    }
    if let Some(enforced) = input.enforced {
        next.enforced = enforced;
    }
    if let Some(role) = input.jit_role {
        next.jit_role = role.map(Role::from);
    }
    if let Some(trust) = input.trust_provider_mfa {
        next.trust_provider_mfa = trust;
    }
    if let Some(values) = &input.mfa_acr_values {
        let bad = |v: &String| {
            v.trim().is_empty() || v.chars().count() > 256 || v.chars().any(char::is_control)
        };
        if values.len() > 10 || values.iter().any(bad) {
            return Err(ServiceError::invalid(
                "mfa_acr_values",
                "at most 10 values of 1 to 256 characters without control characters",
            ));
        }
        next.mfa_acr_values = values.clone();
    }
    Ok(())
}

async fn persist(
    app: &AppState,
    caller: &Caller,
    next: &SsoConnection,
    version: Option<u64>,
    previously: &[String],
) -> Result<(), ServiceError> {
    match identity::save_sso(app.store.as_ref(), next, version, previously).await {
        Ok(()) => {}
        Err(e) if e.is_conflict() => {
            return Err(ServiceError::conflict(
                "the single sign-on connection changed meanwhile; retry",
            ));
        }
        Err(e) => return Err(e.into()),
    }
    let change = Change::new(
        "organization.updated",
        "organization",
        Some(caller.org_id),
        format!("single sign-on through {} updated", next.issuer),
    );
    app.store
        .transact(activity::ops(app, caller, change)?)
        .await?;
    Ok(())
}

/// `DELETE /sso`: removes the connection; its people sign in with emailed codes again.
pub async fn delete(app: &AppState, caller: &Caller) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let store = app.store.as_ref();
    let current = identity::sso(store, caller.org_id)
        .await?
        .ok_or_else(not_configured)?;
    match identity::delete_sso(store, &current.value, current.version).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "the single sign-on connection changed meanwhile; retry",
        )),
        Err(e) => Err(e.into()),
    }
}

/// `POST /sso/verify`: looks for each unverified domain's TXT proof (uncached) and routes the
/// proven ones to the provider.
pub async fn verify(
    app: &AppState,
    caller: &Caller,
    base: &str,
) -> Result<SsoConnectionView, ServiceError> {
    caller.require_org_admin()?;
    let store = app.store.as_ref();
    let current = identity::sso(store, caller.org_id)
        .await?
        .ok_or_else(not_configured)?;
    let mut next = current.value.clone();
    let previously: Vec<String> = next
        .domains
        .iter()
        .filter(|d| d.verified_at.is_some())
        .map(|d| d.name.clone())
        .collect();
    let now = app.clock.now();
    for domain in next.domains.iter_mut().filter(|d| d.verified_at.is_none()) {
        let expected = txt_value(app, caller.org_id, &domain.name);
        let found = app
            .resolver
            .lookup_uncached(&txt_name(&domain.name), RecordType::Txt)
            .await
            .map(|a| {
                a.records
                    .iter()
                    .filter_map(|r| r.txt_value())
                    .any(|v| v.trim() == expected)
            })
            .unwrap_or(false);
        if found {
            domain.verified_at = Some(now);
        }
    }
    if next == current.value {
        return Ok(view(app, base, &next));
    }
    next.updated_at = now;
    persist(app, caller, &next, Some(current.version), &previously).await?;
    Ok(view(app, base, &next))
}

/// The connection a sign-in of `email` goes to: the one organization whose verified single
/// sign-on domain is the address's domain (none, or several, route nowhere).
pub async fn route(app: &AppState, email: &str) -> Result<Option<SsoConnection>, ServiceError> {
    let Some((_, domain)) = email.rsplit_once('@') else {
        return Ok(None);
    };
    let orgs =
        identity::sso_orgs_for_domain(app.store.as_ref(), &domain.to_ascii_lowercase()).await?;
    let [org] = orgs.as_slice() else {
        return Ok(None);
    };
    Ok(identity::sso(app.store.as_ref(), *org)
        .await?
        .map(|c| c.value))
}

/// The provider's discovery document, as far as the flow needs it.
#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    #[serde(default)]
    userinfo_endpoint: Option<String>,
}

async fn fetch_json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    let mut response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err("the answer is larger than 256 KiB".into());
        }
        body.extend_from_slice(&chunk);
    }
    let value: Value =
        serde_json::from_slice(&body).map_err(|e| format!("HTTP {status}, not JSON: {e}"))?;
    if status != 200 {
        return Err(format!("HTTP {status}: {value}"));
    }
    Ok(value)
}

async fn discover(app: &AppState, issuer: &str) -> Result<Discovery, String> {
    let url = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    mailward_app::outbound::client::check_url(&url, app.config.outbound.allow_loopback)?;
    let client = app.outbound_client()?;
    let doc: Discovery = serde_json::from_value(fetch_json(client.get(&url)).await?)
        .map_err(|e| format!("the discovery document: {e}"))?;
    if doc.issuer != issuer {
        return Err(format!(
            "the discovery document names issuer {:?}, not {issuer:?}",
            doc.issuer
        ));
    }
    for endpoint in [
        &doc.authorization_endpoint,
        &doc.token_endpoint,
        &doc.jwks_uri,
    ] {
        mailward_app::outbound::client::check_url(endpoint, app.config.outbound.allow_loopback)?;
    }
    Ok(doc)
}

/// Starts a trip to the provider for `email`: the URL to send the browser to.
pub async fn begin(
    app: &AppState,
    base: &str,
    connection: &SsoConnection,
    email: &str,
    ret: SsoReturn,
) -> Result<String, ServiceError> {
    let doc = discover(app, &connection.issuer).await.map_err(|e| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "sso_provider_unreachable",
            format!("the organization's identity provider could not be used: {e}"),
        )
    })?;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    let attempt = SsoAttempt {
        state: b64.encode(secrets::random_bytes(32)),
        org_id: connection.org_id,
        email: email.to_owned(),
        nonce: b64.encode(secrets::random_bytes(32)),
        verifier: b64.encode(secrets::random_bytes(32)),
        ret,
        expires_at: app.clock.now() + Duration::seconds(ATTEMPT_TTL_SECS),
    };
    identity::create_sso_attempt(app.store.as_ref(), &attempt).await?;
    let mut url = url::Url::parse(&doc.authorization_endpoint)
        .map_err(|e| ServiceError::unavailable(format!("authorization endpoint: {e}")))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &connection.client_id)
        .append_pair("redirect_uri", &redirect_uri(base))
        .append_pair("scope", "openid email")
        .append_pair("state", &attempt.state)
        .append_pair("nonce", &attempt.nonce)
        .append_pair("code_challenge", &crate::s256(&attempt.verifier))
        .append_pair("code_challenge_method", "S256")
        .append_pair("login_hint", email);
    Ok(url.into())
}

/// Why a return from the provider was refused (a page says it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsoError {
    /// Unknown, expired or already used `state` (a replay).
    #[error("this sign-in link is unknown, expired or was already used; start the sign-in again")]
    State,
    /// The provider answered an error.
    #[error("the identity provider refused the sign-in: {0}")]
    Provider(String),
    /// The ID token failed a check.
    #[error("the identity provider's answer was refused: {0}")]
    Token(String),
    /// The person may not sign in to the organization this way.
    #[error("{0}")]
    Denied(String),
    /// The service failed.
    #[error("{0}")]
    Failed(String),
}

impl From<ServiceError> for SsoError {
    fn from(e: ServiceError) -> Self {
        Self::Failed(e.message().to_owned())
    }
}

impl From<mailward_domain::store::StoreError> for SsoError {
    fn from(e: mailward_domain::store::StoreError) -> Self {
        Self::Failed(ServiceError::from(e).message().to_owned())
    }
}

/// The ID token's claims Mailward reads.
#[derive(Debug, Clone, Deserialize)]
pub struct IdClaims {
    pub iss: String,
    pub sub: String,
    pub aud: Value,
    pub exp: i64,
    #[serde(default)]
    pub iat: Option<i64>,
    #[serde(default)]
    pub nonce: Option<String>,
    #[serde(default)]
    pub azp: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub email_verified: Option<Value>,
    #[serde(default)]
    pub amr: Option<Vec<String>>,
    #[serde(default)]
    pub acr: Option<String>,
}

/// Checks an ID token (OpenID Connect Core §3.1.3.7): the signature with the provider's key
/// named by `kid` (asymmetric algorithms only), the issuer, the audience (and `azp` when several),
/// `exp` and `iat` against `now`, and the nonce.
pub fn check_id_token(
    token: &str,
    jwks: &jsonwebtoken::jwk::JwkSet,
    issuer: &str,
    client_id: &str,
    nonce: &str,
    now: i64,
) -> Result<IdClaims, String> {
    use jsonwebtoken::Algorithm::*;
    let header = jsonwebtoken::decode_header(token).map_err(|e| format!("header: {e}"))?;
    if !matches!(
        header.alg,
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 | ES256 | ES384 | EdDSA
    ) {
        return Err(format!("algorithm {:?} is not accepted", header.alg));
    }
    let jwk = match &header.kid {
        Some(kid) => jwks.find(kid),
        None if jwks.keys.len() == 1 => jwks.keys.first(),
        None => None,
    }
    .ok_or("no key of the provider's JWKS matches the token")?;
    let key = jsonwebtoken::DecodingKey::from_jwk(jwk).map_err(|e| format!("key: {e}"))?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[client_id]);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.set_required_spec_claims(&["iss", "aud", "sub", "exp"]);
    let claims = jsonwebtoken::decode::<IdClaims>(token, &key, &validation)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => "bad signature".to_owned(),
            jsonwebtoken::errors::ErrorKind::InvalidAudience => "wrong audience".to_owned(),
            jsonwebtoken::errors::ErrorKind::InvalidIssuer => "wrong issuer".to_owned(),
            _ => format!("{e}"),
        })?
        .claims;
    if claims.exp + LEEWAY_SECS <= now {
        return Err("expired".into());
    }
    if claims.iat.is_some_and(|iat| iat > now + LEEWAY_SECS) {
        return Err("issued in the future".into());
    }
    if claims.aud.as_array().is_some_and(|a| a.len() > 1)
        && claims.azp.as_deref() != Some(client_id)
    {
        return Err("several audiences and azp is not this client".into());
    }
    match &claims.nonce {
        None => return Err("the nonce is missing".into()),
        Some(n) if !secrets::constant_time_eq(n.as_bytes(), nonce.as_bytes()) => {
            return Err("the nonce differs".into());
        }
        Some(_) => {}
    }
    Ok(claims)
}

/// Finishes a return from the provider: the attempt (once), the code traded with the PKCE
/// verifier, the ID token checked, the person resolved.
pub async fn finish(
    app: &AppState,
    base: &str,
    state: &str,
    code: Option<&str>,
    error: Option<&str>,
) -> Result<(SsoAttempt, SsoResult), SsoError> {
    let Some(attempt) = identity::take_sso_attempt(app.store.as_ref(), state).await? else {
        return Err(SsoError::State);
    };
    if let Some(error) = error {
        return Err(SsoError::Provider(error.chars().take(200).collect()));
    }
    let code = code.ok_or_else(|| SsoError::Provider("no code was returned".into()))?;
    let connection = identity::sso(app.store.as_ref(), attempt.org_id)
        .await?
        .ok_or_else(|| SsoError::Denied("the organization no longer signs in this way".into()))?
        .value;
    let claims = exchange(app, base, &connection, &attempt, code).await?;
    let email = match (&claims.email, &claims.email_verified) {
        (Some(email), Some(v)) if v == &Value::Bool(true) || v == "true" => email.to_lowercase(),
        _ => {
            return Err(SsoError::Token(
                "the token carries no verified email address".into(),
            ));
        }
    };
    let domain = email.rsplit_once('@').map(|(_, d)| d).unwrap_or_default();
    if !connection
        .domains
        .iter()
        .any(|d| d.name == domain && d.verified_at.is_some())
    {
        return Err(SsoError::Denied(format!(
            "{email} is not at a verified domain of this organization's single sign-on"
        )));
    }
    let account = person(app, &connection, &email).await?;
    let provider_mfa = claims.amr.iter().flatten().any(|m| m == AMR_MFA)
        || claims
            .acr
            .as_ref()
            .is_some_and(|acr| connection.mfa_acr_values.contains(acr));
    let mut amr = vec![AMR_FED.to_owned()];
    if connection.trust_provider_mfa && provider_mfa {
        amr.push(AMR_MFA.to_owned());
    }
    Ok((
        attempt,
        SsoResult {
            account_id: account.id,
            org_id: connection.org_id,
            amr,
            provider: provider_kind(&connection.issuer).to_owned(),
        },
    ))
}

async fn exchange(
    app: &AppState,
    base: &str,
    connection: &SsoConnection,
    attempt: &SsoAttempt,
    code: &str,
) -> Result<IdClaims, SsoError> {
    let doc = discover(app, &connection.issuer)
        .await
        .map_err(SsoError::Provider)?;
    let client = app.outbound_client().map_err(SsoError::Failed)?;
    let secret = secret_box::open(&app.config.secret_key, &connection.sealed_client_secret)
        .map_err(SsoError::Failed)?;
    let form: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", &redirect_uri(base))
        .append_pair("code_verifier", &attempt.verifier)
        .finish();
    // client_secret_basic: both halves form-encoded first (RFC 6749 §2.3.1).
    let enc = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
    let tokens = fetch_json(
        client
            .post(&doc.token_endpoint)
            .basic_auth(enc(&connection.client_id), Some(enc(&secret)))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form),
    )
    .await
    .map_err(|e| SsoError::Provider(format!("the token endpoint: {e}")))?;
    let id_token = tokens["id_token"]
        .as_str()
        .ok_or_else(|| SsoError::Provider("the token answer has no id_token".into()))?;
    let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_value(
        fetch_json(client.get(&doc.jwks_uri))
            .await
            .map_err(|e| SsoError::Provider(format!("the JWKS: {e}")))?,
    )
    .map_err(|e| SsoError::Provider(format!("the JWKS: {e}")))?;
    let mut claims = check_id_token(
        id_token,
        &jwks,
        &connection.issuer,
        &connection.client_id,
        &attempt.nonce,
        app.clock.unix(),
    )
    .map_err(SsoError::Token)?;
    // With the code flow, the email may come from the UserInfo endpoint rather than the ID
    // token (OpenID Connect Core §5.4); its `sub` must be the token's (§5.3.2).
    if claims.email.is_none()
        && let (Some(endpoint), Some(access)) =
            (&doc.userinfo_endpoint, tokens["access_token"].as_str())
    {
        let info = fetch_json(client.get(endpoint).bearer_auth(access))
            .await
            .map_err(|e| SsoError::Provider(format!("the UserInfo endpoint: {e}")))?;
        if info["sub"].as_str() != Some(claims.sub.as_str()) {
            return Err(SsoError::Token(
                "the UserInfo answer is for another subject".into(),
            ));
        }
        claims.email = info["email"].as_str().map(str::to_owned);
        claims.email_verified = info.get("email_verified").cloned();
    }
    Ok(claims)
}

/// The account of a provider-verified `email` in the organization: an existing member, or a
/// just-in-time member with the connection's default role.
async fn person(
    app: &AppState,
    connection: &SsoConnection,
    email: &str,
) -> Result<Account, SsoError> {
    let store = app.store.as_ref();
    let existing = accounts::get_by_email(store, email).await?.map(|a| a.value);
    if let Some(account) = &existing
        && accounts::membership(store, connection.org_id, account.id)
            .await?
            .is_some()
    {
        return Ok(account.clone());
    }
    let Some(role) = connection.jit_role else {
        return Err(SsoError::Denied(format!(
            "{email} is not a member of this organization; ask an administrator to add you"
        )));
    };
    let now = app.clock.now();
    let account = existing.clone().unwrap_or(Account {
        id: Uuid::new_v4(),
        email: email.to_owned(),
        created_at: now,
    });
    let membership = Membership {
        org_id: connection.org_id,
        account_id: account.id,
        email: email.to_owned(),
        roles: vec![role],
        groups: Vec::new(),
        mfa_seen_at: None,
        scim_managed: false,
        created_at: now,
    };
    let mut ops = Vec::new();
    if existing.is_none() {
        ops.push(accounts::create_account_op(&account)?);
    }
    ops.push(accounts::add_membership_op(&membership)?);
    ops.extend(activity::ops_as(
        app,
        connection.org_id,
        (ActorType::User, Some(account.id)),
        Change::new(
            "member.added",
            "member",
            Some(account.id),
            format!("{email} joined through single sign-on"),
        ),
    )?);
    match store.transact(ops).await {
        Ok(()) => Ok(account),
        // A concurrent first sign-in created it: use what is there.
        Err(e) if e.is_conflict() => match accounts::get_by_email(store, email).await? {
            Some(account) => Ok(account.value),
            None => Err(SsoError::Failed("retry the sign-in".into())),
        },
        Err(e) => Err(e.into()),
    }
}
