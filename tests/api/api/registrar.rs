//! The Domain's `registrar` from RDAP end to end: a registry on loopback (plain HTTP, allowed
//! only because the stack is told so) serves the bootstrap registry for DNS (RFC 9224), which
//! points the `test` TLD at itself, and RDAP domain answers (RFC 9083, the fixture
//! `fixtures/rdap/domain.json`: a registrant listed before the registrar, whose own abuse
//! contact is nested in it). The sweep looks the registrar up after its commit, keeps the answer
//! a week, rests a day after a failure, and never fails because of a registry.

use crate::common::{add_domain, read, sweep, undmarced};
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

const BOOTSTRAP: &str = "/bootstrap/dns.json";

#[derive(Default)]
struct Script {
    /// Path → status, content type, body; any other path is an RDAP 404.
    answers: HashMap<String, (u16, &'static str, String)>,
    /// Every path asked, in order.
    hits: Vec<String>,
    /// Paths answered only after a minute (a registry that hangs).
    hanging: Vec<String>,
    /// Hanging requests that got to their answer (the caller waited the whole minute).
    hung_answered: usize,
}

/// A registry on 127.0.0.1: the bootstrap file and whatever domain answers a test sets.
struct Registry {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(State(script): State<Arc<Mutex<Script>>>, uri: Uri) -> Response {
    let hangs = {
        let mut script = script.lock().unwrap();
        script.hits.push(uri.path().to_owned());
        script.hanging.iter().any(|p| p == uri.path())
    };
    if hangs {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    }
    let mut script = script.lock().unwrap();
    if hangs {
        script.hung_answered += 1;
    }
    let (status, content_type, body) = script.answers.get(uri.path()).cloned().unwrap_or((
        404,
        "application/rdap+json",
        r#"{"errorCode": 404, "title": "Not Found", "description": ["The domain is not registered here."]}"#.to_owned(),
    ));
    (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", content_type)],
        body,
    )
        .into_response()
}

impl Registry {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script = Arc::new(Mutex::new(Script::default()));
        let router = axum::Router::new()
            .fallback(serve)
            .with_state(Arc::clone(&script));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let registry = Self { addr, script, task };
        let bootstrap = serde_json::json!({
            "description": "RDAP bootstrap file for Domain Name System registrations",
            "publication": "2026-01-06T00:00:00Z",
            "version": "1.0",
            "services": [
                [["example", "invalid"], ["https://rdap.registry.invalid/"]],
                [["test"], [registry.url("/rdap/")]]
            ]
        });
        registry.answer(BOOTSTRAP, 200, "application/json", bootstrap.to_string());
        registry
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn answer(&self, path: &str, status: u16, content_type: &'static str, body: String) {
        self.script
            .lock()
            .unwrap()
            .answers
            .insert(path.to_owned(), (status, content_type, body));
    }

    /// The registry's answer for `name`: the fixture naming `registrar`.
    fn registers(&self, name: &str, registrar: &str) {
        let path = format!("/rdap/domain/{name}");
        let template = include_str!("../fixtures/rdap/domain.json");
        let body = template
            .replace("{{NAME_UPPER}}", &name.to_ascii_uppercase())
            .replace("{{NAME}}", name)
            .replace("{{SELF}}", &self.url(&path))
            .replace("{{REGISTRAR}}", registrar);
        self.answer(&path, 200, "application/rdap+json", body);
    }

    /// Makes `path` hang for a minute before answering.
    fn hang(&self, path: &str) {
        self.script.lock().unwrap().hanging.push(path.to_owned());
    }

    /// How many times `path` was asked.
    fn hits(&self, path: &str) -> usize {
        let script = self.script.lock().unwrap();
        script.hits.iter().filter(|p| *p == path).count()
    }

    fn total_hits(&self) -> usize {
        self.script.lock().unwrap().hits.len()
    }
}

/// A DNS fixture with these zones and a stack whose registrar lookups start at the registry.
async fn stack(
    registry: &Registry,
    zones: Vec<Zone>,
    allow_loopback: bool,
) -> (FixtureServer, TestApp) {
    let dns = FixtureServer::start(zones).await.unwrap();
    let addr = dns.addr().to_string();
    let bootstrap = registry.url(BOOTSTRAP);
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.rdap_bootstrap_url = Some(bootstrap);
        s.rdap_allow_loopback = allow_loopback;
    })
    .await;
    (dns, app)
}

