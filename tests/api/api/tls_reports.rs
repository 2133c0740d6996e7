//! SMTP TLS reports (RFC 8460; SPEC §4.4 TLS-RPT rows): imported reports listed with their
//! sorts, one report with its failure details, the daily chart and the summary by result type.

use crate::common::{call, get, quiet_app};
use mailward_api_tests::TestApp;
use mailward_reports::Limits;
use mailward_workers::ingest::{Status, ingest};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;

/// A one-day report of `domain` from `reporter`, `days_ago` days before the clock's day.
fn report(
    app: &TestApp,
    reporter: &str,
    id: &str,
    days_ago: i64,
    ok: u64,
    failures: &[(&str, u64)],
) -> Vec<u8> {
    let start = crate::common::today_start(app) - days_ago * 86_400;
    let at = |t: i64| {
        time::OffsetDateTime::from_unix_timestamp(t)
            .unwrap()
            .format(&Rfc3339)
            .unwrap()
    };
    let failed: u64 = failures.iter().map(|(_, n)| n).sum();
    let details: Vec<Value> = failures
        .iter()
        .map(|(kind, n)| {
            json!({"result-type": kind, "sending-mta-ip": "192.0.2.1",
                   "receiving-mx-hostname": "mx.tls.example", "failed-session-count": n})
        })
        .collect();
    json!({
        "organization-name": reporter,
        "date-range": {"start-datetime": at(start), "end-datetime": at(start + 86_399)},
        "contact-info": "tlsrpt@reporter.example",
        "report-id": id,
        "policies": [{
            "policy": {"policy-type": "sts", "policy-string": ["version: STSv1", "mode: enforce"],
                       "policy-domain": "tls.example", "mx-host": ["mx.tls.example"]},
            "summary": {"total-successful-session-count": ok, "total-failure-session-count": failed},
            "failure-details": details
        }]
    })
    .to_string()
    .into_bytes()
}

