//! Hosted MTA-STS over HTTP: the policy built from live MX, served as text/plain by Host
//! header, its id served behind the `_mta-sts` CNAME and new on every edit; the state follows
//! the customer's two CNAMEs; the sweep follows MX changes; DELETE retires the policy as
//! `mode: none` for the old max_age (RFC 8461 §8.3); the refusals.

use crate::admin::member;
use crate::common::{add_domain, outbox_events};
use crate::common::{call, call_as, next_pass_and_reconcile};
use crate::hosted::{hosted_events, owner, served_txt, start};
use mailward_api_tests::TestApp;
use mailward_domain::dns::{DnsError, RecordData, RecordType};
use reqwest::Method;
use serde_json::{Value, json};

const HOSTED_ZONE: &str = "hosted.mailward.local";

/// `GET /.well-known/mta-sts.txt` asked for `host`: status, content type, body.
async fn fetch_policy(app: &TestApp, host: &str) -> (u16, String, String) {
    let res = reqwest::Client::new()
        .get(app.url("/.well-known/mta-sts.txt"))
        .header("Host", host)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, res.text().await.unwrap())
}

async fn mta_sts(
    app: &TestApp,
    key: &str,
    method: Method,
    id: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let (status, value) = call(app, method, &format!("/domains/{id}/mta-sts"), key, body).await;
    (status.as_u16(), value)
}

/// `PUT /domains/{id}/mta-sts`.
async fn put(app: &TestApp, key: &str, id: &str, body: Value) -> (u16, Value) {
    mta_sts(app, key, Method::PUT, id, Some(body)).await
}

/// The `_mta-sts` TXT served at `target` carries `id`.
async fn assert_served_id(app: &TestApp, target: &str, id: &str) {
    assert_eq!(
        served_txt(app, target).await.unwrap(),
        [format!("v=STSv1; id={id}")]
    );
}

