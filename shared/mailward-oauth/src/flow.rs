//! The authorization code flow with PKCE S256 (OAuth 2.1): checking the authorization request,
//! issuing the code after sign-in and consent, trading it for tokens, rotating refresh tokens
//! (a reused one revokes its whole family), and revocation (RFC 7009).

use super::signing::{self, AccessClaims};
use super::{ACCESS_TOKEN_TTL_SECS, CODE_TTL_SECS, OAuthError, Urls, parse_scopes, s256};
use base64::Engine as _;
use mailward_api_types::oauth::TokenResponse;
use mailward_app::state::AppState;
use mailward_domain::identity::amr_has_mfa;
use mailward_domain::model::{Membership, OrgState, Role};
use mailward_domain::oauth::{AuthorizationCode, AuthorizationRequest, Connection};
use mailward_domain::secrets;
use mailward_store::{accounts, oauth, orgs};
use serde::{Deserialize, Serialize};
use time::Duration;
use uuid::Uuid;

/// The query of `GET /oauth/authorize`, as sent.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub resource: Option<String>,
}

/// What a bad authorization request gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeError {
    /// The client or its redirect URI cannot be trusted: a page, never a redirect (no open
    /// redirect). `forbidden` for a client that is not the connector (403).
    Page { forbidden: bool, message: String },
    /// The redirect URI is fine: the error goes back to the client there.
    Redirect(String),
}

/// The 403 message for any client but the connector (dynamic registration, client-ID
/// metadata documents, unknown ids): names the client to use.
pub fn client_refused(app: &AppState, client: &str) -> String {
    format!(
        "client {client:?} is not accepted: Mailward does not register clients; use the public connector client id {:?} with PKCE S256 and a loopback redirect URI",
        app.config.oauth_client_id
    )
}

/// Checks an authorization request. The client id and redirect URI are checked first so that
/// no error is ever sent to an unchecked URI.
pub fn check_request(
    app: &AppState,
    urls: &Urls,
    params: &AuthorizeParams,
) -> Result<AuthorizationRequest, AuthorizeError> {
    let client_id = params.client_id.clone().unwrap_or_default();
    if client_id.is_empty() {
        return Err(AuthorizeError::Page {
            forbidden: false,
            message: "client_id is missing".into(),
        });
    }
    if client_id != app.config.oauth_client_id {
        return Err(AuthorizeError::Page {
            forbidden: true,
            message: client_refused(app, &client_id),
        });
    }
    let redirect_uri = params.redirect_uri.clone().unwrap_or_default();
    if !super::redirect_allowed(&redirect_uri, &app.config.oauth_redirect_uris) {
        return Err(AuthorizeError::Page {
            forbidden: false,
            message: "redirect_uri must be a loopback callback (http://127.0.0.1:<port>/…, http://localhost:<port>/… or http://[::1]:<port>/…) or one of the hosted connectors' callbacks this service lists, exactly".into(),
        });
    }
    let redirect = |error: &str, description: &str| {
        AuthorizeError::Redirect(error_redirect(
            &redirect_uri,
            error,
            description,
            params.state.as_deref(),
            &urls.issuer,
        ))
    };
    if params.response_type.as_deref() != Some("code") {
        return Err(redirect(
            "unsupported_response_type",
            "response_type must be code",
        ));
    }
    let challenge = params.code_challenge.clone().unwrap_or_default();
    if params.code_challenge_method.as_deref() != Some("S256") {
        return Err(redirect(
            "invalid_request",
            "code_challenge_method must be S256 (PKCE is required; plain is not accepted)",
        ));
    }
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(redirect(
            "invalid_request",
            "code_challenge must be the base64url SHA-256 of the verifier (43 characters)",
        ));
    }
    let scopes =
        parse_scopes(params.scope.as_deref()).map_err(|e| redirect(e.error, &e.description))?;
    let resource = params.resource.clone().unwrap_or_else(|| urls.mcp.clone());
    if !urls.resources().contains(&resource) {
        return Err(redirect(
            "invalid_target",
            &format!("resource must be {} or {}", urls.mcp, urls.directory()),
        ));
    }
    Ok(AuthorizationRequest {
        client_id,
        redirect_uri,
        state: params.state.clone(),
        code_challenge: challenge,
        scopes,
        resource,
    })
}

