//! Report ingestion into the local stack: attribution to the organizations watching the policy
//! domain, idempotency across deliveries and encodings, unattributed and refused inputs, rows
//! per UTC day, and the raw delivery kept in object storage.

use crate::admin::quiet_app;
use crate::common::add_domain;
use mailward_domain::Clock as _;
use mailward_reports::Limits;
use mailward_services::reports::ingest::{Status, ingest};

fn fixture(path: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/mailward-reports/tests/fixtures/dmarc-aggregate");
    std::fs::read(root.join(path)).unwrap()
}

#[tokio::test]
async fn reports_import_once_per_watching_organization() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let limits = Limits::default();
    let s = app.sign_up("dmarc@test.example", "Test Net Owner").await;
    let domain = add_domain(&app, &s.key, "test.net").await;

    // Unwatched first: counted as unattributed, nothing imported.
    let other = ingest(state, &fixture("dmarc-report-viewer/acme.xml"), &limits)
        .await
        .unwrap();
    assert_eq!(other[0].status, Status::Unattributed, "{other:?}");

    let first = ingest(state, &fixture("dmarc-report-converter/test.xml"), &limits)
        .await
        .unwrap();
    assert_eq!(
        (first[0].status, first[0].organizations),
        (Status::Imported, 1),
        "{first:?}"
    );
    assert_eq!((first[0].records, first[0].messages), (2, 7));
    // The same report again, plain or packed, changes nothing.
    for again in [
        "dmarc-report-converter/test.xml",
        "dmarc-report-converter/test.xml.gz.gz",
        "dmarc-report-converter/test.xml.zip",
    ] {
        let out = ingest(state, &fixture(again), &limits).await.unwrap();
        assert_eq!(out[0].status, Status::Duplicate, "{again}");
    }
    // Same id, other range: a different report (reporters reuse ids).
    let reused = ingest(state, &fixture("dmarc-report-converter/test2.xml"), &limits)
        .await
        .unwrap();
    assert_eq!(reused[0].status, Status::Imported);

    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let domain_id: uuid::Uuid = domain["id"].as_str().unwrap().parse().unwrap();
    let day = time::macros::date!(2018 - 04 - 20);
    let rows =
        mailward_store::reports::rows_between(state.store.as_ref(), org, domain_id, day, day)
            .await
            .unwrap();
    let volume: u64 = rows.iter().map(|(_, r)| r.volume).sum();
    let passing: u64 = rows.iter().map(|(_, r)| r.dmarc_pass).sum();
    assert_eq!((volume, passing), (7, 5), "{rows:?}");
    assert!(rows.iter().all(|(d, _)| d == "2018-04-20"));

    // A second organization watching the same domain gets its own copy, once.
    let t = app.sign_up("dmarc@second.example", "Second Watcher").await;
    add_domain(&app, &t.key, "test.net").await;
    let out = ingest(
        state,
        &fixture("dmarc-report-converter/test.xml.gz"),
        &limits,
    )
    .await
    .unwrap();
    assert_eq!((out[0].status, out[0].organizations), (Status::Imported, 1));
    let out = ingest(state, &fixture("dmarc-report-converter/test.xml"), &limits)
        .await
        .unwrap();
    assert_eq!(out[0].status, Status::Duplicate);
    let reports = mailward_store::reports::list(state.store.as_ref(), org, domain_id)
        .await
        .unwrap();
    assert_eq!(
        reports.len(),
        2,
        "the first organization's reports are untouched"
    );

    // The raw delivery is kept, content-addressed, and never served.
    let raw = reports[0].raw_key.clone().expect("raw kept");
    assert!(raw.starts_with("reports/raw/"));
    assert!(
        state
            .objects
            .as_ref()
            .unwrap()
            .head(&raw)
            .await
            .unwrap()
            .is_some()
    );

    // Garbage, bombs and failure reports are refused with a reason, never an error.
    let refused = ingest(state, b"unused", &limits).await.unwrap();
    assert_eq!(refused[0].status, Status::Refused);
    assert!(
        refused[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("not a report")
    );
    let tiny = Limits {
        max_decompressed_bytes: 10,
        ..Limits::default()
    };
    let bomb = ingest(state, &fixture("dmarc-report-converter/test.xml.gz"), &tiny)
        .await
        .unwrap();
    assert!(
        bomb[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("decompression limit")
    );
}

/// A one-day report of `domain` for the day before the app's clock.
fn yesterday_report(app: &mailward_api_tests::TestApp, domain: &str, id: &str) -> Vec<u8> {
    let today = app
        .clock
        .now()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let (begin, end) = (today - 86_400, today - 1);
    format!(
        r#"<?xml version="1.0"?><feedback><report_metadata><org_name>Receiver</org_name>
<report_id>{id}</report_id><date_range><begin>{begin}</begin><end>{end}</end></date_range></report_metadata>
<policy_published><domain>{domain}</domain><p>none</p></policy_published>
<record><row><source_ip>192.0.2.10</source_ip><count>30</count><policy_evaluated><disposition>none</disposition>
<dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
<record><row><source_ip>198.51.100.7</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
<record><row><source_ip>203.0.113.9</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
</feedback>"#
    )
    .into_bytes()
}

#[tokio::test]
async fn reports_feed_the_domain_group_and_usage_figures() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let s = app.sign_up("figures@fig.example", "Figures").await;
    let group = crate::admin::group(&app, &s.key, "Brand").await;
    let (status, domain) = crate::admin::call(
        &app,
        reqwest::Method::POST,
        "/domains",
        &s.key,
        Some(serde_json::json!({"url": "fig.example", "group_id": group["id"]})),
    )
    .await;
    assert_eq!(status, 201);
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    let before = crate::admin::get(&app, &path, &s.key).await;
    assert_eq!(before["last_14_days_volume"], 0);
    assert_eq!(before["monitoring_since"], serde_json::Value::Null);

    let out = ingest(
        state,
        &yesterday_report(&app, "fig.example", "r1"),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out[0].status, Status::Imported, "{out:?}");
    let after = crate::admin::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 50);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 80.0);
    assert_eq!(after["last_14_days_spf_pass_pct"], 80.0);
    assert_eq!(after["last_14_days_dkim_pass_pct"], 60.0);
    let yesterday = app.clock.now().date().previous_day().unwrap();
    assert_eq!(
        after["monitoring_since"],
        mailward_store::reports::day_string(yesterday)
    );

    let groups = crate::admin::get(&app, "/groups?expand[]=domains", &s.key).await;
    assert_eq!(groups["data"][0]["domains"]["last_14_days_volume"], 50);
    assert_eq!(
        groups["data"][0]["domains"]["last_14_days_dmarc_pass_pct"],
        80.0
    );
    let usage = crate::admin::get(&app, "/usage?expand[]=aligned_messages", &s.key).await;
    // Yesterday may fall in the previous month; then this month has none yet.
    let same_month = yesterday.month() == app.clock.now().date().month();
    assert_eq!(usage["aligned_messages"], if same_month { 40 } else { 0 });
    let sorted =
        crate::admin::get(&app, "/domains?sort=last_14_days_volume&order=desc", &s.key).await;
    assert_eq!(sorted["data"][0]["url"], "fig.example");
}

#[tokio::test]
async fn the_report_window_slides_with_the_sweep() {
    // A DNS fixture answers the sweep at once (the default resolver address never answers).
    let (_dns, app) =
        crate::common::app_on(vec![mailward_dns_fixture::Zone::new("slide.example")]).await;
    let state = &app.stack.state;
    let s = app.sign_up("slide@slide.example", "Slide").await;
    let domain = add_domain(&app, &s.key, "slide.example").await;
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    ingest(
        state,
        &yesterday_report(&app, "slide.example", "s1"),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        crate::admin::get(&app, &path, &s.key).await["last_14_days_volume"],
        50
    );
    // Fifteen days later the report has left the window; the sweep notices.
    app.clock.advance(time::Duration::days(15));
    mailward_services::sweep::sweep_now(state).await.unwrap();
    let after = crate::admin::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 0, "{after}");
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 0.0);
    assert!(
        after["monitoring_since"].is_string(),
        "the first report day stays"
    );
}
