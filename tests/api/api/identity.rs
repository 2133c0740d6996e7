//! Issue 34, identity: the authenticator app (TOTP) and its recovery codes, the second factor
//! at sign-in and on the consent pages, stored dashboard sessions (listed, revoked, signed
//! out), and the organization's MFA requirement enforced on every route and tool.

use crate::admin::member;
use crate::oauth::{
    authorize_url, connect, exchange, jwt_claims, location_params, mcp_status, page_state, param,
    post_form,
};
use mailward_api_tests::TestApp;
use mailward_domain::Clock as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Signs `email` in through `POST /oauth/session` (the second factor from `secret` when the
/// account has one): the status and body of the last answer.
pub async fn sign_in(
    app: &TestApp,
    email: &str,
    org: Option<&str>,
    secret: Option<&str>,
) -> (StatusCode, Value) {
    let res = app
        .request(Method::POST, "/oauth/session/start")
        .json(&json!({ "email": email }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let started: Value = res.json().await.unwrap();
    let mut body = json!({"signin_id": started["signin_id"], "code": app.code_for(email)});
    if let Some(org) = org {
        body["organization_id"] = json!(org);
    }
    let (status, answer) = post_json(app, "/oauth/session", None, body.clone()).await;
    let Some(secret) = secret else {
        return (status, answer);
    };
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["code"], "mfa_required");
    assert_eq!(answer["param"], "mfa_code");
    assert_eq!(answer["details"]["signin_id"], started["signin_id"]);
    // The code step is done: the second factor alone finishes it.
    body.as_object_mut().unwrap().remove("code");
    body["mfa_code"] = json!(app_code(app, secret));
    post_json(app, "/oauth/session", None, body).await
}

/// The authenticator app's current code.
pub fn app_code(app: &TestApp, secret: &str) -> String {
    mailward_oauth::mfa::code_at(secret, app.clock.unix()).unwrap()
}

pub async fn post_json(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = app.request(Method::POST, path).json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn get(app: &TestApp, path: &str, token: &str) -> (StatusCode, Value) {
    let res = app
        .with_session(Method::GET, path, token)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Enrols an authenticator for the session's person: the secret and the recovery codes.
pub async fn enrol(app: &TestApp, token: &str) -> (String, Vec<String>) {
    let (status, started) = post_json(app, "/account/mfa/totp", Some(token), json!({})).await;
    assert_eq!(status, 200, "{started}");
    let secret = started["secret"].as_str().unwrap().to_owned();
    let (status, codes) = post_json(
        app,
        "/account/mfa/totp/confirm",
        Some(token),
        json!({"code": app_code(app, &secret)}),
    )
    .await;
    assert_eq!(status, 200, "{codes}");
    let codes = codes["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    (secret, codes)
}

#[tokio::test]
async fn an_authenticator_is_enrolled_used_once_per_step_recovered_and_removed() {
    let app = TestApp::start().await;
    let s = app.sign_up("ann@totp.example", "Totp Co").await;
    let (status, session) = sign_in(&app, &s.email, None, None).await;
    assert_eq!(status, 200, "{session}");
    let token = session["token"].as_str().unwrap().to_owned();
    assert_eq!(jwt_claims(&token)["amr"], json!(["otp"]));
    assert!(jwt_claims(&token)["sid"].is_string());
    let (_, status_before) = get(&app, "/account/mfa", &token).await;
    assert_eq!(status_before["totp_enabled"], false);
    assert_eq!(status_before["session_mfa"], false);

    let (status, started) = post_json(&app, "/account/mfa/totp", Some(&token), json!({})).await;
    assert_eq!(status, 200, "{started}");
    let secret = started["secret"].as_str().unwrap().to_owned();
    assert_eq!(
        started["otpauth_uri"],
        format!(
            "otpauth://totp/Mailward%3Aann%40totp.example?secret={secret}&issuer=Mailward&algorithm=SHA1&digits=6&period=30"
        )
    );
    assert!(started["qr_svg"].as_str().unwrap().contains("<svg"));
    // A pending enrolment protects nothing yet: sign-ins ask no second factor.
    let (status, _) = sign_in(&app, &s.email, None, None).await;
    assert_eq!(status, 200);
    let wrong = format!(
        "{:06}",
        (app_code(&app, &secret).parse::<u32>().unwrap() + 1) % 1_000_000
    );
    let (status, body) = post_json(
        &app,
        "/account/mfa/totp/confirm",
        Some(&token),
        json!({ "code": wrong }),
    )
    .await;
    assert_eq!(
        (status, &body["code"], &body["param"]),
        (
            StatusCode::BAD_REQUEST,
            &json!("mfa_code_incorrect"),
            &json!("code")
        )
    );
    let (status, codes) = post_json(
        &app,
        "/account/mfa/totp/confirm",
        Some(&token),
        json!({"code": app_code(&app, &secret)}),
    )
    .await;
    assert_eq!(status, 200, "{codes}");
    let recovery: Vec<String> = serde_json::from_value(codes["recovery_codes"].clone()).unwrap();
    assert_eq!(recovery.len(), 10);
    assert_eq!(
        recovery
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        10
    );
    let (_, after) = get(&app, "/account/mfa", &token).await;
    assert_eq!(after["totp_enabled"], true);
    assert_eq!(after["recovery_codes_remaining"], 10);
    assert_eq!(after["session_mfa"], true, "confirming proved the app");
    let (status, body) = post_json(&app, "/account/mfa/totp", Some(&token), json!({})).await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::CONFLICT, &json!("mfa_already_enrolled"))
    );

    // The code of the step that confirmed cannot sign in: it was used.
    let (status, started) = start(&app, &s.email).await;
    assert_eq!(status, 202);
    let id = started["signin_id"].clone();
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": id, "code": app.code_for(&s.email)}),
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::FORBIDDEN, &json!("mfa_required"))
    );
    let used = app_code(&app, &secret);
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": id, "mfa_code": used}),
    )
    .await;
    assert_eq!(
        (status, &body["code"], &body["param"]),
        (
            StatusCode::BAD_REQUEST,
            &json!("mfa_code_reused"),
            &json!("mfa_code")
        )
    );
    app.clock.advance(time::Duration::seconds(30));
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": id, "mfa_code": app_code(&app, &secret)}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mfa_token = body["token"].as_str().unwrap().to_owned();
    assert_eq!(jwt_claims(&mfa_token)["amr"], json!(["otp", "mfa"]));
    // The challenge is spent.
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": id, "mfa_code": recovery[0]}),
    )
    .await;
    assert_eq!(
        (status, &body["param"]),
        (StatusCode::BAD_REQUEST, &json!("signin_id"))
    );

    // A recovery code works once, in place of the app's code.
    let (status, started) = start(&app, &s.email).await;
    assert_eq!(status, 202);
    let code = app.code_for(&s.email);
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": started["signin_id"], "code": code, "mfa_code": recovery[0].to_uppercase()}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, started) = start(&app, &s.email).await;
    assert_eq!(status, 202);
    let code = app.code_for(&s.email);
    let (status, body) = post_json(
        &app,
        "/oauth/session",
        None,
        json!({"signin_id": started["signin_id"], "code": code, "mfa_code": recovery[0]}),
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::BAD_REQUEST, &json!("mfa_code_incorrect"))
    );
    let (_, after) = get(&app, "/account/mfa", &mfa_token).await;
    assert_eq!(after["recovery_codes_remaining"], 9);

    // Sessions are listed, revoked and signed out, each taking effect on the next request.
    let (status, list) = get(&app, "/oauth/sessions", &mfa_token).await;
    assert_eq!(status, 200);
    let sessions = list["data"].as_array().unwrap();
    assert_eq!(sessions.len(), 4, "{list}");
    let current: Vec<&Value> = sessions.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["amr"], json!(["otp", "mfa"]));
    assert_eq!(current[0]["provider"], "email_code");
    let first_sid = jwt_claims(&token)["sid"].clone();
    let res = app
        .with_session(
            Method::DELETE,
            &format!("/oauth/sessions/{}", first_sid.as_str().unwrap()),
            &mfa_token,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(get(&app, "/domains", &token).await.0, 401);
    assert_eq!(get(&app, "/domains", &mfa_token).await.0, 200);
    let res = app
        .with_session(Method::DELETE, "/oauth/session", &mfa_token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(get(&app, "/domains", &mfa_token).await.0, 401);
    // API keys are not people.
    let res = app
        .with_key(Method::GET, "/oauth/sessions", &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "session_required"
    );

    // Removing the authenticator takes a current code; sign-ins then ask for none.
    app.clock.advance(time::Duration::seconds(30));
    let (status, session) = sign_in(&app, &s.email, None, Some(&secret)).await;
    assert_eq!(status, 200, "{session}");
    let token = session["token"].as_str().unwrap().to_owned();
    app.clock.advance(time::Duration::seconds(30));
    let res = app
        .with_session(Method::POST, "/account/mfa/totp/disable", &token)
        .json(&json!({"code": app_code(&app, &secret)}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let (status, _) = sign_in(&app, &s.email, None, None).await;
    assert_eq!(status, 200);
}

async fn start(app: &TestApp, email: &str) -> (StatusCode, Value) {
    post_json(app, "/oauth/session/start", None, json!({ "email": email })).await
}

#[tokio::test]
async fn an_organization_requiring_mfa_holds_unenrolled_members_at_every_door() {
    let app = TestApp::start().await;
    let s = app.sign_up("boss@require.example", "Require Co").await;
    let (_, session) = sign_in(&app, &s.email, None, None).await;
    let boss = session["token"].as_str().unwrap().to_owned();
    // An MCP connection made before the requirement, without a second factor.
    let early = connect(&app, &s.email, &s.org_id).await;
    let early_access = early["access_token"].as_str().unwrap().to_owned();
    let path = format!("/organizations/{}", s.org_id);
    let res = app
        .with_session(Method::POST, &path, &boss)
        .json(&json!({"require_mfa": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "mfa_confirmation_required"
    );
    let (boss_secret, _) = enrol(&app, &boss).await;
    let res = app
        .with_session(Method::POST, &path, &boss)
        .json(&json!({"require_mfa": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // A colleague without an authenticator: every route of the organization refuses them,
    // naming where to enrol; their own identity routes stay open; API keys are unaffected.
    member(&app, &s, "kim@require.example", &["editor"], &[]).await;
    let (status, session) = sign_in(&app, "kim@require.example", Some(&s.org_id), None).await;
    assert_eq!(status, 200, "{session}");
    let kim = session["token"].as_str().unwrap().to_owned();
    for path in ["/domains", "/members", "/oauth/connections"] {
        let (status, body) = get(&app, path, &kim).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(body["code"], "mfa_enrollment_required");
        assert_eq!(body["details"]["next"], "/account/mfa/totp");
    }
    assert_eq!(get(&app, "/account/mfa", &kim).await.0, 200);
    assert_eq!(get(&app, "/oauth/sessions", &kim).await.0, 200);
    let res = app
        .with_key(Method::GET, "/domains", &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (_, statuses) = get(&app, "/members/mfa/statuses", &boss).await;
    let row = |email: &str| {
        statuses
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["email"] == email)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("kim@require.example")["blocked_by_requirement"], true);
    assert_eq!(row("kim@require.example")["mfa_enabled"], false);
    assert_eq!(row(&s.email)["mfa_enabled"], true);
    assert_eq!(row(&s.email)["blocked_by_requirement"], false);

    // The consent pages refuse the organization to a sign-in without a second factor.
    let html = crate::oauth::signed_in_page(&app, "kim@require.example", &[]).await;
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "consent"),
            ("state", &page_state(&html)),
            ("organization_id", &s.org_id),
            ("decision", "allow"),
        ],
    )
    .await;
    assert_eq!(res.status(), 403);
    assert!(res.text().await.unwrap().contains("multi-factor"));
    // And the connection made before the requirement stops at /mcp.
    assert_eq!(mcp_status(&app, "/mcp", &early_access).await, 403);

    // Kim enrols and goes on at once; the statuses follow.
    let (kim_secret, _) = enrol(&app, &kim).await;
    assert_eq!(get(&app, "/domains", &kim).await.0, 200);
    let (_, statuses) = get(&app, "/members/mfa/statuses", &boss).await;
    let kim_row = statuses
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["email"] == "kim@require.example")
        .cloned()
        .unwrap();
    assert_eq!(kim_row["blocked_by_requirement"], false);
    assert_eq!(kim_row["mfa_enabled"], true);
    // A token of an enrolled person that did not use the app is asked to step up.
    let plain = app
        .session_token("kim@require.example", &s.org_id, false)
        .await;
    let (status, body) = get(&app, "/domains", &plain).await;
    assert_eq!(
        (status, &body["code"]),
        (StatusCode::FORBIDDEN, &json!("mfa_required"))
    );

    // Through the consent pages with the app's code, the connection carries MFA and works.
    app.clock.advance(time::Duration::seconds(30));
    let html = crate::oauth::signed_in_page(&app, "kim@require.example", &[]).await;
    assert!(html.contains("authenticator"), "{html}");
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "mfa"),
            ("state", &page_state(&html)),
            ("code", &app_code(&app, &kim_secret)),
        ],
    )
    .await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains(&format!("value=\"{}\"", s.org_id)), "{html}");
    let res = post_form(
        &app,
        "/oauth/authorize",
        &[
            ("step", "consent"),
            ("state", &page_state(&html)),
            ("organization_id", &s.org_id),
            ("decision", "allow"),
        ],
    )
    .await;
    assert_eq!(res.status(), 303);
    let params = location_params(&res);
    let (status, tokens) = exchange(&app, param(&params, "code").unwrap()).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(jwt_claims(access)["amr"], json!(["otp", "mfa"]));
    assert_eq!(mcp_status(&app, "/mcp", access).await, 200);
    let _ = (boss_secret, authorize_url(&[]));
}

#[tokio::test]
async fn wrong_app_codes_spend_the_daily_budget_of_the_address() {
    let app = TestApp::start().await;
    let s = app.sign_up("guess@totp.example", "Guess Co").await;
    let (_, session) = sign_in(&app, &s.email, None, None).await;
    let token = session["token"].as_str().unwrap().to_owned();
    let (secret, _) = enrol(&app, &token).await;
    let right = app_code(&app, &secret);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 7) % 1_000_000);
    let mut last = StatusCode::OK;
    for _ in 0..mailward_oauth::signin::SIGNIN_FAILURE_BUDGET {
        let (status, _) = post_json(
            &app,
            "/account/mfa/verify",
            Some(&token),
            json!({ "code": wrong }),
        )
        .await;
        last = status;
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
    // Even the right code is refused from this client until the day ends.
    app.clock.advance(time::Duration::seconds(30));
    let (status, body) = post_json(
        &app,
        "/account/mfa/verify",
        Some(&token),
        json!({"code": app_code(&app, &secret)}),
    )
    .await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["details"]["scope"], "signin");
}