fn error_redirect(
    redirect_uri: &str,
    error: &str,
    description: &str,
    state: Option<&str>,
    issuer: &str,
) -> String {
    let mut url = url::Url::parse(redirect_uri).unwrap_or_else(|_| unreachable!());
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("error", error);
        q.append_pair("error_description", description);
        if let Some(state) = state {
            q.append_pair("state", state);
        }
        q.append_pair("iss", issuer);
    }
    url.into()
}

/// The sign-in pages' proof of where they are: the checked request, and once the code was
/// right, the account. HMAC-signed with the server secret and short-lived, so the pages need
/// no server-side session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageState {
    /// The checked authorization request.
    pub request: AuthorizationRequest,
    /// The sign-in challenge (after the email step).
    pub challenge: Option<Uuid>,
    /// The signed-in account (after the code step, and the second factor when it has one).
    pub account: Option<Uuid>,
    /// RFC 8176 methods of the sign-in so far.
    #[serde(default)]
    pub amr: Vec<String>,
    /// Expiry (Unix seconds).
    pub exp: i64,
}

/// Seals page state for a hidden form field.
pub fn seal(app: &AppState, state: &PageState) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let body = b64.encode(serde_json::to_vec(state).unwrap_or_default());
    let mac = b64.encode(secrets::hmac_sha256(
        &app.config.secret_key,
        format!("oauth-page:{body}").as_bytes(),
    ));
    format!("{body}.{mac}")
}

/// Opens sealed page state: `None` when forged or expired.
pub fn open(app: &AppState, sealed: &str) -> Option<PageState> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (body, mac) = sealed.split_once('.')?;
    let expected = b64.encode(secrets::hmac_sha256(
        &app.config.secret_key,
        format!("oauth-page:{body}").as_bytes(),
    ));
    if !secrets::constant_time_eq(expected.as_bytes(), mac.as_bytes()) {
        return None;
    }
    let state: PageState = serde_json::from_slice(&b64.decode(body).ok()?).ok()?;
    (state.exp > app.clock.unix()).then_some(state)
}

/// The organizations a signed-in account may pick: active ones it is a member of.
pub async fn choices(
    app: &AppState,
    account: Uuid,
) -> Result<Vec<(Membership, String)>, OAuthError> {
    let store = app.store.as_ref();
    let mut out = Vec::new();
    for membership in accounts::memberships_of(store, account).await? {
        if let Some(org) = orgs::get(store, membership.org_id).await?
            && org.value.state == OrgState::Active
        {
            out.push((membership, org.value.name));
        }
    }
    out.sort_by_key(|c| c.1.to_lowercase());
    Ok(out)
}

/// Whether `request` may end without an organization: a hosted connector (an allow-listed
/// HTTPS callback) that asked for `offline_access` alone. Its tokens serve the directory
/// endpoint only, for the person's single organization.
pub fn may_skip_organization(request: &AuthorizationRequest) -> bool {
    super::is_hosted_callback(&request.redirect_uri) && request.scopes == ["offline_access"]
}

