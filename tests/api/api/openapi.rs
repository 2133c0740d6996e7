//! `GET /swagger.json`: a valid OpenAPI document covering every served route.

use mailward_api_tests::TestApp;
use reqwest::Method;
use serde_json::Value;

#[tokio::test]
async fn the_document_describes_every_route_and_every_documented_route_is_served() {
    let app = TestApp::start().await;
    let res = app
        .request(Method::GET, "/swagger.json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let doc: Value = res.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["api_key"]["scheme"], "basic");
    assert_eq!(schemes["session"]["scheme"], "bearer");

    let paths = doc["paths"].as_object().unwrap();
    let expected = [
        ("get", "/health-check"),
        ("get", "/metrics"),
        ("post", "/organizations/{id}/exports"),
        ("get", "/organizations/{id}/exports/{export_id}"),
        ("post", "/staff/session"),
        ("get", "/staff/sources/{id}"),
        ("post", "/staff/sources/{id}/proposals"),
        ("post", "/staff/sources/{id}/curation/{kind}/approve"),
        ("post", "/staff/sources/{id}/curation/{kind}/reject"),
        ("post", "/staff/organizations/{id}/delete"),
        ("get", "/staff/candidates"),
        ("get", "/staff/candidates/{name}"),
        ("post", "/staff/candidates/{name}/promote"),
        ("post", "/staff/candidates/{name}/reject"),
        ("get", "/staff/organizations"),
        ("post", "/staff/organizations/{id}/suspend"),
        ("post", "/staff/organizations/{id}/unsuspend"),
        ("get", "/staff/tickets"),
        ("get", "/staff/organizations/{id}/tickets/{ticket_id}"),
        (
            "post",
            "/staff/organizations/{id}/tickets/{ticket_id}/reply",
        ),
        (
            "post",
            "/staff/organizations/{id}/tickets/{ticket_id}/presigned-url",
        ),
        ("get", "/swagger.json"),
        ("post", "/signup"),
        ("post", "/signup/verify"),
        ("get", "/api-keys"),
        ("post", "/api-keys"),
        ("post", "/api-keys/{id}/rotate"),
        ("delete", "/api-keys/{id}"),
        ("post", "/organizations"),
        ("post", "/organizations/{id}"),
        ("delete", "/organizations/{id}"),
        ("post", "/organizations/{id}/onboarding/dismiss"),
        ("get", "/webhook-events"),
        ("get", "/webhook-endpoints"),
        ("post", "/webhook-endpoints"),
        ("get", "/webhook-endpoints/{id}"),
        ("post", "/webhook-endpoints/{id}"),
        ("delete", "/webhook-endpoints/{id}"),
        ("post", "/webhook-endpoints/{id}/rotate-secret"),
        ("get", "/webhook-endpoints/{id}/deliveries"),
        ("post", "/tools/dns-lookup"),
        ("get", "/dns-providers/detect"),
        ("get", "/tools/validate-include"),
        ("get", "/tools/mailbox-provider"),
        ("get", "/sources"),
        ("get", "/sources/spf-index"),
        ("get", "/sources/dkim-index"),
        ("get", "/sources/{id}"),
        ("post", "/tlsrpt/{token}"),
        ("get", "/domains/{id}/failure-reports"),
        ("get", "/domains/{id}/failure-reports/{report_id}"),
        (
            "get",
            "/domains/{id}/failure-reports/{report_id}/header-analysis",
        ),
        ("post", "/sources"),
        ("post", "/sources/{id}"),
        ("delete", "/sources/{id}"),
        ("get", "/tools/audit"),
        ("get", "/tools/activation-scan"),
        ("get", "/domains"),
        ("post", "/domains"),
        ("post", "/domains/bulk"),
        ("get", "/domains/{id}"),
        ("post", "/domains/{id}"),
        ("delete", "/domains/{id}"),
        ("get", "/domains/{id}/dns-records"),
        ("post", "/domains/{id}/verify"),
        ("post", "/domains/{id}/verify/spf"),
        ("post", "/domains/{id}/verify/dkim"),
        ("get", "/domains/{id}/spf"),
        ("get", "/domains/{id}/dns-snapshots"),
        ("get", "/domains/{id}/dns-snapshots/{snapshot_id}"),
        ("get", "/domains/{id}/plan"),
        ("post", "/domains/{id}/preview"),
        ("get", "/tasks"),
        ("get", "/tasks/{id}"),
        ("post", "/tasks/{id}"),
        ("get", "/groups"),
        ("post", "/groups"),
        ("get", "/groups/{id}"),
        ("post", "/groups/{id}"),
        ("delete", "/groups/{id}"),
        ("get", "/members"),
        ("post", "/members"),
        ("post", "/members/{id}"),
        ("delete", "/members/{id}"),
        ("get", "/members/mfa/statuses"),
        ("get", "/invitations"),
        ("post", "/invitations"),
        ("post", "/invitations/{id}/resend"),
        ("delete", "/invitations/{id}"),
        ("post", "/invitations/accept"),
        ("get", "/usage"),
        ("get", "/billing/subscription"),
        ("post", "/billing/checkout"),
        ("post", "/billing/portal"),
        ("post", "/billing/stripe-webhook"),
        ("get", "/activity-log"),
        ("get", "/activity-log/actions"),
        ("get", "/activity-log/{id}"),
        ("get", "/support/tickets"),
        ("post", "/support/tickets"),
        ("get", "/support/tickets/{id}"),
        ("post", "/support/tickets/{id}/replies"),
        ("post", "/support/tickets/{id}/read"),
        ("get", "/support/unread-count"),
        ("post", "/support/presigned-url"),
        ("get", "/domains/{id}/reports/summary"),
        ("get", "/domains/{id}/reports/senders"),
        ("get", "/domains/{id}/sources"),
        ("get", "/domains/{id}/sender-requirements"),
        ("post", "/domains/{id}/sender-requirements"),
        ("get", "/domains/{id}/reports/enforcement-impact"),
        ("get", "/report-data/summary"),
        ("get", "/report-data/export"),
        ("get", "/domains/{id}/reports/export"),
        ("get", "/domains/{id}/tls-reports"),
        ("get", "/domains/{id}/tls-reports/chart"),
        ("get", "/domains/{id}/tls-reports/summary"),
        ("get", "/domains/{id}/tls-reports/{report_id}"),
        ("get", "/report-data/domains"),
        ("get", "/report-data/domains/{id}/senders"),
        ("get", "/report-data/domains/{id}/timeseries"),
        ("post", "/domains/{id}/sources/{source_id}"),
        ("get", "/docs"),
        ("get", "/docs/redoc.standalone.js"),
        ("get", "/docs/authentication"),
        ("get", "/notifications/unsubscribe"),
        ("post", "/notifications/unsubscribe"),
        ("get", "/.well-known/mta-sts.txt"),
        ("get", "/bimi/{domain}/{version}/{file}"),
        ("post", "/domains/{id}/bimi/assets"),
        ("get", "/dns-connections"),
        ("post", "/dns-connections"),
        ("get", "/dns-connections/{id}"),
        ("delete", "/dns-connections/{id}"),
        ("get", "/dns-connections/{id}/coverage"),
        ("post", "/dns-connections/{id}/publish"),
        ("get", "/mailbox-connections"),
        ("post", "/mailbox-connections"),
        ("get", "/mailbox-connections/{id}"),
        ("post", "/mailbox-connections/{id}"),
        ("delete", "/mailbox-connections/{id}"),
        ("post", "/mailbox-connections/{id}/poll"),
        ("get", "/alert-rules"),
        ("post", "/alert-rules"),
        ("get", "/alert-rules/{id}"),
        ("post", "/alert-rules/{id}"),
        ("delete", "/alert-rules/{id}"),
        ("post", "/alert-rules/{id}/test"),
        ("get", "/alerts"),
        ("get", "/report-settings"),
        ("post", "/report-settings"),
        ("get", "/report-settings/{id}"),
        ("post", "/report-settings/{id}"),
        ("delete", "/report-settings/{id}"),
        ("post", "/report-settings/{id}/send"),
        ("get", "/.well-known/oauth-authorization-server"),
        ("get", "/oauth/jwks"),
        ("post", "/oauth/register"),
        ("get", "/oauth/authorize"),
        ("post", "/oauth/authorize"),
        ("post", "/oauth/token"),
        ("post", "/oauth/revoke"),
        ("get", "/oauth/connections"),
        ("delete", "/oauth/connections/{id}"),
        ("post", "/oauth/session/start"),
        ("post", "/oauth/session"),
        ("post", "/tools/header-analyze"),
        ("post", "/domains/{id}/hosted-dmarc"),
        ("get", "/domains/{id}/mta-sts"),
        ("post", "/domains/{id}/mta-sts"),
        ("put", "/domains/{id}/mta-sts"),
        ("delete", "/domains/{id}/mta-sts"),
        ("post", "/domains/{id}/mta-sts/retry"),
        ("get", "/domains/{id}/dkim-keys"),
        ("post", "/domains/{id}/dkim-keys"),
        ("get", "/domains/{id}/dkim-keys/{key_id}"),
        ("post", "/domains/{id}/dkim-keys/{key_id}"),
        ("delete", "/domains/{id}/dkim-keys/{key_id}"),
        ("get", "/prospecting-reports"),
        ("post", "/prospecting-reports"),
        ("post", "/prospecting-reports/preview"),
        ("get", "/prospecting-reports/{id}"),
        ("delete", "/prospecting-reports/{id}"),
        ("get", "/prospecting-reports/{id}/download"),
        ("delete", "/oauth/session"),
        ("get", "/oauth/sessions"),
        ("delete", "/oauth/sessions/{id}"),
        ("get", "/account/mfa"),
        ("post", "/account/mfa/totp"),
        ("post", "/account/mfa/totp/confirm"),
        ("post", "/account/mfa/totp/disable"),
        ("post", "/account/mfa/verify"),
        ("post", "/account/mfa/recovery-codes"),
        ("get", "/sso"),
        ("post", "/sso"),
        ("delete", "/sso"),
        ("post", "/sso/verify"),
        ("get", "/oauth/sso/start"),
        ("get", "/oauth/sso/callback"),
        ("get", "/scim/v2/ServiceProviderConfig"),
        ("get", "/scim/v2/ResourceTypes"),
        ("get", "/scim/v2/Schemas"),
        ("get", "/scim/v2/ResourceTypes/{id}"),
        ("get", "/scim/v2/Schemas/{id}"),
        ("get", "/scim/v2/Users"),
        ("post", "/scim/v2/Users"),
        ("get", "/scim/v2/Users/{id}"),
        ("put", "/scim/v2/Users/{id}"),
        ("patch", "/scim/v2/Users/{id}"),
        ("delete", "/scim/v2/Users/{id}"),
        ("get", "/scim/v2/Groups"),
        ("post", "/scim/v2/Groups"),
        ("get", "/scim/v2/Groups/{id}"),
        ("put", "/scim/v2/Groups/{id}"),
        ("patch", "/scim/v2/Groups/{id}"),
        ("delete", "/scim/v2/Groups/{id}"),
        ("post", "/scim-tokens"),
        ("get", "/scim-tokens"),
        ("delete", "/scim-tokens/{id}"),
        ("post", "/mcp"),
        ("post", "/mcp/directory"),
        ("post", "/mcp/public"),
        ("get", "/.well-known/oauth-protected-resource"),
        ("get", "/.well-known/oauth-protected-resource/mcp"),
        ("get", "/.well-known/oauth-protected-resource/mcp/directory"),
        ("get", "/.well-known/oauth-protected-resource/mcp/public"),
        ("get", "/.well-known/mcp"),
        ("get", "/.well-known/mcp/server-card.json"),
    ];
    for (method, path) in expected {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} missing from the document"
        );
    }

    // Every documented operation is routed (never the fallback 404), and every credentialed
    // operation documents the version header.
    let mut operations = 0;
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let Ok(m) = method.to_uppercase().parse::<Method>() else {
                continue;
            };
            operations += 1;
            let concrete = path
                .replace("{id}", &uuid::Uuid::new_v4().to_string())
                .replace("{snapshot_id}", &uuid::Uuid::new_v4().to_string());
            let res = app.request(m, &concrete).send().await.unwrap();
            let status = res.status();
            let body: Value = res.json().await.unwrap_or(Value::Null);
            assert!(
                !(status == 404 && body["code"] == "not_found"),
                "{method} {path} is documented but not served"
            );
            // SCIM's own credential takes no version header (see the `scim` tag).
            if op.get("security").is_some() && !path.starts_with("/scim/v2/") {
                let params = op["parameters"].as_array().expect("parameters");
                assert!(
                    params.iter().any(|p| p["name"] == "Mailward-Version"),
                    "{method} {path} lacks the version header"
                );
            }
        }
    }
    assert_eq!(
        operations,
        expected.len(),
        "the document lists exactly the served operations"
    );
}

