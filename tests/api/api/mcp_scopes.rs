//! MCP for hosted products (issue 33): the hosted connectors' HTTPS callbacks, matched exactly;
//! scopes that mean something (listed and enforced per tool, write access left out at
//! consent); the directory's refusal of a token without its read scopes; tool annotations; and
//! the transport's refusal of foreign `Host` and `Origin` (DNS rebinding).

use crate::mcp::{call, names, rpc};
use crate::oauth::{authorize, exchange_at, jwt_claims};
use mailward_api_tests::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const CLAUDE: &str = "https://claude.ai/api/mcp/auth_callback";

/// Signs `email` in for `org` with `extra` authorization parameters; the token response.
async fn connect_with(app: &TestApp, email: &str, org: &str, extra: &[(&str, &str)]) -> Value {
    let code = authorize(app, email, org, extra).await;
    let redirect = extra
        .iter()
        .find(|(k, _)| *k == "redirect_uri")
        .map_or(crate::oauth::REDIRECT, |(_, v)| *v);
    let (status, tokens) = exchange_at(app, &code, redirect).await;
    assert_eq!(status, 200, "{tokens}");
    tokens
}

fn access(tokens: &Value) -> String {
    tokens["access_token"].as_str().unwrap().to_owned()
}

async fn tools_list(app: &TestApp, path: &str, token: &str) -> (StatusCode, Value) {
    rpc(
        app,
        path,
        Some(token),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
}

#[tokio::test]
async fn a_hosted_connector_signs_in_through_its_listed_callback_and_nothing_else_is_redirected_to()
{
    let app = TestApp::start().await;
    let s = app.sign_up("owner@hosted-mcp.example", "Hosted MCP").await;
    // The consent page names the product behind the callback (`authorize` checks "Claude").
    let tokens = connect_with(
        &app,
        "owner@hosted-mcp.example",
        &s.org_id,
        &[("redirect_uri", CLAUDE)],
    )
    .await;
    let (status, list) = tools_list(&app, "/mcp", &access(&tokens)).await;
    assert_eq!(status, 200, "{list}");
    assert!(names(&list).contains(&"create_domain".to_owned()));

    // Anything but an exact listed callback or a loopback one: the 400 page, no redirect.
    for bad in [
        "https://evil.example/api/mcp/auth_callback",
        "https://claude.ai/api/mcp/auth_callback/",
        "https://claude.ai/api/mcp/auth_callback?next=https://evil.example",
        "https://claude.ai.evil.example/api/mcp/auth_callback",
        "http://claude.ai/api/mcp/auth_callback",
    ] {
        let url = format!(
            "/oauth/authorize?response_type=code&client_id=mailward-mcp&redirect_uri={}&code_challenge={}&code_challenge_method=S256",
            crate::oauth::urlencode(bad),
            crate::oauth::CHALLENGE
        );
        let res = app.request(Method::GET, &url).send().await.unwrap();
        assert_eq!(res.status(), 400, "{bad}");
        assert!(res.headers().get("location").is_none(), "{bad}");
    }

    // One organization: the consent page names it and offers no picker.
    let page = consent_page(&app, "owner@hosted-mcp.example").await;
    assert!(
        page.contains("Organization: <strong>Hosted MCP</strong>"),
        "{page}"
    );
    assert!(!page.contains("type=\"radio\""), "{page}");

    // The list is a setting: another deployment lists only its own callback.
    let own = TestApp::start_with(|s| {
        s.oauth_redirect_uris = Some(vec!["https://connector.example/oauth/cb".into()]);
    })
    .await;
    let t = own.sign_up("owner@own-mcp.example", "Own MCP").await;
    let tokens = connect_with(
        &own,
        "owner@own-mcp.example",
        &t.org_id,
        &[("redirect_uri", "https://connector.example/oauth/cb")],
    )
    .await;
    assert_eq!(tools_list(&own, "/mcp", &access(&tokens)).await.0, 200);
    let url = format!(
        "/oauth/authorize?response_type=code&client_id=mailward-mcp&redirect_uri={}&code_challenge={}&code_challenge_method=S256",
        crate::oauth::urlencode(CLAUDE),
        crate::oauth::CHALLENGE
    );
    let res = own.request(Method::GET, &url).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

/// The consent page `email` reaches after signing in (the loopback callback, every scope).
async fn consent_page(app: &TestApp, email: &str) -> String {
    crate::oauth::consent_page(app, email).await
}

#[tokio::test]
async fn a_domains_read_token_sees_and_calls_only_what_domains_read_allows() {
    let app = TestApp::start().await;
    let s = app.sign_up("reader@scopes.example", "Scopes").await;
    let tokens = connect_with(
        &app,
        "reader@scopes.example",
        &s.org_id,
        &[("scope", "domains:read")],
    )
    .await;
    assert_eq!(jwt_claims(&access(&tokens))["scope"], "domains:read");
    let token = access(&tokens);
    let (_, list) = tools_list(&app, "/mcp", &token).await;
    let listed = names(&list);
    let allowed = [
        "get_account",
        "audit_domain",
        "validate_spf_include",
        "list_domains",
        "get_domain",
        "get_dns_records",
        "get_domain_plan",
        "get_spf",
        "preview_dns_change",
        "get_mta_sts",
        "list_dns_connections",
        "get_dns_connection",
        "get_dns_connection_coverage",
        "list_mailbox_connections",
        "list_alert_rules",
        "list_alerts",
    ];
    let mut expected: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    let mut got = listed.clone();
    got.sort();
    assert_eq!(got, expected);
    // Every write tool, and reads of other areas, are refused with the scope they need.
    let id = uuid::Uuid::new_v4().to_string();
    for (tool, args, needed) in [
        (
            "create_domain",
            json!({"url": "nope.test"}),
            "domains:write",
        ),
        ("delete_domain", json!({"domain": id}), "domains:write"),
        ("verify_domain", json!({"domain": id}), "domains:write"),
        ("create_group", json!({"name": "g"}), "groups:write"),
        ("complete_task", json!({"task_id": id}), "tasks:write"),
        (
            "create_webhook_endpoint",
            json!({"url": "https://hooks.example/x"}),
            "webhooks:write",
        ),
        ("list_tasks", json!({}), "tasks:read"),
        (
            "get_dmarc_summary",
            json!({"domain": id}),
            "dmarc_reports:read",
        ),
        ("list_activity_log", json!({}), "activity:read"),
        ("get_subscription", json!({}), "billing:read"),
        ("start_checkout", json!({"plan": "msp"}), "billing:write"),
    ] {
        let result = call(&app, "/mcp", Some(&token), tool, args).await;
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], "insufficient_scope", "{tool}: {result}");
        assert_eq!(error["scope"], needed, "{tool}: {result}");
    }
    let ok = call(&app, "/mcp", Some(&token), "list_domains", json!({})).await;
    assert_eq!(ok["isError"], false, "{ok}");
    let rest = crate::common::get_json(&app, Method::GET, "/domains", &s.key).await;
    assert!(rest["data"].as_array().unwrap().is_empty(), "{rest}");
}

