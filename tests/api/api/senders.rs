//! Who sends as a domain (SPEC §2.6 DomainSource, §3 moves): senders identified from imported
//! aggregate reports (catalogue, forward-confirmed reverse DNS, bare addresses), their moves,
//! and the sender tasks they open and close.

use crate::common::call;
use crate::common::{add_domain, get_json};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_domain::Clock as _;
use mailward_reports::Limits;
use mailward_workers::ingest::ingest;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const DOMAIN: &str = "senders.example";

fn zones() -> Vec<Zone> {
    vec![
        Zone::new("test"),
        Zone::new(DOMAIN).txt("@", "v=spf1 include:sendgrid.net -all"),
        // 203.0.113.9 names itself out1.hosting.example, which points back: forward-confirmed.
        Zone::new("113.0.203.in-addr.arpa").ptr("9", "out1.hosting.example."),
        Zone::new("hosting.example").a("out1", "203.0.113.9"),
        // 198.51.100.7 claims to be SendGrid, but the name does not point back: ignored.
        Zone::new("100.51.198.in-addr.arpa").ptr("7", "o1.sendgrid.net."),
    ]
}

/// Yesterday's report: SendGrid signing (and DKIM-aligned through the domain's own `s1`
/// signature, SPF not aligned), a forward-confirmed host failing everything, a spoofed PTR.
fn report(app: &TestApp, id: &str) -> Vec<u8> {
    let today = crate::common::today_start(app);
    format!(
        r#"<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id>
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata>
<policy_published><domain>{DOMAIN}</domain><p>none</p></policy_published>
<record><row><source_ip>192.0.2.10</source_ip><count>40</count><policy_evaluated><disposition>none</disposition>
<dkim>pass</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{DOMAIN}</header_from>
<envelope_from>bounces.sendgrid.net</envelope_from></identifiers><auth_results>
<dkim><domain>{DOMAIN}</domain><selector>s1</selector><result>pass</result></dkim>
<dkim><domain>sendgrid.net</domain><selector>smtpapi</selector><result>pass</result></dkim>
<spf><domain>bounces.sendgrid.net</domain><result>pass</result></spf></auth_results></record>
<record><row><source_ip>203.0.113.9</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{DOMAIN}</header_from></identifiers>
<auth_results><spf><domain>{DOMAIN}</domain><result>fail</result></spf></auth_results></record>
<record><row><source_ip>198.51.100.7</source_ip><count>5</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{DOMAIN}</header_from></identifiers>
<auth_results><spf><domain>{DOMAIN}</domain><result>fail</result></spf></auth_results></record>
</feedback>"#,
        today - 86_400,
        today - 1
    )
    .into_bytes()
}

