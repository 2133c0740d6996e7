//! The HTTP functions behind API Gateway's HTTP API: payload format 2.0 events in, the
//! `lambda_http` response Lambda hands back to API Gateway out (status, headers, cookies, body
//! text or base64).

use crate::common::{ApiRequest, BASE_URL, Lambda, fixture, json_body};
use base64::Engine as _;
use mailward_dns_fixture::{FixtureServer, Zone};
use serde_json::{Value, json};

fn header<'a>(response: &'a Value, name: &str) -> &'a str {
    response["headers"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} header: {response}"))
}

#[tokio::test]
async fn a_get_with_a_query_and_cookies_is_answered_in_the_v2_response_shape() {
    let lambda = Lambda::new();
    let response = lambda
        .http(api_public::routes(), &fixture("apigw-v2-health-check.json"))
        .await;
    assert_eq!(response["statusCode"], 200, "{response}");
    assert_eq!(json_body(&response), json!({"status": "ok"}));
    assert_eq!(header(&response, "content-type"), "application/json");
    assert_eq!(header(&response, "x-content-type-options"), "nosniff");
    // The client's request id comes back; nothing sets a cookie, so API Gateway gets none
    // (cookies go in `cookies`, never in a set-cookie header).
    assert_eq!(
        header(&response, "x-request-id"),
        "probe-from-the-load-balancer"
    );
    assert_eq!(response["cookies"], json!([]));
    assert!(
        response["headers"].get("set-cookie").is_none(),
        "{response}"
    );
    assert_eq!(response["multiValueHeaders"], json!({}));
}

#[tokio::test]
async fn paths_outside_the_function_and_a_named_stage_prefix_get_the_json_404() {
    let lambda = Lambda::new();
    let stray = ApiRequest::new("GET", "/nowhere").event();
    let response = lambda.http(api_public::routes(), &stray).await;
    assert_eq!(response["statusCode"], 404, "{response}");
    assert_eq!(json_body(&response)["code"], "not_found");
    assert_eq!(header(&response, "content-type"), "application/json");
    // Each function serves its own routes only: the domains routes are not api-public's.
    let elsewhere = ApiRequest::new("GET", "/domains").event();
    let response = lambda.http(api_public::routes(), &elsewhere).await;
    assert_eq!(response["statusCode"], 404, "{response}");
    // On a named stage API Gateway puts the stage in `rawPath`, and `lambda_http` keeps it in
    // the path the routes see: the API is deployed on `$default` (template.yaml), where the
    // raw path is the route.
    let staged = fixture("apigw-v2-named-stage.json");
    let response = lambda.http(api_public::routes(), &staged).await;
    assert_eq!(response["statusCode"], 404, "{response}");
    assert_eq!(json_body(&response)["code"], "not_found");
}

#[tokio::test]
async fn a_request_api_gateway_received_over_plain_http_is_refused() {
    let lambda = Lambda::new();
    let event = ApiRequest::new("GET", "/health-check")
        .header("x-forwarded-proto", "http")
        .event();
    let response = lambda.http(api_public::routes(), &event).await;
    assert_eq!(response["statusCode"], 403, "{response}");
    assert_eq!(json_body(&response)["code"], "https_required");
}

#[tokio::test]
async fn a_base64_encoded_body_is_decoded_and_only_when_flagged() {
    let lambda = Lambda::new();
    // The fixture's body is base64 with `isBase64Encoded` true: signup accepts it (201).
    let signed = lambda.sign_up().await;
    assert!(!signed.key.is_empty());
    // The same bytes without the flag reach the route as base64 text, which is not JSON.
    let mut event = fixture("apigw-v2-signup-base64.json");
    event["isBase64Encoded"] = json!(false);
    let response = lambda.http(api_public::routes(), &event).await;
    assert_eq!(response["statusCode"], 400, "{response}");
    assert_eq!(header(&response, "content-type"), "application/json");
}