fn event_types(events: &[Value]) -> Vec<String> {
    let mut events = events.to_vec();
    events.sort_by(|a, b| a["created"].as_str().cmp(&b["created"].as_str()));
    events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|t| t.starts_with("mta_sts."))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_policy_is_served_follows_edits_and_mx_and_retires_as_none() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let (status, off) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(status, 200, "{off}");
    assert_eq!(off["enabled"], false);
    assert_eq!(off["mode"], "none");
    assert!(off["policy"].is_null());
    assert_eq!(off["records"], json!([]));

    // On with the defaults (no body): testing, one day, the live MX.
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &id, None).await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(on["object"], "mta_sts");
    assert_eq!(on["enabled"], true);
    assert_eq!(on["mode"], "testing");
    assert_eq!(on["max_age"], 86400);
    assert_eq!(on["mx"], json!(["mx.client.test"]));
    assert_eq!(on["status"], "syncing");
    let policy = "version: STSv1\r\nmode: testing\r\nmx: mx.client.test\r\nmax_age: 86400\r\n";
    assert_eq!(on["policy"], policy);
    assert_eq!(
        on["policy_url"],
        "https://mta-sts.client.test/.well-known/mta-sts.txt"
    );
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    let host_target = format!("client.test.mta-sts.{HOSTED_ZONE}");
    assert_eq!(
        on["records"],
        json!([
            {"host": "_mta-sts.client.test", "type": "CNAME", "value": txt_target},
            {"host": "mta-sts.client.test", "type": "CNAME", "value": host_target},
        ])
    );
    let first_id = on["policy_id"].as_str().unwrap().to_owned();
    assert!(first_id.chars().all(|c| c.is_ascii_alphanumeric()) && first_id.len() <= 32);
    let (_, domain) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(domain["is_mta_sts_managed"], true);
    assert_eq!(domain["managed_dns_status"]["mta_sts"], "syncing");

    // Tenant trust, finding 6: not served before the domain's owner chose this policy in DNS
    // (many organizations may enable hosting for one name): the `_mta-sts` CNAME to this
    // organization's owner-specific target is the choice, seen by the hourly pass.
    assert_eq!(fetch_policy(&app, "mta-sts.client.test").await.0, 404);
    dns.set(
        "_mta-sts.client.test",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{txt_target}."))],
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;

    // Served by Host header as text/plain, under both names; nothing for other hosts.
    let (status, kind, body) = fetch_policy(&app, "mta-sts.client.test").await;
    assert_eq!(
        (status, kind.as_str(), body.as_str()),
        (200, "text/plain", policy)
    );
    let (status, _, body) = fetch_policy(&app, &format!("{host_target}:443")).await;
    assert_eq!((status, body.as_str()), (200, policy));
    let (status, kind, _) = fetch_policy(&app, "mta-sts.other.test").await;
    assert_eq!((status, kind.as_str()), (404, "text/plain"));
    assert_eq!(fetch_policy(&app, "client.test").await.0, 404);
    assert_served_id(&app, &txt_target, &first_id).await;

    // An edit gets a new id; the same values change nothing; back to testing is new again.
    // (The clock moves between edits so that the events' order is their time.)
    app.clock.advance(time::Duration::seconds(1));
    let (status, enforce) = put(&app, &s.key, &id, json!({"mode": "enforce"})).await;
    assert_eq!(status, 200, "{enforce}");
    assert_eq!(enforce["mode"], "enforce");
    let enforce_id = enforce["policy_id"].as_str().unwrap().to_owned();
    assert_ne!(enforce_id, first_id);
    assert!(
        fetch_policy(&app, "mta-sts.client.test")
            .await
            .2
            .contains("mode: enforce\r\n")
    );
    assert_served_id(&app, &txt_target, &enforce_id).await;
    let (_, same) = put(
        &app,
        &s.key,
        &id,
        json!({"mode": "enforce", "max_age": 86400}),
    )
    .await;
    assert_eq!(same["policy_id"], enforce_id.as_str());
    app.clock.advance(time::Duration::seconds(1));
    let (_, back) = put(&app, &s.key, &id, json!({"mode": "testing"})).await;
    assert_eq!(back["policy"], policy);
    let back_id = back["policy_id"].as_str().unwrap().to_owned();
    assert!(back_id != first_id && back_id != enforce_id);
    assert_eq!(
        event_types(&outbox_events(&app).await),
        ["mta_sts.enabled", "mta_sts.updated", "mta_sts.updated"]
    );

    // The records guidance plans both CNAMEs.
    let (_, records) = call(
        &app,
        Method::GET,
        &format!("/domains/{id}/dns-records"),
        &s.key,
        None,
    )
    .await;
    let planned: Vec<(String, String, String)> = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["purpose"] == "mta_sts" || r["purpose"] == "mta_sts_policy")
        .map(|r| {
            (
                r["host"].as_str().unwrap().to_owned(),
                r["type"].as_str().unwrap().to_owned(),
                r["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        planned.contains(&(
            "_mta-sts.client.test".into(),
            "CNAME".into(),
            txt_target.clone()
        )),
        "{records}"
    );
    assert!(
        planned.contains(&(
            "mta-sts.client.test".into(),
            "CNAME".into(),
            host_target.clone()
        )),
        "{records}"
    );

    // The customer's own `_mta-sts` TXT where the CNAME belongs: record_conflict (its id
    // would not follow the edits).
    dns.remove("_mta-sts.client.test", None).unwrap();
    dns.set_txt("_mta-sts.client.test", "v=STSv1; id=old1")
        .unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, conflict) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(
        (
            conflict["status"].as_str(),
            conflict["error_reason"].as_str()
        ),
        (Some("error"), Some("record_conflict")),
        "{conflict}"
    );
    dns.remove("_mta-sts.client.test", None).unwrap();

    // The customer publishes both CNAMEs: ready, with the event.
    for (name, target) in [
        ("_mta-sts.client.test", &txt_target),
        ("mta-sts.client.test", &host_target),
    ] {
        dns.set(
            name,
            RecordType::Cname,
            vec![RecordData::Cname(format!("{target}."))],
        )
        .unwrap();
    }
    next_pass_and_reconcile(&app).await;
    let (_, state) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(state["status"], "ready", "{state}");
    assert_eq!(
        hosted_events(&app).await,
        [
            (
                "domain.hosted_record.error".to_owned(),
                "mta_sts".to_owned()
            ),
            (
                "domain.hosted_record.ready".to_owned(),
                "mta_sts".to_owned()
            )
        ]
    );

    // The MX changes: the sweep rebuilds the policy with a new id.
    dns.set(
        "client.test",
        RecordType::Mx,
        vec![RecordData::Mx {
            preference: 5,
            exchange: "mx2.client.test.".into(),
        }],
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, moved) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(moved["mx"], json!(["mx2.client.test"]));
    assert_ne!(moved["policy_id"], back_id.as_str());
    assert!(
        fetch_policy(&app, "mta-sts.client.test")
            .await
            .2
            .contains("mx: mx2.client.test\r\n")
    );
    assert_served_id(&app, &txt_target, moved["policy_id"].as_str().unwrap()).await;
    assert_eq!(
        event_types(&outbox_events(&app).await).last().unwrap(),
        "mta_sts.updated"
    );

    // A CNAME removed: drift.
    dns.remove("mta-sts.client.test", None).unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, drift) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(
        (drift["status"].as_str(), drift["error_reason"].as_str()),
        (Some("error"), Some("drift"))
    );

    // Off: served as mode none with a new id until the old max_age has passed, then gone.
    let (status, retiring) = mta_sts(&app, &s.key, Method::DELETE, &id, None).await;
    assert_eq!(status, 200, "{retiring}");
    assert_eq!(retiring["enabled"], false);
    assert_eq!(retiring["mode"], "none");
    assert_eq!(retiring["status"], "unknown");
    assert!(retiring["retiring_until"].is_string());
    assert_eq!(retiring["records"], json!([]));
    let (status, _, body) = fetch_policy(&app, "mta-sts.client.test").await;
    assert_eq!(status, 200);
    assert!(body.contains("mode: none\r\n"), "{body}");
    assert_served_id(&app, &txt_target, retiring["policy_id"].as_str().unwrap()).await;
    let (status, again) = mta_sts(&app, &s.key, Method::DELETE, &id, None).await;
    assert_eq!((status, &again["policy_id"]), (200, &retiring["policy_id"]));
    assert_eq!(
        event_types(&outbox_events(&app).await).last().unwrap(),
        "mta_sts.disabled"
    );
    next_pass_and_reconcile(&app).await;
    assert_eq!(fetch_policy(&app, "mta-sts.client.test").await.0, 200);
    app.clock.advance(time::Duration::days(1));
    next_pass_and_reconcile(&app).await;
    assert_eq!(fetch_policy(&app, "mta-sts.client.test").await.0, 404);
    assert!(matches!(
        served_txt(&app, &txt_target).await,
        Err(DnsError::NxDomain)
    ));
    let (_, gone) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(gone["mode"], "none");
    assert!(gone["policy"].is_null());
}

