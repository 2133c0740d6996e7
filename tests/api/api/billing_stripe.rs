//! The Stripe adapter end to end against a Stripe stand-in on loopback
//! (`tests/billing/stripe-mock`: stripe-stateful-mock from npm, with a recorder and the Checkout
//! and Billing Portal sessions it lacks): customer, Checkout Session in subscription mode, the
//! completed checkout's event, the subscription read back, the quantities reported from the
//! usage line items (so the items equal them), the billing portal. Then every request the
//! adapter sent is checked against Stripe's published parameters, as Stripe's Python library
//! declares them (`tests/billing/check_stripe_requests.py`).

use crate::common::{add_domain, call_as, get_json};
use mailward_api_tests::TestApp;
use mailward_domain::model::PricingType;
use reqwest::Method;
use serde_json::{Value, json};
use std::io::BufRead as _;
use std::path::PathBuf;

const KEY: &str = "sk_test_mailward_adapter";
const WHSEC: &str = "whsec_test_stand_in";

fn stand_in_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../billing/stripe-mock")
}

/// The stand-in's process, killed on drop.
struct StandIn {
    _child: mailward_api_tests::KillOnDrop,
    base: String,
}

impl StandIn {
    fn start() -> Self {
        mailward_api_tests::npm_ci_once(&stand_in_dir(), "stripe-stateful-mock");
        let mut child = std::process::Command::new("node")
            .arg(stand_in_dir().join("server.js"))
            .env("LOG_LEVEL", "silent")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        let port = serde_json::from_str::<Value>(&line).expect("the stand-in's first line")["port"]
            .as_u64()
            .unwrap();
        Self {
            _child: mailward_api_tests::KillOnDrop(child),
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// A set-up call to the stand-in (what a person does in Stripe's dashboard, or Stripe itself
/// does): marked so the parameter check leaves it out.
async fn setup(http: &reqwest::Client, base: &str, path: &str, form: &[(&str, String)]) -> Value {
    let res = http
        .post(format!("{base}{path}"))
        .bearer_auth(KEY)
        .header("X-Test-Setup", "1")
        .form(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap();
    assert!(status.is_success(), "{path}: {body}");
    body
}

/// A set-up read from the stand-in (left out of the parameter check); its JSON.
async fn setup_get(http: &reqwest::Client, base: &str, path: &str) -> Value {
    http.get(format!("{base}{path}"))
        .bearer_auth(KEY)
        .header("X-Test-Setup", "1")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn subscription_items(http: &reqwest::Client, base: &str, sub: &str) -> Vec<(String, u64)> {
    let body = setup_get(http, base, &format!("/v1/subscriptions/{sub}")).await;
    body["items"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["price"]["id"].as_str().unwrap().to_owned(),
                i["quantity"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Runs the parameter check over `recorded`; answers whether it passed and its report.
async fn check_requests(app: &TestApp, name: &str, recorded: &Value) -> (bool, String) {
    let file = app.dir.path().join(name);
    std::fs::write(&file, recorded.to_string()).unwrap();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../billing/check_stripe_requests.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(mailward_api_tests::venv_python())
            .arg(script)
            .arg(file)
            .output()
            .expect("python with stripe (tests/run installs it into .venv)")
    })
    .await
    .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}

#[tokio::test]
async fn the_stripe_adapter_speaks_stripes_api_end_to_end() {
    let stand_in = tokio::task::spawn_blocking(StandIn::start).await.unwrap();
    let base = stand_in.base.clone();
    let http = reqwest::Client::new();

    // The prices a Mailward operator creates in Stripe (the stand-in also needs each as a plan).
    let product = setup(
        &http,
        &base,
        "/v1/products",
        &[("name", "Mailward it_teams".into())],
    )
    .await;
    let product = product["id"].as_str().unwrap().to_owned();
    let mut prices = Vec::new();
    for code in ["DOMAIN-ACTIVE-1TO10", "DOMAIN-INACTIVE"] {
        let price = setup(
            &http,
            &base,
            "/v1/prices",
            &[
                ("currency", "usd".into()),
                ("unit_amount", "100".into()),
                ("recurring[interval]", "month".into()),
                ("product", product.clone()),
            ],
        )
        .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        setup(
            &http,
            &base,
            "/v1/plans",
            &[
                ("id", price.clone()),
                ("currency", "usd".into()),
                ("amount", "100".into()),
                ("interval", "month".into()),
                ("product", product.clone()),
            ],
        )
        .await;
        prices.push((code, price));
    }
    let (active_price, inactive_price) = (prices[0].1.clone(), prices[1].1.clone());

    let configured = prices.clone();
    let api = base.clone();
    let app = TestApp::start_with(move |s| {
        s.billing.stripe_secret_key = Some(KEY.into());
        s.billing.stripe_api_base = api;
        s.billing.stripe_webhook_secret = Some(WHSEC.into());
        s.billing.stripe_prices = configured
            .into_iter()
            .map(|(code, price)| (PricingType::ItTeams, code.to_owned(), price))
            .collect();
        s.staff_emails = vec![crate::staff::STAFF.to_owned()];
    })
    .await;
    let s = app.sign_up("admin@stripe.example", "Stripe Co").await;
    for name in ["a.stripe.test", "b.stripe.test", "c.stripe.test"] {
        add_domain(&app, &s.key, name).await;
    }
    let token = app.session_token(&s.email, &s.org_id, false).await;

    // Checkout: a customer, then a Checkout Session on Stripe's side.
    let (status, page) = crate::billing::checkout(&app, &token, json!({"plan": "it_teams"})).await;
    assert_eq!(status, 200, "{page}");
    let url = page["url"].as_str().unwrap();
    let session = url
        .strip_prefix(&format!("{base}/c/pay/"))
        .unwrap_or_else(|| panic!("{url}"))
        .to_owned();
    let (_, before) = call_as(&app, Method::GET, "/billing/subscription", &token, None).await;
    assert_eq!(
        (before["status"].as_str(), before["provider"].as_str()),
        (Some("none"), Some("stripe"))
    );
    let customer = crate::billing::billing_account(&app, &s)
        .await
        .customer_id
        .unwrap();

    // Stripe's side of paying: the subscription Checkout creates, then its signed event (which
    // names only the session, so the adapter reads the session back).
    let sub = setup(
        &http,
        &base,
        "/v1/subscriptions",
        &[
            ("customer", customer.clone()),
            ("items[0][price]", active_price.clone()),
            ("items[0][plan]", active_price.clone()),
            ("items[1][price]", inactive_price.clone()),
            ("items[1][plan]", inactive_price.clone()),
            ("metadata[org_id]", s.org_id.clone()),
            ("metadata[plan]", "it_teams".into()),
        ],
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = http
        .post(format!("{base}/__complete/{session}"))
        .json(&json!({"subscription": sub}))
        .send()
        .await
        .unwrap();
    assert!(done.status().is_success());
    let event = json!({"id": "evt_checkout_done", "object": "event", "type": "checkout.session.completed",
        "data": {"object": {"id": session, "object": "checkout.session"}}});
    let body = serde_json::to_vec(&event).unwrap();
    use mailward_domain::Clock as _;
    let header = mailward_billing::signature::sign(&body, WHSEC, app.clock.unix());
    let res = app
        .request(Method::POST, "/billing/stripe-webhook")
        .header("Stripe-Signature", header)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());

    let (_, paid) = call_as(&app, Method::GET, "/billing/subscription", &token, None).await;
    assert_eq!(
        (paid["plan"].as_str(), paid["status"].as_str()),
        (Some("it_teams"), Some("active")),
        "{paid}"
    );
    // The items' quantities are the usage line items (three domains not monitored yet).
    let usage = get_json(&app, Method::GET, "/usage?expand[]=line_items", &s.key).await;
    assert_eq!(
        usage["line_items"],
        json!([{"code": "DOMAIN-INACTIVE", "quantity": 3}]),
        "{usage}"
    );
    let items = subscription_items(&http, &base, &sub).await;
    assert!(items.contains(&(inactive_price.clone(), 3)), "{items:?}");
    assert!(items.contains(&(active_price.clone(), 0)), "{items:?}");

    // A fourth domain: its quantity is reported by the job queued a minute later.
    add_domain(&app, &s.key, "d.stripe.test").await;
    app.clock.advance(time::Duration::seconds(61));
    let mut reported = Vec::new();
    for _ in 0..200 {
        reported = subscription_items(&http, &base, &sub).await;
        if reported.contains(&(inactive_price.clone(), 4)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        reported.contains(&(inactive_price.clone(), 4)),
        "{reported:?}"
    );

    // Suspended by staff, the organization is not billed: its subscription's collection is
    // paused with the next report a minute later, and resumed when staff lift the suspension.
    let (staff, _) = crate::staff::staff_desk(&app).await;
    let org_path = format!("/staff/organizations/{}", s.org_id);
    for (action, body, paused) in [
        (
            "suspend",
            json!({"reason": "chargeback"}),
            json!({"behavior": "void", "resumes_at": null}),
        ),
        ("unsuspend", json!({}), Value::Null),
    ] {
        let path = format!("{org_path}/{action}");
        let (status, answer) = crate::staff::post(&app, &path, Some(&staff), body).await;
        assert_eq!(status, 200, "{answer}");
        app.clock.advance(time::Duration::seconds(61));
        let mut seen = Value::Null;
        for _ in 0..200 {
            seen = setup_get(&http, &base, &format!("/v1/subscriptions/{sub}")).await;
            if seen["pause_collection"] == paused {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(seen["pause_collection"], paused, "{action}: {seen}");
    }

    // The billing portal of the customer.
    let (status, portal) = call_as(&app, Method::POST, "/billing/portal", &token, None).await;
    assert_eq!(status, 200, "{portal}");
    assert!(
        portal["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{base}/p/session/bps_test_")),
        "{portal}"
    );

    // Deleting the organization deletes its customer at Stripe (which cancels the
    // subscription): a deleted organization is never billed again.
    let res = app
        .with_session(
            Method::DELETE,
            &format!("/organizations/{}", s.org_id),
            &token,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let deleted = format!("/v1/customers/{customer}");
    let mut customer_gone = Value::Null;
    for _ in 0..200 {
        customer_gone = setup_get(&http, &base, &deleted).await;
        if customer_gone["deleted"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(customer_gone["deleted"], true, "{customer_gone}");
    let canceled = setup_get(&http, &base, &format!("/v1/subscriptions/{sub}")).await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");

    // Every request the adapter sent, against Stripe's published parameters.
    let recorded: Value = http
        .get(format!("{base}/__recorded"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sent: Vec<String> = recorded
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["headers"]["x-test-setup"].is_null())
        .map(|r| {
            format!(
                "{} {}",
                r["method"].as_str().unwrap(),
                r["path"].as_str().unwrap()
            )
        })
        .collect();
    for call in [
        "POST /v1/customers",
        "POST /v1/checkout/sessions",
        &format!("GET /v1/checkout/sessions/{session}"),
        &format!("GET /v1/subscriptions/{sub}"),
        "POST /v1/billing_portal/sessions",
        &format!("DELETE {deleted}"),
    ] {
        assert!(sent.iter().any(|s| s == call), "{call} not sent: {sent:?}");
    }
    assert!(
        sent.iter()
            .any(|s| s.starts_with("POST /v1/subscription_items/")),
        "{sent:?}"
    );
    assert!(
        !recorded.to_string().contains(WHSEC),
        "the webhook secret never leaves the service"
    );
    let (ok, report) = check_requests(&app, "stripe-requests.json", &recorded).await;
    assert!(ok, "{report}");
    assert!(report.contains("API 2026-10-28.endive"), "{report}");
    println!("{report}");
    // The check is not vacuous: a field Stripe does not declare, or a request without its
    // idempotency key, fails it.
    let mut tampered = recorded.clone();
    for r in tampered.as_array_mut().unwrap() {
        if r["path"] == "/v1/checkout/sessions" {
            r["body"] = json!(format!(
                "{}&line_items%5B0%5D%5Bamount%5D=5",
                r["body"].as_str().unwrap()
            ));
        }
        if r["path"] == "/v1/customers" {
            r["headers"]["idempotency-key"] = Value::Null;
        }
    }
    let (ok, report) = check_requests(&app, "tampered.json", &tampered).await;
    assert!(!ok, "{report}");
    assert!(
        report.contains("line_items[0].amount: not a parameter"),
        "{report}"
    );
    assert!(
        report.contains("POST /v1/customers: no Idempotency-Key"),
        "{report}"
    );
    drop(stand_in);
}