#[tokio::test]
async fn the_domains_function_reads_its_query_string_as_the_client_sent_it() {
    let lambda = Lambda::new();
    let s = lambda.sign_up().await;
    for name in ["b-lambda.example", "a-lambda.example"] {
        let add = ApiRequest::new("POST", "/domains")
            .key(&s.key)
            .json(&json!({ "url": name }));
        let response = lambda.http(api_domains::routes(), &add.event()).await;
        assert_eq!(response["statusCode"], 201, "{response}");
        assert_eq!(json_body(&response)["url"], name);
    }
    // The raw query string arrives as the client encoded it (`expand[]`'s brackets, an
    // escaped letter in `url`); the route reads the decoded values.
    let list = ApiRequest::new("GET", "/domains")
        .key(&s.key)
        .query(
            "per_page=1&sort=u%72l&order=asc&expand%5B%5D=group",
            json!({"per_page": "1", "sort": "url", "order": "asc", "expand[]": "group"}),
        )
        .event();
    let response = lambda.http(api_domains::routes(), &list).await;
    assert_eq!(response["statusCode"], 200, "{response}");
    let body = json_body(&response);
    assert_eq!(body["data"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(body["data"][0]["url"], "a-lambda.example");
    assert_eq!(
        body["page_info"],
        json!({"total_count": 2, "page": 1, "per_page": 1, "has_more": true})
    );
    assert_eq!(header(&response, "ratelimit-limit"), "600");
    // Without credentials: 401 with the challenge.
    let anonymous = ApiRequest::new("GET", "/domains").event();
    let response = lambda.http(api_domains::routes(), &anonymous).await;
    assert_eq!(response["statusCode"], 401, "{response}");
    assert_eq!(
        header(&response, "www-authenticate"),
        "Basic realm=\"Mailward\", Bearer realm=\"Mailward\""
    );
    assert_eq!(json_body(&response)["code"], "unauthorized");
}

#[tokio::test]
async fn the_account_tasks_reports_webhooks_and_tools_functions_answer_with_a_key() {
    let lambda = Lambda::new();
    let s = lambda.sign_up().await;
    let add = ApiRequest::new("POST", "/domains")
        .key(&s.key)
        .json(&json!({"url": "reports-lambda.example"}));
    let domain = json_body(&lambda.http(api_domains::routes(), &add.event()).await);
    let id = domain["id"].as_str().expect("id");

    let members = ApiRequest::new("GET", "/members").key(&s.key).event();
    let response = lambda.http(api_account::routes(), &members).await;
    assert_eq!(response["statusCode"], 200, "{response}");
    let body = json_body(&response);
    assert_eq!(body[0]["email"], "owner@lambda.example", "{body}");

    let tasks = ApiRequest::new("GET", "/tasks").key(&s.key).event();
    let response = lambda.http(api_tasks::routes(), &tasks).await;
    assert_eq!(response["statusCode"], 200, "{response}");
    assert!(json_body(&response)["data"].is_array());

    let summary = ApiRequest::new("GET", &format!("/domains/{id}/reports/summary"))
        .route("/domains/{id}/reports/summary")
        .key(&s.key)
        .event();
    let response = lambda.http(api_reports::routes(), &summary).await;
    assert_eq!(response["statusCode"], 200, "{response}");
    assert_eq!(json_body(&response)["volume"], 0);

    let hook = ApiRequest::new("POST", "/webhook-endpoints")
        .key(&s.key)
        .json(&json!({
            "url": "https://hooks.lambda.example/mailward",
            "enabled_events": ["domain.created"],
        }));
    let response = lambda.http(api_webhooks::routes(), &hook.event()).await;
    assert_eq!(response["statusCode"], 201, "{response}");
    assert!(json_body(&response)["secret"].is_string(), "{response}");

    let sources = ApiRequest::new("GET", "/sources")
        .key(&s.key)
        .query("origin=CURATED", json!({"origin": "CURATED"}))
        .event();
    let response = lambda.http(api_tools::routes(), &sources).await;
    assert_eq!(response["statusCode"], 200, "{}", response["statusCode"]);
    let catalogue = json_body(&response);
    let entries = catalogue.as_array().expect("the catalogue");
    assert!(!entries.is_empty() && entries.iter().all(|e| e["origin"] == "CURATED"));
}

#[tokio::test]
async fn the_auth_and_mcp_functions_answer_their_public_documents_and_challenges() {
    let lambda = Lambda::new();
    let metadata = ApiRequest::new("GET", "/.well-known/oauth-authorization-server").event();
    let response = lambda.http(api_auth::routes(), &metadata).await;
    assert_eq!(response["statusCode"], 200, "{response}");
    assert_eq!(json_body(&response)["issuer"], BASE_URL);
    assert_eq!(header(&response, "cache-control"), "public, max-age=3600");

    // Through the custom domain of the base URL, API Gateway passes that name as `Host`.
    let rpc = |path: &str, id: u32, method: &str| {
        ApiRequest::new("POST", path)
            .header("host", "api.mailward.test")
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method}))
            .event()
    };
    // Any other name is refused on the MCP endpoints (DNS rebinding), the API's raw
    // execute-api host included once a base URL is set.
    let raw_host = ApiRequest::new("POST", "/mcp/public")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .event();
    let response = lambda.http(mcp::routes(), &raw_host).await;
    assert_eq!(response["statusCode"], 403, "{response}");
    let response = lambda
        .http(mcp::routes(), &rpc("/mcp", 1, "initialize"))
        .await;
    assert_eq!(response["statusCode"], 401, "{response}");
    assert!(
        header(&response, "www-authenticate").starts_with(&format!(
            "Bearer resource_metadata=\"{BASE_URL}/.well-known/oauth-protected-resource"
        )),
        "{response}"
    );
    let response = lambda
        .http(mcp::routes(), &rpc("/mcp/public", 2, "tools/list"))
        .await;
    assert_eq!(response["statusCode"], 200, "{response}");
    let tools: Vec<Value> = json_body(&response)["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        tools,
        vec![json!("audit_domain"), json!("validate_spf_include")]
    );
}