#[tokio::test]
async fn bad_input_is_refused_and_a_name_serves_the_mta_sts_policy_its_owner_chose() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();

    for (body, param) in [
        (json!({"max_age": 100}), "max_age"),
        (json!({"max_age": 31557601}), "max_age"),
        (json!({"max_age": -5}), "max_age"),
        (json!({"mode": "strict"}), "mode"),
        (json!({"mode": "testing", "colour": "blue"}), "colour"),
    ] {
        let (status, error) = mta_sts(&app, &s.key, Method::POST, &id, Some(body.clone())).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert_eq!(error["param"], param, "{body}: {error}");
    }
    // PUT before POST.
    let (status, error) = put(&app, &s.key, &id, json!({"mode": "enforce"})).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (409, Some("mta_sts_not_enabled"))
    );
    // Nothing was stored by the refusals.
    let (_, state) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(state["enabled"], false);

    // No MX: refused unless the mode is none.
    dns.remove("client.test", Some(RecordType::Mx)).unwrap();
    let (status, error) = mta_sts(&app, &s.key, Method::POST, &id, None).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (422, Some("mta_sts_no_mx")),
        "{error}"
    );
    dns.set(
        "client.test",
        RecordType::Mx,
        vec![RecordData::Mx {
            preference: 10,
            exchange: "mx.client.test.".into(),
        }],
    )
    .unwrap();

    // A viewer reads but does not write.
    let viewer = member(&app, &s, "viewer@mtasts.example", &["viewer"], &[]).await;
    let (status, _) = call_as(
        &app,
        Method::GET,
        &format!("/domains/{id}/mta-sts"),
        &viewer,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/domains/{id}/mta-sts"),
        &viewer,
        None,
    )
    .await;
    assert_eq!(status, 403);

    // Tenant trust, finding 6: other organizations may enable hosting for the same name, but
    // the name serves the policy its owner chose in DNS (the `_mta-sts` CNAME to one
    // organization's owner-specific target), never the latest or the first one's.
    let ours = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    let choose = |target: &str| {
        dns.set(
            "_mta-sts.client.test",
            RecordType::Cname,
            vec![RecordData::Cname(format!("{target}."))],
        )
        .unwrap()
    };
    choose(&ours);
    let (status, on) = mta_sts(
        &app,
        &s.key,
        Method::POST,
        &id,
        Some(json!({"mode": "enforce", "max_age": 604800})),
    )
    .await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(on["max_age"], 604800);
    let other = app.sign_up("other@elsewhere.example", "Elsewhere").await;
    let theirs = add_domain(&app, &other.key, "client.test").await;
    let their_id = theirs["id"].as_str().unwrap().to_owned();
    let (status, their_on) = mta_sts(&app, &other.key, Method::POST, &their_id, None).await;
    assert_eq!(status, 200, "{their_on}");
    next_pass_and_reconcile(&app).await;
    let served = || async { fetch_policy(&app, "mta-sts.client.test").await.2 };
    assert!(served().await.contains("mode: enforce"), "ours, chosen");
    // ... and another account never sees or changes ours.
    let (status, _) = mta_sts(&app, &other.key, Method::DELETE, &id, None).await;
    assert_eq!(status, 404);

    // The owner points the CNAME at the other organization: theirs is served from the next
    // pass. Our policy retiring afterwards never removes theirs.
    choose(&format!(
        "{}._mta-sts.{HOSTED_ZONE}",
        owner(&their_id, "client.test")
    ));
    next_pass_and_reconcile(&app).await;
    assert!(
        served().await.contains("mode: testing"),
        "theirs, chosen now"
    );
    let (status, _) = mta_sts(&app, &s.key, Method::DELETE, &id, None).await;
    assert_eq!(status, 200);
    assert!(
        served().await.contains("mode: testing"),
        "ours is not served"
    );
    app.clock.advance(time::Duration::days(8));
    next_pass_and_reconcile(&app).await;
    assert!(served().await.contains("mode: testing"), "retiring ours");

    // Deleting our domain leaves theirs; deleting theirs stops serving at once.
    for (key, domain_id, after) in [(&s.key, &id, 200), (&other.key, &their_id, 404)] {
        let (status, _) = call(
            &app,
            Method::DELETE,
            &format!("/domains/{domain_id}"),
            key,
            None,
        )
        .await;
        assert_eq!(status, 204);
        assert_eq!(fetch_policy(&app, "mta-sts.client.test").await.0, after);
    }
}

