//! Helpers shared by the route-group test modules: a DNS fixture with an app resolving through
//! it, adding a domain, calling a route and reading its JSON, picking a record out of the
//! records guidance, and the sweep passes.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A fixture DNS server with these zones and an app resolving through it; the outbox is
/// inspected directly, so nothing may publish (and delete) its rows.
pub async fn app_on(zones: Vec<Zone>) -> (FixtureServer, TestApp) {
    let dns = FixtureServer::start(zones).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
    })
    .await;
    (dns, app)
}

/// Unix seconds of midnight (UTC) of the app clock's day: reports are dated from it.
pub fn today_start(app: &TestApp) -> i64 {
    use mailward_domain::Clock as _;
    app.clock
        .now()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp()
}

/// Mail to the domain's report address (`monitoring_email`): how a reporter delivers.
pub fn to(domain: &Value) -> mailward_workers::ingest::Delivery {
    mailward_workers::ingest::Delivery::mail_to([domain["monitoring_email"]
        .as_str()
        .expect("a domain with its monitoring_email")])
}

/// An operator's import for the organization (`mailward import --org`).
pub fn for_org(org: &mailward_api_tests::SignedUp) -> mailward_workers::ingest::Delivery {
    mailward_workers::ingest::Delivery::import_for(org.org_id.parse().expect("an org id"))
}

/// `POST /domains` with `url`; the created domain (201 asserted).
pub async fn add_domain(app: &TestApp, key: &str, url: &str) -> Value {
    let res = app
        .with_key(Method::POST, "/domains", key)
        .json(&json!({ "url": url }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201, "{url}");
    res.json().await.unwrap()
}

/// A request with the API key; its JSON body (a 2xx asserted).
pub async fn get_json(app: &TestApp, method: Method, path: &str, key: &str) -> Value {
    let res = app.with_key(method, path, key).send().await.unwrap();
    assert!(res.status().is_success(), "{path}: {}", res.status());
    res.json().await.unwrap()
}

/// The non-delete record of `purpose` in a `dns-records` answer.
pub fn record_of<'a>(records: &'a Value, purpose: &str) -> Option<&'a Value> {
    records["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["purpose"] == purpose && r["action"] != "delete")
}

/// Every event in the outbox (the committed rows, oldest first within each shard), as JSON.
/// Only meaningful when nothing publishes the outbox (see [`app_on`]).
pub async fn outbox_events(app: &TestApp) -> Vec<Value> {
    use mailward_domain::store::{Query, query_all};
    let mut rows = Vec::new();
    for shard in 0..mailward_store::keys::OUTBOX_SHARDS {
        rows.extend(
            query_all(
                app.stack.state.store.as_ref(),
                Query::partition(mailward_store::keys::outbox_pk(shard)),
            )
            .await
            .unwrap(),
        );
    }
    rows.iter()
        .map(|i| serde_json::from_slice(&i.data).unwrap())
        .collect()
}

/// A zone that resolves and receives mail but publishes no DMARC record yet.
pub fn undmarced(name: &str) -> Zone {
    Zone::new(name)
        .ns("@", &format!("ns1.{name}."))
        .mx("@", 10, &format!("mx.{name}."))
        .a("mx", "192.0.2.30")
        .txt("@", "v=spf1 mx -all")
}

/// The records guidance's planned records of one purpose for a domain.
pub async fn planned(app: &TestApp, key: &str, id: &str, purpose: &str) -> Vec<Value> {
    let records = get_json(app, Method::GET, &format!("/domains/{id}/dns-records"), key).await;
    records["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["purpose"] == purpose)
        .cloned()
        .collect()
}

/// A stack whose outbox stays put (events are read from it).
pub async fn quiet_app() -> TestApp {
    TestApp::start_with(|s| s.publish_outbox = false).await
}

/// Sends `body` (or nothing) with the key; status and JSON body (null when empty).
pub async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    answer(app.with_key(method, path, key), body).await
}

/// A GET with the key that must succeed; its JSON body.
pub async fn get(app: &TestApp, path: &str, key: &str) -> Value {
    let (status, body) = call(app, Method::GET, path, key, None).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// The string field `field` of every element of the array `list`.
pub fn strings(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|v| v[field].as_str().unwrap().to_owned())
        .collect()
}

/// As [`call`], with a session token.
pub async fn call_as(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    answer(app.with_session(method, path, token), body).await
}

/// Sends `req` with `body` (or nothing); status and JSON body (null when empty).
async fn answer(mut req: reqwest::RequestBuilder, body: Option<Value>) -> (StatusCode, Value) {
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// One sweep pass over every domain, at the current clock.
pub async fn sweep(app: &TestApp) {
    mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
}

/// Moves the clock a sweep interval on (every domain is due again, events are ordered in time)
/// and sweeps.
pub async fn next_pass(app: &TestApp) {
    app.clock.advance(time::Duration::seconds(301));
    sweep(app).await;
}

/// [`next_pass`], then the hourly reconciliation of hosted records at once (the schedule is off
/// in tests).
pub async fn next_pass_and_reconcile(app: &TestApp) {
    next_pass(app).await;
    mailward_workers::reconcile::reconcile_now(&app.stack.state)
        .await
        .unwrap();
}

/// `GET /domains/{id}` with the key; its JSON.
pub async fn read(app: &TestApp, key: &str, id: &str) -> Value {
    app.with_key(Method::GET, &format!("/domains/{id}"), key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Imports `report` for the organization, as `mailward import` does.
pub async fn import_for(app: &TestApp, owner: &mailward_api_tests::SignedUp, report: &[u8]) {
    mailward_workers::ingest::ingest(
        &app.stack.state,
        report,
        &for_org(owner),
        &mailward_reports::Limits::default(),
    )
    .await
    .unwrap();
}

/// Runs sender identification of a domain now (the job an import queues).
pub async fn identify_now(app: &TestApp, owner: &mailward_api_tests::SignedUp, domain_id: &str) {
    mailward_workers::identify::identify_domain(
        &app.stack.state,
        owner.org_id.parse().unwrap(),
        domain_id.parse().unwrap(),
    )
    .await
    .unwrap();
}

/// The path (with its token) of a mail's one-click unsubscribe link (`List-Unsubscribe`).
pub fn unsubscribe_path(mail: &str) -> String {
    let link = mail
        .lines()
        .find_map(|l| l.strip_prefix("List-Unsubscribe: <"))
        .and_then(|l| l.strip_suffix('>'))
        .expect("a List-Unsubscribe header");
    format!(
        "/notifications{}",
        link.split_once("/notifications").unwrap().1
    )
}