/// Issues the code after consent for `org` (`None`: see [`may_skip_organization`]): the URL
/// to send the browser to.
pub async fn approve(
    app: &AppState,
    urls: &Urls,
    request: &AuthorizationRequest,
    account: Uuid,
    org: Option<Uuid>,
    amr: &[String],
) -> Result<String, OAuthError> {
    let store = app.store.as_ref();
    let role = match org {
        Some(org) => {
            let membership = accounts::membership(store, org, account)
                .await?
                .ok_or_else(|| {
                    OAuthError::new("access_denied", "you are not a member of that organization")
                })?;
            match orgs::get(store, org).await? {
                Some(o) if o.value.state == OrgState::Active => {
                    if o.value.require_mfa && !amr_has_mfa(amr) {
                        return Err(OAuthError::new(
                            "access_denied",
                            "that organization requires multi-factor authentication: enrol an authenticator app in the application (POST /account/mfa/totp), then connect again",
                        ));
                    }
                }
                _ => {
                    return Err(OAuthError::new(
                        "access_denied",
                        "that organization is not active",
                    ));
                }
            }
            membership.role()
        }
        // Reads only: the membership's role bounds it further at each call.
        None if may_skip_organization(request) => Role::Viewer,
        None => {
            return Err(OAuthError::new(
                "access_denied",
                "pick an organization for this connection",
            ));
        }
    };
    let code = secrets::new_opaque_token("mwcode_");
    let record = AuthorizationCode {
        request: request.clone(),
        account_id: account,
        org_id: org,
        role,
        connection_id: None,
        amr: amr.to_vec(),
        expires_at: app.clock.now() + Duration::seconds(CODE_TTL_SECS),
    };
    oauth::create_code(store, &secrets::sha256_hex(code.as_bytes()), &record).await?;
    let mut url = url::Url::parse(&request.redirect_uri)
        .map_err(|_| OAuthError::new("invalid_request", "redirect_uri"))?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("code", &code);
        if let Some(state) = &request.state {
            q.append_pair("state", state);
        }
        q.append_pair("iss", &urls.issuer);
    }
    Ok(url.into())
}

/// The URL that tells the client the person declined.
pub fn deny(urls: &Urls, request: &AuthorizationRequest) -> String {
    error_redirect(
        &request.redirect_uri,
        "access_denied",
        "the person declined",
        request.state.as_deref(),
        &urls.issuer,
    )
}

/// The form of `POST /oauth/token`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TokenForm {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_id: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
    pub client_secret: Option<String>,
}

fn check_client(app: &AppState, form: &TokenForm) -> Result<(), OAuthError> {
    if form.client_secret.is_some() {
        return Err(OAuthError::new(
            "invalid_client",
            "the connector is a public client: send no client_secret",
        ));
    }
    match form.client_id.as_deref() {
        Some(id) if id == app.config.oauth_client_id => Ok(()),
        Some(id) => Err(OAuthError::new("invalid_client", client_refused(app, id))),
        None => Err(OAuthError::new("invalid_request", "client_id is missing")),
    }
}

/// `POST /oauth/token`: the authorization code and refresh token grants. Every other grant
/// (client credentials, the ID-JAG / JWT bearer and token-exchange grants) is refused.
pub async fn token(
    app: &AppState,
    urls: &Urls,
    form: TokenForm,
) -> Result<TokenResponse, OAuthError> {
    match form.grant_type.as_deref() {
        Some("authorization_code") => {
            check_client(app, &form)?;
            exchange(app, urls, form).await
        }
        Some("refresh_token") => {
            check_client(app, &form)?;
            refresh(app, urls, form).await
        }
        Some(other) => Err(OAuthError::new(
            "unsupported_grant_type",
            format!(
                "grant_type {other:?} is not accepted; use authorization_code (with PKCE S256) or refresh_token"
            ),
        )),
        None => Err(OAuthError::new("invalid_request", "grant_type is missing")),
    }
}

