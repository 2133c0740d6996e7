//! The deployed layout agrees with the code: the committed OpenAPI document is what the routes
//! generate, and every function's routes are exactly its HTTP events in `template.yaml`.

use std::collections::BTreeSet;
use std::path::Path;

fn workspace_file(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn the_committed_openapi_document_is_what_the_routes_generate() {
    let committed = workspace_file("functions/api-public/openapi.json");
    let generated = mailward_local_stack::openapi_json();
    assert!(
        committed == generated,
        "functions/api-public/openapi.json is stale: run `cargo run -p mailward -- openapi --write` and commit it"
    );
}

/// `(METHOD, path)` of every `HttpApi` event with a path in a function's `Events`.
fn template_events(template: &serde_norway::Value, function: &str) -> BTreeSet<(String, String)> {
    let events = &template["Resources"][function]["Properties"]["Events"];
    let serde_norway::Value::Mapping(events) = events else {
        panic!("{function} has no Events in template.yaml");
    };
    events
        .values()
        .filter(|event| event["Type"].as_str() == Some("HttpApi"))
        .filter_map(|event| {
            let properties = &event["Properties"];
            Some((
                properties["Method"].as_str()?.to_ascii_uppercase(),
                properties["Path"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

#[test]
fn each_function_serves_exactly_its_events_in_the_template() {
    let template: serde_norway::Value =
        serde_norway::from_str(&workspace_file("template.yaml")).expect("template.yaml parses");
    let mut seen = BTreeSet::new();
    for (function, routes) in mailward_local_stack::functions() {
        let served: BTreeSet<(String, String)> = routes.into_iter().collect();
        let deployed = template_events(&template, function);
        assert_eq!(
            served.difference(&deployed).collect::<Vec<_>>(),
            Vec::<&(String, String)>::new(),
            "{function} serves routes that template.yaml does not send it"
        );
        assert_eq!(
            deployed.difference(&served).collect::<Vec<_>>(),
            Vec::<&(String, String)>::new(),
            "template.yaml sends {function} routes it does not serve"
        );
        for route in served {
            assert!(
                seen.insert(route.clone()),
                "{route:?} is served by two functions"
            );
        }
    }
    assert!(seen.len() >= 40, "only {} routes found", seen.len());
}

/// Tenant trust, finding 9: every function gets the public base URL (the Lambdas refuse to
/// start without it, so links are never built from the request's `Host`): `BaseUrl` when set,
/// else the HTTP API's own endpoint.
#[test]
fn every_function_is_given_the_public_base_url() {
    let text = workspace_file("template.yaml");
    let template: serde_norway::Value =
        serde_norway::from_str(&text).expect("template.yaml parses");
    let variables = &template["Globals"]["Function"]["Environment"]["Variables"];
    let base = &variables["MAILWARD_BASE_URL"];
    assert!(
        !base.is_null(),
        "MAILWARD_BASE_URL is not set for the functions"
    );
    let line = text
        .lines()
        .find(|l| l.contains("MAILWARD_BASE_URL:"))
        .unwrap();
    assert!(
        line.contains("HasBaseUrl") && line.contains("HttpApi.ApiEndpoint"),
        "MAILWARD_BASE_URL must fall back to the API's own URL: {line}"
    );
    assert!(text.contains("HasBaseUrl: !Not [!Equals [!Ref BaseUrl, \"\"]]"));
}