#[tokio::test]
async fn tls_reports_are_listed_charted_and_summarised_by_result_type() {
    let app = quiet_app().await;
    let s = app.sign_up("tls@tls.example", "TLS").await;
    let id = crate::common::add_domain(&app, &s.key, "tls.example").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let state = &app.stack.state;
    for bytes in [
        report(
            &app,
            "Google Inc.",
            "g-1",
            1,
            90,
            &[("certificate-expired", 6), ("sts-policy-fetch-error", 4)],
        ),
        report(&app, "Microsoft Corporation", "m-3", 3, 40, &[]),
        // A type RFC 8460 does not define is kept under its own name.
        report(&app, "Acme Mail", "a-2", 2, 0, &[("brand-new-failure", 2)]),
    ] {
        let out = ingest(
            state,
            &bytes,
            &crate::common::for_org(&s),
            &Limits::default(),
        )
        .await
        .unwrap();
        assert_eq!(out[0].status, Status::Imported, "{out:?}");
    }
    let again = ingest(
        state,
        &report(&app, "Google Inc.", "g-1", 1, 90, &[]),
        &crate::common::for_org(&s),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        again[0].status,
        Status::Duplicate,
        "same reporter, id, domain and dates"
    );

    let base = format!("/domains/{id}/tls-reports");
    let list = get(&app, &base, &s.key).await;
    assert_eq!(list["page_info"]["total_count"], 3);
    let reporters: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["organization_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        reporters,
        ["Google Inc.", "Acme Mail", "Microsoft Corporation"],
        "newest day first"
    );
    assert_eq!(list["data"][0]["total_failure"], 10);
    assert_eq!(list["data"][0]["policy_types"], json!(["sts"]));
    assert!(
        list["data"][0].get("policies").is_none(),
        "no details in the list"
    );
    let by_failure = get(
        &app,
        &format!("{base}?sort=total_failure&order=asc&per_page=1"),
        &s.key,
    )
    .await;
    assert_eq!(
        by_failure["data"][0]["organization_name"],
        "Microsoft Corporation"
    );
    assert_eq!(by_failure["page_info"]["has_more"], true);
    let by_name = get(
        &app,
        &format!("{base}?sort=organization_name&order=asc"),
        &s.key,
    )
    .await;
    assert_eq!(by_name["data"][0]["organization_name"], "Acme Mail");

    let one_id = list["data"][0]["id"].as_str().unwrap();
    let one = get(&app, &format!("{base}/{one_id}"), &s.key).await;
    let details = one["policies"][0]["failure_details"].as_array().unwrap();
    assert_eq!(details.len(), 2);
    assert_eq!(
        details[0]["result_type"], "certificate-expired",
        "most frequent first"
    );
    assert_eq!(details[0]["failed_session_count"], 6);
    assert_eq!(details[0]["receiving_mx_hostname"], "mx.tls.example");
    assert_eq!(one["policies"][0]["policy_domain"], "tls.example");
    assert_eq!(one["policies"][0]["failure_details_truncated"], false);

    let chart = get(&app, &format!("{base}/chart?period=last_7_days"), &s.key).await;
    assert_eq!(chart["labels"].as_array().unwrap().len(), 7);
    assert_eq!(chart["successful"], json!([0, 0, 0, 0, 40, 0, 90]));
    assert_eq!(chart["failed"], json!([0, 0, 0, 0, 0, 2, 10]));
    assert_eq!(chart["labels"][6], chart["date_to"]);

    let summary = get(&app, &format!("{base}/summary"), &s.key).await;
    assert_eq!(summary["reports"], 3);
    assert_eq!(
        (
            summary["total_successful"].as_u64(),
            summary["total_failure"].as_u64()
        ),
        (Some(130), Some(12))
    );
    assert_eq!(summary["failure_pct"], 8.45);
    let types = summary["failures_by_result_type"].as_array().unwrap();
    assert_eq!(
        types.len(),
        12,
        "the eleven RFC 8460 types, then the unknown one"
    );
    assert_eq!(types[0]["result_type"], "starttls-not-supported");
    let count = |t: &str| {
        types.iter().find(|x| x["result_type"] == t).unwrap()["failed_session_count"].as_u64()
    };
    assert_eq!(count("certificate-expired"), Some(6));
    assert_eq!(count("sts-policy-fetch-error"), Some(4));
    assert_eq!(count("brand-new-failure"), Some(2));
    assert_eq!(summary["reporters"][0]["organization_name"], "Google Inc.");

    // Bad input names the field; nothing of it is visible to another organization.
    for (path, param) in [
        (format!("{base}?sort=size"), "sort"),
        (format!("{base}?order=up"), "order"),
        (format!("{base}?per_page=0"), "per_page"),
        (format!("{base}/chart?period=last_2_days"), "period"),
        (format!("{base}/summary?period=forever"), "period"),
        (format!("{base}/not-a-uuid"), "report_id"),
    ] {
        let (status, err) = call(&app, Method::GET, &path, &s.key, None).await;
        assert_eq!(
            (status, err["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{path}: {err}"
        );
    }
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("{base}/{}", uuid::Uuid::new_v4()),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let other = app.sign_up("x@other-tls.example", "Other").await;
    for path in [
        base.clone(),
        format!("{base}/{one_id}"),
        format!("{base}/summary"),
    ] {
        let (status, _) = call(&app, Method::GET, &path, &other.key, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn the_tls_fixtures_import_with_their_details() {
    let app = quiet_app().await;
    let s = app.sign_up("fix@random.net", "Fixtures").await;
    let id = crate::common::add_domain(&app, &s.key, "random.net").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/mailward-reports/tests/fixtures/tls-rpt/dmarc-report-viewer/microsoft.json"
    ))
    .unwrap();
    let out = ingest(
        &app.stack.state,
        &bytes,
        &crate::common::for_org(&s),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out[0].status, Status::Imported);
    let list = get(&app, &format!("/domains/{id}/tls-reports"), &s.key).await;
    assert_eq!(
        list["data"][0]["organization_name"],
        "Microsoft Corporation"
    );
    assert_eq!(list["data"][0]["total_successful"], 4);
    assert_eq!(list["data"][0]["policy_types"], json!(["sts", "tlsa"]));
    assert_eq!(list["data"][0]["date_start"], "2025-05-23T00:00:00Z");
    let one = get(
        &app,
        &format!(
            "/domains/{id}/tls-reports/{}",
            list["data"][0]["id"].as_str().unwrap()
        ),
        &s.key,
    )
    .await;
    assert_eq!(one["policies"].as_array().unwrap().len(), 2);
}