/// The token request repeats the authorization request: the same redirect URI and resource,
/// and the verifier whose S256 digest is the code challenge (RFC 7636 §4.6).
fn matches_request(
    form: &TokenForm,
    record: &AuthorizationCode,
    verifier: &str,
) -> Result<(), OAuthError> {
    if form.redirect_uri.as_deref() != Some(record.request.redirect_uri.as_str()) {
        return Err(OAuthError::new(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        ));
    }
    if let Some(resource) = &form.resource
        && resource != &record.request.resource
    {
        return Err(OAuthError::new(
            "invalid_target",
            "resource differs from the authorization request's",
        ));
    }
    if !(43..=128).contains(&verifier.len())
        || !secrets::constant_time_eq(
            s256(verifier).as_bytes(),
            record.request.code_challenge.as_bytes(),
        )
    {
        return Err(OAuthError::new(
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        ));
    }
    Ok(())
}

async fn exchange(
    app: &AppState,
    urls: &Urls,
    form: TokenForm,
) -> Result<TokenResponse, OAuthError> {
    let store = app.store.as_ref();
    let code = form
        .code
        .as_deref()
        .ok_or_else(|| OAuthError::new("invalid_request", "code is missing"))?;
    let verifier = form
        .code_verifier
        .as_deref()
        .ok_or_else(|| OAuthError::new("invalid_request", "code_verifier is missing (PKCE)"))?;
    let hash = secrets::sha256_hex(code.as_bytes());
    let invalid = || OAuthError::new("invalid_grant", "the code is unknown, expired or used");
    let Some(current) = oauth::get_code(store, &hash).await? else {
        return Err(invalid());
    };
    let record = current.value.clone();
    if let Some(issued) = record.connection_id {
        // A code used twice: what the first use issued is revoked too (RFC 6749 §4.1.2).
        oauth::delete_connection(store, record.account_id, issued).await?;
        tracing::warn!(connection.id = %issued, "authorization code reused; its connection is revoked");
        return Err(invalid());
    }
    if record.expires_at <= app.clock.now() {
        return Err(invalid());
    }
    matches_request(&form, &record, verifier)?;
    // A refresh token only when the client asked for `offline_access` (OAuth 2.1 and MCP's
    // authorization: a client that did not ask keeps no long-lived credential).
    let offline = record.request.scopes.iter().any(|s| s == "offline_access");
    let refresh = offline.then(|| secrets::new_opaque_token("mwrt_"));
    let now = app.clock.now();
    let connection = Connection {
        id: Uuid::new_v4(),
        account_id: record.account_id,
        org_id: record.org_id,
        role: record.role,
        client_id: record.request.client_id.clone(),
        scopes: record.request.scopes.clone(),
        resource: record.request.resource.clone(),
        refresh_hash: refresh
            .as_deref()
            .map(|r| secrets::sha256_hex(r.as_bytes()))
            .unwrap_or_default(),
        amr: record.amr.clone(),
        created_at: now,
        last_used_at: now,
    };
    let mut used = record.clone();
    used.connection_id = Some(connection.id);
    match oauth::exchange_code(
        store,
        &hash,
        &used,
        current.version,
        &connection,
        app.clock.unix(),
    )
    .await
    {
        Ok(()) => {}
        Err(e) if e.is_conflict() => return Err(invalid()),
        Err(e) => return Err(e.into()),
    }
    tracing::info!(connection.id = %connection.id, "OAuth connection created");
    issue(app, urls, &connection, connection.role, refresh).await
}