#[tokio::test]
async fn consent_lists_scopes_in_words_and_unticking_changes_connects_read_only() {
    let app = TestApp::start().await;
    let s = app.sign_up("careful@scopes.example", "Careful").await;
    let tokens = connect_with(
        &app,
        "careful@scopes.example",
        &s.org_id,
        &[("allow_changes", "")],
    )
    .await;
    let scope = jwt_claims(&access(&tokens))["scope"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(scope.contains("domains:read"), "{scope}");
    assert!(
        !scope.contains(":write") && !scope.contains("sources:update"),
        "{scope}"
    );
    let token = access(&tokens);
    let result = call(
        &app,
        "/mcp",
        Some(&token),
        "create_domain",
        json!({"url": "nope.test"}),
    )
    .await;
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "insufficient_scope"
    );
    // Ticked (the page's default), the same person gets the changes asked for.
    let tokens = connect_with(&app, "careful@scopes.example", &s.org_id, &[]).await;
    let scope = jwt_claims(&access(&tokens))["scope"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(scope.contains("domains:write"), "{scope}");
}

#[tokio::test]
async fn the_directory_refuses_a_token_without_its_read_scopes() {
    let app = TestApp::start().await;
    let s = app.sign_up("offline@scopes.example", "Offline").await;
    let tokens = connect_with(
        &app,
        "offline@scopes.example",
        &s.org_id,
        &[("scope", "offline_access")],
    )
    .await;
    let token = access(&tokens);
    let res = app
        .request(Method::POST, "/mcp/directory")
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert_eq!(
        res.headers()["www-authenticate"],
        "Bearer error=\"insufficient_scope\", scope=\"domains:read groups:read tasks:read dmarc_reports:read\""
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["code"], "insufficient_scope", "{body}");
    // On the main endpoint it sees what needs no scope.
    let (_, list) = tools_list(&app, "/mcp", &token).await;
    let mut listed = names(&list);
    listed.sort();
    assert_eq!(
        listed,
        ["audit_domain", "get_account", "validate_spf_include"]
    );
}

#[tokio::test]
async fn every_tool_carries_annotations_true_to_what_it_does() {
    let app = TestApp::start().await;
    let s = app.sign_up("hints@scopes.example", "Hints").await;
    let tokens = crate::oauth::connect(&app, "hints@scopes.example", &s.org_id).await;
    let (_, list) = tools_list(&app, "/mcp", &access(&tokens)).await;
    let tools = list["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 48);
    let of = |name: &str| -> Value {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["annotations"]
            .clone()
    };
    for tool in &tools {
        let a = &tool["annotations"];
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(a[hint].is_boolean(), "{hint} of {tool}");
        }
        assert!(
            tool["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{tool}"
        );
    }
    let hints = |name: &str| {
        let a = of(name);
        (
            a["readOnlyHint"].as_bool().unwrap(),
            a["destructiveHint"].as_bool().unwrap(),
            a["idempotentHint"].as_bool().unwrap(),
            a["openWorldHint"].as_bool().unwrap(),
        )
    };
    // (read-only, destructive, idempotent, open world)
    assert_eq!(hints("list_domains"), (true, false, true, false));
    assert_eq!(hints("audit_domain"), (true, false, true, true));
    assert_eq!(hints("verify_domain"), (false, false, true, true));
    assert_eq!(hints("create_domain"), (false, false, false, false));
    assert_eq!(hints("update_domain"), (false, true, true, false));
    assert_eq!(hints("delete_domain"), (false, true, true, false));
    assert_eq!(
        hints("create_webhook_endpoint"),
        (false, false, false, true)
    );
    assert_eq!(
        hints("get_dns_connection_coverage"),
        (true, false, true, true)
    );
    assert_eq!(hints("enable_mta_sts"), (false, false, true, true));
    assert_eq!(hints("get_subscription"), (true, false, true, false));
    assert_eq!(hints("start_checkout"), (false, false, false, true));
    assert_eq!(of("get_dns_records")["title"], "Get DNS records");
}

/// `tools/list` on the public endpoint with these extra headers: the status.
async fn public_with(app: &TestApp, headers: &[(&str, &str)]) -> StatusCode {
    let mut req = app
        .request(Method::POST, "/mcp/public")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.send().await.unwrap().status()
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_against_dns_rebinding() {
    let app = TestApp::start().await;
    assert_eq!(public_with(&app, &[]).await, 200);
    for ok in [
        vec![("origin", "http://localhost:5173")],
        vec![("origin", "http://127.0.0.1:9")],
        vec![("host", "localhost:1234")],
        vec![("host", "[::1]:8080")],
    ] {
        assert_eq!(public_with(&app, &ok).await, 200, "{ok:?}");
    }
    for bad in [
        vec![("host", "rebind.evil.example")],
        vec![("host", "rebind.evil.example:80")],
        vec![("origin", "http://rebind.evil.example")],
        vec![("origin", "null")],
        vec![("origin", "https://localhost.evil.example")],
    ] {
        assert_eq!(public_with(&app, &bad).await, 403, "{bad:?}");
    }
    // The main endpoint refuses before asking for a token.
    let res = app
        .request(Method::POST, "/mcp")
        .header("origin", "http://rebind.evil.example")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn a_hosted_connector_without_an_organization_reads_the_directory_of_the_only_one() {
    let app = TestApp::start().await;
    let email = "solo@orgless.example";
    let s = app.sign_up(email, "Solo").await;
    crate::common::add_domain(&app, &s.key, "solo.test").await;
    // A hosted connector asking only to stay connected may choose no organization.
    let extra = [("redirect_uri", CLAUDE), ("scope", "offline_access")];
    let tokens = connect_with(&app, email, "none", &extra).await;
    let token = access(&tokens);
    assert!(jwt_claims(&token).get("org").is_none(), "{tokens}");
    // The main endpoint needs an organization (SPEC §5 rule 8).
    assert_eq!(tools_list(&app, "/mcp", &token).await.0, 403);
    // The directory resolves the person's one organization, with reads.
    let (status, list) = tools_list(&app, "/mcp/directory", &token).await;
    assert_eq!(status, 200, "{list}");
    let listed = names(&list);
    for tool in [
        "list_domains",
        "list_tasks",
        "get_dmarc_summary",
        "list_groups",
    ] {
        assert!(listed.contains(&tool.to_owned()), "{tool}: {listed:?}");
    }
    let domains = call(
        &app,
        "/mcp/directory",
        Some(&token),
        "list_domains",
        json!({}),
    )
    .await;
    assert_eq!(
        domains["structuredContent"]["data"][0]["url"], "solo.test",
        "{domains}"
    );
    // Refreshing keeps it without an organization.
    let (status, refreshed) = crate::oauth::token(
        &app,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", crate::oauth::CLIENT),
        ],
    )
    .await;
    assert_eq!(status, 200, "{refreshed}");
    assert!(jwt_claims(&access(&refreshed)).get("org").is_none());
    // A second organization makes the choice unclear: 403 until the person picks one.
    let second = app.sign_up(email, "Second").await;
    let (status, body) = tools_list(&app, "/mcp/directory", &access(&refreshed)).await;
    assert_eq!(status, 403, "{body}");
    // None left (both being deleted): 403 too.
    for org in [&s, &second] {
        let res = app
            .with_key(
                Method::DELETE,
                &format!("/organizations/{}", org.org_id),
                &org.key,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
    }
    let (status, body) = tools_list(&app, "/mcp/directory", &access(&refreshed)).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.to_string().contains("0 active organizations"),
        "{body}"
    );
}