#[test]
fn routes_are_only_registered_through_the_documented_macro() {
    // Every route must go through `utoipa_axum::routes!` so it lands in the document; a plain
    // `.route(` call would serve an undocumented path. The web application is the exception:
    // its pages are not API operations (ARCHITECTURE.md), and they live under `/app/` (and `/`,
    // which redirects there) so none shadows or mimics an API path.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut stack = vec![root.join("shared/mailward-http/src")];
    for function in std::fs::read_dir(root.join("functions")).unwrap() {
        let function = function.unwrap().path();
        if function.ends_with("app-web") {
            let pages = std::fs::read_to_string(function.join("src/lib.rs")).unwrap();
            for path in pages.split(".route(\"").skip(1) {
                let path = path.split('"').next().unwrap();
                assert!(
                    path == "/" || path == "/app" || path.starts_with("/app/"),
                    "the web application serves {path} outside /app/"
                );
            }
            continue;
        }
        stack.push(function.join("src"));
    }
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains(".route("),
                    "{} registers a route outside routes!",
                    path.display()
                );
            }
        }
    }
}

/// Follows `url` (an absolute link of the local stack) with redirects; status, type and body.
async fn follow(url: &str) -> (reqwest::StatusCode, String, String) {
    let client = reqwest::Client::new();
    let res = client.get(url).send().await.unwrap();
    let status = res.status();
    let kind = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, res.text().await.unwrap())
}