async fn refresh(
    app: &AppState,
    urls: &Urls,
    form: TokenForm,
) -> Result<TokenResponse, OAuthError> {
    let store = app.store.as_ref();
    let token = form
        .refresh_token
        .ok_or_else(|| OAuthError::new("invalid_request", "refresh_token is missing"))?;
    let hash = secrets::sha256_hex(token.as_bytes());
    let invalid = || {
        OAuthError::new(
            "invalid_grant",
            "the refresh token is unknown or revoked; sign in again",
        )
    };
    let Some(lookup) = oauth::get_refresh(store, &hash).await? else {
        return Err(invalid());
    };
    let Some(current) =
        oauth::get_connection(store, lookup.account_id, lookup.connection_id).await?
    else {
        return Err(invalid());
    };
    let mut connection = current.value.clone();
    if !secrets::constant_time_eq(hash.as_bytes(), connection.refresh_hash.as_bytes()) {
        oauth::delete_connection(store, connection.account_id, connection.id).await?;
        tracing::warn!(connection.id = %connection.id, "refresh token reused; the connection is revoked");
        return Err(OAuthError::new(
            "invalid_grant",
            "this refresh token was already used; the connection is revoked as a precaution: sign in again",
        ));
    }
    if let Some(resource) = &form.resource
        && resource != &connection.resource
    {
        return Err(OAuthError::new(
            "invalid_target",
            "resource differs from the connection's",
        ));
    }
    let role = match connection.org_id {
        Some(org) => {
            let membership = accounts::membership(store, org, connection.account_id)
                .await?
                .ok_or_else(|| {
                    OAuthError::new(
                        "invalid_grant",
                        "you are no longer a member of the organization",
                    )
                })?;
            match orgs::get(store, org).await? {
                Some(o) if o.value.state == OrgState::Active => {}
                _ => {
                    return Err(OAuthError::new(
                        "invalid_grant",
                        "the organization is not active",
                    ));
                }
            }
            weaker(connection.role, membership.role())
        }
        // The organization is resolved at each call (the directory endpoint).
        None => connection.role,
    };
    let next = secrets::new_opaque_token("mwrt_");
    connection.refresh_hash = secrets::sha256_hex(next.as_bytes());
    connection.last_used_at = app.clock.now();
    match oauth::rotate(store, &connection, current.version, app.clock.unix()).await {
        Ok(()) => {}
        Err(e) if e.is_conflict() => {
            // A concurrent refresh with the same token won: this one is the reuse.
            oauth::delete_connection(store, connection.account_id, connection.id).await?;
            return Err(invalid());
        }
        Err(e) => return Err(e.into()),
    }
    issue(app, urls, &connection, role, Some(next)).await
}

/// The weaker of two roles: a membership demoted since consent lowers the token.
pub fn weaker(a: Role, b: Role) -> Role {
    let rank = |r: Role| match r {
        Role::Viewer => 0,
        Role::Editor => 1,
        Role::Admin => 2,
    };
    if rank(a) <= rank(b) { a } else { b }
}

async fn issue(
    app: &AppState,
    urls: &Urls,
    connection: &Connection,
    role: Role,
    refresh_token: Option<String>,
) -> Result<TokenResponse, OAuthError> {
    let now = app.clock.unix();
    let claims = AccessClaims {
        iss: urls.issuer.clone(),
        aud: connection.resource.clone(),
        sub: connection.account_id,
        org: connection.org_id,
        role,
        scope: connection.scopes.join(" "),
        cid: connection.id,
        client_id: connection.client_id.clone(),
        iat: now,
        exp: now + ACCESS_TOKEN_TTL_SECS,
        jti: Uuid::new_v4(),
        amr: connection.amr.clone(),
    };
    Ok(TokenResponse {
        access_token: signing::mint(app, &claims).await?,
        token_type: "Bearer".into(),
        expires_in: ACCESS_TOKEN_TTL_SECS,
        refresh_token,
        scope: claims.scope,
    })
}

/// `POST /oauth/revoke` (RFC 7009): a refresh token revokes its connection (and so every
/// access token of it); an access token revokes its connection too. Unknown tokens are fine.
pub async fn revoke(app: &AppState, urls: &Urls, token: &str) -> Result<(), OAuthError> {
    let store = app.store.as_ref();
    if let Some(lookup) = oauth::get_refresh(store, &secrets::sha256_hex(token.as_bytes())).await? {
        oauth::delete_connection(store, lookup.account_id, lookup.connection_id).await?;
        return Ok(());
    }
    if let Ok(claims) = signing::verify(app, token, &urls.issuer, &urls.resources()).await? {
        oauth::delete_connection(store, claims.sub, claims.cid).await?;
    }
    Ok(())
}