/// The domain's senders once identification (a queued job) has run for `expected` of them.
async fn senders_when(app: &TestApp, key: &str, id: &str, expected: usize) -> Vec<Value> {
    // The job waits a few seconds (a burst of reports is read once): move the clock past it.
    app.clock.advance(time::Duration::seconds(10));
    for _ in 0..1200 {
        // up to a minute: SQS delays run in real time on a loaded machine
        let list = get_json(app, Method::GET, &format!("/domains/{id}/sources"), key).await;
        let list = list.as_array().unwrap().clone();
        if list.len() == expected {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("senders were not identified");
}

async fn sender_tasks(app: &TestApp, key: &str) -> Vec<(String, String)> {
    let page = get_json(
        app,
        Method::GET,
        "/tasks?statuses=open,done&per_page=100",
        key,
    )
    .await;
    let mut out: Vec<(String, String)> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["type"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .filter(|(t, _)| {
            [
                "confirm_source",
                "source_failing_spf",
                "source_failing_dkim",
                "cleanup_sender_records",
                "review_unused_sender",
                "dkim_selector_not_imported",
            ]
            .contains(&t.as_str())
        })
        .collect();
    out.sort();
    out
}

fn by_name<'a>(list: &'a [Value], key: &str, value: &str) -> &'a Value {
    list.iter()
        .find(|s| s[key] == value)
        .unwrap_or_else(|| panic!("no sender with {key} {value}: {list:?}"))
}

#[tokio::test]
async fn reports_name_the_senders_and_their_tasks_follow_a_persons_moves() {
    let dns = FixtureServer::start(zones()).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
        // The test edits DNS; the resolver must not remember the old SPF record.
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
    })
    .await;
    let s = app.sign_up("owner@senders.example", "Senders").await;
    let id = add_domain(&app, &s.key, DOMAIN).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ingest(
        &app.stack.state,
        &report(&app, "r-1"),
        &crate::common::for_org(&s),
        &Limits::default(),
    )
    .await
    .unwrap();
    let list = senders_when(&app, &s.key, &id, 3).await;

    let sendgrid = by_name(&list, "sending_domain", "sendgrid.net");
    assert_eq!(sendgrid["is_known"], true);
    assert_eq!(sendgrid["spf_value"], "include:sendgrid.net");
    assert_eq!(sendgrid["dkim_selectors"], json!(["s1"]));
    assert_eq!(sendgrid["confirmation_status"], "requires_confirmation");
    assert_eq!(sendgrid["confirmed_at"], Value::Null);
    assert_eq!(
        sendgrid["totals"],
        json!({"compliant": 40, "non_compliant": 0, "forwarded": 0, "unknown": 0})
    );
    assert_eq!(sendgrid["last_spf_aligned_at"], Value::Null);
    let yesterday =
        mailward_store::reports::day_string(app.clock.now().date().previous_day().unwrap());
    assert_eq!(sendgrid["last_seen_at"], yesterday.as_str());

    let host = by_name(&list, "sending_domain", "hosting.example");
    assert_eq!(host["is_known"], false);
    assert_eq!(host["source_id"], Value::Null);
    assert_eq!(host["totals"]["unknown"], 10);
    let spoofed = by_name(&list, "source_name", "198.51.100.7");
    assert_eq!(
        spoofed["is_known"], false,
        "a PTR that does not point back names nobody"
    );
    assert_eq!(spoofed["sending_domain"], Value::Null);

    // Only the plausible sender (recognised) is offered for confirmation; strangers failing
    // everything are spoofing, not senders to confirm.
    // The sender tasks follow the senders in the same job: wait for them.
    let mut tasks = Vec::new();
    for _ in 0..1200 {
        // up to a minute: SQS delays run in real time on a loaded machine
        tasks = sender_tasks(&app, &s.key).await;
        if !tasks.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tasks, [("confirm_source".to_owned(), "open".to_owned())]);

    // Enforcing now would stop only the strangers' mail.
    let impact_path = format!("/domains/{id}/reports/enforcement-impact");
    let impact = get_json(&app, Method::GET, &impact_path, &s.key).await;
    assert_eq!(
        impact["policy"], "quarantine",
        "the next policy up by default"
    );
    assert_eq!(impact["current_policy"], "none");
    assert_eq!(
        (
            impact["volume"].as_u64(),
            impact["legitimate_volume"].as_u64(),
            impact["legitimate_affected"].as_u64(),
            impact["unknown_affected"].as_u64(),
        ),
        (Some(55), Some(40), Some(0), Some(15)),
        "{impact}"
    );
    assert_eq!(impact["safe"], true);
    let listed = impact["senders"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "only senders with affected mail: {impact}");
    assert_eq!(listed[0]["affected"], 10);
    assert_eq!(
        listed[0]["reasons"],
        json!(["spf_not_aligned", "dkim_not_aligned"])
    );
    let (status, err) = call(
        &app,
        Method::GET,
        &format!("{impact_path}?policy=maybe"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(
        (status, err["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("policy"))
    );

    // Importing the same report again changes nothing.
    ingest(
        &app.stack.state,
        &report(&app, "r-1"),
        &crate::common::for_org(&s),
        &Limits::default(),
    )
    .await
    .unwrap();
    let again = senders_when(&app, &s.key, &id, 3).await;
    assert_eq!(
        by_name(&again, "sending_domain", "sendgrid.net")["totals"]["compliant"],
        40
    );

    // Confirming through the task: done, the sender confirmed, and its SPF failure now counts.
    let page = get_json(&app, Method::GET, "/tasks", &s.key).await;
    let confirm = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "confirm_source")
        .unwrap()
        .clone();
    // Its sender, expanded, carries every SPEC §2.3 field of `source`, as documented.
    let path = format!("/tasks/{}?expand[]=source", confirm["id"].as_str().unwrap());
    let expanded = get_json(&app, Method::GET, &path, &s.key).await;
    let source = &expanded["source"];
    for field in [
        "id",
        "name",
        "homepage",
        "documentation",
        "category",
        "forwarding_type",
        "spf_support",
        "spf_supported_methods",
        "spf_support_options",
        "dkim_support",
        "dkim_discovery_selectors",
    ] {
        assert!(source.get(field).is_some(), "{field} missing: {expanded}");
    }
    for page in ["spf", "dkim", "combined"] {
        assert!(source["documentation"].get(page).is_some(), "{source}");
    }
    let doc = get_json(&app, Method::GET, "/swagger.json", &s.key).await;
    let schema = crate::openapi::response_schema(&doc, "/tasks/{id}", "get", 200);
    let departures = crate::openapi::departures(&doc, &schema, &expanded, "$");
    assert!(departures.is_empty(), "{departures:?}");
    let (status, task) = call(
        &app,
        Method::POST,
        &format!("/tasks/{}", confirm["id"].as_str().unwrap()),
        &s.key,
        Some(json!({"confirm_source": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{task}");
    assert_eq!(task["status"], "done");
    let list = get_json(&app, Method::GET, &format!("/domains/{id}/sources"), &s.key).await;
    let sendgrid = by_name(list.as_array().unwrap(), "sending_domain", "sendgrid.net").clone();
    assert_eq!(sendgrid["confirmation_status"], "confirmed");
    assert!(sendgrid["confirmed_at"].is_string());
    assert_eq!(
        sender_tasks(&app, &s.key).await,
        [
            ("confirm_source".to_owned(), "done".to_owned()),
            ("source_failing_spf".to_owned(), "open".to_owned()),
        ]
    );

    // Discarding it: its failing task closes, and the SPF record still authorizing it opens
    // the cleanup.
    let sid = sendgrid["id"].as_str().unwrap();
    let path = format!("/domains/{id}/sources/{sid}");
    let (status, moved) = call(
        &app,
        Method::POST,
        &path,
        &s.key,
        Some(json!({"confirmation_status": "discarded"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["confirmation_status"], "discarded");
    assert_eq!(moved["confirmed_at"], Value::Null);
    assert_eq!(
        sender_tasks(&app, &s.key).await,
        [
            ("cleanup_sender_records".to_owned(), "open".to_owned()),
            ("confirm_source".to_owned(), "done".to_owned()),
            ("source_failing_spf".to_owned(), "done".to_owned()),
        ]
    );
    // The include removed from SPF: the cleanup resolves on the next identification.
    dns.set_txt(DOMAIN, "v=spf1 -all").unwrap();
    ingest(
        &app.stack.state,
        &report(&app, "r-2"),
        &crate::common::for_org(&s),
        &Limits::default(),
    )
    .await
    .unwrap();
    app.clock.advance(time::Duration::seconds(10));
    let mut resolved = false;
    for _ in 0..1200 {
        // up to a minute: SQS delays run in real time on a loaded machine
        let tasks = sender_tasks(&app, &s.key).await;
        if tasks.contains(&("cleanup_sender_records".to_owned(), "done".to_owned())) {
            resolved = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        resolved,
        "the cleanup task resolves once SPF no longer authorizes the sender"
    );
    let list = get_json(&app, Method::GET, &format!("/domains/{id}/sources"), &s.key).await;
    let sendgrid = by_name(list.as_array().unwrap(), "sending_domain", "sendgrid.net");
    assert_eq!(
        sendgrid["totals"]["compliant"], 80,
        "a second report adds to the totals"
    );
    assert_eq!(
        sendgrid["confirmation_status"], "discarded",
        "a person's decision stands"
    );

    // A person vouching for the failing host makes enforcement unsafe, and the summary holds.
    let host_id = by_name(
        list.as_array().unwrap(),
        "sending_domain",
        "hosting.example",
    )["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/domains/{id}/sources/{host_id}"),
        &s.key,
        Some(json!({"confirmation_status": "confirmed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let impact = get_json(
        &app,
        Method::GET,
        &format!("{impact_path}?policy=reject"),
        &s.key,
    )
    .await;
    assert_eq!(impact["policy"], "reject");
    assert_eq!(impact["legitimate_affected"], 20, "{impact}");
    assert_eq!(impact["safe"], false);
    assert_eq!(impact["senders"][0]["sending_domain"], "hosting.example");
    assert_eq!(impact["senders"][0]["legitimate"], true);
    let summary = get_json(
        &app,
        Method::GET,
        &format!("/domains/{id}/reports/summary?period=last_30_days"),
        &s.key,
    )
    .await;
    assert_eq!(summary["recommendation"]["status"], "hold", "{summary}");
    assert_eq!(summary["next_action"]["code"], "fix_failing_senders");
    // So do the plan's enforcement step and the change preview of an enforcing record.
    let plan = get_json(&app, Method::GET, &format!("/domains/{id}/plan"), &s.key).await;
    let step = plan["stages"][2]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["key"] == "dmarc-quarantine")
        .unwrap_or_else(|| panic!("{plan}"))
        .clone();
    assert!(
        step["description"]
            .as_str()
            .unwrap()
            .contains("would stop 20 messages of legitimate senders"),
        "{step}"
    );
    let preview_path = format!("/domains/{id}/preview");
    let (status, preview) = call(
        &app,
        Method::POST,
        &preview_path,
        &s.key,
        Some(json!({"dmarc": "v=DMARC1; p=reject"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["enforcement_impact"]["policy"], "reject");
    assert_eq!(preview["enforcement_impact"]["legitimate_affected"], 20);
    let (_, preview) = call(
        &app,
        Method::POST,
        &preview_path,
        &s.key,
        Some(json!({"dmarc": "v=DMARC1; p=none"})),
    )
    .await;
    assert_eq!(
        preview["enforcement_impact"],
        Value::Null,
        "p=none enforces nothing"
    );

    // Bad input names the field; other domains' senders are not found.
    for (body, param) in [
        (
            json!({"confirmation_status": "maybe"}),
            "confirmation_status",
        ),
        (json!({}), "confirmation_status"),
        (json!({"confirmation_status": "confirmed", "x": 1}), "x"),
    ] {
        let (status, err) = call(&app, Method::POST, &path, &s.key, Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
        assert_eq!(err["param"], param, "{err}");
    }
    let (status, err) = call(
        &app,
        Method::POST,
        &format!("/domains/{id}/sources/not-a-uuid"),
        &s.key,
        Some(json!({"confirmation_status": "confirmed"})),
    )
    .await;
    assert_eq!(
        (status, err["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("source_id"))
    );
    let other = app.sign_up("other@other-senders.example", "Other").await;
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/domains/{id}/sources"),
        &other.key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &app,
        Method::POST,
        &path,
        &other.key,
        Some(json!({"confirmation_status": "confirmed"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