/// The DNS a prospecting report reads: one domain with mail and no SPF or DMARC.
async fn report_dns() -> FixtureServer {
    let bare = Zone::new("bare.test")
        .ns("@", "ns1.bare.test.")
        .mx("@", 10, "mail.bare.test.")
        .a("mail", "192.0.2.8");
    FixtureServer::start(vec![Zone::new("test"), bare])
        .await
        .expect("DNS fixture")
}

#[tokio::test]
async fn the_report_pdf_comes_back_base64_encoded_and_decodes_to_the_pdf() {
    let dns = report_dns().await;
    let lambda = Lambda::with_dns(dns.addr());
    let s = lambda.sign_up().await;
    let create = ApiRequest::new("POST", "/prospecting-reports")
        .key(&s.key)
        .json(&json!({"generated_for": "Contoso Ltd", "domains": ["bare.test"]}));
    let response = lambda.http(api_reports::routes(), &create.event()).await;
    assert_eq!(response["statusCode"], 201, "{response}");
    let url = json_body(&response)["url"]
        .as_str()
        .expect("url")
        .to_owned();
    let path = url.strip_prefix(BASE_URL).expect("a link on the base URL");

    let download = |accept: &str| {
        ApiRequest::new("GET", path)
            .route("/prospecting-reports/{id}/download")
            .header("accept", accept)
            .event()
    };
    let response = lambda
        .http(api_report_pdf::routes(), &download("application/pdf"))
        .await;
    assert_eq!(response["statusCode"], 200, "{response}");
    assert_eq!(response["isBase64Encoded"], true);
    assert_eq!(header(&response, "content-type"), "application/pdf");
    assert_eq!(
        header(&response, "content-disposition"),
        "inline; filename=\"mailward-report-bare-test.pdf\""
    );
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(response["body"].as_str().expect("body"))
        .expect("base64");
    assert!(pdf.starts_with(b"%PDF-"), "{:?}", &pdf[..pdf.len().min(16)]);
    assert!(pdf.trim_ascii_end().ends_with(b"%%EOF"));
    // The second download serves the stored bytes, encoded the same way.
    let again = lambda
        .http(api_report_pdf::routes(), &download("application/pdf"))
        .await;
    assert_eq!(again["body"], response["body"]);

    // A refusal is text, never base64: the JSON error body by default, and to a browser
    // after the link's 90 days the page saying so.
    let missing = ApiRequest::new(
        "GET",
        "/prospecting-reports/00000000-0000-4000-8000-000000000000/download",
    )
    .route("/prospecting-reports/{id}/download")
    .event();
    let response = lambda.http(api_report_pdf::routes(), &missing).await;
    assert_eq!(response["statusCode"], 404, "{response}");
    assert_eq!(json_body(&response)["code"], "resource_not_found");
    lambda.clock.advance(time::Duration::days(91));
    let response = lambda
        .http(
            api_report_pdf::routes(),
            &download("text/html,application/xhtml+xml"),
        )
        .await;
    assert_eq!(response["statusCode"], 410, "{response}");
    assert_eq!(response["isBase64Encoded"], false);
    assert_eq!(
        header(&response, "content-type"),
        "text/html; charset=utf-8"
    );
    assert!(response["headers"]["content-security-policy"].is_string());
    assert!(
        response["body"]
            .as_str()
            .unwrap()
            .contains("This report has expired")
    );
}

#[tokio::test]
async fn metrics_are_closed_on_lambda_without_a_token_even_to_a_forged_loopback_hop() {
    let lambda = Lambda::new();
    // API Gateway appends the address it saw; a client's own "127.0.0.1" before it is ignored.
    let event = crate::common::ApiRequest::new("GET", "/metrics")
        .header("x-forwarded-for", "127.0.0.1, 203.0.113.9")
        .event();
    let response = lambda.http(api_public::routes(), &event).await;
    assert_eq!(response["statusCode"], 403, "{response}");
    assert_eq!(json_body(&response)["code"], "metrics_protected");
}
