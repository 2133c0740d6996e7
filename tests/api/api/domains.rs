//! Domains: create, read, list (filters, sorts, expand, pagination), update (bounds, withdrawn
//! verifications), delete (with its snapshots), bulk (independent entries), snapshot diffs, and
//! the events they commit.

use crate::common::{app_on, get_json, outbox_events, record_of};
use base64::Engine as _;
use mailward_api_tests::faulty_store::{FaultyStore, StoreCall};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_dns_fixture::Zone;
use mailward_domain::Clock as _;
use mailward_domain::snapshots::Snapshot;
use mailward_domain::store::{Query, StoreError, WriteOp, query_all};
use mailward_store::keys;
use mailward_store::snapshots;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt as _;

async fn events(app: &TestApp) -> Vec<Value> {
    outbox_events(app).await
}

async fn create(app: &TestApp, s: &SignedUp, url: &str) -> (u16, Value) {
    let res = app
        .with_key(Method::POST, "/domains", &s.key)
        .json(&json!({"url": url}))
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

const FIELDS: &[&str] = &[
    "id",
    "url",
    "dmarc_policy",
    "dmarc_options",
    "spf_options",
    "managed_dns_status",
    "managed_dns_status_since",
    "monitoring_status",
    "monitoring_failure_reason",
    "monitoring_failure_detail",
    "monitoring_email",
    "open_tasks_count",
    "highest_open_task_priority",
    "score",
    "score_band",
    "is_parked",
    "is_dmarc_managed",
    "is_spf_managed",
    "is_dkim_managed",
    "is_bimi_managed",
    "is_mta_sts_managed",
    "bimi_options",
    "bimi_error_reason",
    "dmarc_error_reason",
    "spf_error_reason",
    "dkim_error_reason",
    "mta_sts_error_reason",
    "dns_conflicts",
    "bimi_cname_target",
    "bimi_txt_value",
    "target_spf",
    "last_14_days_volume",
    "last_14_days_dmarc_pass_pct",
    "last_14_days_spf_pass_pct",
    "last_14_days_dkim_pass_pct",
    "group_id",
    "registrar",
    "dmarc_setup_at",
    "dmarc_verified_at",
    "monitoring_since",
    "created_at",
    "updated_at",
];

#[tokio::test]
async fn a_domain_is_created_read_updated_and_deleted_with_events() {
    let app = TestApp::start_with(|s| s.publish_outbox = false).await;
    let s = app.sign_up("dom@example.com", "Domain Org").await;
    let (status, domain) = create(&app, &s, "https://Example.COM/welcome").await;
    assert_eq!(status, 201, "{domain}");
    for field in FIELDS {
        assert!(domain.get(*field).is_some(), "missing {field}");
    }
    assert!(domain.get("group").is_none() && domain.get("tasks").is_none());
    assert_eq!(domain["url"], "example.com");
    assert_eq!(domain["monitoring_status"], "none");
    assert_eq!(domain["score_band"], "critical");
    assert_eq!(domain["managed_dns_status"]["dmarc"], "unknown");
    assert!(
        domain["monitoring_email"]
            .as_str()
            .unwrap()
            .ends_with("@reports.mailward.local")
    );
    let id = domain["id"].as_str().unwrap().to_owned();

    let (status, dup) = create(&app, &s, "example.com.").await;
    assert_eq!(
        (status, dup["code"].as_str(), dup["param"].as_str()),
        (409, Some("domain_exists"), Some("url"))
    );

    let res = app
        .with_key(
            Method::GET,
            &format!("/domains/{id}?expand[]=group&expand[]=tasks"),
            &s.key,
        )
        .send()
        .await
        .unwrap();
    let read: Value = res.json().await.unwrap();
    assert_eq!(read["group"], Value::Null);
    assert_eq!(read["tasks"], json!([]));

    let res = app
        .with_key(Method::POST, &format!("/domains/{id}"), &s.key)
        .json(&json!({
            "dmarc_options": {"policy": "quarantine", "pct": 50, "sp": "reject", "strict_spf": true, "strict_dkim": false, "additional_emails": ["Ops@Example.com"]},
            "bimi_options": {"enabled": true, "logo": "https://example.com/logo.svg", "certificate": null},
            "target_spf": "v=spf1 include:_spf.google.com -all"
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let updated: Value = res.json().await.unwrap();
    assert_eq!(updated["dmarc_options"]["policy"], "quarantine");
    assert_eq!(
        updated["dmarc_options"]["additional_emails"],
        json!(["ops@example.com"])
    );
    assert_eq!(
        updated["bimi_txt_value"],
        "v=BIMI1; l=https://example.com/logo.svg"
    );
    assert_eq!(updated["target_spf"], "v=spf1 include:_spf.google.com -all");

    let res = app
        .with_key(Method::DELETE, &format!("/domains/{id}"), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let res = app
        .with_key(Method::GET, &format!("/domains/{id}"), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // The name is free again.
    assert_eq!(create(&app, &s, "example.com").await.0, 201);

    let events = events(&app).await;
    let types: Vec<&str> = events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|t| t.starts_with("domain."))
        .collect();
    assert_eq!(types.iter().filter(|t| **t == "domain.created").count(), 2);
    assert_eq!(types.iter().filter(|t| **t == "domain.updated").count(), 1);
    let deleted = events
        .iter()
        .find(|e| e["type"] == "domain.deleted")
        .expect("deleted event");
    assert_eq!(
        deleted["object"]["dmarc_options"]["policy"], "quarantine",
        "the object as it was before removal"
    );
    let updated_event = events
        .iter()
        .find(|e| e["type"] == "domain.updated")
        .unwrap();
    assert_eq!(
        updated_event["previous_attributes"]["dmarc_options"]["policy"],
        "none"
    );
}

#[tokio::test]
async fn bad_domain_input_names_the_field() {
    let app = TestApp::start().await;
    let s = app.sign_up("bad@example.com", "Bad Org").await;
    for (body, param) in [
        (json!({"url": "localhost"}), "url"),
        (json!({"url": "1.2.3.4"}), "url"),
        (json!({}), "url"),
        (
            json!({"url": "example.org", "group_id": uuid::Uuid::new_v4()}),
            "group_id",
        ),
        (
            json!({"url": "example.org", "group_id": "nope"}),
            "group_id",
        ),
    ] {
        let res = app
            .with_key(Method::POST, "/domains", &s.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
    let (_, domain) = create(&app, &s, "valid.example").await;
    let id = domain["id"].as_str().unwrap();
    for (body, param) in [
        (
            json!({"dmarc_options": {"policy": "block", "pct": 100, "sp": "same", "strict_spf": false, "strict_dkim": false}}),
            "dmarc_options.policy",
        ),
        (
            json!({"dmarc_options": {"policy": "none", "pct": 101, "sp": "same", "strict_spf": false, "strict_dkim": false}}),
            "dmarc_options.pct",
        ),
        (
            json!({"dmarc_options": {"policy": "none", "pct": 100, "sp": "same", "strict_spf": false, "strict_dkim": false, "additional_emails": ["x"]}}),
            "dmarc_options.additional_emails",
        ),
        (json!({"target_spf": "v=spf1 include: -all"}), "target_spf"),
        (
            json!({"bimi_options": {"enabled": true, "logo": "http://insecure.example/logo.svg", "certificate": null}}),
            "bimi_options.logo",
        ),
        (json!({"dmarc_setup_at": "yesterday"}), "dmarc_setup_at"),
        (json!({"backfill_tickets": "yes"}), "backfill_tickets"),
        (
            json!({"agent_proposals_enabled": "maybe"}),
            "agent_proposals_enabled",
        ),
        (json!({"colour": "blue"}), "colour"),
    ] {
        let res = app
            .with_key(Method::POST, &format!("/domains/{id}"), &s.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{body}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], param, "{body}");
    }
    for query in [
        "sort=colour",
        "order=sideways",
        "monitoring_status=great",
        "dmarc_policy=block",
        "expand[]=everything",
        "is_parked=maybe",
    ] {
        let res = app
            .with_key(Method::GET, &format!("/domains?{query}"), &s.key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{query}");
    }
}

#[tokio::test]
async fn lists_filter_sort_and_page_within_the_organization() {
    let app = TestApp::start().await;
    let s = app.sign_up("list@example.com", "List Org").await;
    let other = app.sign_up("other@example.com", "Other Org").await;
    for name in ["charlie.example", "alpha.example", "bravo.example"] {
        assert_eq!(create(&app, &s, name).await.0, 201);
        app.clock.advance(time::Duration::seconds(1));
    }
    create(&app, &other, "foreign.example").await;
    let list = |query: &str| {
        let req = app.with_key(Method::GET, &format!("/domains?{query}"), &s.key);
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let urls = |v: &Value| {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["url"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let all = list("").await;
    assert_eq!(
        urls(&all),
        ["bravo.example", "alpha.example", "charlie.example"],
        "newest first by default"
    );
    assert_eq!(all["page_info"]["total_count"], 3);
    assert_eq!(
        urls(&list("sort=url&order=asc").await),
        ["alpha.example", "bravo.example", "charlie.example"]
    );
    let page = list("sort=url&order=asc&per_page=2&page=2").await;
    assert_eq!(urls(&page), ["charlie.example"]);
    assert_eq!(page["page_info"]["has_more"], false);
    assert_eq!(
        list("monitoring_status=setup").await["page_info"]["total_count"],
        0
    );
    assert_eq!(
        list("monitoring_status=none&is_parked=false").await["page_info"]["total_count"],
        3
    );
    let expanded = list("expand[]=tasks&per_page=1").await;
    assert_eq!(expanded["data"][0]["tasks"], json!([]));
    // The list keeps each domain's wire shape per process: a change shows at the next call.
    let alpha = list("sort=url&order=asc&per_page=1").await["data"][0].clone();
    assert_eq!(alpha["is_parked"], false, "{alpha}");
    let body = json!({"is_parked": true});
    assert_eq!(
        update(&app, &s, alpha["id"].as_str().unwrap(), body).await,
        200
    );
    let again = list("sort=url&order=asc&per_page=1").await["data"][0].clone();
    assert_eq!(again["is_parked"], true, "{again}");
    assert_ne!(again["updated_at"], alpha["updated_at"]);
    for sort in [
        "severity",
        "status",
        "score",
        "dmarc_policy",
        "monitoring_status",
        "group",
        "open_tasks_count",
        "last_14_days_volume",
    ] {
        for order in ["asc", "desc"] {
            assert_eq!(
                list(&format!("sort={sort}&order={order}")).await["data"]
                    .as_array()
                    .unwrap()
                    .len(),
                3,
                "{sort} {order}"
            );
        }
    }
    // Another organization's domain is invisible.
    let foreign: Value = app
        .with_key(Method::GET, "/domains", &other.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let foreign_id = foreign["data"][0]["id"].as_str().unwrap();
    let res = app
        .with_key(Method::GET, &format!("/domains/{foreign_id}"), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn bulk_add_reports_each_entry_in_order_and_always_answers_200() {
    let app = TestApp::start().await;
    let s = app.sign_up("bulk@example.com", "Bulk Org").await;
    create(&app, &s, "exists.example").await;
    let res = app
        .with_key(Method::POST, "/domains/bulk", &s.key)
        .json(&json!({"domains": [
            {"url": "one.example"}, {"url": "exists.example"}, {"url": "not a domain"}, {"url": "ONE.example"}, {"url": "two.example"}
        ]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (
            body["created_count"].as_u64(),
            body["failed_count"].as_u64()
        ),
        (Some(2), Some(3))
    );
    let results = body["results"].as_array().unwrap();
    let outcome: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["url"].as_str().unwrap(), r["result"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcome,
        [
            ("one.example", "created"),
            ("exists.example", "failed"),
            ("not a domain", "failed"),
            ("ONE.example", "failed"),
            ("two.example", "created")
        ]
    );
    assert!(
        results[1]["reason"]
            .as_str()
            .unwrap()
            .starts_with("domain_exists")
    );
    assert_eq!(results[1]["domain"], Value::Null);
    assert_eq!(results[0]["domain"]["url"], "one.example");
    let res = app
        .with_key(Method::POST, "/domains/bulk", &s.key)
        .json(&json!({"domains": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "domains");
}

#[tokio::test]
async fn racing_updates_of_one_domain_end_with_one_winner_or_a_clear_409() {
    let app = TestApp::start().await;
    let s = app.sign_up("race@example.com", "Race Org").await;
    let (_, domain) = create(&app, &s, "race.example").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let update = |parked: bool| {
        app.with_key(Method::POST, &format!("/domains/{id}"), &s.key)
            .json(&json!({"is_parked": parked}))
            .send()
    };
    let (a, b) = tokio::join!(update(true), update(false));
    let statuses = [a.unwrap().status().as_u16(), b.unwrap().status().as_u16()];
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{statuses:?}"
    );
}

async fn bulk(app: &TestApp, s: &SignedUp, body: &Value) -> (u16, Value) {
    let res = app
        .with_key(Method::POST, "/domains/bulk", &s.key)
        .json(body)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

#[tokio::test]
async fn bulk_entries_are_checked_one_by_one_and_a_bad_entry_fails_alone() {
    let app = TestApp::start().await;
    let s = app.sign_up("entries@example.com", "Entries Org").await;
    let (status, body) = bulk(
        &app,
        &s,
        &json!({"domains": [
            {"url": "first.example"},
            {"url": "grouped.example", "group_id": "abc"},
            {"group_id": null},
            {"url": "extra.example", "colour": "blue"},
            {"url": 42},
            "plain-string.example",
            {"url": "first.example"},
            {"url": "last.example", "group_id": null}
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (
            body["created_count"].as_u64(),
            body["failed_count"].as_u64()
        ),
        (Some(2), Some(6)),
        "{body}"
    );
    let results = body["results"].as_array().unwrap();
    let summary: Vec<(Value, &str, Option<&str>, Option<&str>)> = results
        .iter()
        .map(|r| {
            let reason = r["reason"].as_str();
            (
                r["url"].clone(),
                r["result"].as_str().unwrap(),
                reason.map(|r| r.split(':').next().unwrap()),
                r["param"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (json!("first.example"), "created", None, None),
            (
                json!("grouped.example"),
                "failed",
                Some("parameter_invalid_or_missing"),
                Some("group_id")
            ),
            (
                Value::Null,
                "failed",
                Some("parameter_invalid_or_missing"),
                Some("url")
            ),
            (
                json!("extra.example"),
                "failed",
                Some("parameter_invalid_or_missing"),
                Some("colour")
            ),
            (
                Value::Null,
                "failed",
                Some("parameter_invalid_or_missing"),
                Some("url")
            ),
            (Value::Null, "failed", Some("invalid_entry"), None),
            (
                json!("first.example"),
                "failed",
                Some("domain_exists"),
                Some("url")
            ),
            (json!("last.example"), "created", None, None),
        ],
        "{body}"
    );
    assert!(
        results[1]["reason"].as_str().unwrap().contains("group_id"),
        "the reason names the field: {body}"
    );
    assert_eq!(results[7]["domain"]["url"], "last.example");
    assert_eq!(results[1]["domain"], Value::Null);

    // The request's own shape still answers 400 naming the field.
    let res = app
        .with_key(Method::POST, "/domains/bulk", &s.key)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "invalid_json");
    let too_many: Vec<Value> = (0..501)
        .map(|i| json!({"url": format!("d{i}.example")}))
        .collect();
    for (body, param) in [
        (json!({"domains": {"url": "a.example"}}), "domains"),
        (json!({"domains": "a.example"}), "domains"),
        (json!({}), "domains"),
        (json!({"domains": too_many}), "domains"),
        (
            json!({"domains": [{"url": "a.example"}], "extra": 1}),
            "extra",
        ),
    ] {
        let (status, error) = bulk(&app, &s, &body).await;
        assert_eq!(
            (status, error["param"].as_str()),
            (400, Some(param)),
            "{error}"
        );
    }
}

/// POSTs `body` with an API key straight to the router over `state` (a state no running
/// server uses, e.g. one with a fault-injecting store); the status and JSON body.
async fn post_through(
    state: mailward_http::AppState,
    key: &str,
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{key}:"));
    let request = axum::http::Request::post(path)
        .header("content-type", "application/json")
        .header("authorization", format!("Basic {credentials}"))
        .header("Mailward-Version", mailward_api_tests::VERSION)
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let res = mailward_local_stack::router(state)
        .oneshot(request)
        .await
        .unwrap();
    let status = res.status().as_u16();
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 22)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_storage_failure_in_bulk_fails_that_entry_and_reports_the_others() {
    let app = TestApp::start().await;
    let s = app.sign_up("flaky@example.com", "Flaky Org").await;
    let state = &app.stack.state;
    let poisoned = mailward_http::AppState::new(
        // Any transaction claiming the name `boom.example` fails.
        Arc::new(FaultyStore::new(
            state.store.clone(),
            Box::new(|call| {
                match call {
                StoreCall::Transact(ops)
                    if ops.iter().any(|op| {
                        matches!(op, WriteOp::Put { item, .. } if item.sk == "DOMAINNAME#boom.example")
                    }) =>
                {
                    Err(StoreError::Unavailable("injected outage".into()))
                }
                _ => Ok(()),
            }
            }),
        )),
        state.queue.clone(),
        state.mailer.clone(),
        state.clock.clone(),
        state.resolver.clone(),
        state.config.clone(),
    );
    let (status, body) = post_through(
        poisoned,
        &s.key,
        "/domains/bulk",
        &json!({"domains": [{"url": "before.example"}, {"url": "boom.example"}, {"url": "after.example"}]}),
    )
    .await;
    assert_eq!(status, 200);
    let outcome: Vec<(&str, &str)> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["url"].as_str().unwrap(), r["result"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcome,
        [
            ("before.example", "created"),
            ("boom.example", "failed"),
            ("after.example", "created")
        ],
        "{body}"
    );
    let reason = body["results"][1]["reason"].as_str().unwrap();
    assert!(reason.starts_with("internal_error"), "{reason}");
    assert!(!reason.contains("injected"), "internal causes are not sent");
    assert_eq!(
        (
            body["created_count"].as_u64(),
            body["failed_count"].as_u64()
        ),
        (Some(2), Some(1))
    );
    // What was reported as created is stored.
    let list: Value = app
        .with_key(Method::GET, "/domains?sort=url&order=asc", &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let urls: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, ["after.example", "before.example"]);
}

#[tokio::test]
async fn lists_filter_on_every_managed_flag() {
    let app = TestApp::start().await;
    let s = app.sign_up("managed@example.com", "Managed Org").await;
    for name in ["one.example", "two.example"] {
        assert_eq!(create(&app, &s, name).await.0, 201);
    }
    let list = |query: String| {
        let req = app.with_key(Method::GET, &format!("/domains?{query}"), &s.key);
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    for flag in [
        "is_parked",
        "is_dmarc_managed",
        "is_spf_managed",
        "is_dkim_managed",
        "is_bimi_managed",
        "is_mta_sts_managed",
    ] {
        // No domain is parked or hosted: each filter keeps the domains whose view says false.
        let (status, all) = list(format!("{flag}=false")).await;
        assert_eq!(status, 200, "{all}");
        assert_eq!(all["page_info"]["total_count"], 2, "{flag}");
        assert!(
            all["data"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d[flag] == false)
        );
        let (_, none) = list(format!("{flag}=true")).await;
        assert_eq!(none["page_info"]["total_count"], 0, "{flag}");
        let (status, error) = list(format!("{flag}=maybe")).await;
        assert_eq!(
            (status, error["param"].as_str()),
            (400, Some(flag)),
            "{error}"
        );
    }
    // Unknown query parameters are ignored, as on every list route.
    let (status, all) = list("colour=blue".into()).await;
    assert_eq!(
        (status, all["page_info"]["total_count"].as_u64()),
        (200, Some(2))
    );
}

#[tokio::test]
async fn spf_mechanism_descriptions_and_dmarc_address_lists_are_bounded() {
    let app = TestApp::start().await;
    let s = app.sign_up("bounds@example.com", "Bounds Org").await;
    let (_, domain) = create(&app, &s, "bounds.example").await;
    let id = domain["id"].as_str().unwrap();
    let update = |body: Value| {
        app.with_key(Method::POST, &format!("/domains/{id}"), &s.key)
            .json(&body)
            .send()
    };
    let spf = |descriptions: Value| json!({"spf_options": {"force_flattening": false, "enabled": false, "mechanism_descriptions": descriptions}});
    let res = update(spf(
        json!({"include:_spf.google.com": "Google Workspace", "ip4:192.0.2.1": "Büro-Server"}),
    ))
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
    let updated: Value = res.json().await.unwrap();
    assert_eq!(
        updated["spf_options"]["mechanism_descriptions"]["ip4:192.0.2.1"],
        "Büro-Server"
    );
    let many: serde_json::Map<String, Value> = (0..51)
        .map(|i| (format!("ip4:192.0.2.{i}"), json!("server")))
        .collect();
    let at_limit: serde_json::Map<String, Value> = (0..50)
        .map(|i| (format!("ip4:192.0.2.{i}"), json!("x".repeat(500))))
        .collect();
    assert_eq!(
        update(spf(Value::Object(at_limit))).await.unwrap().status(),
        200
    );
    for descriptions in [
        Value::Object(many),
        json!({"a".repeat(256): "too long a key"}),
        json!({"": "empty key"}),
        json!({"mx": "x".repeat(501)}),
        json!({"mx": "line one\nline two"}),
        json!({"mx\u{0007}": "bell"}),
    ] {
        let res = update(spf(descriptions.clone())).await.unwrap();
        assert_eq!(res.status(), 400, "{descriptions}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["param"],
            "spf_options.mechanism_descriptions"
        );
    }
    let addresses: Vec<String> = (0..21).map(|i| format!("a{i}@example.com")).collect();
    for list in ["additional_emails", "legacy_ruf_emails"] {
        let res = update(json!({"dmarc_options": {
            "policy": "none", "pct": 100, "sp": "same", "strict_spf": false, "strict_dkim": false,
            list: addresses
        }}))
        .await
        .unwrap();
        assert_eq!(res.status(), 400, "{list}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["param"],
            format!("dmarc_options.{list}")
        );
    }
}

/// `POST /domains/{id}` with `body`; the status.
async fn update(app: &TestApp, s: &SignedUp, id: &str, body: Value) -> u16 {
    app.with_key(Method::POST, &format!("/domains/{id}"), &s.key)
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn record<'a>(records: &'a Value, purpose: &str) -> &'a Value {
    record_of(records, purpose).unwrap_or_else(|| panic!("no {purpose} record in {records}"))
}

#[tokio::test]
async fn changing_dmarc_options_withdraws_dmarc_verification_so_the_record_reads_replace() {
    let zone = Zone::new("reverify.test")
        .ns("@", "ns1.reverify.test.")
        .txt("@", "v=spf1 mx -all")
        .mx("@", 10, "mx.reverify.test.")
        .a("mx", "192.0.2.12");
    let (dns, app) = app_on(vec![Zone::new("test"), zone]).await;
    let s = app.sign_up("reverify@example.com", "Reverify Org").await;
    let (_, created) = create(&app, &s, "reverify.test").await;
    let id = created["id"].as_str().unwrap().to_owned();
    let records_path = format!("/domains/{id}/dns-records");
    let stored_purposes = || {
        let store = app.stack.state.store.clone();
        let (org, domain) = (s.org_id.parse().unwrap(), id.parse().unwrap());
        async move {
            mailward_store::domains::get(store.as_ref(), org, domain)
                .await
                .unwrap()
                .unwrap()
                .value
                .verified_purposes
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect::<Vec<String>>()
        }
    };

    // Publish the DMARC record asked for and verify it (SPF is verified as the live record).
    let records = get_json(&app, Method::GET, &records_path, &s.key).await;
    let value = record(&records, "dmarc")["value"]
        .as_str()
        .unwrap()
        .to_owned();
    dns.set_txt("_dmarc.reverify.test", &value).unwrap();
    let verify = app
        .with_key(Method::POST, &format!("/domains/{id}/verify"), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(verify.status(), 200);
    let verified = stored_purposes().await;
    assert!(verified.contains(&"dmarc".to_owned()), "{verified:?}");
    assert!(verified.contains(&"spf".to_owned()), "{verified:?}");

    // Unchanged values and unrelated fields keep every verification.
    let res = app
        .with_key(Method::POST, &format!("/domains/{id}"), &s.key)
        .json(&json!({
            "dmarc_setup_at": "2025-01-01T00:00:00Z",
            "dmarc_options": created["dmarc_options"],
            "spf_options": {"force_flattening": false, "enabled": false, "mechanism_descriptions": {"mx": "our MX"}}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(stored_purposes().await, verified);

    // A new policy: the old live record needs replacing, it has not drifted.
    let mut options = created["dmarc_options"].clone();
    options["policy"] = json!("quarantine");
    assert_eq!(
        update(&app, &s, &id, json!({ "dmarc_options": options })).await,
        200
    );
    let after = stored_purposes().await;
    assert!(!after.contains(&"dmarc".to_owned()), "{after:?}");
    assert!(
        after.contains(&"spf".to_owned()),
        "only dmarc is withdrawn: {after:?}"
    );
    let records = get_json(&app, Method::GET, &records_path, &s.key).await;
    let dmarc = record(&records, "dmarc");
    assert_ne!(dmarc["status"], "drifted", "{dmarc}");
    assert_eq!(
        (dmarc["status"].as_str(), dmarc["action"].as_str()),
        (Some("verifying"), Some("replace")),
        "{dmarc}"
    );
    assert_eq!(record(&records, "spf")["status"], "verified", "{records}");

    // Parking locks DMARC, SPF and DKIM down: their verifications are withdrawn too.
    assert_eq!(
        update(&app, &s, &id, json!({ "is_parked": true })).await,
        200
    );
    let parked = stored_purposes().await;
    assert!(!parked.contains(&"spf".to_owned()), "{parked:?}");
    let records = get_json(&app, Method::GET, &records_path, &s.key).await;
    assert_eq!(record(&records, "spf")["status"], "verifying", "{records}");
}

/// Stores a snapshot of `domain` as the sweep would.
async fn store_snapshot(
    app: &TestApp,
    s: &SignedUp,
    domain: &str,
    record_type: &str,
    values: &[&str],
    seconds_ago: i64,
) -> uuid::Uuid {
    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let snapshot = Snapshot {
        id: uuid::Uuid::new_v4(),
        domain_id: domain.parse().unwrap(),
        record_type: record_type.into(),
        values: values.iter().map(|v| (*v).to_owned()).collect(),
        captured_at: app.clock.now() - time::Duration::seconds(seconds_ago),
    };
    app.stack
        .state
        .store
        .transact(snapshots::record_ops(org, &snapshot).unwrap())
        .await
        .unwrap();
    snapshot.id
}

#[tokio::test]
async fn snapshot_diff_is_on_when_bare_true_or_1_and_off_when_false_or_0() {
    let app = TestApp::start().await;
    let s = app.sign_up("diff@example.com", "Diff Org").await;
    let (_, domain) = create(&app, &s, "diff.example").await;
    let id = domain["id"].as_str().unwrap();
    store_snapshot(&app, &s, id, "spf", &["v=spf1 mx -all"], 20).await;
    let latest = store_snapshot(&app, &s, id, "spf", &["v=spf1 -all"], 10).await;
    let path = format!("/domains/{id}/dns-snapshots/{latest}");
    for query in ["?diff", "?diff=", "?diff=true", "?diff=1"] {
        let snapshot = get_json(&app, Method::GET, &format!("{path}{query}"), &s.key).await;
        assert_eq!(snapshot["diff"]["added"], json!(["v=spf1 -all"]), "{query}");
        assert_eq!(
            snapshot["diff"]["removed"],
            json!(["v=spf1 mx -all"]),
            "{query}"
        );
    }
    for query in ["", "?diff=false", "?diff=0"] {
        let snapshot = get_json(&app, Method::GET, &format!("{path}{query}"), &s.key).await;
        assert!(snapshot.get("diff").is_none(), "{query}: {snapshot}");
    }
    for query in ["?diff=yes", "?diff=2", "?diff=TRUEISH"] {
        let res = app
            .with_key(Method::GET, &format!("{path}{query}"), &s.key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{query}");
        assert_eq!(
            res.json::<Value>().await.unwrap()["param"],
            "diff",
            "{query}"
        );
    }
}

#[tokio::test]
async fn deleting_a_domain_deletes_its_snapshots_even_past_one_transaction() {
    let app = TestApp::start().await;
    let s = app.sign_up("snapdel@example.com", "Snapdel Org").await;
    let (_, doomed) = create(&app, &s, "doomed.example").await;
    let (_, kept) = create(&app, &s, "kept.example").await;
    let doomed = doomed["id"].as_str().unwrap().to_owned();
    let kept = kept["id"].as_str().unwrap().to_owned();
    // 120 snapshots over every type plus the 8 latest markers: more than one transaction holds.
    let types = mailward_domain::snapshots::TYPES;
    for i in 0..120i64 {
        let value = format!("value {i}");
        let record_type = types[usize::try_from(i).unwrap() % types.len()];
        store_snapshot(&app, &s, &doomed, record_type, &[&value], 1000 - i).await;
    }
    store_snapshot(&app, &s, &kept, "spf", &["v=spf1 -all"], 5).await;
    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let items = |domain: String| {
        let store = app.stack.state.store.clone();
        async move {
            let domain: uuid::Uuid = domain.parse().unwrap();
            let mut count = 0;
            for prefix in [
                keys::snapshot_prefix(domain, None),
                keys::snapshot_latest_prefix(domain),
            ] {
                count += query_all(
                    store.as_ref(),
                    Query::partition(keys::domain_pk(org, domain)).prefix(prefix),
                )
                .await
                .unwrap()
                .len();
            }
            count
        }
    };
    assert_eq!(items(doomed.clone()).await, 128);
    assert_eq!(items(kept.clone()).await, 2);

    let res = app
        .with_key(Method::DELETE, &format!("/domains/{doomed}"), &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(items(doomed).await, 0, "every snapshot item is gone");
    assert_eq!(items(kept.clone()).await, 2, "other domains keep theirs");
    let list = get_json(
        &app,
        Method::GET,
        &format!("/domains/{kept}/dns-snapshots"),
        &s.key,
    )
    .await;
    assert_eq!(list["page_info"]["total_count"], 1);
}

/// Runs `POST /domains/{id}` with `body` through a store where `intervene` changes the stored
/// domain (as the sweep or another person would) right before the request's own save.
async fn update_with_interleaved_write(
    intervene: fn(&mut mailward_domain::domain::Domain),
    body: Value,
) -> (u16, mailward_domain::domain::Domain) {
    let app = TestApp::start().await;
    let s = app
        .sign_up("interleave@example.com", "Interleave Org")
        .await;
    let (_, created) = create(&app, &s, "interleave.example").await;
    let id: uuid::Uuid = created["id"].as_str().unwrap().parse().unwrap();
    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let state = &app.stack.state;
    let inner = state.store.clone();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let rule_store = inner.clone();
    let store = FaultyStore::new(
        inner.clone(),
        Box::new(move |call| {
            let saves_domain = matches!(call, StoreCall::Transact(ops)
                if ops.iter().any(|op| matches!(op, WriteOp::Put { item, .. } if item.sk.starts_with("DOMAIN#"))));
            if saves_domain && !done.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let store = rule_store.clone();
                // The interleaved writer runs to completion before this save goes on.
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Runtime::new().unwrap();
                    rt.block_on(async {
                        let current = mailward_store::domains::get(store.as_ref(), org, id)
                            .await
                            .unwrap()
                            .unwrap();
                        let mut changed = current.value.clone();
                        intervene(&mut changed);
                        store
                            .transact(
                                mailward_store::domains::save_ops(
                                    &changed,
                                    &current.value,
                                    current.version,
                                )
                                .unwrap(),
                            )
                            .await
                            .unwrap();
                    });
                })
                .join()
                .unwrap();
            }
            Ok(())
        }),
    );
    let intercepted = mailward_http::AppState::new(
        Arc::new(store),
        state.queue.clone(),
        state.mailer.clone(),
        state.clock.clone(),
        state.resolver.clone(),
        state.config.clone(),
    );
    let (status, _) = post_through(intercepted, &s.key, &format!("/domains/{id}"), &body).await;
    let stored = mailward_store::domains::get(inner.as_ref(), org, id)
        .await
        .unwrap()
        .unwrap()
        .value;
    (status, stored)
}

#[tokio::test]
async fn a_sweep_write_between_read_and_save_is_not_a_conflict_but_a_person_write_is() {
    // The sweep claims the domain and changes its score: the person's update still lands.
    let (status, stored) = update_with_interleaved_write(
        |d| {
            d.score = 77;
            d.sweep_claimed_until = Some(time::OffsetDateTime::now_utc());
        },
        json!({"target_spf": "v=spf1 -all"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(stored.target_spf.as_deref(), Some("v=spf1 -all"));
    assert_eq!(stored.score, 77, "the sweep's write is kept");

    // Another person parked it meanwhile: a clear 409, nothing of this request applied.
    let (status, stored) =
        update_with_interleaved_write(|d| d.is_parked = true, json!({"target_spf": "v=spf1 -all"}))
            .await;
    assert_eq!(status, 409);
    assert_eq!(stored.target_spf, None);
    assert!(stored.is_parked);
}
