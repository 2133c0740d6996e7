//! Organization exports: an administrator asks, the archive is built in the background, the
//! signed link downloads it (and a changed link does not), and every resource in it matches
//! what the API answers. Runs on SQLite and on DynamoDB and S3 in moto.

use crate::common::{add_domain, call, call_as, for_org, quiet_app};
use mailward_reports::Limits;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Read as _;

/// The archive's files by name (without the `mailward-export/` folder).
fn unzip(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip archive");
    let mut files = BTreeMap::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).unwrap();
        let name = file
            .name()
            .trim_start_matches("mailward-export/")
            .to_owned();
        let mut content = Vec::new();
        file.read_to_end(&mut content).unwrap();
        files.insert(name, content);
    }
    files
}

fn json_file(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Value {
    serde_json::from_slice(
        files
            .get(name)
            .unwrap_or_else(|| panic!("{name} in {files:?}")),
    )
    .unwrap()
}

#[tokio::test]
async fn an_export_holds_every_resource_as_the_api_answers_it() {
    let app = quiet_app().await;
    let s = app.sign_up("admin@export.example", "Export Org").await;
    let token = app.session_token(&s.email, &s.org_id, false).await;
    let mut ids = Vec::new();
    for name in ["a.export.example", "b.export.example"] {
        ids.push(add_domain(&app, &s.key, name).await["id"].clone());
    }
    // A spam rate supplied for one domain's sender requirements (kept and exported).
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/domains/{}/sender-requirements", ids[0].as_str().unwrap()),
        &s.key,
        Some(json!({"provider": "gmail", "spam_rate_pct": 0.08})),
    )
    .await;
    assert_eq!(status, 200);
    let posts = [
        ("/groups", json!({"name": "Brands"})),
        (
            "/invitations",
            json!({"email": "new@export.example", "roles": ["viewer"]}),
        ),
        (
            "/support/tickets",
            json!({"subject": "Hello", "body": "A question"}),
        ),
        (
            "/sources",
            json!({"name": "Our relay", "sending_domains": ["relay.export.example"]}),
        ),
        (
            "/mailbox-connections",
            json!({"name": "Reports box", "provider": "imap", "host": "imap.export.example",
                   "user": "dmarc@export.example", "auth": {"type": "password", "password": "export-secret-pw"}}),
        ),
    ];
    for (path, body) in posts {
        let (status, answer) = call_as(&app, Method::POST, path, &token, Some(body)).await;
        assert!(status.is_success(), "{path}: {answer}");
    }
    let report = crate::retention::dmarc(&app, "a.export.example", "e1", 2);
    mailward_workers::ingest::ingest(&app.stack.state, &report, &for_org(&s), &Limits::default())
        .await
        .unwrap();

    // The day totals come from the identification job each import queues.
    app.clock.advance(time::Duration::seconds(10));
    for _ in 0..1200 {
        let (_, summary) = call(&app, Method::GET, "/report-data/summary", &s.key, None).await;
        if summary["volume"] == 12 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let path = format!("/organizations/{}/exports", s.org_id);
    let (status, refused) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(status, 403, "a person asks, not a key: {refused}");
    let (status, export) = call_as(&app, Method::POST, &path, &token, None).await;
    assert_eq!(status, 202, "{export}");
    assert_eq!(export["status"], "pending");
    let one = format!("{path}/{}", export["id"].as_str().unwrap());
    let mut ready = Value::Null;
    for _ in 0..600 {
        let (status, read) = call_as(&app, Method::GET, &one, &token, None).await;
        assert_eq!(status, 200, "{read}");
        if read["status"] != "pending" {
            ready = read;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(ready["status"], "ready", "{ready}");
    let url = ready["download_url"]
        .as_str()
        .expect("a download link")
        .to_owned();

    // A changed link is refused; the link itself downloads the archive.
    let forged = url.replacen("export", "exporT", 1);
    let res = app.http.get(&forged).send().await.unwrap();
    assert!(res.status().is_client_error(), "{}", res.status());
    let res = app.http.get(&url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let bytes = res.bytes().await.unwrap();
    assert_eq!(Some(bytes.len() as u64), ready["size_bytes"].as_u64());
    let files = unzip(&bytes);

    // Every resource matches the API's answer.
    let api = |path: &'static str| {
        let app = &app;
        let token = token.clone();
        async move {
            let (status, body) = call_as(app, Method::GET, path, &token, None).await;
            assert_eq!(status, 200, "{path}");
            body
        }
    };
    // The organization as MCP's get_account shows it (REST has no read of it).
    let org = json_file(&files, "organization.json");
    assert_eq!(
        (org["id"].as_str(), org["name"].as_str()),
        (Some(s.org_id.as_str()), Some("Export Org"))
    );
    let pairs = [
        ("domains.json", "/domains?per_page=100"),
        ("groups.json", "/groups?per_page=100"),
        ("webhook_endpoints.json", "/webhook-endpoints?per_page=100"),
        ("api_keys.json", "/api-keys?per_page=100"),
        ("activity_log.json", "/activity-log?per_page=100"),
        (
            "tasks.json",
            "/tasks?per_page=100&statuses=open,snoozed,canceled,dismissed,pending,done",
        ),
    ];
    for (file, path) in pairs {
        assert_eq!(json_file(&files, file), api(path).await["data"], "{file}");
    }
    assert_eq!(json_file(&files, "members.json"), api("/members").await);
    let own = json_file(&files, "custom_sources.json");
    assert_eq!(own, api("/sources?origin=CUSTOM").await);
    assert_eq!(own[0]["name"], "Our relay");
    assert_eq!(json_file(&files, "dns_connections.json"), json!([]));
    assert_eq!(
        json_file(&files, "alert_rules.json"),
        api("/alert-rules").await["data"]
    );
    assert!(json_file(&files, "alerts.json").is_array());
    let requirements = json_file(&files, "sender_requirements.json");
    assert_eq!(requirements.as_array().unwrap().len(), 1, "{requirements}");
    assert_eq!(requirements[0]["domain_id"], ids[0]);
    assert_eq!(requirements[0]["spam_rates"][0]["rate_pct"], 0.08);
    // The connection as its route shows it (its status moves with its polls), never its password.
    let boxes = json_file(&files, "mailbox_connections.json");
    assert_eq!(
        boxes[0]["id"],
        api("/mailbox-connections").await["data"][0]["id"]
    );
    assert_eq!(boxes[0]["user"], "dmarc@export.example");
    assert!(!boxes.to_string().contains("export-secret-pw"));
    assert_eq!(
        json_file(&files, "invitations.json"),
        api("/invitations").await
    );
    let tickets = json_file(&files, "support_tickets.json");
    let ticket_id = tickets[0]["id"].as_str().unwrap().to_owned();
    let (_, ticket) = call_as(
        &app,
        Method::GET,
        &format!("/support/tickets/{ticket_id}"),
        &token,
        None,
    )
    .await;
    assert_eq!(tickets[0], ticket);
    assert_eq!(
        json_file(&files, "domains.json").as_array().map(Vec::len),
        Some(2)
    );
    let log = json_file(&files, "activity_log.json");
    assert!(
        log.as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "organization.export_requested")
    );
    let daily = String::from_utf8(files["reports/daily.csv"].clone()).unwrap();
    assert!(daily.starts_with("date,domain,"), "{daily}");
    assert!(daily.contains("a.export.example"), "{daily}");
    assert!(files.contains_key("reports/sources.csv"));

    // A week later the archive is gone, and the export says so instead of offering a link.
    app.clock.advance(time::Duration::days(8));
    let (status, later) = call_as(&app, Method::GET, &one, &token, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (&later["status"], &later["download_url"]),
        (&json!("expired"), &Value::Null)
    );
}
