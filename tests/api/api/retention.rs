//! The data lifecycle (`mailward_workers::retention`): the clock moves and what each plan no
//! longer keeps is deleted from the store and the bucket, kind by kind, on both adapter sets.

use crate::common::{add_domain, for_org, quiet_app, today_start};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_domain::store::{Query, query_all};
use mailward_reports::Limits;
use mailward_workers::ingest::ingest;
use serde_json::json;
use std::time::Duration;
use time::format_description::well_known::Rfc3339;

/// An aggregate report of `domain` for the day `days_ago` before the clock's day.
pub fn dmarc(app: &TestApp, domain: &str, id: &str, days_ago: i64) -> Vec<u8> {
    let begin = today_start(app) - days_ago * 86_400;
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id>\
<date_range><begin>{begin}</begin><end>{}</end></date_range></report_metadata>\
<policy_published><domain>{domain}</domain><p>none</p></policy_published>\
<record><row><source_ip>192.0.2.7</source_ip><count>12</count><policy_evaluated>\
<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>\
<identifiers><header_from>{domain}</header_from></identifiers></record></feedback>",
        begin + 86_399
    )
    .into_bytes()
}

/// A TLS report of `domain` for the day `days_ago` before the clock's day.
fn tls(app: &TestApp, domain: &str, id: &str, days_ago: i64) -> Vec<u8> {
    let start = today_start(app) - days_ago * 86_400;
    let at = |t: i64| {
        time::OffsetDateTime::from_unix_timestamp(t)
            .unwrap()
            .format(&Rfc3339)
            .unwrap()
    };
    json!({
        "organization-name": "Receiver",
        "date-range": {"start-datetime": at(start), "end-datetime": at(start + 86_399)},
        "contact-info": "tlsrpt@receiver.example",
        "report-id": id,
        "policies": [{
            "policy": {"policy-type": "no-policy-found", "policy-domain": domain},
            "summary": {"total-successful-session-count": 40, "total-failure-session-count": 0}
        }]
    })
    .to_string()
    .into_bytes()
}

/// How many items of the organization's partition start with `prefix`.
/// Items under `prefix`: in the organization's partition, or in a domain's own when the prefix
/// names one (`KIND#<domain id>#`).
async fn count(app: &TestApp, org: &SignedUp, prefix: &str) -> usize {
    let pk = match prefix.split('#').nth(1).map(uuid::Uuid::parse_str) {
        Some(Ok(domain)) => format!("ORG#{}#D#{domain}", org.org_id),
        _ => format!("ORG#{}", org.org_id),
    };
    query_all(
        app.stack.state.store.as_ref(),
        Query::partition(pk).prefix(prefix),
    )
    .await
    .unwrap()
    .len()
}

/// The raw deliveries in the bucket.
async fn raw_deliveries(app: &TestApp) -> usize {
    let objects = app.stack.state.objects.as_ref().expect("an object store");
    objects.list("reports/raw/").await.unwrap().len()
}

/// Two snapshots of one record type, both captured now: the second is the latest.
async fn two_snapshots(app: &TestApp, org: &SignedUp, domain: &str) -> (uuid::Uuid, uuid::Uuid) {
    use mailward_domain::Clock as _;
    let domain_id: uuid::Uuid = domain.parse().unwrap();
    let org_id: uuid::Uuid = org.org_id.parse().unwrap();
    let mut ids = Vec::new();
    for (i, value) in ["v=DMARC1; p=none", "v=DMARC1; p=quarantine"]
        .iter()
        .enumerate()
    {
        let snapshot = mailward_domain::snapshots::Snapshot {
            id: uuid::Uuid::new_v4(),
            domain_id,
            record_type: "DMARC".into(),
            values: vec![(*value).to_owned()],
            captured_at: app.clock.now() + time::Duration::seconds(i as i64),
        };
        ids.push(snapshot.id);
        let ops = mailward_store::snapshots::record_ops(org_id, &snapshot).unwrap();
        app.stack.state.store.transact(ops).await.unwrap();
    }
    (ids[0], ids[1])
}

/// Report items of a domain: row chunks, day totals, report marks.
async fn report_items(app: &TestApp, org: &SignedUp, domain: &str) -> [usize; 3] {
    [
        count(app, org, &format!("REPDAY#{domain}#")).await,
        count(app, org, &format!("REPTOTAL#{domain}#")).await,
        count(app, org, &format!("REPORT#{domain}#")).await,
    ]
}

