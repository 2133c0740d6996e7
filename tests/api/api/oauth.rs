//! The OAuth 2.1 authorization server over HTTP: the whole flow (authorize with PKCE, sign in
//! with the emailed code, pick an organization, token, refresh, revoke), and every refusal:
//! foreign clients, open redirects, PKCE mismatches, reused codes and refresh tokens, foreign
//! grants, and tokens that are expired, revoked, forged or meant for another audience.

use mailward_api_tests::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// RFC 7636 Appendix B: a verifier and its S256 challenge, computed independently of ours.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
/// The S256 challenge of [`VERIFIER`].
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// The fixed callback of Claude-Code-style clients.
pub const REDIRECT: &str = "http://127.0.0.1:8765/callback";
/// The connector client id (the default setting).
pub const CLIENT: &str = "mailward-mcp";

pub(crate) fn authorize_url(extra: &[(&str, &str)]) -> String {
    let every_scope = mailward_oauth::SCOPES.join(" ");
    let mut params: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", CLIENT),
        ("redirect_uri", REDIRECT),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "s-123"),
        // What a connector asks by default here: every scope, a refresh token included.
        ("scope", &every_scope),
    ];
    for (k, v) in extra {
        params.retain(|(key, _)| key != k);
        if !v.is_empty() {
            params.push((k, v));
        }
    }
    let query: String = params
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    format!("/oauth/authorize?{query}")
}

