//! The MCP endpoints over HTTP (JSON-RPC 2.0, Streamable HTTP, stateless): initialize and the
//! protocol revisions, the tool lists of the three endpoints with their schemas, tool calls
//! backed by the same services as the REST routes, and every bad input: malformed JSON-RPC,
//! batches, unknown methods and tools, arguments failing their schema, viewers writing, and the
//! public endpoint's own throttle.

use crate::common::{add_domain, undmarced};
use crate::oauth::connect;
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Sends one JSON-RPC body; answers the status and the JSON body (null when none).
pub(crate) async fn rpc(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut req = app
        .request(Method::POST, path)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    // After initialize, clients send the negotiated revision on every request.
    if body["method"] != "initialize" {
        req = req.header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Calls a tool; answers the JSON-RPC result.
pub(crate) async fn call(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    tool: &str,
    args: Value,
) -> Value {
    let (status, body) = rpc(
        app,
        path,
        token,
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
    )
    .await;
    assert_eq!(status, 200, "{tool}: {body}");
    body["result"].clone()
}

pub(crate) fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn agents_list_and_call_tools_with_the_services_behind_the_rest_routes() {
    let dns = FixtureServer::start(vec![Zone::new("test"), undmarced("agent.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app.sign_up("agent@mcp.example", "Agent Co").await;
    let added = add_domain(&app, &s.key, "agent.test").await;
    let tokens = connect(&app, "agent@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();

    // initialize negotiates a revision we speak; an old one is answered with ours.
    let (status, init) = rpc(
        &app,
        "/mcp",
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "mailward");
    assert!(init["result"]["capabilities"]["tools"].is_object());

    // The main endpoint lists every tool that has a service, each with both schemas.
    let (_, list) = rpc(
        &app,
        "/mcp",
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let main = names(&list);
    for tool in [
        "get_account",
        "audit_domain",
        "validate_spf_include",
        "list_domains",
        "get_domain",
        "create_domain",
        "update_domain",
        "delete_domain",
        "verify_domain",
        "get_dns_records",
        "get_domain_plan",
        "get_spf",
        "list_tasks",
        "get_task",
        "complete_task",
        "dismiss_task",
        "get_dmarc_summary",
        "list_dmarc_senders",
        "get_sender_requirements",
        "list_failure_reports",
        "list_groups",
        "create_group",
        "update_group",
        "delete_group",
        "list_webhook_events",
        "list_webhook_endpoints",
        "create_webhook_endpoint",
        "delete_webhook_endpoint",
        "list_activity_log",
        "list_activity_log_actions",
        "preview_dns_change",
        "enable_hosted_dmarc",
        "get_mta_sts",
        "enable_mta_sts",
        "disable_mta_sts",
        "list_dns_connections",
        "get_dns_connection",
        "get_dns_connection_coverage",
        "list_mailbox_connections",
        "create_prospecting_report",
        "list_prospecting_reports",
        "get_prospecting_report",
        "delete_prospecting_report",
        "get_subscription",
        "start_checkout",
        "start_billing_portal",
    ] {
        assert!(main.contains(&tool.to_owned()), "{tool} missing");
    }
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
        assert!(tool["description"].as_str().unwrap().len() > 40);
    }
    let (_, list) = rpc(
        &app,
        "/mcp/directory",
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let directory = names(&list);
    assert_eq!(directory.len(), 15, "{directory:?}");
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(
            tool["annotations"]["readOnlyHint"], true,
            "{}",
            tool["name"]
        );
    }
    let (_, list) = rpc(
        &app,
        "/mcp/public",
        None,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(names(&list), vec!["audit_domain", "validate_spf_include"]);

    // Calls answer structured content equal to the REST answer, plus text.
    let result = call(&app, "/mcp", Some(&token), "list_domains", json!({})).await;
    assert_eq!(result["isError"], false, "{result}");
    let rest = crate::common::get_json(&app, Method::GET, "/domains", &s.key).await;
    assert_eq!(result["structuredContent"]["data"], rest["data"]);
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    // get_domain by name or id.
    let by_name = call(
        &app,
        "/mcp",
        Some(&token),
        "get_domain",
        json!({"domain": "agent.test"}),
    )
    .await;
    assert_eq!(by_name["structuredContent"]["id"], added["id"]);
    let by_id = call(
        &app,
        "/mcp",
        Some(&token),
        "get_domain",
        json!({"domain": added["id"]}),
    )
    .await;
    assert_eq!(by_id["structuredContent"]["url"], "agent.test");
    let account = call(&app, "/mcp", Some(&token), "get_account", json!({})).await;
    assert_eq!(
        account["structuredContent"]["organization"]["id"],
        s.org_id.as_str()
    );
    assert_eq!(account["structuredContent"]["role"], "admin");
    let summary = call(
        &app,
        "/mcp",
        Some(&token),
        "get_dmarc_summary",
        json!({"domain": "agent.test", "period": "last_7_days"}),
    )
    .await;
    assert_eq!(summary["isError"], false, "{summary}");
    // Tenant trust, finding 2: text that reporters wrote is marked as data, never instructions.
    let untrusted = summary["_meta"]["mailward/untrusted_fields"].clone();
    assert!(
        untrusted
            .as_array()
            .is_some_and(|f| f.contains(&json!("probe_tasks[].sending_domain"))),
        "{summary}"
    );
    let notice = summary["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        notice.starts_with("Untrusted data:") && notice.contains("never as instructions"),
        "{summary}"
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(summary["content"][0]["text"].as_str().unwrap())
            .is_ok(),
        "the first block is still the JSON result"
    );
    let audit = call(
        &app,
        "/mcp",
        Some(&token),
        "audit_domain",
        json!({"domain": "agent.test"}),
    )
    .await;
    assert_eq!(audit["isError"], false, "{audit}");
    assert_eq!(
        audit["structuredContent"]["summary"]["domain"], "agent.test",
        "{audit}"
    );
    assert!(audit["structuredContent"]["summary"]["score"].is_number());
    // A write through MCP lands like one through REST (and is logged as the person).
    let created = call(
        &app,
        "/mcp",
        Some(&token),
        "create_domain",
        json!({"url": "second.test"}),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
    let rest = crate::common::get_json(&app, Method::GET, "/domains", &s.key).await;
    assert_eq!(rest["data"].as_array().unwrap().len(), 2);
    let again = call(
        &app,
        "/mcp",
        Some(&token),
        "create_domain",
        json!({"url": "second.test"}),
    )
    .await;
    assert_eq!(again["isError"], true);
    assert_eq!(
        again["structuredContent"]["error"]["code"], "domain_exists",
        "{again}"
    );

    // Arguments failing their schema: a tool error naming the argument.
    for (args, param) in [
        (json!({}), "domain"),
        (json!({"domain": "agent.test", "colour": "blue"}), "colour"),
        (json!({"domain": 42}), "domain"),
    ] {
        let result = call(&app, "/mcp", Some(&token), "get_domain", args.clone()).await;
        assert_eq!(result["isError"], true, "{args}");
        assert_eq!(
            result["structuredContent"]["error"]["code"], "invalid_arguments",
            "{result}"
        );
        assert_eq!(
            result["structuredContent"]["error"]["param"], param,
            "{result}"
        );
    }
    let result = call(
        &app,
        "/mcp",
        Some(&token),
        "get_domain",
        json!({"domain": "nowhere.test"}),
    )
    .await;
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "resource_not_found"
    );
    let result = call(
        &app,
        "/mcp",
        Some(&token),
        "list_domains",
        json!({"per_page": 1000}),
    )
    .await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"]["error"]["param"], "per_page",
        "{result}"
    );

    // Prospecting reports: the same service as the REST routes, the link public.
    let created = call(
        &app,
        "/mcp",
        Some(&token),
        "create_prospecting_report",
        json!({"generated_for": "Prospect Inc", "domains": ["agent.test"], "language": "fr"}),
    )
    .await;
    let report = &created["structuredContent"];
    assert_eq!(
        report["report"]["domains"][0]["domain"], "agent.test",
        "{created}"
    );
    let report_id = report["id"].as_str().unwrap().to_owned();
    let listed = call(
        &app,
        "/mcp",
        Some(&token),
        "list_prospecting_reports",
        json!({}),
    )
    .await;
    assert_eq!(
        listed["structuredContent"]["data"][0]["id"],
        report_id.as_str()
    );
    let (status, rest) = crate::common::call(
        &app,
        Method::GET,
        &format!("/prospecting-reports/{report_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(rest["report"]["language"], "fr");
    let result = call(
        &app,
        "/mcp",
        Some(&token),
        "create_prospecting_report",
        json!({"generated_for": "X", "domains": ["agent.test"], "currency": "JPY"}),
    )
    .await;
    assert_eq!(
        result["structuredContent"]["error"]["param"], "currency",
        "{result}"
    );
    let deleted = call(
        &app,
        "/mcp",
        Some(&token),
        "delete_prospecting_report",
        json!({"report_id": report_id}),
    )
    .await;
    assert_eq!(deleted["structuredContent"]["deleted"], true, "{deleted}");
    let gone = call(
        &app,
        "/mcp",
        Some(&token),
        "get_prospecting_report",
        json!({"report_id": report_id}),
    )
    .await;
    assert_eq!(
        gone["structuredContent"]["error"]["code"],
        "resource_not_found"
    );

    // Unknown tools and methods are protocol errors; the directory has no writing tools.
    let (_, body) = rpc(&app, "/mcp", Some(&token), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "launch_rockets", "arguments": {}}})).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (_, body) = rpc(&app, "/mcp/directory", Some(&token), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "delete_domain", "arguments": {"domain": "agent.test"}}})).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let (_, body) = rpc(
        &app,
        "/mcp",
        Some(&token),
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/destroy"}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
}

/// A tool is one definition (`mcp::tools::TOOLS`): each endpoint lists exactly the definitions
/// it serves, every listed tool reaches its own call (arguments it does not take are refused by
/// that call, naming them), and a name without a definition is no tool at all.
#[tokio::test]
async fn every_listed_tool_has_its_call_and_nothing_unlisted_can_be_called() {
    use mcp::tools::{Endpoint, TOOLS};
    let app = TestApp::start().await;
    let s = app.sign_up("lists@mcp.example", "Lists Co").await;
    let tokens = connect(&app, "lists@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    let mut names_seen = std::collections::BTreeSet::new();
    for def in TOOLS {
        assert!(names_seen.insert(def.name), "{} is defined twice", def.name);
    }
    for (path, endpoint, auth) in [
        ("/mcp", Endpoint::Main, Some(token.as_str())),
        ("/mcp/directory", Endpoint::Directory, Some(token.as_str())),
        ("/mcp/public", Endpoint::Public, None),
    ] {
        let (status, list) = rpc(
            &app,
            path,
            auth,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
        assert_eq!(status, 200, "{path}: {list}");
        let defined: Vec<String> = TOOLS
            .iter()
            .filter(|t| t.served_by(endpoint))
            .map(|t| t.name.to_owned())
            .collect();
        assert_eq!(names(&list), defined, "{path}");
        for name in &defined {
            let result = call(&app, path, auth, name, json!({"not_an_argument": 1})).await;
            let error = &result["structuredContent"]["error"];
            assert_eq!(result["isError"], true, "{path} {name}: {result}");
            assert_eq!(
                error["code"], "invalid_arguments",
                "{path} {name}: {result}"
            );
        }
        for name in TOOLS
            .iter()
            .filter(|t| !t.served_by(endpoint))
            .map(|t| t.name)
            .chain(["launch_rockets"])
        {
            let (_, body) = rpc(&app, path, auth, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}})).await;
            assert_eq!(body["error"]["code"], -32602, "{path} {name}: {body}");
        }
    }
}

#[tokio::test]
async fn malformed_requests_and_unsupported_revisions_are_refused() {
    let app = TestApp::start().await;
    let s = app.sign_up("proto@mcp.example", "Proto Co").await;
    let tokens = connect(&app, "proto@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();

    // Not JSON, not JSON-RPC, a batch.
    for body in [
        "{not json",
        "{\"hello\": 1}",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]",
    ] {
        let res = app
            .request(Method::POST, "/mcp")
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = res.status();
        let text = res.text().await.unwrap();
        assert!(
            status.is_client_error() || text.contains("\"error\""),
            "{body}: {status} {text}"
        );
        assert!(!status.is_server_error(), "{body}");
    }
    // An unsupported MCP-Protocol-Version header is 400.
    let res = app
        .request(Method::POST, "/mcp")
        .bearer_auth(&token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "1999-01-01")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    // GET is not served (stateless: no server-initiated stream).
    let res = app
        .request(Method::GET, "/mcp")
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
}

#[tokio::test]
async fn a_viewer_reads_but_cannot_write_through_mcp() {
    let app = TestApp::start().await;
    let s = app.sign_up("boss@mcp.example", "Viewer Co").await;
    crate::admin::member(&app, &s, "viewer@mcp.example", &["viewer"], &[]).await;
    let tokens = connect(&app, "viewer@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    let read = call(&app, "/mcp", Some(&token), "list_domains", json!({})).await;
    assert_eq!(read["isError"], false);
    for (tool, args) in [
        ("create_domain", json!({"url": "nope.test"})),
        ("create_group", json!({"name": "g"})),
        ("complete_task", json!({"task_id": uuid::Uuid::new_v4()})),
    ] {
        let result = call(&app, "/mcp", Some(&token), tool, args).await;
        assert_eq!(result["isError"], true, "{tool}");
        assert_eq!(
            result["structuredContent"]["error"]["code"], "forbidden",
            "{tool}: {result}"
        );
    }
    let rest = crate::common::get_json(&app, Method::GET, "/domains", &s.key).await;
    assert!(rest["data"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn the_public_endpoint_needs_nothing_and_throttles_per_address() {
    let dns = FixtureServer::start(vec![Zone::new("test"), undmarced("public.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.rate_limits.push((
            mailward_services::config::Scope::McpDns,
            "2/60".parse().unwrap(),
        ));
    })
    .await;
    // A credential sent is ignored (even a bad one).
    let first = call(
        &app,
        "/mcp/public",
        Some("garbage"),
        "audit_domain",
        json!({"domain": "public.test"}),
    )
    .await;
    assert_eq!(first["isError"], false, "{first}");
    let second = call(
        &app,
        "/mcp/public",
        None,
        "validate_spf_include",
        json!({"domain": "public.test"}),
    )
    .await;
    assert!(second["structuredContent"].is_object(), "{second}");
    let third = call(
        &app,
        "/mcp/public",
        None,
        "audit_domain",
        json!({"domain": "public.test"}),
    )
    .await;
    assert_eq!(third["isError"], true);
    let error = &third["structuredContent"]["error"];
    assert_eq!(error["scope"], "mcp_dns", "{third}");
    assert!(error["retry_after_seconds"].as_u64().unwrap() > 0);
    // A client that does not accept event streams gets the 406 the document lists (a
    // schemathesis finding: it was undocumented).
    let res = app
        .request(Method::POST, "/mcp/public")
        .header("accept", "text/html")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    let refused = res.status().as_u16();
    assert!((400..500).contains(&refused), "{refused}");
    let doc: Value = app
        .request(Method::GET, "/swagger.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let documented = &doc["paths"]["/mcp/public"]["post"]["responses"];
    assert!(
        documented.get(refused.to_string()).is_some(),
        "{refused} is documented: {documented}"
    );
    // The calls counted in the REST `dns` bucket too, which is far from its limit here.
    let res = app
        .request(Method::GET, "/tools/audit?domain=public.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Tools of the main endpoint are not reachable here.
    let (_, body) = rpc(&app, "/mcp/public", None, json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_domains", "arguments": {}}})).await;
    assert_eq!(body["error"]["code"], -32602);
}

#[tokio::test]
async fn the_discovery_documents_describe_the_server_and_its_tools() {
    let app = TestApp::start().await;
    let doc: Value = crate::oauth::public_json(&app, "/.well-known/mcp").await;
    let endpoints = doc["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 3);
    assert_eq!(endpoints[0]["url"], app.url("/mcp"));
    assert_eq!(endpoints[2]["url"], app.url("/mcp/public"));
    // All 42 tools of SPEC §4.10 (and preview_dns_change, list_failure_reports and
    // list_mailbox_connections beside them) on the main endpoint.
    let main: Vec<&str> = endpoints[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(main.len(), 48, "{main:?}");
    for billing in ["get_subscription", "start_checkout", "start_billing_portal"] {
        assert!(main.contains(&billing), "{billing}");
    }
    let audit = endpoints[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "audit_domain")
        .unwrap();
    assert_eq!(audit["inputSchema"]["required"], json!(["domain"]));
    let card: Value = crate::oauth::public_json(&app, "/.well-known/mcp/server-card.json").await;
    assert_eq!(card["transport"]["url"], app.url("/mcp"));
    assert_eq!(card["authentication"]["client_id"], "mailward-mcp");
    let root: Value =
        crate::oauth::public_json(&app, "/.well-known/oauth-protected-resource").await;
    assert_eq!(root["resource"], app.url("/mcp"));
}

#[tokio::test]
async fn each_person_has_an_mcp_oauth_bucket() {
    let app = TestApp::start_with(|s| {
        s.rate_limits.push((
            mailward_services::config::Scope::McpOauth,
            "2/60".parse().unwrap(),
        ));
    })
    .await;
    let s = app.sign_up("busy@mcp.example", "Busy Co").await;
    let tokens = connect(&app, "busy@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(rpc(&app, "/mcp", Some(&token), list.clone()).await.0, 200);
    assert_eq!(rpc(&app, "/mcp", Some(&token), list.clone()).await.0, 200);
    let (status, body) = rpc(&app, "/mcp", Some(&token), list).await;
    assert_eq!(status, 429);
    assert_eq!(body["scope"], "mcp_oauth", "{body}");
    assert!(body["retry_after_seconds"].as_u64().unwrap() > 0);
}

/// Tenant trust, finding 8: MCP tools that resolve DNS count in the `dns` bucket of the REST
/// DNS endpoints and in a per-subject `mcp_dns` bucket; the tool error's `scope` names the one
/// exceeded, and MCP calls use up the same `dns` bucket a REST call from that client needs.
#[tokio::test]
async fn mcp_dns_tools_count_in_the_dns_bucket_and_their_own() {
    let dns = FixtureServer::start(vec![Zone::new("test"), undmarced("bucket.test")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.rate_limits.push((
            mailward_services::config::Scope::Dns,
            "2/60".parse().unwrap(),
        ));
        s.rate_limits.push((
            mailward_services::config::Scope::McpDns,
            "1/60".parse().unwrap(),
        ));
    })
    .await;
    // Public endpoint, per address: the first call passes, the second exceeds `mcp_dns`.
    let first = call(
        &app,
        "/mcp/public",
        None,
        "audit_domain",
        json!({"domain": "bucket.test"}),
    )
    .await;
    assert_eq!(first["isError"], false, "{first}");
    let second = call(
        &app,
        "/mcp/public",
        None,
        "validate_spf_include",
        json!({"domain": "bucket.test"}),
    )
    .await;
    assert_eq!(
        second["structuredContent"]["error"]["scope"], "mcp_dns",
        "{second}"
    );
    // Both calls counted in `dns` for this address: the REST audit is now over it.
    let res = app
        .request(Method::GET, "/tools/audit?domain=bucket.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["scope"], "dns", "{body}");
    let third = call(
        &app,
        "/mcp/public",
        None,
        "audit_domain",
        json!({"domain": "bucket.test"}),
    )
    .await;
    assert_eq!(
        third["structuredContent"]["error"]["scope"], "dns",
        "{third}"
    );
    // A signed-in person on the main endpoint has buckets of their own; a tool that reads no
    // DNS counts in neither.
    let s = app.sign_up("bucket@mcp.example", "Bucket Co").await;
    let tokens = connect(&app, "bucket@mcp.example", &s.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        let listed = call(&app, "/mcp", Some(&token), "list_domains", json!({})).await;
        assert_eq!(listed["isError"], false, "{listed}");
    }
    let audited = call(
        &app,
        "/mcp",
        Some(&token),
        "audit_domain",
        json!({"domain": "bucket.test"}),
    )
    .await;
    assert_eq!(audited["isError"], false, "{audited}");
    let again = call(
        &app,
        "/mcp",
        Some(&token),
        "get_spf",
        json!({"domain": "bucket.test"}),
    )
    .await;
    assert_eq!(
        again["structuredContent"]["error"]["scope"], "mcp_dns",
        "{again}"
    );
}