/// The hourly job: its coordinator only enqueues `reconcile_batch` jobs; the stack's queue
/// workers run them and the state moves. The monitoring sweep alone leaves hosted MTA-STS be.
#[tokio::test]
async fn the_hourly_reconciliation_runs_through_the_jobs_queue() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &id, None).await;
    assert_eq!(status, 200, "{on}");
    for record in on["records"].as_array().unwrap() {
        let target = format!("{}.", record["value"].as_str().unwrap());
        dns.set(
            record["host"].as_str().unwrap(),
            RecordType::Cname,
            vec![RecordData::Cname(target)],
        )
        .unwrap();
    }
    app.clock.advance(time::Duration::seconds(301));
    mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
    let (_, state) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
    assert_eq!(
        state["status"], "syncing",
        "the sweep does not reconcile hosted records"
    );
    let enqueued = mailward_workers::reconcile::coordinate(&app.stack.state)
        .await
        .unwrap();
    assert!(enqueued >= 1);
    let mut status = Value::Null;
    for _ in 0..100 {
        let (_, state) = mta_sts(&app, &s.key, Method::GET, &id, None).await;
        status = state["status"].clone();
        if status == "ready" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, "ready");
}

/// Deleting the organization stops serving what Mailward hosted for it: the MTA-STS policy
/// and its TXT are gone.
#[tokio::test]
async fn a_deleted_organization_stops_being_served() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let txt_target = format!("{}._mta-sts.{HOSTED_ZONE}", owner(&id, "client.test"));
    dns.set(
        "_mta-sts.client.test",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{txt_target}."))],
    )
    .unwrap();
    let (status, on) = mta_sts(&app, &s.key, Method::POST, &id, None).await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(fetch_policy(&app, "mta-sts.client.test").await.0, 200);
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/organizations/{}", s.org_id),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 202);
    let mut served = 200;
    for _ in 0..100 {
        served = fetch_policy(&app, "mta-sts.client.test").await.0;
        if served == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        served, 404,
        "the purged organization's policy is no longer served"
    );
    assert!(matches!(
        served_txt(&app, &txt_target).await,
        Err(DnsError::NxDomain)
    ));
}
