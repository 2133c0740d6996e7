//! Issue 37 §3, report mailboxes with modern sign-in: an organization connects its own report
//! mailbox and Mailward reads it on a schedule, importing its reports for that organization
//! alone.
//! - IMAP with SASL XOAUTH2 and OAUTHBEARER against a real Dovecot whose `oauth2` passdb checks
//!   each token at a real OpenID provider (panva's `oidc-provider`, tests/identity): the refresh
//!   token comes from the provider's own authorization-code flow, and Mailward exchanges it at
//!   the provider's token endpoint at every poll.
//! - The Microsoft Graph mail API against a stand-in serving the documented message list
//!   (`$filter`, `$orderby`, `@odata.nextLink` paging), `$value` MIME and `move`, with a token
//!   endpoint that rotates the refresh token at every use.

use crate::common::{add_domain, call, get};
use crate::sso::Provider;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_testkit::{Dovecot, DovecotAuth, TestCa};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const MAILBOX: &str = "dmarc@mbx.example";
const CLIENT: &str = "mailbox-reader";
const SECRET: &str = "mailbox-reader-secret";

/// A one-day aggregate report mail for `domain` (hand-made), not signed.
fn report_mail(app: &TestApp, domain: &str, id: &str, count: u64) -> Vec<u8> {
    let xml = crate::report_trust::dmarc_xml(app, domain, id, count);
    format!(
        "From: DMARC Reports <noreply-dmarc@receiver.example>\r\nTo: {MAILBOX}\r\n\
Subject: Report Domain: {domain} Report-ID: {id}\r\nMessage-ID: <{id}@receiver.example>\r\n\
MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
Content-Type: text/plain\r\n\r\nA report.\r\n--b1\r\nContent-Type: text/xml\r\n\
Content-Disposition: attachment; filename=\"report.xml\"\r\n\r\n{xml}\r\n--b1--\r\n"
    )
    .into_bytes()
}

const NOTE: &[u8] =
    b"From: bob@example.com\r\nTo: dmarc@mbx.example\r\nSubject: hello\r\n\r\nnot a report\r\n";

