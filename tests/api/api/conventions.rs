//! The conventions every route shares: authentication errors, versions, plain-text errors,
//! HTTPS, rate-limit headers, unknown routes, and 5xx bodies.

use mailward_api_tests::{TestApp, VERSION};
use reqwest::Method;
use serde_json::Value;

#[tokio::test]
async fn health_check_is_public_and_carries_rate_limit_headers() {
    let app = TestApp::start().await;
    let res = app
        .request(Method::GET, "/health-check")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    for h in [
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "x-request-id",
    ] {
        assert!(res.headers().contains_key(h), "missing {h}");
    }
    assert_eq!(res.json::<Value>().await.unwrap()["status"], "ok");
}

#[tokio::test]
async fn missing_and_rejected_credentials_answer_401_with_challenges() {
    let app = TestApp::start().await;
    let org = uuid::Uuid::new_v4();
    let path = format!("/organizations/{org}/onboarding/dismiss");

    let res = app.request(Method::POST, &path).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(
        res.headers()["www-authenticate"],
        "Basic realm=\"Mailward\", Bearer realm=\"Mailward\""
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["code"], "unauthorized");
    assert!(body["message"].as_str().unwrap().contains("no credential"));
    assert!(
        body["details"]["documentation"]
            .as_str()
            .unwrap()
            .starts_with("http")
    );

    let res = app
        .with_key(Method::POST, &path, "mw_not_a_real_key")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("rejected"));

    let res = app
        .request(Method::POST, &path)
        .bearer_auth("not.a.jwt")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    // A browser fetch is challenged with Bearer alone (no native password prompt).
    let res = app
        .request(Method::POST, &path)
        .header("Sec-Fetch-Mode", "cors")
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers()["www-authenticate"],
        "Bearer realm=\"Mailward\""
    );

    // Text clients get the plain status line.
    let res = app
        .request(Method::POST, &path)
        .header("Accept", "text/plain")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(res.text().await.unwrap(), "401 Unauthorized");
}

