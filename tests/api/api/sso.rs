//! Issue 34, single sign-on against a real, OpenID-certified provider: panva's `oidc-provider`
//! (tests/identity/oidc-provider) on loopback HTTPS with a test CA. The whole sign-in, a
//! replayed state, an expired ID token, a missing nonce, SSO enforcement for a verified domain,
//! just-in-time membership, and the provider's MFA satisfying `require_mfa` only when trusted.
//! A wrong audience and a bad signature are checked on the provider's own tokens.

use crate::identity::{app_code, enrol};
use crate::oauth::{exchange, location_params, mcp_status, page_state, param, post_form};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::io::BufRead as _;
use std::path::PathBuf;

const CLIENT: &str = "mailward";
const SECRET: &str = "mailward-test-secret";
/// A second client of the provider: its tokens are not for Mailward.
const OTHER: &str = "another-app";

fn provider_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../identity/oidc-provider")
}

/// The provider process, killed on drop.
pub(crate) struct Provider {
    _child: mailward_api_tests::KillOnDrop,
    pub(crate) issuer: String,
}

impl Provider {
    fn start(ca: &mailward_testkit::TestCa, dir: &std::path::Path, redirect: &str) -> Self {
        Self::start_for(
            ca,
            dir,
            redirect,
            &[(CLIENT, SECRET), (OTHER, "other-secret")],
        )
    }

    /// The provider with these clients (`id`, `secret`), all redirecting to `redirect`.
    pub(crate) fn start_for(
        ca: &mailward_testkit::TestCa,
        dir: &std::path::Path,
        redirect: &str,
        clients: &[(&str, &str)],
    ) -> Self {
        mailward_api_tests::npm_ci_once(&provider_dir(), "oidc-provider");
        let leaf = ca.leaf("localhost");
        let (cert, key) = (dir.join("idp-cert.pem"), dir.join("idp-key.pem"));
        std::fs::write(&cert, leaf.cert.pem() + &ca.cert().pem()).unwrap();
        std::fs::write(&key, leaf.key.serialize_pem()).unwrap();
        let mut child = std::process::Command::new("node")
            .arg(provider_dir().join("provider.mjs"))
            .arg(&cert)
            .arg(&key)
            .arg(redirect)
            .args(clients.iter().map(|(id, secret)| format!("{id}:{secret}")))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        // The provider goes on writing notes to its output: keep reading it (a closed pipe
        // would end the process).
        std::thread::spawn(move || {
            let mut sink = String::new();
            while out.read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        });
        let issuer =
            serde_json::from_str::<Value>(&line).expect("the provider's first line")["issuer"]
                .as_str()
                .unwrap()
                .to_owned();
        Self {
            _child: mailward_api_tests::KillOnDrop(child),
            issuer,
        }
    }
}

