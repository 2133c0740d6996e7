//! The scheduled report end to end: a group's monthly report set up through the API, sent by
//! the schedule when its day comes, with a PDF whose text (poppler's `pdftotext`) gives the
//! API's own figures for the same window, the group's branding and logo, and nothing of the
//! domains outside the group.

use crate::common::{identify_now, import_for};
use mailward_api_tests::receiver::{Receiver, Reply};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_domain::Clock as _;
use mailward_domain::scheduled_reports::Cadence;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

async fn call(
    app: &TestApp,
    org: &SignedUp,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = app.with_key(method, path, &org.key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A one-day report for yesterday: `pass` messages passing DMARC and `fail` failing.
fn report(app: &TestApp, domain: &str, id: &str, pass: u64, fail: u64) -> Vec<u8> {
    let today = crate::common::today_start(app);
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id><date_range><begin>{}</begin>\
<end>{}</end></date_range></report_metadata><policy_published><domain>{domain}</domain><p>none</p></policy_published>\
<record><row><source_ip>192.0.2.10</source_ip><count>{pass}</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>\
<record><row><source_ip>203.0.113.{}</source_ip><count>{fail}</count><policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record></feedback>",
        today - 86_400,
        today - 1,
        fail % 200 + 1
    )
    .into_bytes()
}

/// The PDF attached to a mail.
fn attached_pdf(mail: &str) -> Vec<u8> {
    use base64::Engine as _;
    let part = mail
        .split("Content-Type: application/pdf")
        .nth(1)
        .expect("a PDF part");
    let body = part.split("\r\n\r\n").nth(1).unwrap();
    let encoded: String = body.split("\r\n--").next().unwrap().split("\r\n").collect();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap()
}

async fn mails_to(app: &TestApp, to: &str, count: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got: Vec<String> = app
            .mails()
            .into_iter()
            .filter(|m| m.contains(&format!("To: {to}\r\n")))
            .collect();
        if got.len() >= count {
            return got;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} of {count} mails to {to}",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_groups_monthly_report_arrives_with_the_apis_figures_in_its_pdf() {
    let certs = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(certs.path()).await;
    let ca = receiver.ca_path.clone();
    let app = TestApp::start_with(|s| {
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca);
    })
    .await;
    // Two days before the next 1st: yesterday's reports are in that day's last_30_days.
    let first = Cadence::Monthly.next_send(app.clock.now());
    let lead = first - app.clock.now() - time::Duration::days(2);
    if lead > time::Duration::ZERO {
        app.clock.advance(lead);
    }
    let org = app.sign_up("msp@acme.example", "Acme IT").await;
    let (status, group) = call(
        &app,
        &org,
        Method::POST,
        "/groups",
        Some(json!({"name": "Customer A"})),
    )
    .await;
    assert_eq!(status, 201, "{group}");
    let group_id = group["id"].as_str().unwrap().to_owned();
    let mut ids = Vec::new();
    for (name, pass, fail) in [
        ("a.example", 900, 100),
        ("b.example", 50, 50),
        ("c.example", 0, 0),
    ] {
        let (status, d) = call(
            &app,
            &org,
            Method::POST,
            "/domains",
            Some(json!({"url": name, "group_id": group_id})),
        )
        .await;
        assert_eq!(status, 201, "{d}");
        let id = d["id"].as_str().unwrap().to_owned();
        if pass + fail > 0 {
            import_for(
                &app,
                &org,
                &report(&app, name, &format!("r-{name}"), pass, fail),
            )
            .await;
            identify_now(&app, &org, &id).await;
        }
        ids.push((name, id));
    }
    let (_, outside) = call(
        &app,
        &org,
        Method::POST,
        "/domains",
        Some(json!({"url": "outside.example"})),
    )
    .await;
    import_for(&app, &org, &report(&app, "outside.example", "r-out", 5, 5)).await;

    receiver.script([Reply::Body(
        "image/png".into(),
        include_bytes!("../fixtures/logo.png").to_vec(),
    )]);
    let (status, settings) = call(
        &app,
        &org,
        Method::POST,
        "/report-settings",
        Some(json!({
            "scope": {"type": "group", "group_id": group_id},
            "cadence": "monthly",
            "recipients": ["customer-a@client.example"],
            "branding": {"name": "Acme IT for Customer A", "logo_url": receiver.url("/logo.png"), "footer": "Questions? help@acme.example"}
        })),
    )
    .await;
    assert_eq!(status, 201, "{settings}");
    assert_eq!(settings["period"], "last_30_days");
    let id = settings["id"].as_str().unwrap().to_owned();
    let (status, again) = call(&app, &org, Method::POST, "/report-settings", Some(json!({"scope": {"type": "group", "group_id": group_id}, "cadence": "weekly", "recipients": ["x@client.example"]}))).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (409, Some("report_settings_exist"))
    );
    for (body, param) in [
        (
            json!({"cadence": "daily", "recipients": ["a@b.example"]}),
            "cadence",
        ),
        (json!({"cadence": "weekly", "recipients": []}), "recipients"),
        (
            json!({"cadence": "weekly", "recipients": ["nope"]}),
            "recipients",
        ),
        (
            json!({"cadence": "weekly", "recipients": ["a@b.example"], "scope": {"type": "group"}}),
            "scope.group_id",
        ),
        (
            json!({"cadence": "weekly", "recipients": ["a@b.example"], "branding": {"logo_url": "http://logo.example/x.png"}}),
            "branding.logo_url",
        ),
    ] {
        let (status, error) = call(
            &app,
            &org,
            Method::POST,
            "/report-settings",
            Some(body.clone()),
        )
        .await;
        assert_eq!(
            (status, error["param"].as_str()),
            (400, Some(param)),
            "{body} → {error}"
        );
    }

    // The day comes: the hourly schedule queues it, the queue worker sends it once.
    app.clock
        .advance(first - app.clock.now() + time::Duration::minutes(5));
    assert_eq!(
        mailward_workers::scheduled_reports::queue_due(&app.stack.state)
            .await
            .unwrap(),
        1
    );
    let mail = mails_to(&app, "customer-a@client.example", 1)
        .await
        .remove(0);
    assert!(
        mail.contains("Subject: Acme IT for Customer A: monthly email authentication report"),
        "{mail}"
    );
    assert!(mail.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"));
    let pdf = attached_pdf(&mail);
    assert!(pdf.starts_with(b"%PDF-"));
    let raw = String::from_utf8_lossy(&pdf);
    assert!(
        raw.contains("/Subtype /Image") || raw.contains("/Subtype/Image"),
        "the logo is drawn"
    );

    let text = crate::prospecting::pdf_text(&pdf);
    if let Some(text) = &text {
        assert!(text.contains("Acme IT for Customer A"), "{text}");
        assert!(text.contains("Questions? help@acme.example"), "{text}");
        assert!(!text.contains("outside.example"), "{text}");
        let mut total = 0;
        for (name, domain_id) in &ids {
            let (_, summary) = call(
                &app,
                &org,
                Method::GET,
                &format!("/domains/{domain_id}/reports/summary?period=last_30_days"),
                None,
            )
            .await;
            let volume = summary["volume"].as_u64().unwrap();
            let pct = summary["dmarc_pass_pct"].as_f64().unwrap();
            total += volume;
            assert!(text.contains(name), "{name}: {text}");
            assert!(
                text.contains(&format!("Messages: {volume} (")),
                "{name} {volume}: {text}"
            );
            assert!(
                text.contains(&format!("DMARC pass: {pct}% (")),
                "{name} {pct}: {text}"
            );
            let (_, d) = call(
                &app,
                &org,
                Method::GET,
                &format!("/domains/{domain_id}"),
                None,
            )
            .await;
            assert!(text.contains(&format!("Score {} (", d["score"])), "{text}");
        }
        assert_eq!(total, 1100);
        assert!(
            text.contains("3 domains · 1100 messages · 86.36% passed DMARC"),
            "{text}"
        );
        assert!(text.contains("first report"), "{text}");
        assert!(text.contains("Rollout: Stage"), "{text}");
        assert!(text.contains("Open tasks: Critical"), "{text}");
    }
    if let Ok(dir) = std::env::var("MAILWARD_KEEP_REPORT_PDF") {
        std::fs::write(
            std::path::Path::new(&dir).join("scheduled-report.pdf"),
            &pdf,
        )
        .unwrap();
    }

    // Sent once for its window; the schedule moved on to the next 1st.
    assert_eq!(
        mailward_workers::scheduled_reports::queue_due(&app.stack.state)
            .await
            .unwrap(),
        0
    );
    let (_, after) = call(
        &app,
        &org,
        Method::GET,
        &format!("/report-settings/{id}"),
        None,
    )
    .await;
    assert!(after["last_sent_at"].is_string(), "{after}");
    assert!(after["last_period"].as_str().unwrap().contains(".."));
    let next = time::OffsetDateTime::parse(
        after["next_send_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(next.day(), 1);
    assert!(next > app.clock.now());

    // "Send now" mails again at once; a member's key of another organization sees nothing.
    let (status, queued) = call(
        &app,
        &org,
        Method::POST,
        &format!("/report-settings/{id}/send"),
        None,
    )
    .await;
    assert_eq!((status, queued["status"].as_str()), (202, Some("queued")));
    let mails = mails_to(&app, "customer-a@client.example", 2).await;
    assert!(mails[1].contains("Content-Type: application/pdf"));

    // The recipient's one-click link takes that address off this report alone: the report,
    // left without recipients, is off; the organization's switch stays on; a forged address
    // in the link is refused.
    let path = crate::common::unsubscribe_path(&mails[1]);
    let forged = path.replace(
        &"customer-a@client.example"
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
        &"someone@client.example"
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
    );
    assert_ne!(forged, path);
    let refused = app.request(Method::POST, &forged).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    let done: Value = app
        .request(Method::POST, &path)
        .header("accept", "application/json")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(done["recipient"], "customer-a@client.example", "{done}");
    assert_eq!(done["setting"], "scheduled_reports");
    let (_, after) = call(
        &app,
        &org,
        Method::GET,
        &format!("/report-settings/{id}"),
        None,
    )
    .await;
    assert_eq!(after["recipients"], json!([]));
    assert_eq!(after["enabled"], false);
    // (An empty update answers the organization.)
    let (status, organization) = call(
        &app,
        &org,
        Method::POST,
        &format!("/organizations/{}", org.org_id),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{organization}");
    assert_eq!(
        organization["settings"]["email_notifications"]["scheduled_reports"], true,
        "{organization}"
    );

    let other = app.sign_up("other@else.example", "Else").await;
    let res = app
        .with_key(Method::GET, &format!("/report-settings/{id}"), &other.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let _ = outside;
}