fn id(domain: &Value) -> String {
    domain["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_registrar_comes_from_rdap_and_is_kept_for_a_week() {
    let registry = Registry::start().await;
    registry.registers("acme.test", "Example Registrar, Inc.");
    let (_dns, app) = stack(
        &registry,
        vec![Zone::new("test"), undmarced("acme.test")],
        true,
    )
    .await;
    let s = app.sign_up("registrar@example.com", "Registrar Org").await;
    let domain = add_domain(&app, &s.key, "acme.test").await;
    assert_eq!(domain["registrar"], Value::Null, "nothing looked up yet");
    let id = id(&domain);

    // The first pass asks: the registrar entity's jCard fn, not the registrant's, not the
    // abuse contact nested in the registrar.
    sweep(&app).await;
    let domain = read(&app, &s.key, &id).await;
    assert_eq!(domain["registrar"], "Example Registrar, Inc.", "{domain}");
    assert_eq!(registry.hits("/rdap/domain/acme.test"), 1);

    // Later passes within the week ask nothing, even after a transfer at the registry.
    app.clock.advance(time::Duration::seconds(301));
    sweep(&app).await;
    registry.registers("acme.test", "New Registrar LLC");
    app.clock.advance(time::Duration::days(6));
    sweep(&app).await;
    assert_eq!(registry.hits("/rdap/domain/acme.test"), 1);
    assert_eq!(
        read(&app, &s.key, &id).await["registrar"],
        "Example Registrar, Inc."
    );

    // A week after the answer: asked again, the transfer shows.
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    assert_eq!(registry.hits("/rdap/domain/acme.test"), 2);
    assert_eq!(
        read(&app, &s.key, &id).await["registrar"],
        "New Registrar LLC"
    );

    // A registry failing a week later keeps what was known, and is not asked on every pass.
    registry.answer("/rdap/domain/acme.test", 503, "text/plain", "busy".into());
    app.clock.advance(time::Duration::days(8));
    sweep(&app).await;
    assert_eq!(registry.hits("/rdap/domain/acme.test"), 3);
    app.clock.advance(time::Duration::seconds(301));
    sweep(&app).await;
    assert_eq!(
        registry.hits("/rdap/domain/acme.test"),
        3,
        "a day's rest after a failure"
    );
    assert_eq!(
        read(&app, &s.key, &id).await["registrar"],
        "New Registrar LLC"
    );

    // The bootstrap registry was read once for all these passes (kept in memory).
    assert_eq!(registry.hits(BOOTSTRAP), 1);
}

#[tokio::test]
async fn a_subdomain_is_looked_up_under_its_registered_name() {
    let registry = Registry::start().await;
    registry.registers("shop.test", "Example Registrar, Inc.");
    let zone = Zone::new("shop.test")
        .ns("@", "ns1.shop.test.")
        .txt("_dmarc", "v=DMARC1; p=none")
        .mx("mail", 10, "mx.shop.test.")
        .a("mx", "192.0.2.31")
        .txt("mail", "v=spf1 mx -all");
    let (_dns, app) = stack(&registry, vec![Zone::new("test"), zone], true).await;
    let s = app.sign_up("sub@example.com", "Subdomain Org").await;
    let id = id(&add_domain(&app, &s.key, "mail.shop.test").await);

    sweep(&app).await;
    assert_eq!(
        read(&app, &s.key, &id).await["registrar"],
        "Example Registrar, Inc."
    );
    assert_eq!(registry.hits("/rdap/domain/shop.test"), 1);
    assert_eq!(registry.hits("/rdap/domain/mail.shop.test"), 0);
}

#[tokio::test]
async fn a_404_or_garbage_leaves_the_registrar_null_and_the_sweep_succeeds() {
    let registry = Registry::start().await;
    registry.answer(
        "/rdap/domain/garbage.test",
        200,
        "text/html",
        "<html><body>Too many requests, slow down</body></html>".into(),
    );
    let zones = vec![
        Zone::new("test"),
        undmarced("missing.test"),
        undmarced("garbage.test"),
    ];
    let (_dns, app) = stack(&registry, zones, true).await;
    let s = app.sign_up("failing@example.com", "Failing Org").await;
    let missing = id(&add_domain(&app, &s.key, "missing.test").await);
    let garbage = id(&add_domain(&app, &s.key, "garbage.test").await);

    let report = mailward_workers::sweep::sweep_by_hand(
        &app.stack.state,
        mailward_workers::sweep::SweepScope::Due,
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    assert_eq!(report.evaluated.len(), 2, "{report:?}");
    for id in [&missing, &garbage] {
        let domain = read(&app, &s.key, id).await;
        assert_eq!(domain["registrar"], Value::Null, "{domain}");
        assert_eq!(domain["monitoring_status"], "pending", "{domain}");
    }
    let asked = |name: &str| registry.hits(&format!("/rdap/domain/{name}"));
    assert_eq!((asked("missing.test"), asked("garbage.test")), (1, 1));

    // Not asked again on the next pass, but a day later.
    app.clock.advance(time::Duration::seconds(301));
    sweep(&app).await;
    assert_eq!((asked("missing.test"), asked("garbage.test")), (1, 1));
    registry.registers("missing.test", "Late Registrar SA");
    app.clock.advance(time::Duration::days(1));
    sweep(&app).await;
    assert_eq!((asked("missing.test"), asked("garbage.test")), (2, 2));
    assert_eq!(
        read(&app, &s.key, &missing).await["registrar"],
        "Late Registrar SA"
    );
    assert_eq!(read(&app, &s.key, &garbage).await["registrar"], Value::Null);
}

#[tokio::test]
async fn a_hanging_registry_holds_the_sweep_for_the_request_limit_at_most() {
    let registry = Registry::start().await;
    registry.registers("slow.test", "Example Registrar, Inc.");
    registry.hang("/rdap/domain/slow.test");
    let (_dns, app) = stack(
        &registry,
        vec![Zone::new("test"), undmarced("slow.test")],
        true,
    )
    .await;
    let s = app.sign_up("slow@example.com", "Slow Org").await;
    let id = id(&add_domain(&app, &s.key, "slow.test").await);

    // Without a request limit the sweep would wait the registry's whole minute for its answer;
    // it returns with the answer still pending (no wall-clock bound: the minute is the margin).
    sweep(&app).await;
    assert_eq!(registry.hits("/rdap/domain/slow.test"), 1);
    assert_eq!(registry.script.lock().unwrap().hung_answered, 0);
    let domain = read(&app, &s.key, &id).await;
    assert_eq!(domain["monitoring_status"], "pending", "{domain}");
    assert_eq!(domain["registrar"], Value::Null);
    // A timeout is a failure: the next pass does not wait on the registry again.
    app.clock.advance(time::Duration::seconds(301));
    sweep(&app).await;
    assert_eq!(registry.hits("/rdap/domain/slow.test"), 1);
}

#[tokio::test]
async fn a_registry_on_loopback_is_not_asked_without_the_allowance() {
    let registry = Registry::start().await;
    registry.registers("acme.test", "Example Registrar, Inc.");
    let (_dns, app) = stack(
        &registry,
        vec![Zone::new("test"), undmarced("acme.test")],
        false,
    )
    .await;
    let s = app.sign_up("noloop@example.com", "No Loopback Org").await;
    let id = id(&add_domain(&app, &s.key, "acme.test").await);

    sweep(&app).await;
    assert_eq!(read(&app, &s.key, &id).await["registrar"], Value::Null);
    assert_eq!(registry.total_hits(), 0);
    // Not tried, so nothing is recorded: the domain is not made to wait a day.
    let stored = mailward_store::domains::get(
        app.stack.state.store.as_ref(),
        s.org_id.parse().unwrap(),
        id.parse().unwrap(),
    )
    .await
    .unwrap()
    .unwrap()
    .value;
    assert_eq!(stored.registrar_tried_at, None);
    assert_eq!(stored.registrar_checked_at, None);
}
