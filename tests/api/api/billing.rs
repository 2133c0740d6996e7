//! Billing on the local stack: the local adapter's test-mode Checkout and portal pages, whose
//! events reach `/billing/stripe-webhook` signed as Stripe's are; entitlements that follow the
//! paid state (never the signup choice); dunning and the grace period; who may call the routes;
//! Stripe's signature scheme (bad, stale, replayed and out-of-order events), cross-checked with
//! Stripe's own Python library; the three MCP tools.

use crate::common::{call, call_as, get_json};
use crate::mcp::call as mcp_call;
use crate::notifications::mails_about;
use crate::oauth::connect;
use mailward_api_tests::TestApp;
use mailward_domain::Clock;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The organization's billing record as stored.
pub(crate) async fn billing_account(
    app: &TestApp,
    org: &mailward_api_tests::SignedUp,
) -> mailward_domain::billing::BillingAccount {
    mailward_store::billing::get(app.stack.state.store.as_ref(), org.org_id.parse().unwrap())
        .await
        .unwrap()
        .expect("a billing record")
        .value
}

/// What `read` answers once it answers `want` (a queued job ran), or after ten seconds.
pub(crate) async fn eventually<F, Fut>(want: u64, read: F) -> u64
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let mut got = read().await;
    for _ in 0..200 {
        if got == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        got = read().await;
    }
    got
}

/// `POST /billing/checkout` with a session token: the status and the body.
pub(crate) async fn checkout(app: &TestApp, token: &str, body: Value) -> (StatusCode, Value) {
    call_as(app, Method::POST, "/billing/checkout", token, Some(body)).await
}

async fn subscription(app: &TestApp, token: &str) -> Value {
    let (status, body) = call_as(app, Method::GET, "/billing/subscription", token, None).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// POSTs a form to a local hosted page; answers the status and the redirect.
async fn press(app: &TestApp, url: &str, action: Option<&str>) -> (StatusCode, String) {
    let mut req = app.http.post(url);
    if let Some(action) = action {
        req = req
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("action={action}"));
    }
    let res = req.send().await.unwrap();
    let to = res
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (res.status(), to)
}

/// A signed event as Stripe sends it, at the stack's clock.
fn signed(app: &TestApp, event: &Value, at: i64) -> (Vec<u8>, String) {
    let body = serde_json::to_vec(event).unwrap();
    let secret = mailward_billing::webhook_secret(&app.stack.state.config);
    let header = mailward_billing::signature::sign(&body, &secret, at);
    (body, header)
}

