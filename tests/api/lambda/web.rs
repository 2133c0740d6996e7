//! The web application's function (`app-web`) from its Lambda entry point: signing in with
//! cookies carried in the event's `cookies` array and answered in the response's, forms posted
//! URL-encoded, and every page's HTML the same as the local server renders from the same
//! state.

use crate::common::{ApiRequest, Lambda};
use axum::body::Body;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// A form post: URL-encoded body, with the cookies.
fn form(path: &str, body: &str, cookies: &[String]) -> Value {
    let mut event = ApiRequest::new("POST", path)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("content-length", &body.len().to_string())
        .event();
    event["body"] = json!(body);
    event["isBase64Encoded"] = json!(false);
    event["cookies"] = json!(cookies);
    event
}

fn get(path: &str, cookies: &[String]) -> Value {
    let mut event = ApiRequest::new("GET", path).route("/app/{proxy+}").event();
    event["cookies"] = json!(cookies);
    event
}

/// `name=value` of the response's cookie `name`.
fn cookie(response: &Value, name: &str) -> String {
    response["cookies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(|c| c.split(';').next().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no {name} cookie: {response}"))
}

fn location(response: &Value) -> &str {
    response["headers"]["location"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn the_web_pages_render_from_the_lambda_entry_point_as_the_local_server_renders_them() {
    let lambda = Lambda::new();
    lambda.sign_up().await;
    let page = lambda
        .http(app_web::routes(), &get("/app/sign-in", &[]))
        .await;
    assert_eq!(page["statusCode"], 200, "{page}");
    let pre = cookie(&page, "mw_presign");
    assert!(
        page["cookies"][0]
            .as_str()
            .unwrap()
            .contains("HttpOnly; Secure; SameSite=Lax")
    );
    let token = pre.split_once('=').unwrap().1.to_owned();

    // A form without its token is refused; with it the code goes out.
    let refused = lambda
        .http(
            app_web::routes(),
            &form(
                "/app/sign-in",
                "email=owner%40lambda.example",
                std::slice::from_ref(&pre),
            ),
        )
        .await;
    assert_eq!(refused["statusCode"], 403, "{refused}");
    let body = format!("_csrf={token}&email=owner%40lambda.example&next=%2Fapp%2Fdomains");
    let started = lambda
        .http(
            app_web::routes(),
            &form("/app/sign-in", &body, std::slice::from_ref(&pre)),
        )
        .await;
    assert_eq!(started["statusCode"], 303, "{started}");
    let signin = location(&started)
        .split("signin=")
        .nth(1)
        .and_then(|s| s.split('&').next())
        .expect("the code page names the sign-in")
        .to_owned();
    let code = lambda.code_for("owner@lambda.example");
    let body = format!("_csrf={token}&signin={signin}&code={code}&next=%2Fapp%2Fdomains");
    let finished = lambda
        .http(
            app_web::routes(),
            &form("/app/sign-in/code", &body, std::slice::from_ref(&pre)),
        )
        .await;
    assert_eq!(finished["statusCode"], 303, "{finished}");
    assert_eq!(location(&finished), "/app/domains");
    let session = cookie(&finished, "mw_session");

    // The same pages, from the Lambda and from the local server's router, are the same HTML.
    let local = mailward_http::finish(app_web::routes(), lambda.state.clone());
    for path in [
        "/app/domains",
        "/app/tasks",
        "/app/organization",
        "/app/organizations",
        "/app/organization/settings",
        "/app/account/security",
        "/app/organization/sso",
        "/app/organization/dns",
        "/app/support",
        "/app/organization/integrations",
        "/app/organization/groups",
        "/app/sign-in",
    ] {
        let cookies = [session.clone(), pre.clone()];
        let from_lambda = lambda.http(app_web::routes(), &get(path, &cookies)).await;
        assert_eq!(from_lambda["statusCode"], 200, "{path}: {from_lambda}");
        assert_eq!(from_lambda["isBase64Encoded"], false);
        let request = axum::http::Request::get(path)
            .header("cookie", format!("{session}; {pre}"))
            .header("x-forwarded-for", "198.51.100.1")
            .body(Body::empty())
            .unwrap();
        let answer = local.clone().oneshot(request).await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        let csp = answer.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        let html = String::from_utf8(
            answer
                .into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec(),
        )
        .unwrap();
        assert_eq!(from_lambda["body"].as_str().unwrap(), html, "{path}");
        assert!(html.contains("<main id=\"main\""), "{path}");
        assert_eq!(
            from_lambda["headers"]["content-security-policy"]
                .as_str()
                .unwrap(),
            csp
        );
    }

    // The cookie authenticates the pages only, never the REST API.
    let mut api = ApiRequest::new("GET", "/domains").event();
    api["cookies"] = json!([session]);
    let refused = lambda.http(api_domains::routes(), &api).await;
    assert_eq!(refused["statusCode"], 401, "{refused}");
}
