//! Issue 34, SCIM provisioning driven by a SCIM client: `scim2-client` (PyPI, with its
//! `scim2-models`) runs `tests/clients/scim.py` against the stack, and this test checks the
//! effects through the REST API: the member and their group limit, the activity log (actor
//! `API_KEY`, the SCIM token), deprovisioning taking effect on the person's next call.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::Zone;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Runs the SCIM client script (off the test's runtime thread, which serves the stack): its
/// last output line, as JSON.
async fn scim_client(args: &[&str]) -> Value {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || run_script(&args))
        .await
        .unwrap()
}

fn run_script(args: &[String]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../clients/scim.py");
    let out = std::process::Command::new(mailward_api_tests::venv_python())
        .arg(script)
        .args(args)
        .output()
        .expect("python with scim2-client (tests/run installs it into .venv)");
    assert!(
        out.status.success(),
        "scim.py {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or_default()).expect("a JSON line")
}

async fn call(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app.with_key(method, path, key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_scim_client_provisions_and_deprovisions_members() {
    let (dns, app) = crate::common::app_on(vec![Zone::new("corp.example")]).await;
    let admin = app.sign_up("admin@corp.example", "Corp").await;
    // The organization proves corp.example (the single sign-on TXT record).
    let (status, view) = call(
        &app,
        &admin.key,
        Method::POST,
        "/sso",
        Some(json!({"issuer": "https://idp.corp.example", "client_id": "c", "client_secret": "s", "domains": ["corp.example"]})),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    dns.set_txt(
        view["domains"][0]["txt_name"].as_str().unwrap(),
        view["domains"][0]["txt_value"].as_str().unwrap(),
    )
    .unwrap();
    let (_, view) = call(&app, &admin.key, Method::POST, "/sso/verify", None).await;
    assert_eq!(view["domains"][0]["verified"], true, "{view}");

    let (status, token) = call(
        &app,
        &admin.key,
        Method::POST,
        "/scim-tokens",
        Some(json!({"name": "Okta"})),
    )
    .await;
    assert_eq!(status, 201, "{token}");
    let secret = token["token"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("mwscim_"));
    let (_, listed) = call(&app, &admin.key, Method::GET, "/scim-tokens", None).await;
    assert!(
        listed["data"][0].get("token").is_none(),
        "shown once: {listed}"
    );
    // The SCIM token opens nothing but /scim/v2.
    let res = app
        .request(Method::GET, "/domains")
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let base = app.url("");
    let ids = scim_client(&["provision", &base, &secret]).await;
    let kim = ids["kim"].as_str().unwrap().to_owned();
    // The scim2-tester compliance checks of discovery and unknown resources.
    let counts = scim_client(&["tester", &base, &secret]).await;
    assert!(counts["SUCCESS"].as_u64().unwrap_or(0) > 10, "{counts}");
    let group = ids["group"].as_str().unwrap().to_owned();

    // Kim is an editor limited to the group; SCIM's changes are API_KEY actions of the token.
    let (_, members) = call(&app, &admin.key, Method::GET, "/members", None).await;
    let row = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == kim.as_str())
        .cloned()
        .unwrap();
    assert_eq!(row["roles"], json!(["editor"]));
    assert_eq!(row["groups"], json!([group]));
    let (_, activity) = call(
        &app,
        &admin.key,
        Method::GET,
        "/activity-log?actor_type=API_KEY",
        None,
    )
    .await;
    let entries = activity["data"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["action"] == "member.added" && e["actor_id"] == token["id"]),
        "{activity}"
    );
    assert!(
        entries
            .iter()
            .any(|e| e["action"] == "group.created" && e["actor_id"] == token["id"]),
        "{activity}"
    );
    // Attribute changes (the replaced display name, the patched given name) are recorded too.
    let updated = entries
        .iter()
        .filter(|e| e["action"] == "member.updated" && e["actor_id"] == token["id"])
        .count();
    assert!(updated >= 2, "{activity}");
    let kim_session = app
        .session_token("kim@corp.example", &admin.org_id, false)
        .await;
    let res = app
        .with_session(Method::GET, "/domains", &kim_session)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // A provisioned member whose groups are all removed sees no domain, not every domain.
    let (status, domain) = call(
        &app,
        &admin.key,
        Method::POST,
        "/domains",
        Some(json!({"url": "corp.example"})),
    )
    .await;
    assert_eq!(status, 201, "{domain}");
    let (status, _) = call(
        &app,
        &admin.key,
        Method::POST,
        &format!("/members/{kim}"),
        Some(json!({"groups": []})),
    )
    .await;
    assert_eq!(status, 200);
    let listed: Value = app
        .with_session(Method::GET, "/domains", &kim_session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["data"], json!([]), "{listed}");

    // Deprovisioning takes effect on Kim's next call.
    scim_client(&["deprovision", &base, &secret, &kim]).await;
    let res = app
        .with_session(Method::GET, "/domains", &kim_session)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let (_, activity) = call(
        &app,
        &admin.key,
        Method::GET,
        "/activity-log?action=member.removed",
        None,
    )
    .await;
    assert_eq!(activity["data"][0]["actor_type"], "API_KEY", "{activity}");
    assert_eq!(activity["data"][0]["actor_id"], token["id"]);

    // A deleted token stops at once.
    let (status, _) = call(
        &app,
        &admin.key,
        Method::DELETE,
        &format!("/scim-tokens/{}", token["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let res = app
        .request(Method::GET, "/scim/v2/Users")
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers()["content-type"], "application/scim+json");
}