async fn deliver(app: &TestApp, body: Vec<u8>, header: Option<&str>) -> (StatusCode, Value) {
    let mut req = app
        .request(Method::POST, "/billing/stripe-webhook")
        .header("content-type", "application/json")
        .body(body);
    if let Some(h) = header {
        req = req.header("Stripe-Signature", h);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn checkout_on_the_local_page_makes_the_plan_active_and_the_portal_cancels() {
    let app = TestApp::start().await;
    let s = app
        .sign_up_priced("admin@pay.example", "Pay Co", Some("msp"))
        .await;
    let token = app.session_token(&s.email, &s.org_id, false).await;

    // Choosing msp at signup entitles to nothing: it is the plan offered at checkout.
    let before = subscription(&app, &token).await;
    assert_eq!(before["plan"], "free", "{before}");
    assert_eq!(before["offered_plan"], "msp");
    assert_eq!(before["status"], "none");
    assert_eq!(before["entitlements"]["retention_days"], 30);
    assert_eq!(before["entitlements"]["agent_addon"], false);
    assert_eq!(before["provider"], "local");
    let usage = get_json(&app, Method::GET, "/usage", &s.key).await;
    assert_eq!(usage["pricing_type"], "free");
    let (status, err) = call_as(&app, Method::POST, "/billing/portal", &token, None).await;
    assert_eq!(
        (status, err["code"].as_str()),
        (StatusCode::CONFLICT, Some("no_subscription"))
    );

    // Bad input names its field.
    for (body, param) in [
        (json!({"plan": "free"}), "plan"),
        (
            json!({"plan": "msp", "return_url": "https://evil.example/"}),
            "return_url",
        ),
        (json!({"plan": "gold"}), "plan"),
    ] {
        let (status, err) =
            call_as(&app, Method::POST, "/billing/checkout", &token, Some(body)).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["param"], param, "{err}");
    }

    // Checkout on the hosted page (the local stand-in): the trial starts now.
    let back = app.url("/docs");
    let (status, page) = checkout(&app, &token, json!({"plan": "msp", "return_url": back})).await;
    assert_eq!(status, 200, "{page}");
    let url = page["url"].as_str().unwrap().to_owned();
    let html = app
        .http
        .get(&url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Subscribe to Mailward msp"), "{html}");
    assert!(html.contains("14-day trial"), "{html}");
    assert_eq!(
        press(&app, &url, None).await,
        (StatusCode::SEE_OTHER, back.clone())
    );
    let paid = subscription(&app, &token).await;
    assert_eq!(paid["plan"], "msp", "{paid}");
    assert_eq!(paid["status"], "trialing");
    assert_eq!(paid["entitlements"]["retention_days"], 365);
    assert_eq!(paid["entitlements"]["domain_cap"], 25_000);
    assert_eq!(paid["entitlements"]["agent_addon"], true);
    let trial_end = time::OffsetDateTime::parse(
        paid["trial_end"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let days = (trial_end - app.clock.now()).whole_hours();
    assert!((14 * 24 - 1..=14 * 24).contains(&days), "{paid}");
    assert!(paid["next_invoice"]["at"].is_string(), "{paid}");
    let usage = get_json(&app, Method::GET, "/usage", &s.key).await;
    assert_eq!(usage["pricing_type"], "msp");
    // Paying the same page again changes nothing; a second checkout is refused.
    assert_eq!(press(&app, &url, None).await.0, StatusCode::SEE_OTHER);
    let (status, err) = checkout(&app, &token, json!({"plan": "it_teams"})).await;
    assert_eq!(
        (status, err["code"].as_str()),
        (StatusCode::CONFLICT, Some("subscription_exists"))
    );

    // The MCP tools answer what the routes answer.
    let tokens = connect(&app, &s.email, &s.org_id).await;
    let mcp = tokens["access_token"].as_str().unwrap().to_owned();
    let tool = mcp_call(&app, "/mcp", Some(&mcp), "get_subscription", json!({})).await;
    assert_eq!(tool["isError"], false, "{tool}");
    assert_eq!(tool["structuredContent"], subscription(&app, &token).await);
    let portal = mcp_call(&app, "/mcp", Some(&mcp), "start_billing_portal", json!({})).await;
    let portal_url = portal["structuredContent"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(portal_url.contains("/billing/local/portal/"), "{portal}");
    let again = mcp_call(
        &app,
        "/mcp",
        Some(&mcp),
        "start_checkout",
        json!({"plan": "msp"}),
    )
    .await;
    assert_eq!(again["isError"], true);
    assert_eq!(
        again["structuredContent"]["error"]["code"],
        "subscription_exists"
    );

    // The portal cancels: free entitlements at once, the paid retention kept 30 days.
    let html = app
        .http
        .get(&portal_url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Status: trialing"), "{html}");
    assert_eq!(
        press(&app, &portal_url, Some("cancel")).await.0,
        StatusCode::SEE_OTHER
    );
    let canceled = subscription(&app, &token).await;
    assert_eq!(canceled["plan"], "free", "{canceled}");
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(canceled["offered_plan"], "msp");
    assert_eq!(canceled["entitlements"]["retention_days"], 365);
    assert_eq!(canceled["entitlements"]["domain_cap"], 50);
    assert!(canceled["next_invoice"].is_null());
    app.clock.advance(time::Duration::days(31));
    let later = subscription(&app, &token).await;
    assert_eq!(later["entitlements"]["retention_days"], 30, "{later}");
    // A second subscription has no second trial.
    let (_, page) = checkout(&app, &token, json!({"plan": "it_teams"})).await;
    let url = page["url"].as_str().unwrap();
    let html = app
        .http
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!html.contains("trial"), "{html}");
    press(&app, url, None).await;
    let again = subscription(&app, &token).await;
    assert_eq!(
        (again["plan"].as_str(), again["status"].as_str()),
        (Some("it_teams"), Some("active"))
    );
}

#[tokio::test]
async fn a_failed_payment_keeps_the_plan_through_the_grace_period_then_falls_back_until_paid() {
    let app = TestApp::start().await;
    let s = app
        .sign_up_priced("admin@dun.example", "Dun Co", Some("it_teams"))
        .await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    app.subscribe(&s, "it_teams").await;
    let (_, portal) = call_as(
        &app,
        Method::POST,
        "/billing/portal",
        &token,
        Some(json!({})),
    )
    .await;
    let portal = portal["url"].as_str().unwrap().to_owned();

    press(&app, &portal, Some("fail_payment")).await;
    let due = subscription(&app, &token).await;
    assert_eq!(
        (due["plan"].as_str(), due["status"].as_str()),
        (Some("it_teams"), Some("past_due")),
        "{due}"
    );
    assert!(due["grace_period_end"].is_string(), "{due}");
    let mail = mails_about(&app, "the payment for Dun Co failed", 1).await;
    assert_eq!(mail.len(), 1);
    assert!(mail[0].contains("To: admin@dun.example\r\n"));
    assert!(mail[0].contains("7 days"), "{}", mail[0]);

    app.clock.advance(time::Duration::days(6));
    assert_eq!(subscription(&app, &token).await["plan"], "it_teams");
    app.clock.advance(time::Duration::days(1));
    let lapsed = subscription(&app, &token).await;
    assert_eq!(lapsed["plan"], "free", "{lapsed}");
    assert_eq!(lapsed["entitlements"]["agent_addon"], false);
    assert_eq!(lapsed["entitlements"]["retention_days"], 365, "the hold");
    let usage = get_json(&app, Method::GET, "/usage?expand[]=line_items", &s.key).await;
    assert_eq!(usage["pricing_type"], "free");

    // Paying restores the plan.
    press(&app, &portal, Some("pay_invoice")).await;
    let back = subscription(&app, &token).await;
    assert_eq!(
        (back["plan"].as_str(), back["status"].as_str()),
        (Some("it_teams"), Some("active")),
        "{back}"
    );
    assert!(back["grace_period_end"].is_null());
}

#[tokio::test]
async fn only_administrators_in_a_session_not_limited_to_groups_reach_billing() {
    let app = TestApp::start().await;
    let s = app.sign_up("admin@who.example", "Who Co").await;
    let g = crate::admin::group(&app, &s.key, "Customer").await;
    let viewer = crate::admin::member(&app, &s, "viewer@who.example", &["viewer"], &[]).await;
    let limited = crate::admin::member(
        &app,
        &s,
        "limited@who.example",
        &["admin"],
        &[g["id"].as_str().unwrap()],
    )
    .await;
    for (method, path, body) in [
        (Method::GET, "/billing/subscription", None),
        (
            Method::POST,
            "/billing/checkout",
            Some(json!({"plan": "it_teams"})),
        ),
        (Method::POST, "/billing/portal", None),
    ] {
        let (status, err) = call(&app, method.clone(), path, &s.key, body.clone()).await;
        assert_eq!(status, 403, "API key: {path}: {err}");
        for token in [&viewer, &limited] {
            let (status, err) = call_as(&app, method.clone(), path, token, body.clone()).await;
            assert_eq!(status, 403, "{path}: {err}");
        }
    }
}

#[tokio::test]
async fn stripe_signatures_are_checked_and_each_event_is_processed_once_in_any_order() {
    let app = TestApp::start().await;
    let s = app.sign_up("admin@sig.example", "Sig Co").await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let paid = app.subscribe(&s, "it_teams").await;
    assert_eq!(paid["status"], "trialing");
    let sub = billing_account(&app, &s).await.subscription_id.unwrap();
    let now = app.clock.unix();

    // A stale "deleted" event for the live subscription: the latest state (trialing) is read
    // back from the provider and kept.
    let stale = json!({"id": "evt_out_of_order", "object": "event", "type": "customer.subscription.deleted",
        "created": now - 3600, "data": {"object": {"id": sub, "object": "subscription", "status": "canceled"}}});
    let (body, header) = signed(&app, &stale, now);
    let (status, receipt) = deliver(&app, body.clone(), Some(&header)).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt, json!({"received": true, "duplicate": false}));
    assert_eq!(subscription(&app, &token).await["status"], "trialing");
    // The same event again is a duplicate.
    let (_, receipt) = deliver(&app, body.clone(), Some(&header)).await;
    assert_eq!(receipt["duplicate"], true);

    // Bad signatures: none, wrong secret, another body, too old, too new; each a 400 naming the
    // header, and nothing recorded.
    let other = json!({"id": "evt_bad", "type": "customer.subscription.deleted", "data": {"object": {"id": sub}}});
    let (body, good) = signed(&app, &other, now);
    let wrong = mailward_billing::signature::sign(&body, "whsec_wrong", now);
    let (stale_body, stale_header) = signed(&app, &other, now - 301);
    let (_, future) = signed(&app, &other, now + 301);
    for (body, header) in [
        (body.clone(), None),
        (body.clone(), Some(wrong)),
        (b"{}".to_vec(), Some(good.clone())),
        (stale_body, Some(stale_header)),
        (body.clone(), Some(future)),
        (body.clone(), Some("t=abc,v2=zz".to_owned())),
    ] {
        let (status, err) = deliver(&app, body, header.as_deref()).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["code"], "invalid_signature");
        assert_eq!(err["param"], "Stripe-Signature");
    }
    // Unknown types are acknowledged; a malformed event is a 400.
    let unknown = json!({"id": "evt_unknown", "type": "charge.refunded", "data": {"object": {}}});
    let (body, header) = signed(&app, &unknown, now);
    assert_eq!(deliver(&app, body, Some(&header)).await.0, 200);
    let (body, header) = signed(&app, &json!({"type": "x"}), now);
    let (status, err) = deliver(&app, body, Some(&header)).await;
    assert_eq!(
        (status, err["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("body"))
    );

    // Stripe's own library verifies what the service signs, and the service accepts what the
    // library signs (its scheme, at the library's own clock).
    let secret = mailward_billing::webhook_secret(&app.stack.state.config);
    let ours = json!({"id": "evt_ours", "object": "event", "type": "invoice.paid",
        "data": {"object": {"id": "in_1", "object": "invoice", "subscription": sub}}});
    let (body, header) = signed(
        &app,
        &ours,
        time::OffsetDateTime::now_utc().unix_timestamp(),
    );
    let python = mailward_api_tests::venv_python();
    let script = format!(
        "{}/../billing/stripe_signature.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let payload = String::from_utf8(body).unwrap();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(script)
            .arg(&secret)
            .arg(&payload)
            .arg(&header)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs["verified"], "evt_ours", "{theirs}");
    let (status, receipt) = deliver(
        &app,
        theirs["payload"].as_str().unwrap().as_bytes().to_vec(),
        theirs["header"].as_str(),
    )
    .await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["duplicate"], false);
}

#[tokio::test]
async fn domain_caps_follow_the_paid_state_and_domains_above_a_cap_are_not_swept() {
    // DNS answers at once (no zone for these names), so the sweep is quick.
    let (_dns, app) =
        crate::common::app_on(vec![mailward_dns_fixture::Zone::new("cap.test")]).await;
    let s = app
        .sign_up_priced("admin@cap.example", "Cap Co", Some("it_teams"))
        .await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let names: Vec<Value> = (0..51)
        .map(|i| json!({"url": format!("d{i}.cap.test")}))
        .collect();
    let (status, bulk) = call(
        &app,
        Method::POST,
        "/domains/bulk",
        &s.key,
        Some(json!({"domains": names})),
    )
    .await;
    assert_eq!(status, 200, "{bulk}");
    let refused: Vec<&Value> = bulk["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "failed")
        .collect();
    assert_eq!(refused.len(), 1, "{bulk}");
    assert!(
        refused[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("domain_cap_reached"),
        "{bulk}"
    );
    let (status, err) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "more.cap.test"})),
    )
    .await;
    assert_eq!(status, 403, "{err}");
    assert_eq!(err["code"], "domain_cap_reached");
    assert_eq!(err["param"], "url");
    assert_eq!(err["details"]["domain_cap"], 50);

    // Paid: room for more.
    app.subscribe(&s, "it_teams").await;
    let (status, _) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "more.cap.test"})),
    )
    .await;
    assert_eq!(status, 201);

    // Cancelled with 51 domains: all stay readable, the newest is not swept.
    let (_, portal) = call_as(&app, Method::POST, "/billing/portal", &token, None).await;
    press(&app, portal["url"].as_str().unwrap(), Some("cancel")).await;
    let list = get_json(&app, Method::GET, "/domains?per_page=100", &s.key).await;
    assert_eq!(list["page_info"]["total_count"], 51);
    let report = mailward_workers::sweep::sweep_by_hand(
        &app.stack.state,
        mailward_workers::sweep::SweepScope::All,
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    assert_eq!(report.domains, 51);
    assert_eq!(report.evaluated.len(), 50, "{report:?}");
}

