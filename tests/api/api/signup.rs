//! `POST /signup` and `POST /signup/verify`.

use mailward_api_tests::{TestApp, VERSION};
use reqwest::Method;
use serde_json::{Value, json};

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    let res = app
        .request(Method::POST, path)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_person_signs_up_verifies_and_calls_the_api_with_the_key() {
    let app = TestApp::start().await;
    let signup_id = app.start_signup("alice@example.com", "Acme Corp").await;
    let mail = app.last_email();
    assert!(mail.contains("To: alice@example.com"));
    let code = app.last_code();
    assert!(code.bytes().all(|b| b.is_ascii_digit()));

    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": signup_id, "code": code}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["organization"]["name"], "Acme Corp");
    assert_eq!(body["api_key"]["access"], "read_write");
    let key = body["api_key"]["key"].as_str().unwrap();
    assert!(key.starts_with("mw_"));
    let org = body["organization"]["id"].as_str().unwrap();

    let res = app
        .with_key(
            Method::POST,
            &format!("/organizations/{org}/onboarding/dismiss"),
            key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().contains_key("ratelimit-remaining"));

    // The code is single use.
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": signup_id, "code": code}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("signup_challenge_invalid"))
    );
}

#[tokio::test]
async fn bad_signup_input_names_the_field() {
    let app = TestApp::start().await;
    let cases = [
        (
            json!({"email": "not-an-email", "organization_name": "Acme"}),
            400,
            "parameter_invalid_or_missing",
            Some("email"),
        ),
        (
            json!({"email": "a@mailinator.com", "organization_name": "Acme"}),
            422,
            "disposable_email_domain",
            Some("email"),
        ),
        (
            json!({"email": "a@example.com", "organization_name": "Ac"}),
            400,
            "parameter_invalid_or_missing",
            Some("organization_name"),
        ),
        (
            json!({"email": "a@example.com", "organization_name": "x".repeat(129)}),
            400,
            "parameter_invalid_or_missing",
            Some("organization_name"),
        ),
        (
            json!({"email": "a@example.com"}),
            400,
            "parameter_invalid_or_missing",
            Some("organization_name"),
        ),
        (
            json!({"email": 42, "organization_name": "Acme"}),
            400,
            "parameter_invalid_or_missing",
            Some("email"),
        ),
        (
            json!({"email": "a@example.com", "organization_name": "Acme", "plan": "x"}),
            400,
            "parameter_invalid_or_missing",
            Some("plan"),
        ),
        (
            json!({"email": "a@example.com", "organization_name": "Acme", "pricing_type": "gold"}),
            400,
            "parameter_invalid_or_missing",
            Some("pricing_type"),
        ),
        (
            json!({"email": "a@example.com", "organization_name": "Acme", "attribution_id": "nope"}),
            400,
            "parameter_invalid_or_missing",
            Some("attribution_id"),
        ),
    ];
    for (body, status, code, param) in cases {
        let (got_status, got) = post(&app, "/signup", body.clone()).await;
        assert_eq!(got_status, status, "{body} -> {got}");
        assert_eq!(got["code"], code, "{body} -> {got}");
        assert_eq!(got["param"].as_str(), param, "{body} -> {got}");
    }
    let res = app
        .request(Method::POST, "/signup")
        .header("content-type", "application/json")
        .body("{\"email\":")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "invalid_json");
    let res = app
        .request(Method::POST, "/signup")
        .body("email=a@example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
    let huge = format!("{{\"email\":\"{}\"}}", "a".repeat(2 * 1024 * 1024));
    let res = app
        .request(Method::POST, "/signup")
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "payload_too_large"
    );
    assert!(app.last_email().is_empty(), "no mail for refused signups");
}

#[tokio::test]
async fn five_wrong_codes_kill_the_challenge() {
    let app = TestApp::start().await;
    let id = app.start_signup("bob@example.com", "Bob Org").await;
    let right = app.last_code();
    let wrong = if right == "000000" {
        "111111"
    } else {
        "000000"
    };
    for remaining in (1..=4).rev() {
        let (status, body) = post(
            &app,
            "/signup/verify",
            json!({"signup_id": id, "code": wrong}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("signup_code_incorrect"))
        );
        assert_eq!(body["param"], "code");
        assert_eq!(body["details"]["attempts_remaining"], remaining);
    }
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": id, "code": wrong}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("signup_challenge_invalid"))
    );
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": id, "code": right}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("signup_challenge_invalid")),
        "dead after five"
    );
}

#[tokio::test]
async fn codes_expire_after_fifteen_minutes() {
    let app = TestApp::start().await;
    let id = app.start_signup("carol@example.com", "Carol Org").await;
    let code = app.last_code();
    app.clock.advance(time::Duration::seconds(901));
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": id, "code": code}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("signup_challenge_invalid"))
    );
}

#[tokio::test]
async fn verify_rejects_malformed_input() {
    let app = TestApp::start().await;
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": "nope", "code": "123456"}),
    )
    .await;
    assert_eq!((status, body["param"].as_str()), (400, Some("signup_id")));
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": uuid::Uuid::new_v4(), "code": "12ab"}),
    )
    .await;
    assert_eq!((status, body["param"].as_str()), (400, Some("code")));
    let (status, body) = post(
        &app,
        "/signup/verify",
        json!({"signup_id": uuid::Uuid::new_v4(), "code": "123456"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("signup_challenge_invalid"))
    );
}

#[tokio::test]
async fn one_address_gets_a_limited_number_of_codes_per_hour() {
    let app = TestApp::start_with(|s| s.signup_codes_per_hour = 2).await;
    app.start_signup("dave@example.com", "Dave Org").await;
    app.start_signup("dave@example.com", "Dave Org").await;
    let res = app
        .request(Method::POST, "/signup")
        .json(&json!({"email": "Dave@Example.com", "organization_name": "Dave Org"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["code"], "signup_email_throttled");
    // Another address is unaffected; the next hour the address may ask again.
    app.start_signup("erin@example.com", "Erin Org").await;
    app.clock.advance(time::Duration::hours(1));
    app.start_signup("dave@example.com", "Dave Org").await;
}

#[tokio::test]
async fn the_signup_bucket_limits_each_client_ip() {
    let app = TestApp::start_with(|s| {
        s.rate_limits.push((
            mailward_services::config::Scope::Signup,
            "2/3600".parse().unwrap(),
        ));
    })
    .await;
    app.start_signup("f1@example.com", "F One").await;
    app.start_signup("f2@example.com", "F Two").await;
    let res = app
        .request(Method::POST, "/signup")
        .json(&json!({"email": "f3@example.com", "organization_name": "F Three"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 0);
    assert_eq!(res.headers()["ratelimit-remaining"], "0");
    assert_eq!(res.headers()["ratelimit-limit"], "2");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "rate_limit_exceeded");
    assert_eq!(body["scope"], "signup");
    assert_eq!(body["limit"], 2);
    assert_eq!(body["window_seconds"], 3600);
    assert_eq!(body["retry_after_seconds"], retry);
    // Health checks are not in the signup bucket.
    let res = app
        .request(Method::GET, "/health-check")
        .header("Mailward-Version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn an_existing_account_signing_up_again_gets_a_second_organization() {
    let app = TestApp::start().await;
    let first = app.sign_up("gina@example.com", "First Org").await;
    let second = app.sign_up("gina@example.com", "Second Org").await;
    assert_ne!(first.org_id, second.org_id);
    // Each key is scoped to its own organization.
    let res = app
        .with_key(
            Method::POST,
            &format!("/organizations/{}/onboarding/dismiss", second.org_id),
            &first.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}
