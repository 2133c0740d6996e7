//! Domains: create, read, list (filters, sorts, expand, pagination), update, delete, bulk, and
//! the events they commit.

use mailward_api_tests::{SignedUp, TestApp};
use mailward_domain::store::{Query, query_all};
use reqwest::Method;
use serde_json::{Value, json};

async fn events(app: &TestApp) -> Vec<Value> {
    let mut all = Vec::new();
    for shard in 0..4 {
        all.extend(
            query_all(
                app.stack.state.store.as_ref(),
                Query::partition(format!("OUTBOX#{shard}")),
            )
            .await
            .unwrap(),
        );
    }
    all.iter()
        .map(|i| serde_json::from_slice(&i.data).unwrap())
        .collect()
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
        (json!({"backfill_tickets": true}), "backfill_tickets"),
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