/// Reads the connection until a poll after `after` (its `last_polled_at`) is recorded.
async fn polled(app: &TestApp, key: &str, id: &str, after: &Value) -> Value {
    let path = format!("/mailbox-connections/{id}");
    for _ in 0..300 {
        let view = get(app, &path, key).await;
        if view["last_polled_at"] != *after && view["status"] != "pending" {
            return view;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!(
        "no poll of {id} was recorded: {}",
        get(app, &path, key).await
    );
}

/// Asks for a poll now and waits for its outcome (a minute later on the test's clock, so the
/// poll's time tells it apart).
async fn poll(app: &TestApp, key: &str, id: &str) -> Value {
    app.clock.advance(time::Duration::minutes(1));
    let before = get(app, &format!("/mailbox-connections/{id}"), key).await;
    let (status, body) = call(
        app,
        Method::POST,
        &format!("/mailbox-connections/{id}/poll"),
        key,
        None,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    polled(app, key, id, &before["last_polled_at"]).await
}

async fn volume(app: &TestApp, key: &str, domain: &Value) -> Value {
    let id = domain["id"].as_str().unwrap();
    get(app, &format!("/domains/{id}/reports/summary"), key).await["volume"].clone()
}

/// A refresh token for `login` through the provider's authorization-code flow (PKCE, offline
/// access, consent), as a person connecting a mailbox obtains one.
async fn refresh_token(idp: &Provider, ca_pem: &str, redirect: &str, login: &str) -> String {
    let verifier = "m".repeat(43);
    let stop_at_callback = {
        let redirect = redirect.to_owned();
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.url().as_str().starts_with(&redirect) {
                attempt.stop()
            } else {
                attempt.follow()
            }
        })
    };
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(stop_at_callback)
        .tls_certs_merge(reqwest::Certificate::from_pem_bundle(ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let mut auth = reqwest::Url::parse(&format!("{}/auth", idp.issuer)).unwrap();
    auth.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT)
        .append_pair("redirect_uri", redirect)
        .append_pair("scope", "openid email offline_access")
        .append_pair("prompt", "consent")
        .append_pair("state", "st")
        .append_pair("code_challenge", &mailward_oauth::s256(&verifier))
        .append_pair("code_challenge_method", "S256")
        .append_pair("login_hint", login);
    let res = browser.get(auth).send().await.unwrap();
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let code = reqwest::Url::parse(&location)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code");
    let tokens: Value = browser
        .post(format!("{}/token", idp.issuer))
        .basic_auth(CLIENT, Some(SECRET))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", redirect),
            ("code_verifier", &verifier),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    tokens["refresh_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no refresh token: {tokens}"))
        .to_owned()
}

#[tokio::test]
async fn imap_mailboxes_signed_in_with_oauth_are_read_for_their_organization_only() {
    let Some(binary) = Dovecot::required() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let idp_ca = TestCa::new("Mailbox IdP Test CA");
    let redirect = "https://localhost:9/callback";
    let idp = Provider::start_for(&idp_ca, dir.path(), redirect, &[(CLIENT, SECRET)]);
    let dovecot = Dovecot::start(
        &binary,
        &DovecotAuth::OAuth2 {
            userinfo_url: format!("{}/me", idp.issuer),
            ca_pem: idp_ca.cert().pem(),
        },
    );
    let bundle = dir.path().join("cas.pem");
    std::fs::write(&bundle, idp_ca.cert().pem() + &dovecot.ca_pem).unwrap();
    let dns = FixtureServer::start(vec![
        Zone::new("mbx.example"),
        Zone::new("neighbour.example"),
    ])
    .await
    .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(bundle);
    })
    .await;
    let owner = app.sign_up("admin@mbx.example", "Mailbox Owner").await;
    let neighbour = app.sign_up("admin@neighbour.example", "Neighbour").await;
    let mine = add_domain(&app, &owner.key, "mbx.example").await;
    let theirs = add_domain(&app, &neighbour.key, "neighbour.example").await;
    dovecot.deliver(MAILBOX, "1.a", &report_mail(&app, "mbx.example", "r-1", 40));
    dovecot.deliver(
        MAILBOX,
        "2.b",
        &report_mail(&app, "neighbour.example", "r-2", 9),
    );
    dovecot.deliver(MAILBOX, "3.c", NOTE);
    let refresh = refresh_token(&idp, &idp_ca.cert().pem(), redirect, MAILBOX).await;

    let oauth = |mechanism: &str, refresh: &str| {
        json!({"type": "oauth2", "mechanism": mechanism, "token_url": format!("{}/token", idp.issuer),
               "client_id": CLIENT, "client_secret": SECRET, "refresh_token": refresh})
    };
    let (status, created) = call(
        &app,
        Method::POST,
        "/mailbox-connections",
        &owner.key,
        Some(
            json!({"name": "DMARC mailbox", "provider": "imap", "host": "localhost",
                    "port": dovecot.port, "user": MAILBOX, "auth": oauth("xoauth2", &refresh)}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["status"], "pending");
    assert_eq!(created["auth"]["mechanism"], "xoauth2");
    assert_eq!(created["auth"]["has_client_secret"], true);
    for secret in [refresh.as_str(), SECRET] {
        assert!(
            !created.to_string().contains(secret),
            "a secret was answered"
        );
    }
    let id = created["id"].as_str().unwrap().to_owned();

    // The first poll, queued at creation: the owner's report imported, the neighbour's report
    // (same mailbox, a domain the owner does not watch) imported for no one.
    let first = polled(&app, &owner.key, &id, &Value::Null).await;
    assert_eq!(first["status"], "active", "{first}\n{}", dovecot.log());
    assert_eq!(
        first["last_result"],
        json!({"messages": 3, "imported": 1, "duplicate": 0, "unattributed": 1, "refused": 1})
    );
    assert_eq!(volume(&app, &owner.key, &mine).await, 40);
    assert_eq!(volume(&app, &neighbour.key, &theirs).await, 0);
    assert!(
        dovecot.log().contains("method=XOAUTH2"),
        "{}",
        dovecot.log()
    );
    // Read-only without move_to: every message is still unread where it was delivered.
    assert_eq!(dovecot.count(MAILBOX, None), (3, 0));
    // The neighbour sees nothing of the connection.
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/mailbox-connections/{id}"),
        &neighbour.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(
        get(&app, "/mailbox-connections", &neighbour.key).await["data"],
        json!([])
    );

    // The cursor: a poll reads only what arrived since.
    let again = poll(&app, &owner.key, &id).await;
    assert_eq!(again["last_result"]["messages"], 0, "{again}");
    dovecot.deliver(MAILBOX, "4.d", &report_mail(&app, "mbx.example", "r-3", 5));
    let newer = poll(&app, &owner.key, &id).await;
    assert_eq!(newer["last_result"]["imported"], 1, "{newer}");
    assert_eq!(newer["totals"]["messages"], 4);
    assert_eq!(volume(&app, &owner.key, &mine).await, 45);

    // OAUTHBEARER (RFC 7628), moving processed reports: a second connection to the same
    // mailbox finds the reports already imported (duplicates, never counted twice).
    let (status, bearer) = call(
        &app,
        Method::POST,
        "/mailbox-connections",
        &owner.key,
        Some(json!({"name": "Bearer", "provider": "imap", "host": "localhost", "port": dovecot.port,
                    "user": MAILBOX, "move_to": "Processed", "auth": oauth("oauthbearer", &refresh)})),
    )
    .await;
    assert_eq!(status, 201, "{bearer}");
    let bearer_id = bearer["id"].as_str().unwrap().to_owned();
    let moved = polled(&app, &owner.key, &bearer_id, &Value::Null).await;
    assert_eq!(
        moved["last_result"],
        json!({"messages": 4, "imported": 0, "duplicate": 2, "unattributed": 1, "refused": 1}),
        "{moved}\n{}",
        dovecot.log()
    );
    assert!(dovecot.log().contains("method=OAUTHBEARER"));
    let (new, cur) = dovecot.count(MAILBOX, None);
    assert_eq!(new + cur, 1, "only the note stays");
    let (new, cur) = dovecot.count(MAILBOX, Some("Processed"));
    assert_eq!(new + cur, 3, "the three reports moved");
    assert_eq!(volume(&app, &owner.key, &mine).await, 45);

    // A refresh token the provider refuses: polling stops, saying why, until auth is replaced.
    app.clock.advance(time::Duration::minutes(1));
    let (status, changed) = call(
        &app,
        Method::POST,
        &format!("/mailbox-connections/{id}"),
        &owner.key,
        Some(json!({"auth": oauth("xoauth2", "not-a-refresh-token")})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    let refused = polled(&app, &owner.key, &id, &newer["last_polled_at"]).await;
    assert_eq!(refused["status"], "credentials_refused", "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("invalid_grant"),
        "{refused}"
    );
    assert_eq!(refused["next_poll_at"], Value::Null);
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/mailbox-connections/{id}/poll"),
        &owner.key,
        None,
    )
    .await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (422, Some("mailbox_not_polled")),
        "{body}"
    );
    // Replacing the sign-in reads again (from the start: duplicates only).
    app.clock.advance(time::Duration::minutes(1));
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/mailbox-connections/{id}"),
        &owner.key,
        Some(json!({"auth": oauth("xoauth2", &refresh)})),
    )
    .await;
    assert_eq!(status, 200);
    let back = polled(&app, &owner.key, &id, &refused["last_polled_at"]).await;
    assert_eq!(back["status"], "active", "{back}");

    // Deleting removes the connection (and its secrets); the reports stay.
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/mailbox-connections/{bearer_id}"),
        &owner.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(
        get(&app, "/mailbox-connections", &owner.key).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(volume(&app, &owner.key, &mine).await, 45);
}

#[tokio::test]
async fn bad_mailbox_connections_are_refused_naming_the_field() {
    let app = TestApp::start().await;
    let admin = app.sign_up("admin@refusals.example", "Refusals").await;
    let base = json!({"name": "Box", "provider": "imap", "host": "imap.refusals.example",
                      "user": "dmarc@refusals.example", "auth": {"type": "password", "password": "pw"}});
    let with = |patch: Value| {
        let mut body = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let oauth = json!({"type": "oauth2", "token_url": "https://login.refusals.example/token",
                       "client_id": "c", "refresh_token": "r"});
    for (body, param) in [
        (with(json!({"host": "10.1.2.3"})), "host"),
        (with(json!({"host": "localhost"})), "host"),
        (with(json!({"host": "not a host"})), "host"),
        (with(json!({"provider": "pop3"})), "provider"),
        (with(json!({"mailbox": "a\"b"})), "mailbox"),
        (
            with(json!({"poll_interval_minutes": 1})),
            "poll_interval_minutes",
        ),
        (with(json!({"auth": {"type": "password"}})), "auth.password"),
        (with(json!({"auth": {"type": "magic"}})), "auth.type"),
        (
            with(json!({"auth": {"type": "oauth2", "client_id": "c", "refresh_token": "r"}})),
            "auth.token_url",
        ),
        (
            with(
                json!({"auth": {"type": "oauth2", "token_url": "http://login.refusals.example/token", "client_id": "c", "refresh_token": "r"}}),
            ),
            "auth.token_url",
        ),
        (
            with(
                json!({"auth": {"type": "oauth2", "token_url": "https://10.0.0.1/token", "client_id": "c", "refresh_token": "r"}}),
            ),
            "auth.token_url",
        ),
        (
            with(
                json!({"auth": {"type": "oauth2", "token_url": "https://login.refusals.example/token", "client_id": "c"}}),
            ),
            "auth.refresh_token",
        ),
        (
            with(
                json!({"auth": {"type": "oauth2", "mechanism": "plain", "token_url": "https://login.refusals.example/token", "client_id": "c", "refresh_token": "r"}}),
            ),
            "auth.mechanism",
        ),
        (
            json!({"name": "G", "provider": "microsoft_graph", "user": "me", "auth": {"type": "password", "password": "pw"}}),
            "auth.type",
        ),
        (
            json!({"name": "G", "provider": "microsoft_graph", "host": "graph.refusals.example", "user": "me", "auth": oauth}),
            "host",
        ),
    ] {
        let (status, answer) = call(
            &app,
            Method::POST,
            "/mailbox-connections",
            &admin.key,
            Some(body.clone()),
        )
        .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["param"], param, "{body}: {answer}");
    }
    assert_eq!(
        get(&app, "/mailbox-connections", &admin.key).await["data"],
        json!([])
    );
}

/// The Graph stand-in's state.
#[derive(Default)]
struct GraphState {
    /// (id, receivedDateTime, folder, MIME).
    messages: Vec<(String, String, String, Vec<u8>)>,
    /// The refresh token it accepts now (each use rotates it).
    refresh: String,
    /// The access token it accepts now.
    access: String,
    issued: u32,
    /// Request lines seen.
    seen: Vec<String>,
}

type Shared = Arc<Mutex<GraphState>>;

fn respond(status: u16, body: Value) -> hyper::Response<Full<Bytes>> {
    hyper::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// One request to the stand-in: the token endpoint, or Graph's mail API for [`MAILBOX`].
fn graph_answer(
    state: &Shared,
    method: &str,
    uri: &hyper::Uri,
    auth: Option<&str>,
    body: &[u8],
    base: &str,
) -> hyper::Response<Full<Bytes>> {
    let mut s = state.lock().unwrap();
    s.seen.push(format!("{method} {uri}"));
    let path = uri.path().to_owned();
    if path == "/token" {
        let form: std::collections::HashMap<String, String> =
            url::form_urlencoded::parse(body).into_owned().collect();
        if form.get("grant_type").map(String::as_str) != Some("refresh_token")
            || form.get("refresh_token") != Some(&s.refresh)
            || form.get("client_id").map(String::as_str) != Some("graph-app")
        {
            return respond(
                400,
                json!({"error": "invalid_grant", "error_description": "AADSTS70000: the refresh token is not valid"}),
            );
        }
        s.issued += 1;
        s.access = format!("at-{}", s.issued);
        s.refresh = format!("rt-{}", s.issued + 1);
        return respond(
            200,
            json!({"token_type": "Bearer", "access_token": s.access, "refresh_token": s.refresh, "expires_in": 3600}),
        );
    }
    if auth != Some(&format!("Bearer {}", s.access)) {
        return respond(
            401,
            json!({"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty or invalid."}}),
        );
    }
    let prefix = format!("/v1.0/users/{}/", MAILBOX);
    let Some(rest) = path.strip_prefix(&prefix) else {
        return respond(
            404,
            json!({"error": {"code": "ErrorItemNotFound", "message": path}}),
        );
    };
    let query: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let parts: Vec<&str> = rest.split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", ["mailFolders", folder, "messages"]) => {
            assert_eq!(
                query.get("$orderby").map(String::as_str),
                Some("receivedDateTime asc")
            );
            let after = query
                .get("$filter")
                .map(|f| f.trim_start_matches("receivedDateTime ge ").to_owned());
            let skip: usize = query.get("$skip").and_then(|v| v.parse().ok()).unwrap_or(0);
            let mut listed: Vec<_> = s
                .messages
                .iter()
                .filter(|m| m.2 == *folder && after.as_ref().is_none_or(|a| m.1 >= *a))
                .collect();
            listed.sort_by(|a, b| a.1.cmp(&b.1));
            // Two per page, so the next link is followed.
            let page: Vec<Value> = listed
                .iter()
                .skip(skip)
                .take(2)
                .map(|m| json!({"id": m.0, "receivedDateTime": m.1}))
                .collect();
            let mut answer = json!({"value": page});
            if listed.len() > skip + 2 {
                let mut next = url::Url::parse(&format!("{base}{path}")).unwrap();
                {
                    let mut q = next.query_pairs_mut();
                    for (k, v) in &query {
                        if k != "$skip" {
                            q.append_pair(k, v);
                        }
                    }
                    q.append_pair("$skip", &(skip + 2).to_string());
                }
                answer["@odata.nextLink"] = json!(next.to_string());
            }
            respond(200, answer)
        }
        ("GET", ["messages", id, "$value"]) => match s.messages.iter().find(|m| m.0 == *id) {
            Some(m) => hyper::Response::builder()
                .status(200)
                .header("content-type", "text/plain")
                .body(Full::new(Bytes::from(m.3.clone())))
                .unwrap(),
            None => respond(
                404,
                json!({"error": {"code": "ErrorItemNotFound", "message": "gone"}}),
            ),
        },
        ("POST", ["messages", id, "move"]) => {
            let destination: Value = serde_json::from_slice(body).unwrap();
            let id = (*id).to_owned();
            match s.messages.iter_mut().find(|m| m.0 == id) {
                Some(m) => {
                    m.2 = destination["destinationId"].as_str().unwrap().to_owned();
                    respond(201, json!({"id": id}))
                }
                None => respond(
                    404,
                    json!({"error": {"code": "ErrorItemNotFound", "message": "gone"}}),
                ),
            }
        }
        _ => respond(
            400,
            json!({"error": {"code": "BadRequest", "message": "unexpected"}}),
        ),
    }
}

