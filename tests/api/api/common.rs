//! Helpers shared by the route-group test modules: a DNS fixture with an app resolving through
//! it, adding a domain, reading JSON, and picking a record out of the records guidance.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
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