pub(crate) fn urlencode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The signed `state` field of a sign-in page.
pub(crate) fn page_state(html: &str) -> String {
    let marker = "name=\"state\" value=\"";
    let start = html.find(marker).expect("a state field") + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

pub(crate) async fn post_form(
    app: &TestApp,
    path: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    let body = form
        .iter()
        .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    app.request(Method::POST, path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

/// The query parameters of a redirect's `Location`.
pub(crate) fn location_params(response: &reqwest::Response) -> Vec<(String, String)> {
    location_params_at(response, REDIRECT)
}

/// The query of a redirect to `redirect`.
fn location_params_at(response: &reqwest::Response, redirect: &str) -> Vec<(String, String)> {
    let location = response
        .headers()
        .get("location")
        .expect("a Location")
        .to_str()
        .unwrap();
    assert_eq!(location.split('?').next(), Some(redirect), "{location}");
    let url = reqwest::Url::parse(location).unwrap();
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The consent page `email` reaches through the sign-in pages (loopback callback, every scope).
pub async fn consent_page(app: &TestApp, email: &str) -> String {
    signed_in_page(app, email, &[]).await
}

/// Walks the email and code pages; the page after them (consent).
pub(crate) async fn signed_in_page(app: &TestApp, email: &str, extra: &[(&str, &str)]) -> String {
    let res = app
        .request(Method::GET, &authorize_url(extra))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("name=\"email\""), "{html}");
    let res = post_form(
        app,
        "/oauth/authorize",
        &[
            ("step", "email"),
            ("state", &page_state(&html)),
            ("email", email),
        ],
    )
    .await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("name=\"code\""), "{html}");
    let code = app.code_for(email);
    let res = post_form(
        app,
        "/oauth/authorize",
        &[
            ("step", "code"),
            ("state", &page_state(&html)),
            ("code", &code),
        ],
    )
    .await;
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// Walks the sign-in pages as a browser would, up to the code on the callback.
pub async fn authorize(app: &TestApp, email: &str, org: &str, extra: &[(&str, &str)]) -> String {
    let html = signed_in_page(app, email, extra).await;
    assert!(html.contains(&format!("value=\"{org}\"")), "{html}");
    // The browser sends the box for changes as the page shows it (ticked) when changes were
    // asked for; a test may leave it out (`allow_changes` empty in `extra`).
    let redirect = extra
        .iter()
        .find(|(k, _)| *k == "redirect_uri")
        .map_or(REDIRECT, |(_, v)| *v);
    let product = match redirect {
        REDIRECT => "An application on this computer",
        r if r.starts_with("https://claude.") => "Claude",
        r if r.starts_with("https://chatgpt.com/") => "ChatGPT",
        _ => "The service at ",
    };
    assert!(html.contains(product), "{product}: {html}");
    // The picker appears only when there is a choice; one organization is named, not picked.
    let choices = html.matches("name=\"organization_id\"").count();
    assert!(
        choices == 1 || html.matches("type=\"radio\"").count() == choices,
        "{html}"
    );
    let state = page_state(&html);
    let leave_writes = extra
        .iter()
        .any(|(k, v)| *k == "allow_changes" && v.is_empty());
    let mut form: Vec<(&str, &str)> = vec![
        ("step", "consent"),
        ("state", &state),
        ("organization_id", org),
        ("decision", "allow"),
    ];
    if html.contains("name=\"allow_changes\"") && !leave_writes {
        assert!(html.contains("value=\"yes\" checked"), "{html}");
        form.push(("allow_changes", "yes"));
    }
    let res = post_form(app, "/oauth/authorize", &form).await;
    assert_eq!(res.status(), 303);
    let params = location_params_at(&res, redirect);
    assert_eq!(param(&params, "state"), Some("s-123"));
    assert_eq!(param(&params, "iss"), Some(app.url("").as_str()));
    param(&params, "code").expect("a code").to_owned()
}

/// A public document's JSON (discovery, JWKS).
pub async fn public_json(app: &TestApp, path: &str) -> Value {
    app.request(Method::GET, path)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `POST /oauth/token`: status and body.
pub async fn token(app: &TestApp, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let res = post_form(app, "/oauth/token", form).await;
    let status = res.status();
    if status == 200 {
        assert_eq!(res.headers()["cache-control"], "no-store");
    }
    (status, res.json().await.unwrap())
}

/// Trades a code for tokens.
pub async fn exchange(app: &TestApp, code: &str) -> (StatusCode, Value) {
    exchange_at(app, code, REDIRECT).await
}

/// Trades a code issued for `redirect` for tokens.
pub async fn exchange_at(app: &TestApp, code: &str, redirect: &str) -> (StatusCode, Value) {
    token(
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect),
            ("client_id", CLIENT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await
}

/// Signs `email` in for `org` and returns the token response.
pub async fn connect(app: &TestApp, email: &str, org: &str) -> Value {
    let code = authorize(app, email, org, &[]).await;
    let (status, tokens) = exchange(app, &code).await;
    assert_eq!(status, 200, "{tokens}");
    tokens
}

/// `tools/list` on `path` with a bearer token: the HTTP status.
pub async fn mcp_status(app: &TestApp, path: &str, token: &str) -> StatusCode {
    app.request(Method::POST, path)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap()
        .status()
}

async fn refresh(app: &TestApp, refresh_token: &str) -> (StatusCode, Value) {
    token(
        app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", CLIENT),
        ],
    )
    .await
}

#[tokio::test]
async fn the_whole_flow_signs_in_picks_an_organization_refreshes_and_revokes() {
    let app = TestApp::start().await;
    let s = app.sign_up("owner@oauth.example", "OAuth Co").await;
    // A second organization of the same person: the consent page offers both.
    let other = app.sign_up("owner@oauth.example", "Other Co").await;
    assert_ne!(s.org_id, other.org_id);

    // Discovery: RFC 8414 metadata with S256 and every endpoint; no agent_auth.
    let meta: Value = public_json(&app, "/.well-known/oauth-authorization-server").await;
    assert_eq!(meta["issuer"], app.url(""));
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    for key in [
        "authorization_endpoint",
        "token_endpoint",
        "revocation_endpoint",
    ] {
        assert!(
            meta[key].as_str().unwrap().starts_with(&app.url("/oauth/")),
            "{key}"
        );
    }
    assert_eq!(
        meta["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    for scope in [
        "domains:read",
        "groups:read",
        "tasks:read",
        "dmarc_reports:read",
        "offline_access",
    ] {
        assert!(
            meta["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!(scope))
        );
    }
    // Curating the shared catalogue is staff's: never offered to customers' clients.
    assert!(
        !meta["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("sources:update")),
        "{meta}"
    );
    assert!(meta.get("agent_auth").is_none());
    let jwks: Value = public_json(&app, "/oauth/jwks").await;
    assert_eq!(jwks["keys"][0]["alg"], "ES256");
    assert_eq!(jwks["keys"][0]["kty"], "EC");

    // The flow, for the first organization.
    let tokens = connect(&app, "owner@oauth.example", &s.org_id).await;
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 900);
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&app, "/mcp", &access).await, 200);
    // The access token carries the organization and role (a JWT: look inside).
    let claims = jwt_claims(&access);
    assert_eq!(claims["org"], s.org_id.as_str());
    assert_eq!(claims["role"], "admin");
    assert_eq!(claims["aud"], app.url("/mcp"));

    // Refresh rotates: the new pair works, the old refresh token is spent.
    let first_refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, rotated) = refresh(&app, &first_refresh).await;
    assert_eq!(status, 200, "{rotated}");
    let second_refresh = rotated["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second_refresh, first_refresh);
    let rotated_access = rotated["access_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&app, "/mcp", &rotated_access).await, 200);

    // Reusing the spent refresh token revokes the whole family.
    let (status, body) = refresh(&app, &first_refresh).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let (status, _) = refresh(&app, &second_refresh).await;
    assert_eq!(status, 400, "the newest token of the family is revoked too");
    assert_eq!(mcp_status(&app, "/mcp", &rotated_access).await, 401);

    // A person lists and revokes their connections with a dashboard session.
    let tokens = connect(&app, "owner@oauth.example", &s.org_id).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let session = app
        .session_token("owner@oauth.example", &s.org_id, false)
        .await;
    let list: Value = app
        .with_session(Method::GET, "/oauth/connections", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let connections = list["data"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{list}");
    assert_eq!(connections[0]["organization_id"], s.org_id.as_str());
    let id = connections[0]["id"].as_str().unwrap();
    // API keys do not own connections.
    let res = app
        .with_key(Method::GET, "/oauth/connections", &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .with_session(
            Method::DELETE,
            &format!("/oauth/connections/{id}"),
            &session,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(
        mcp_status(&app, "/mcp", &access).await,
        401,
        "revoked: refused at once"
    );
    let (status, _) = refresh(&app, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 400);

    // The client revokes at the RFC 7009 endpoint.
    let tokens = connect(&app, "owner@oauth.example", &s.org_id).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let res = post_form(
        &app,
        "/oauth/revoke",
        &[
            ("token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", CLIENT),
        ],
    )
    .await;
    assert_eq!(res.status(), 200);
    assert_eq!(mcp_status(&app, "/mcp", &access).await, 401);
    // Unknown tokens are fine (RFC 7009 §2.2).
    let res = post_form(&app, "/oauth/revoke", &[("token", "mwrt_unknown")]).await;
    assert_eq!(res.status(), 200);

    // The other organization, picked on the consent page.
    let tokens = connect(&app, "owner@oauth.example", &other.org_id).await;
    assert_eq!(
        jwt_claims(tokens["access_token"].as_str().unwrap())["org"],
        other.org_id.as_str()
    );

    // Declining sends access_denied back to the client.
    let res = app
        .request(Method::GET, &authorize_url(&[]))
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "email"),
            ("state", &page_state(&html)),
            ("email", "owner@oauth.example"),
        ],
    )
    .await;
    let html = res.text().await.unwrap();
    let code = app.code_for("owner@oauth.example");
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "code"),
            ("state", &page_state(&html)),
            ("code", &code),
        ],
    )
    .await;
    let html = res.text().await.unwrap();
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "consent"),
            ("state", &page_state(&html)),
            ("organization_id", &s.org_id),
            ("decision", "deny"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    assert_eq!(
        param(&location_params(&res), "error"),
        Some("access_denied")
    );
}

/// The claims of a JWT (no verification: the test reads what the server put in).
pub fn jwt_claims(token: &str) -> Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn bad_authorization_requests_never_redirect_to_an_unchecked_uri() {
    let app = TestApp::start().await;
    // Another client id, or a client-ID metadata document: 403 naming the client to use.
    for client in ["someone-else", "https://client.example/metadata.json"] {
        let res = app
            .request(Method::GET, &authorize_url(&[("client_id", client)]))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 403, "{client}");
        assert!(res.headers().get("location").is_none());
        assert!(res.text().await.unwrap().contains(CLIENT));
    }
    // Redirect URIs that are not loopback callbacks: a page, never a redirect.
    for uri in [
        "https://evil.example/cb",
        "http://127.0.0.1.evil.example:8765/cb",
        "http://localhost.evil.example/",
        "javascript:alert(1)",
        "",
    ] {
        let res = app
            .request(Method::GET, &authorize_url(&[("redirect_uri", uri)]))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{uri}");
        assert!(res.headers().get("location").is_none(), "{uri}");
    }
    // With a good redirect URI, other errors go back to the client.
    for (extra, error) in [
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge_method", "")], "invalid_request"),
        (vec![("code_challenge", "")], "invalid_request"),
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
        (vec![("scope", "admin")], "invalid_scope"),
        (
            vec![("resource", "https://elsewhere.example/mcp")],
            "invalid_target",
        ),
    ] {
        let res = app
            .request(Method::GET, &authorize_url(&extra))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 303, "{extra:?}");
        let params = location_params(&res);
        assert_eq!(param(&params, "error"), Some(error), "{extra:?}");
        assert_eq!(param(&params, "state"), Some("s-123"));
    }
    // Any other port on loopback is fine (native clients pick one).
    let res = app
        .request(
            Method::GET,
            &authorize_url(&[("redirect_uri", "http://localhost:49152/cb")]),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Dynamic client registration is refused, naming the client.
    let res = app
        .request(Method::POST, "/oauth/register")
        .json(&json!({"redirect_uris": [REDIRECT], "client_name": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["client_id"], CLIENT);
    // A forged or stale page state ends the sign-in.
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "email"),
            ("state", "forged.state"),
            ("email", "a@b.example"),
        ],
    )
    .await;
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn codes_verifiers_and_grants_are_checked() {
    let app = TestApp::start().await;
    let s = app.sign_up("pkce@oauth.example", "PKCE Co").await;

    // A wrong sign-in code is counted and said; the right one still works after.
    let res = app
        .request(Method::GET, &authorize_url(&[]))
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "email"),
            ("state", &page_state(&html)),
            ("email", "pkce@oauth.example"),
        ],
    )
    .await;
    let html = res.text().await.unwrap();
    let right = app.code_for("pkce@oauth.example");
    let wrong = if right == "000000" {
        "111111"
    } else {
        "000000"
    };
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "code"),
            ("state", &page_state(&html)),
            ("code", wrong),
        ],
    )
    .await;
    let html = res.text().await.unwrap();
    assert!(html.contains("incorrect"), "{html}");

    // PKCE: a verifier that does not match is refused, and the code is then spent.
    let code = authorize(&app, "pkce@oauth.example", &s.org_id, &[]).await;
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", CLIENT),
            (
                "code_verifier",
                "the-wrong-verifier-the-wrong-verifier-the-wrong",
            ),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant")),
        "{body}"
    );

    // Another redirect URI than the request's.
    let code = authorize(&app, "pkce@oauth.example", &s.org_id, &[]).await;
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:9999/callback"),
            ("client_id", CLIENT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // A code used twice: the second use fails and revokes what the first issued.
    let code = authorize(&app, "pkce@oauth.example", &s.org_id, &[]).await;
    let (status, first) = exchange(&app, &code).await;
    assert_eq!(status, 200);
    let (status, body) = exchange(&app, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(
        mcp_status(&app, "/mcp", first["access_token"].as_str().unwrap()).await,
        401
    );

    // Foreign clients, secrets and grants.
    let code = authorize(&app, "pkce@oauth.example", &s.org_id, &[]).await;
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", "other"),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let (status, body) = token(
        &app,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", CLIENT),
            ("client_secret", "s"),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    for grant in [
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "urn:ietf:params:oauth:grant-type:token-exchange",
        "password",
    ] {
        let (status, body) = token(&app, &[("grant_type", grant), ("client_id", CLIENT)]).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")),
            "{grant}"
        );
    }
    // Not a form.
    let res = app
        .request(Method::POST, "/oauth/token")
        .json(&json!({"grant_type": "authorization_code"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request");
    // An expired code (five minutes).
    let code = authorize(&app, "pkce@oauth.example", &s.org_id, &[]).await;
    app.clock.advance(time::Duration::minutes(6));
    let (status, body) = exchange(&app, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn the_mcp_endpoint_refuses_every_token_it_should() {
    let app = TestApp::start().await;
    let s = app.sign_up("tokens@oauth.example", "Tokens Co").await;

    // No credentials: 401 with the RFC 9728 challenge pointing at the endpoint's own metadata.
    for (path, metadata) in [
        ("/mcp", "/.well-known/oauth-protected-resource/mcp"),
        (
            "/mcp/directory",
            "/.well-known/oauth-protected-resource/mcp/directory",
        ),
    ] {
        let res = app
            .request(Method::POST, path)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401);
        let challenge = res.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            challenge,
            format!("Bearer resource_metadata=\"{}\"", app.url(metadata))
        );
        let doc: Value = public_json(&app, metadata).await;
        assert_eq!(
            doc["resource"],
            app.url(path),
            "each names exactly its own URL"
        );
        assert_eq!(doc["authorization_servers"], json!([app.url("")]));
    }
    let public: Value = app
        .request(
            Method::GET,
            "/.well-known/oauth-protected-resource/mcp/public",
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(public["resource"], app.url("/mcp/public"));

    // An API key is refused with a clear message.
    let res = app
        .with_key(Method::POST, "/mcp", &s.key)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("API keys are not accepted")
    );

    // A dashboard session token (another issuer and key) is not an MCP token.
    let session = app
        .session_token("tokens@oauth.example", &s.org_id, false)
        .await;
    assert_eq!(mcp_status(&app, "/mcp", &session).await, 401);

    let tokens = connect(&app, "tokens@oauth.example", &s.org_id).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&app, "/mcp", &access).await, 200);
    assert_eq!(mcp_status(&app, "/mcp/directory", &access).await, 200);
    // A wrong signature.
    let mut forged = access.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(mcp_status(&app, "/mcp", &forged).await, 401);
    // Claims changed (another organization) under the old signature.
    let parts: Vec<&str> = access.split('.').collect();
    let mut claims = jwt_claims(&access);
    claims["org"] = json!(uuid::Uuid::new_v4());
    use base64::Engine as _;
    let body = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
    let tampered = format!("{}.{body}.{}", parts[0], parts[2]);
    assert_eq!(mcp_status(&app, "/mcp", &tampered).await, 401);
    // A token for the directory is not one for the main endpoint.
    let code = authorize(
        &app,
        "tokens@oauth.example",
        &s.org_id,
        &[("resource", &app.url("/mcp/directory"))],
    )
    .await;
    let (_, directory) = exchange(&app, &code).await;
    let directory_access = directory["access_token"].as_str().unwrap();
    assert_eq!(
        mcp_status(&app, "/mcp/directory", directory_access).await,
        200
    );
    assert_eq!(mcp_status(&app, "/mcp", directory_access).await, 401);
    // Expired after fifteen minutes (with 30 s of leeway); a refresh still works.
    app.clock.advance(time::Duration::minutes(16));
    assert_eq!(mcp_status(&app, "/mcp", &access).await, 401);
    let (status, fresh) = refresh(&app, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let fresh_access = fresh["access_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&app, "/mcp", &fresh_access).await, 200);
    // A member removed from the organization is refused at once.
    let (_, other) = {
        let member = crate::admin::member(&app, &s, "leaver@oauth.example", &["editor"], &[]).await;
        (
            member,
            connect(&app, "leaver@oauth.example", &s.org_id).await,
        )
    };
    let leaver_access = other["access_token"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&app, "/mcp", &leaver_access).await, 200);
    let account = mailward_store::accounts::get_by_email(
        app.stack.state.store.as_ref(),
        "leaver@oauth.example",
    )
    .await
    .unwrap()
    .unwrap()
    .value;
    let res = app
        .with_key(Method::DELETE, &format!("/members/{}", account.id), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(mcp_status(&app, "/mcp", &leaver_access).await, 401);
}

#[tokio::test]
async fn the_same_sign_in_opens_a_dashboard_session() {
    let app = TestApp::start().await;
    let s = app.sign_up("dash@oauth.example", "Dash Co").await;
    let res = app
        .request(Method::POST, "/oauth/session/start")
        .json(&json!({"email": "dash@oauth.example"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let started: Value = res.json().await.unwrap();
    let code = app.code_for("dash@oauth.example");
    let res = app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": started["signin_id"], "code": "12345"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["param"], "code");
    let res = app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": started["signin_id"], "code": code}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let session: Value = res.json().await.unwrap();
    assert_eq!(session["organization_id"], s.org_id.as_str());
    assert_eq!(session["role"], "admin");
    let res = app
        .with_session(Method::GET, "/domains", session["token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // The code works once.
    let res = app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": started["signin_id"], "code": code}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["param"], "signin_id");
    // Bad input names the field.
    let res = app
        .request(Method::POST, "/oauth/session/start")
        .json(&json!({"email": "not an address"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["param"], "email");
}

#[tokio::test]
async fn signing_keys_rotate_without_breaking_issued_tokens() {
    let app = TestApp::start().await;
    let s = app.sign_up("keys@oauth.example", "Keys Co").await;
    let before = connect(&app, "keys@oauth.example", &s.org_id).await;
    let old_access = before["access_token"].as_str().unwrap().to_owned();
    let old_kid = jwt_header(&old_access)["kid"].clone();

    let new_kid = mailward_oauth::signing::rotate(&app.stack.state)
        .await
        .unwrap();
    let jwks: Value = public_json(&app, "/oauth/jwks").await;
    let kids: Vec<&Value> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["kid"])
        .collect();
    assert!(
        kids.contains(&&old_kid) && kids.contains(&&json!(new_kid)),
        "{jwks}"
    );
    // Issued tokens keep working; new ones are signed with the new key.
    assert_eq!(mcp_status(&app, "/mcp", &old_access).await, 200);
    let (status, fresh) = refresh(&app, before["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(
        jwt_header(fresh["access_token"].as_str().unwrap())["kid"],
        json!(new_kid)
    );
    // Once the old key's tokens expired, it leaves the JWKS.
    app.clock.advance(time::Duration::minutes(20));
    let jwks: Value = public_json(&app, "/oauth/jwks").await;
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 1, "{jwks}");
    assert_eq!(jwks["keys"][0]["kid"], json!(new_kid));
}

fn jwt_header(token: &str) -> Value {
    use base64::Engine as _;
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap()
}

/// `POST /oauth/session/start` for `email`: the sign-in id and the code mailed.
async fn start_signin(app: &TestApp, email: &str) -> (Value, String) {
    let res = app
        .request(Method::POST, "/oauth/session/start")
        .json(&json!({ "email": email }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let started: Value = res.json().await.unwrap();
    (started["signin_id"].clone(), app.code_for(email))
}

/// `POST /oauth/session` with a code: the status and the body.
async fn try_code(app: &TestApp, id: &Value, code: &str) -> (StatusCode, Value) {
    let res = app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": id, "code": code}))
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json::<Value>().await.unwrap_or(Value::Null))
}

/// A code that is surely not `code`.
fn wrong(code: &str) -> String {
    let n: u32 = code.parse().unwrap();
    format!("{:06}", (n + 1) % 1_000_000)
}

/// Tenant trust, finding 5: wrong sign-in codes are budgeted per address and client across
/// sign-ins (20 a day): past it that client gets 429 `scope` `signin`, even with the right code,
/// and the owner is mailed; another client signs in to the same address as before.
#[tokio::test]
async fn sign_in_codes_cannot_be_guessed_across_challenges() {
    let app = TestApp::start().await;
    app.sign_up("guarded@oauth.example", "Guarded Co").await;
    let budget = mailward_oauth::signin::SIGNIN_FAILURE_BUDGET;
    let mut failures = 0;
    while failures < budget - 1 {
        let (id, code) = start_signin(&app, "guarded@oauth.example").await;
        for _ in 0..5 {
            if failures == budget - 1 {
                break;
            }
            let (status, body) = try_code(&app, &id, &wrong(&code)).await;
            assert_eq!(status, 400, "{body}");
            failures += 1;
        }
    }
    // The last wrong code of the budget locks this client out of the address.
    let (id, code) = start_signin(&app, "guarded@oauth.example").await;
    let (status, body) = try_code(&app, &id, &wrong(&code)).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["scope"], "signin", "{body}");
    assert!(body["retry_after_seconds"].as_u64().unwrap() > 0);
    // Even the right code of a new sign-in is refused from here now.
    let (id, code) = start_signin(&app, "guarded@oauth.example").await;
    let (status, body) = try_code(&app, &id, &code).await;
    assert_eq!(status, 429, "{body}");
    // The owner was told, once.
    let notices = app
        .mails()
        .iter()
        .filter(|m| m.contains("Sign-in attempts to your Mailward account were blocked"))
        .count();
    assert_eq!(notices, 1);
    // Another client (another network) still signs in to the address.
    let state = &app.stack.state;
    let id = mailward_oauth::signin::start(state, "guarded@oauth.example")
        .await
        .unwrap()
        .id;
    let code = app.code_for("guarded@oauth.example");
    let verified = mailward_oauth::signin::verify(state, id, &code, "ip:203.0.113.9")
        .await
        .unwrap();
    let mailward_oauth::signin::Verified::Done(account) = verified else {
        panic!("no second factor was enrolled: {verified:?}");
    };
    assert_eq!(account.email, "guarded@oauth.example");
}

/// Tenant trust, finding 5: every sign-in step counts in the `signin` bucket per client
/// address: the code requests, the code checks and the authorization pages' steps.
#[tokio::test]
async fn every_sign_in_step_counts_in_the_signin_bucket() {
    let app = TestApp::start_with(|s| {
        s.rate_limits.push((
            mailward_services::config::Scope::Signin,
            "3/600".parse().unwrap(),
        ));
    })
    .await;
    for n in 0..3 {
        let res = app
            .request(Method::POST, "/oauth/session/start")
            .json(&json!({"email": format!("someone{n}@oauth.example")}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
    }
    let res = app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": uuid::Uuid::new_v4(), "code": "123456"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["scope"], "signin", "{body}");
    let res = post_form(&app, "/oauth/authorize", &[("step", "email")]).await;
    assert_eq!(res.status(), 429);
    assert!(res.headers().get("retry-after").is_some());
}

/// Tenant trust, finding 9: a refresh token is issued only when `offline_access` was asked for;
/// without it the connection lives as long as its access token, and nothing can refresh it.
#[tokio::test]
async fn refresh_tokens_need_offline_access() {
    let app = TestApp::start().await;
    let s = app.sign_up("brief@oauth.example", "Brief Co").await;
    let code = authorize(
        &app,
        "brief@oauth.example",
        &s.org_id,
        &[("scope", "domains:read tasks:read")],
    )
    .await;
    let (status, tokens) = exchange(&app, &code).await;
    assert_eq!(status, 200, "{tokens}");
    assert!(tokens.get("refresh_token").is_none(), "{tokens}");
    assert_eq!(tokens["scope"], "domains:read tasks:read");
    assert!(tokens["access_token"].as_str().is_some());
    // With it, the same flow answers one, and it refreshes.
    let tokens = connect(&app, "brief@oauth.example", &s.org_id).await;
    let (status, fresh) = refresh(&app, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{fresh}");
}