struct Setup {
    app: TestApp,
    dns: FixtureServer,
    idp: Provider,
    /// A browser: cookies, the test CA trusted, redirects followed.
    browser: reqwest::Client,
    admin: mailward_api_tests::SignedUp,
    /// The test CA (trusted by the stack and the browser).
    ca_pem: String,
    _dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ca = mailward_testkit::TestCa::new("Mailward SSO Test CA");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca.cert().pem()).unwrap();
    let dns = FixtureServer::start(vec![Zone::new("corp.example")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca_path);
    })
    .await;
    let idp = Provider::start(&ca, dir.path(), &app.url("/oauth/sso/callback"));
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .tls_certs_merge(reqwest::Certificate::from_pem_bundle(ca.cert().pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let admin = app.sign_up("admin@corp.example", "Corp").await;
    Setup {
        app,
        dns,
        idp,
        browser,
        admin,
        ca_pem: ca.cert().pem(),
        _dir: dir,
    }
}

impl Setup {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut req = self.app.with_key(method, path, &self.admin.key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// Connects the provider for corp.example and proves the domain.
    async fn connect(&self, extra: Value) -> Value {
        let mut body = json!({
            "issuer": self.idp.issuer,
            "client_id": CLIENT,
            "client_secret": SECRET,
            "domains": ["corp.example"],
        });
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (status, view) = self.call(Method::POST, "/sso", Some(body)).await;
        assert_eq!(status, 200, "{view}");
        assert_eq!(view["domains"][0]["verified"], false);
        assert_eq!(view["redirect_uri"], self.app.url("/oauth/sso/callback"));
        assert_eq!(view["provider"], "oidc");
        assert_eq!(view["client_secret_last_four"], "cret");
        let (status, view) = self.call(Method::POST, "/sso/verify", None).await;
        assert_eq!(status, 200);
        assert_eq!(view["domains"][0]["verified"], false, "no TXT record yet");
        self.dns
            .set_txt(
                view["domains"][0]["txt_name"].as_str().unwrap(),
                view["domains"][0]["txt_value"].as_str().unwrap(),
            )
            .unwrap();
        let (status, view) = self.call(Method::POST, "/sso/verify", None).await;
        assert_eq!(status, 200);
        assert_eq!(view["domains"][0]["verified"], true, "{view}");
        view
    }

    /// `GET /domains` with a session token.
    async fn domains_as(&self, token: &str) -> (StatusCode, Value) {
        let res = self
            .app
            .with_session(Method::GET, "/domains", token)
            .send()
            .await
            .unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// `POST /oauth/session/start`: the answer.
    async fn start(&self, email: &str) -> Value {
        let res = self
            .app
            .request(Method::POST, "/oauth/session/start")
            .json(&json!({ "email": email }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
        res.json().await.unwrap()
    }

    /// Opens `url` in the browser: the final status, URL and page.
    async fn open(&self, url: &str) -> (StatusCode, String, String) {
        self.open_in(&self.browser, url).await
    }

    /// A browser of its own (another person: the provider's session cookie is not shared).
    fn new_browser(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .tls_certs_merge(reqwest::Certificate::from_pem_bundle(self.ca_pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    }

    async fn open_in(&self, browser: &reqwest::Client, url: &str) -> (StatusCode, String, String) {
        let res = browser.get(url).send().await.unwrap();
        let (status, at) = (res.status(), res.url().to_string());
        (status, at, res.text().await.unwrap())
    }

    /// `POST /oauth/session` with the sign-in id alone (after the provider).
    async fn session(&self, signin: &Value, mfa_code: Option<&str>) -> (StatusCode, Value) {
        let mut body = json!({ "signin_id": signin });
        if let Some(code) = mfa_code {
            body["mfa_code"] = json!(code);
        }
        let res = self
            .app
            .request(Method::POST, "/oauth/session")
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// A whole sign-in through the provider: the session answer.
    async fn sso_session(&self, email: &str) -> (StatusCode, Value) {
        let started = self.start(email).await;
        let browser = self.new_browser();
        let (status, _, page) = self
            .open_in(&browser, started["sso_url"].as_str().unwrap())
            .await;
        assert_eq!(status, 200, "{page}");
        assert!(page.contains("You are signed in"), "{page}");
        self.session(&started["signin_id"], None).await
    }
}

#[tokio::test]
async fn members_sign_in_through_the_provider_and_every_bad_return_is_refused() {
    let s = setup().await;
    s.connect(json!({"enforced": true, "jit_role": "viewer"}))
        .await;

    // The domain decides: no code is mailed, a code is refused, the provider signs in.
    let mails = s.app.mails().len();
    let started = s.start("admin@corp.example").await;
    assert_eq!(started["sso_required"], true);
    let sso_url = started["sso_url"].as_str().unwrap().to_owned();
    assert!(
        sso_url.starts_with(&s.app.url("/oauth/sso/start?signin_id=")),
        "{sso_url}"
    );
    assert_eq!(
        s.app.mails().len(),
        mails,
        "no code is mailed for an enforced domain"
    );
    let res = s
        .app
        .request(Method::POST, "/oauth/session")
        .json(&json!({"signin_id": started["signin_id"], "code": "123456"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "sso_required");
    // Not finished at the provider yet: nothing to trade.
    let (status, _) = s.session(&started["signin_id"], None).await;
    assert_eq!(status, 400);
    let (status, callback, page) = s.open(&sso_url).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        callback.starts_with(&s.app.url("/oauth/sso/callback?")),
        "{callback}"
    );
    let (status, session) = s.session(&started["signin_id"], None).await;
    assert_eq!(status, 200, "{session}");
    let token = session["token"].as_str().unwrap().to_owned();
    assert_eq!(session["organization_id"], s.admin.org_id.as_str());
    assert_eq!(crate::oauth::jwt_claims(&token)["amr"], json!(["fed"]));
    let res = s
        .app
        .with_session(Method::GET, "/oauth/sessions", &token)
        .send()
        .await
        .unwrap();
    let list: Value = res.json().await.unwrap();
    assert_eq!(list["data"][0]["provider"], "oidc");
    // The sign-in is used once.
    let (status, _) = s.session(&started["signin_id"], None).await;
    assert_eq!(status, 400);

    // A replayed state is refused.
    let (status, _, page) = s.open(&callback).await;
    assert_eq!(status, 400);
    assert!(page.contains("already used"), "{page}");

    // Just-in-time membership with the connection's role; the member list names the provider.
    let (status, session) = s.sso_session("new@corp.example").await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["role"], "viewer");
    let (_, members) = s.call(Method::GET, "/members", None).await;
    let new = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "new@corp.example")
        .cloned()
        .expect("the new member");
    assert_eq!(new["auth_provider"], "oidc");
    let (_, activity) = s
        .call(Method::GET, "/activity-log?action=member.added", None)
        .await;
    assert!(
        activity.to_string().contains("single sign-on"),
        "{activity}"
    );

    // A missing nonce: the authorization request loses it on the way, the ID token has none.
    let started = s.start("admin@corp.example").await;
    let first_hop = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(started["sso_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(first_hop.status(), 303);
    let location = first_hop.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&s.idp.issuer), "{location}");
    let mut without_nonce = reqwest::Url::parse(&location).unwrap();
    let kept: Vec<(String, String)> = without_nonce
        .query_pairs()
        .filter(|(k, _)| k != "nonce")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    without_nonce.query_pairs_mut().clear().extend_pairs(kept);
    let (status, _, page) = s.open(without_nonce.as_str()).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("nonce is missing"), "{page}");
    let (status, _) = s.session(&started["signin_id"], None).await;
    assert_eq!(status, 400);

    // An expired ID token: the service's clock is two hours ahead of the provider's.
    s.app.clock.advance(time::Duration::hours(2));
    let started = s.start("admin@corp.example").await;
    let (status, _, page) = s.open(started["sso_url"].as_str().unwrap()).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("expired"), "{page}");
}

#[tokio::test]
async fn the_providers_mfa_satisfies_require_mfa_only_when_the_organization_trusts_it() {
    let s = setup().await;
    s.connect(json!({"jit_role": "editor", "trust_provider_mfa": true}))
        .await;
    let boss = s
        .app
        .session_token("admin@corp.example", &s.admin.org_id, true)
        .await;
    let res = s
        .app
        .with_session(
            Method::POST,
            &format!("/organizations/{}", s.admin.org_id),
            &boss,
        )
        .json(&json!({"require_mfa": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // The provider signed in with MFA: admitted.
    let (status, session) = s.sso_session("mfa-kim@corp.example").await;
    assert_eq!(status, 200, "{session}");
    let kim = session["token"].as_str().unwrap().to_owned();
    assert_eq!(crate::oauth::jwt_claims(&kim)["amr"], json!(["fed", "mfa"]));
    assert_eq!(s.domains_as(&kim).await.0, 200);

    // Without MFA at the provider: held until Mailward's own authenticator is used.
    let (status, session) = s.sso_session("pat@corp.example").await;
    assert_eq!(status, 200, "{session}");
    let pat = session["token"].as_str().unwrap().to_owned();
    let (status, body) = s.domains_as(&pat).await;
    assert_eq!(status, 403);
    assert_eq!(body["code"], "mfa_enrollment_required");
    let (secret, _) = enrol(&s.app, &pat).await;
    s.app.clock.advance(time::Duration::seconds(30));
    let started = s.start("pat@corp.example").await;
    let (status, _, _) = s.open(started["sso_url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let (status, body) = s.session(&started["signin_id"], None).await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::FORBIDDEN, &json!("mfa_required"))
    );
    let (status, session) = s
        .session(&started["signin_id"], Some(&app_code(&s.app, &secret)))
        .await;
    assert_eq!(status, 200, "{session}");
    let pat = session["token"].as_str().unwrap();
    assert_eq!(crate::oauth::jwt_claims(pat)["amr"], json!(["fed", "mfa"]));
    assert_eq!(s.domains_as(pat).await.0, 200);

    // Once the organization stops trusting the provider's MFA, it counts for nothing.
    let (status, _) = s
        .call(
            Method::POST,
            "/sso",
            Some(json!({"trust_provider_mfa": false})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, session) = s.sso_session("mfa-kim@corp.example").await;
    assert_eq!(status, 200);
    let kim = session["token"].as_str().unwrap();
    assert_eq!(crate::oauth::jwt_claims(kim)["amr"], json!(["fed"]));
    assert_eq!(s.domains_as(kim).await.0, 403);
    // An `acr` the organization names counts as the provider's MFA; another does not.
    let (status, _) = s
        .call(
            Method::POST,
            "/sso",
            Some(json!({"trust_provider_mfa": true, "mfa_acr_values": ["urn:test:mfa"]})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, session) = s.sso_session("acr-lee@corp.example").await;
    assert_eq!(status, 200, "{session}");
    let lee = session["token"].as_str().unwrap().to_owned();
    assert_eq!(crate::oauth::jwt_claims(&lee)["amr"], json!(["fed", "mfa"]));
    assert_eq!(s.domains_as(&lee).await.0, 200);
    let (status, _) = s
        .call(
            Method::POST,
            "/sso",
            Some(json!({"mfa_acr_values": ["urn:other"]})),
        )
        .await;
    assert_eq!(status, 200);
    let (_, session) = s.sso_session("acr-lee@corp.example").await;
    let lee = session["token"].as_str().unwrap().to_owned();
    assert_eq!(crate::oauth::jwt_claims(&lee)["amr"], json!(["fed"]));
}

#[tokio::test]
async fn the_consent_pages_sign_in_through_the_provider() {
    let s = setup().await;
    s.connect(json!({"enforced": true})).await;
    let res = s
        .app
        .request(Method::GET, &crate::oauth::authorize_url(&[]))
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    let res = post_form(
        &s.app,
        "/oauth/authorize",
        &[
            ("step", "email"),
            ("state", &page_state(&html)),
            ("email", "admin@corp.example"),
        ],
    )
    .await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    let marker = "id=\"sso\" href=\"";
    let start = html.find(marker).expect("a link to the provider") + marker.len();
    let link = html[start..]
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    assert!(link.starts_with(&s.idp.issuer), "{link}");
    // The provider returns to the consent page, in the same browser.
    let (status, _, consent) = s.open(&link).await;
    assert_eq!(status, 200, "{consent}");
    assert!(
        consent.contains(&format!("value=\"{}\"", s.admin.org_id)),
        "{consent}"
    );
    let res = post_form(
        &s.app,
        "/oauth/authorize",
        &[
            ("step", "consent"),
            ("state", &page_state(&consent)),
            ("organization_id", &s.admin.org_id),
            ("decision", "allow"),
            ("allow_changes", "yes"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    let params = location_params(&res);
    let (status, tokens) = exchange(&s.app, param(&params, "code").unwrap()).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(crate::oauth::jwt_claims(access)["amr"], json!(["fed"]));
    assert_eq!(mcp_status(&s.app, "/mcp", access).await, 200);
}

#[tokio::test]
async fn the_providers_tokens_for_another_client_or_with_a_bad_signature_are_refused() {
    let s = setup().await;
    // The provider's own ID token, issued to another client through the whole code flow.
    let verifier = "v".repeat(43);
    let challenge = mailward_oauth::s256(&verifier);
    let stop_at_callback = {
        let port = s.app.stack.addr.port();
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.url().port() == Some(port) {
                attempt.stop()
            } else {
                attempt.follow()
            }
        })
    };
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(stop_at_callback)
        .tls_certs_merge(reqwest::Certificate::from_pem_bundle(s.ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let mut auth = reqwest::Url::parse(&format!("{}/auth", s.idp.issuer)).unwrap();
    auth.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", OTHER)
        .append_pair("redirect_uri", &s.app.url("/oauth/sso/callback"))
        .append_pair("scope", "openid email")
        .append_pair("state", "st")
        .append_pair("nonce", "n-1")
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("login_hint", "mfa-admin@corp.example");
    let res = client.get(auth).send().await.unwrap();
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let code = reqwest::Url::parse(&location)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code");
    let tokens: Value = client
        .post(format!("{}/token", s.idp.issuer))
        .basic_auth(OTHER, Some("other-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", "authorization_code")
                .append_pair("code", &code)
                .append_pair("redirect_uri", &s.app.url("/oauth/sso/callback"))
                .append_pair("code_verifier", &verifier)
                .finish(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id_token = tokens["id_token"].as_str().expect("an ID token").to_owned();
    let jwks: jsonwebtoken::jwk::JwkSet = client
        .get(format!("{}/jwks", s.idp.issuer))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let check = |token: &str, client_id: &str| {
        mailward_oauth::sso::check_id_token(token, &jwks, &s.idp.issuer, client_id, "n-1", now)
    };
    assert!(
        check(&id_token, OTHER).is_ok(),
        "{:?}",
        check(&id_token, OTHER).err()
    );
    assert_eq!(check(&id_token, CLIENT).unwrap_err(), "wrong audience");
    // One bit of the signature changed.
    let (head, signature) = id_token.rsplit_once('.').unwrap();
    let mut bytes: Vec<u8> = signature.bytes().collect();
    bytes[10] = if bytes[10] == b'A' { b'B' } else { b'A' };
    let forged = format!("{head}.{}", String::from_utf8(bytes).unwrap());
    assert_eq!(check(&forged, OTHER).unwrap_err(), "bad signature");
    assert_eq!(
        mailward_oauth::sso::check_id_token(&id_token, &jwks, &s.idp.issuer, OTHER, "n-2", now)
            .unwrap_err(),
        "the nonce differs"
    );
}