#[tokio::test]
async fn api_keys_must_send_a_valid_version() {
    let app = TestApp::start().await;
    let s = app.sign_up("v@example.com", "Version Org").await;
    let path = format!("/organizations/{}/onboarding/dismiss", s.org_id);
    let res = app
        .request(Method::POST, &path)
        .basic_auth(&s.key, Some(""))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (body["code"].as_str(), body["param"].as_str()),
        (Some("api_version_missing"), Some("Mailward-Version"))
    );

    let res = app
        .request(Method::POST, &path)
        .basic_auth(&s.key, Some(""))
        .header("Mailward-Version", "2020-01-01")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "api_version_invalid"
    );

    for (header, value) in [
        ("Service-Version", VERSION),
        ("Mailward-Version", "unstable"),
    ] {
        let res = app
            .request(Method::POST, &path)
            .basic_auth(&s.key, Some(""))
            .header(header, value)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{header}: {value}");
    }
    // Sessions default to the latest version.
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let res = app
        .with_session(Method::POST, &path, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn unknown_routes_answer_json_404_with_links_or_a_plain_line() {
    let app = TestApp::start().await;
    let res = app
        .request(Method::GET, "/no/such/route")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["code"], "not_found");
    assert!(body["details"]["documentation"].is_string());
    assert!(
        body["details"]["openapi"]
            .as_str()
            .unwrap()
            .ends_with("/swagger.json")
    );
    let res = app
        .request(Method::GET, "/no/such/route")
        .header("Accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), "404 Not Found");
}

#[tokio::test]
async fn plain_http_behind_the_gateway_is_refused() {
    let app = TestApp::start().await;
    let res = app
        .request(Method::GET, "/health-check")
        .header("X-Forwarded-Proto", "http")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "https_required");
    let res = app
        .request(Method::GET, "/health-check")
        .header("X-Forwarded-Proto", "https")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn bad_path_ids_name_the_id() {
    let app = TestApp::start().await;
    let s = app.sign_up("p@example.com", "Path Org").await;
    let res = app
        .with_key(
            Method::POST,
            "/organizations/not-a-uuid/onboarding/dismiss",
            &s.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (body["code"].as_str(), body["param"].as_str()),
        (Some("parameter_invalid_or_missing"), Some("id"))
    );
}

#[tokio::test]
async fn the_global_bucket_is_per_client_and_answers_429() {
    let app = TestApp::start_with(|s| {
        s.rate_limits.push((
            mailward_services::config::Scope::Global,
            "3/60".parse().unwrap(),
        ));
    })
    .await;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let res = app
            .request(Method::GET, "/health-check")
            .send()
            .await
            .unwrap();
        statuses.push(res.status().as_u16());
        if res.status() == 429 {
            assert!(res.headers().contains_key("retry-after"));
            let body: Value = res.json().await.unwrap();
            assert_eq!(body["scope"], "global");
        }
    }
    assert_eq!(statuses, [200, 200, 200, 429]);
    // The next window starts afresh.
    app.clock.advance(time::Duration::seconds(61));
    let res = app
        .request(Method::GET, "/health-check")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn the_api_key_bucket_is_per_key() {
    let app = TestApp::start_with(|s| {
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKey,
            "2/60".parse().unwrap(),
        ));
    })
    .await;
    let a = app.sign_up("k1@example.com", "Key One").await;
    let b = app.sign_up("k2@example.com", "Key Two").await;
    let call = |s: &mailward_api_tests::SignedUp| {
        app.with_key(
            Method::POST,
            &format!("/organizations/{}/onboarding/dismiss", s.org_id),
            &s.key,
        )
        .send()
    };
    assert_eq!(call(&a).await.unwrap().status(), 200);
    assert_eq!(call(&a).await.unwrap().status(), 200);
    let res = call(&a).await.unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(res.json::<Value>().await.unwrap()["scope"], "api_key");
    assert_eq!(
        call(&b).await.unwrap().status(),
        200,
        "another key has its own bucket"
    );
}

/// Tenant trust, finding 9: every response says `nosniff`; every HTML page carries a
/// Content-Security-Policy that forbids framing (the reference page's allows its own scripts
/// and its one inline script by hash), `X-Frame-Options: DENY` and `Referrer-Policy`.
#[tokio::test]
async fn html_responses_carry_security_headers() {
    let app = TestApp::start().await;
    let get = |path: &'static str| {
        let app = &app;
        async move {
            app.request(Method::GET, path)
                .header("accept", "text/html")
                .send()
                .await
                .unwrap()
        }
    };
    for path in ["/docs", "/oauth/authorize"] {
        let res = get(path).await;
        let headers = res.headers();
        let kind = headers["content-type"].to_str().unwrap();
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
        assert!(headers.get("referrer-policy").is_some(), "{path}");
        if path == "/docs" {
            assert!(csp.contains("script-src 'self' 'sha256-"), "{csp}");
            assert!(!csp.contains("'unsafe-eval'") && !csp.contains("script-src 'unsafe-inline'"));
        }
    }
    // JSON too is never sniffed.
    let res = app
        .request(Method::GET, "/no-such-route")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
}

/// Tenant trust, finding 9: links in errors and the discovery documents come from the
/// configured public base URL, never from the request's `Host`, which a client chooses (a link
/// mailed or shown to a person must not lead to an attacker's host).
#[tokio::test]
async fn links_never_follow_the_requests_host() {
    let app = TestApp::start().await;
    for path in [
        "/no-such-route",
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
    ] {
        let res = app
            .request(Method::GET, path)
            .header("host", "evil.example")
            .send()
            .await
            .unwrap();
        let body = res.text().await.unwrap();
        assert!(!body.contains("evil.example"), "{path}: {body}");
        assert!(body.contains(&app.url("")), "{path}: {body}");
    }
}