#[tokio::test]
async fn the_clock_moves_and_each_kind_of_data_goes_when_its_plan_no_longer_keeps_it() {
    let app = quiet_app().await;
    let free = app.sign_up("free@retention.example", "Free Keeper").await;
    let paid = app.sign_up("paid@retention.example", "Paid Keeper").await;
    app.subscribe(&paid, "it_teams").await;
    let f = add_domain(&app, &free.key, "f.retention.example").await;
    let p = add_domain(&app, &paid.key, "p.retention.example").await;
    let (f_id, p_id) = (f["id"].as_str().unwrap(), p["id"].as_str().unwrap());
    let state = &app.stack.state;
    for (org, name, id) in [
        (&free, "f.retention.example", "f"),
        (&paid, "p.retention.example", "p"),
    ] {
        for bytes in [dmarc(&app, name, id, 2), tls(&app, name, id, 2)] {
            ingest(state, &bytes, &for_org(org), &Limits::default())
                .await
                .unwrap();
        }
    }
    let (f_old, f_latest) = two_snapshots(&app, &free, f_id).await;
    // The day totals are written by the identification job each import queues.
    app.clock.advance(time::Duration::seconds(10));
    for _ in 0..1200 {
        if report_items(&app, &free, f_id).await[1] > 0
            && report_items(&app, &paid, p_id).await[1] > 0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every identification the imports queued (one per report) runs at this clock: on SQS a
    // delayed job is held a second past its send, so the second one of a domain can still be
    // on its way here. One that ran after the clock moved a year on opened its tasks then, and
    // their activity entries were rightly kept (the test failed on that, by the day it ran).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let queue = &app.stack.state.queue;
    for _ in 0..200 {
        let depth = queue
            .depth(mailward_domain::queue::QueueName::Jobs)
            .await
            .unwrap();
        if depth.ready == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (org, id) in [(&free, f_id), (&paid, p_id)] {
        let items = report_items(&app, org, id).await;
        assert!(
            items.iter().all(|n| *n > 0),
            "rows, totals, marks: {items:?}"
        );
        assert_eq!(count(&app, org, &format!("TLSREPORT#{id}#")).await, 1);
        assert!(count(&app, org, "ACTIVITY#").await > 0);
        assert!(count(&app, org, "ACTIVITYREF#").await > 0);
    }
    assert_eq!(count(&app, &free, &format!("SNAPSHOT#{f_id}#")).await, 2);
    assert!(
        raw_deliveries(&app).await >= 4,
        "the raw deliveries are kept"
    );

    // Nothing is due yet: a pass today removes nothing.
    let (removed, raw) = mailward_workers::retention::run_now(state).await.unwrap();
    assert_eq!((removed, raw), Default::default());

    // 40 days on: past the free window and the raw deliveries' 30 days, within the paid year.
    // An upload whose import never ran (its job failed for good).
    let objects = app.stack.state.objects.as_ref().expect("an object store");
    let day =
        mailward_store::reports::day_string(mailward_domain::Clock::now(app.clock.as_ref()).date());
    let stale = format!("uploads/tlsrpt/{day}/lost.json");
    objects
        .put(
            &stale,
            bytes::Bytes::from_static(b"{}"),
            "application/tlsrpt+json",
        )
        .await
        .unwrap();
    app.clock.advance(time::Duration::days(40));
    let (removed, raw) = mailward_workers::retention::run_now(state).await.unwrap();
    assert!(raw >= 5, "{raw}");
    assert_eq!(raw_deliveries(&app).await, 0, "raw deliveries past 30 days");
    assert!(
        objects.list("uploads/").await.unwrap().is_empty(),
        "uploads past 7 days"
    );
    assert_eq!(
        report_items(&app, &free, f_id).await,
        [0, 0, 0],
        "the free organization's report data past 30 days"
    );
    assert_eq!(count(&app, &free, &format!("TLSREPORT#{f_id}#")).await, 0);
    assert_eq!(removed.tls_reports, 1);
    let snapshots = mailward_store::snapshots::list(
        state.store.as_ref(),
        free.org_id.parse().unwrap(),
        f_id.parse().unwrap(),
        None,
    )
    .await
    .unwrap();
    let kept: Vec<_> = snapshots.iter().map(|s| s.id).collect();
    assert_eq!(
        kept,
        vec![f_latest],
        "the latest snapshot stays, {f_old} goes"
    );
    let paid_items = report_items(&app, &paid, p_id).await;
    assert!(paid_items.iter().all(|n| *n > 0), "paid: {paid_items:?}");
    assert_eq!(count(&app, &paid, &format!("TLSREPORT#{p_id}#")).await, 1);
    assert!(
        count(&app, &free, "ACTIVITY#").await > 0,
        "activity outlives the window"
    );
    // What the API reads agrees: the paid year still holds the report.
    let summary =
        crate::common::get(&app, "/report-data/summary?period=last_365_days", &paid.key).await;
    assert_eq!(summary["volume"], 12, "{summary}");
    let free_summary =
        crate::common::get(&app, "/report-data/summary?period=last_365_days", &free.key).await;
    assert_eq!(free_summary["volume"], 0, "{free_summary}");

    // A year and a week on: past the paid window too (the trial became a paid plan).
    app.clock.advance(time::Duration::days(332));
    mailward_workers::retention::run_now(state).await.unwrap();
    assert_eq!(report_items(&app, &paid, p_id).await, [0, 0, 0]);
    assert_eq!(count(&app, &paid, &format!("TLSREPORT#{p_id}#")).await, 0);
    assert!(count(&app, &paid, "ACTIVITY#").await > 0);

    // Past the activity log's 400 days: every entry and its reference go.
    app.clock.advance(time::Duration::days(30));
    mailward_workers::retention::run_now(state).await.unwrap();
    for org in [&free, &paid] {
        assert_eq!(count(&app, org, "ACTIVITY#").await, 0);
        assert_eq!(count(&app, org, "ACTIVITYREF#").await, 0);
        let log = crate::common::get(&app, "/activity-log", &org.key).await;
        assert_eq!(log["data"].as_array().map(Vec::len), Some(0), "{log}");
    }
}