#[tokio::test]
async fn quantities_follow_domains_becoming_active_in_the_sweep() {
    let (dns, app) = crate::common::app_on(vec![
        mailward_dns_fixture::Zone::new("test"),
        crate::common::undmarced("busy.test"),
    ])
    .await;
    let s = app.sign_up("admin@qty.example", "Qty Co").await;
    app.subscribe(&s, "it_teams").await;
    let domain = crate::common::add_domain(&app, &s.key, "busy.test").await;
    let sub = billing_account(&app, &s).await.subscription_id.unwrap();
    let payments = app.stack.state.payments.clone().unwrap();
    let quantity = |code: &'static str| {
        let payments = payments.clone();
        let sub = sub.clone();
        async move {
            let price = format!("price_local_it_teams_{}", code.to_lowercase());
            payments
                .subscription(&sub)
                .await
                .unwrap()
                .unwrap()
                .items
                .iter()
                .find(|i| i.price == price)
                .map_or(0, |i| i.quantity)
        }
    };
    // Reported a minute after the domain was added (inactive: no DMARC record yet).
    app.clock.advance(time::Duration::seconds(61));
    assert_eq!(eventually(1, || quantity("DOMAIN-INACTIVE")).await, 1);
    // Its DMARC record sends reports to Mailward: the sweep makes it active, and the
    // quantities follow a minute later.
    dns.set_txt(
        "_dmarc.busy.test",
        &format!(
            "v=DMARC1; p=none; rua=mailto:{}",
            domain["monitoring_email"].as_str().unwrap()
        ),
    )
    .unwrap();
    crate::common::sweep(&app).await;
    let usage = get_json(&app, Method::GET, "/usage", &s.key).await;
    assert_eq!(usage["active_domains"], 1, "{usage}");
    app.clock.advance(time::Duration::seconds(61));
    assert_eq!(eventually(1, || quantity("DOMAIN-ACTIVE-1TO10")).await, 1);
    assert_eq!(quantity("DOMAIN-INACTIVE").await, 0);
}