/// Starts the stand-in over HTTPS with a fresh CA written into `dir`: (base URL, CA path).
async fn graph_stand_in(
    state: Shared,
    dir: &std::path::Path,
) -> (String, std::path::PathBuf, tokio::task::JoinHandle<()>) {
    let ca = TestCa::new("Graph Stand-in CA");
    let leaf = ca.leaf("localhost");
    let ca_path = dir.join("graph-ca.pem");
    std::fs::write(&ca_path, ca.cert().pem()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.cert.der().clone(), ca.cert().der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf.key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    let served = base.clone();
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, state, base) = (acceptor.clone(), Arc::clone(&state), served.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (state, base) = (Arc::clone(&state), base.clone());
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let auth = parts
                                .headers
                                .get("authorization")
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_owned);
                            Ok::<_, std::convert::Infallible>(graph_answer(
                                &state,
                                parts.method.as_str(),
                                &parts.uri,
                                auth.as_deref(),
                                &body,
                                &base,
                            ))
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (base, ca_path, task)
}

#[tokio::test]
async fn graph_mailboxes_are_read_with_a_rotating_refresh_token() {
    let dir = tempfile::tempdir().unwrap();
    let state: Shared = Arc::new(Mutex::new(GraphState {
        refresh: "rt-1".into(),
        ..Default::default()
    }));
    let (base, ca_path, _server) = graph_stand_in(Arc::clone(&state), dir.path()).await;
    let dns = FixtureServer::start(vec![Zone::new("mbx.example")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let graph_url = format!("{base}/v1.0");
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca_path);
        s.graph_url = Some(graph_url);
    })
    .await;
    let owner = app.sign_up("admin@mbx.example", "Graph Owner").await;
    let mine = add_domain(&app, &owner.key, "mbx.example").await;
    {
        let mut s = state.lock().unwrap();
        for (id, at, mail) in [
            (
                "m1",
                "2026-11-20T08:00:00Z",
                report_mail(&app, "mbx.example", "g-1", 10),
            ),
            ("m2", "2026-11-20T09:00:00Z", NOTE.to_vec()),
            (
                "m3",
                "2026-11-20T09:00:00Z",
                report_mail(&app, "mbx.example", "g-2", 20),
            ),
        ] {
            s.messages
                .push((id.into(), at.into(), "inbox".into(), mail));
        }
    }
    let (status, created) = call(
        &app,
        Method::POST,
        "/mailbox-connections",
        &owner.key,
        Some(json!({"name": "Microsoft 365", "provider": "microsoft_graph", "user": MAILBOX,
                    "move_to": "archive",
                    "auth": {"type": "oauth2", "token_url": format!("{base}/token"), "client_id": "graph-app",
                             "refresh_token": "rt-1", "scope": "https://graph.microsoft.com/.default offline_access"}})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["mailbox"], "inbox");
    let id = created["id"].as_str().unwrap().to_owned();
    let first = polled(&app, &owner.key, &id, &Value::Null).await;
    assert_eq!(
        first["last_result"],
        json!({"messages": 3, "imported": 2, "duplicate": 0, "unattributed": 0, "refused": 1}),
        "{first}"
    );
    assert_eq!(volume(&app, &owner.key, &mine).await, 30);
    {
        let s = state.lock().unwrap();
        let folders: Vec<(&str, &str)> = s
            .messages
            .iter()
            .map(|m| (m.0.as_str(), m.2.as_str()))
            .collect();
        assert_eq!(
            folders,
            [("m1", "archive"), ("m2", "inbox"), ("m3", "archive")]
        );
        assert!(
            s.seen
                .iter()
                .any(|l| l.contains("%24skip=2") || l.contains("$skip=2"))
                || s.messages.len() < 3
        );
    }

    // The rotated refresh token was kept: the next poll signs in with rt-2, and the cursor
    // skips the message already read at the boundary instant.
    {
        let mut s = state.lock().unwrap();
        s.messages.push((
            "m4".into(),
            "2026-11-20T09:00:00Z".into(),
            "inbox".into(),
            report_mail(&app, "mbx.example", "g-3", 4),
        ));
        s.messages.push((
            "m5".into(),
            "2026-11-21T07:00:00Z".into(),
            "inbox".into(),
            report_mail(&app, "mbx.example", "g-4", 6),
        ));
    }
    let second = poll(&app, &owner.key, &id).await;
    assert_eq!(second["status"], "active", "{second}");
    assert_eq!(
        second["last_result"],
        json!({"messages": 2, "imported": 2, "duplicate": 0, "unattributed": 0, "refused": 0}),
        "m2 and m3, read at the boundary instant, are skipped; m4 (same instant) and m5 are new: {second}"
    );
    assert_eq!(volume(&app, &owner.key, &mine).await, 40);
    let issued = state.lock().unwrap().issued;
    assert_eq!(
        issued, 2,
        "one refresh per poll, each with the rotated token"
    );

    // A refresh token the token endpoint no longer takes: refused, saying so.
    state.lock().unwrap().refresh = "rt-revoked".into();
    let refused = poll(&app, &owner.key, &id).await;
    assert_eq!(refused["status"], "credentials_refused", "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("AADSTS70000"),
        "{refused}"
    );
}