#[tokio::test]
async fn the_documentation_links_in_error_bodies_lead_to_the_reference_page() {
    let app = TestApp::start().await;
    let anonymous = async |path: &str| -> Value {
        let res = app.request(Method::GET, path).send().await.unwrap();
        res.json().await.unwrap()
    };
    let unauthorized = anonymous("/domains").await;
    let not_found = anonymous("/no/such/route").await;
    for link in [
        unauthorized["details"]["documentation"].as_str().unwrap(),
        not_found["details"]["documentation"].as_str().unwrap(),
    ] {
        let (status, kind, page) = follow(link).await;
        assert_eq!(status, 200, "{link}");
        assert!(kind.starts_with("text/html"), "{link}: {kind}");
        assert!(page.contains("Redoc.init(\"swagger.json\""), "{link}");
        assert!(page.contains("docs/redoc.standalone.js"));
        assert!(
            !page.contains("https://"),
            "no CDN: everything is served locally"
        );
    }
    // The authentication link answers the 302 its documentation promises (a schemathesis
    // finding: it answered 303).
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let res = raw
        .get(app.url("/docs/authentication"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 302);
    assert_eq!(res.headers()["location"], "../docs#section/Authentication");
    let (status, kind, script) = follow(&app.url("/docs/redoc.standalone.js")).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/javascript"));
    assert!(script.len() > 500_000, "the Redoc bundle itself");
    // The document the page renders has the sections written for people.
    let doc = anonymous("/swagger.json").await;
    let description = doc["info"]["description"].as_str().unwrap();
    for section in [
        "# Quick start",
        "# Authentication",
        "# Versioning",
        "# Errors",
        "# Rate limits",
        "# Pagination",
        "# Webhook signatures",
    ] {
        assert!(description.contains(section), "{section} missing");
    }
}

/// Where `value` departs from `schema` of the OpenAPI document `doc` (empty: it conforms): the
/// structural checks a stock fuzzer makes (`$ref`, `type` with `null`, `required`,
/// `properties`, `items`, `enum`, `oneOf`/`anyOf`: some branch conforms). Formats and number
/// bounds are left to the fuzzer.
pub(crate) fn departures(doc: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        return departures(doc, &doc["components"]["schemas"][name], value, at);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema[key].as_array() {
            let fits = branches
                .iter()
                .filter(|b| departures(doc, b, value, at).is_empty())
                .count();
            let ok = if key == "oneOf" { fits == 1 } else { fits >= 1 };
            if !ok {
                return vec![format!("{at}: {fits} branches of {key} fit {value}")];
            }
        }
    }
    if let Some(all) = schema["allOf"].as_array() {
        return all
            .iter()
            .flat_map(|b| departures(doc, b, value, at))
            .collect();
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let fits = types.is_empty()
        || types.contains(&kind)
        || (kind == "integer" && types.contains(&"number"));
    if !fits {
        return vec![format!("{at}: {kind} where {types:?} is documented")];
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        return vec![format!("{at}: {value} is not one of {allowed:?}")];
    }
    let mut out = Vec::new();
    if let Value::Object(fields) = value {
        for required in schema["required"].as_array().into_iter().flatten() {
            let name = required.as_str().unwrap_or_default();
            if !fields.contains_key(name) {
                out.push(format!("{at}: required {name} is missing"));
            }
        }
        for (name, field) in fields {
            if let Some(sub) = schema["properties"].get(name) {
                out.extend(departures(doc, sub, field, &format!("{at}.{name}")));
            }
        }
    }
    if let (Value::Array(items), Some(item)) = (value, schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            out.extend(departures(doc, item, v, &format!("{at}[{i}]")));
        }
    }
    out
}

/// The schema an operation documents for a status's JSON body.
pub(crate) fn response_schema(doc: &Value, path: &str, method: &str, status: u16) -> Value {
    doc["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]
        ["schema"]
        .clone()
}

#[test]
fn the_conformance_check_finds_what_a_fuzzer_finds() {
    let doc = serde_json::json!({"components": {"schemas": {
        "Step": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}},
        "Report": {"type": "object", "properties": {"plan": {"type": "array", "items": {"$ref": "#/components/schemas/Step"}},
            "content": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Step"}]}}}
    }}});
    let report = serde_json::json!({"$ref": "#/components/schemas/Report"});
    let fits = serde_json::json!({"plan": [{"key": "a"}], "content": null});
    assert!(departures(&doc, &report, &fits, "$").is_empty());
    let wrong = serde_json::json!({"plan": [{"week": 1}], "content": {"week": 1}});
    let found = departures(&doc, &report, &wrong, "$");
    assert_eq!(found.len(), 2, "{found:?}");
}
