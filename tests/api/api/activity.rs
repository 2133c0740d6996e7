//! The activity log: one walk through every kind of mutation the service offers, by a person,
//! by an API key and by the service itself, then the log read back and filtered.

use crate::admin::token_for;
use crate::common::app_on;
use crate::common::{call, call_as, get, strings};
use mailward_dns_fixture::Zone;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A domain with problems, so the sweep opens tasks.
fn troubled(name: &str) -> Zone {
    Zone::new(name)
        .ns("@", &format!("ns1.{name}."))
        .mx("@", 10, &format!("mx.{name}."))
        .a("mx", "192.0.2.40")
        .txt("@", "v=spf1 mx +all")
}

/// Every entry of the organization's log, newest first, through the paginated route.
async fn whole_log(app: &mailward_api_tests::TestApp, key: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for page in 1.. {
        let (status, body) = call(
            app,
            Method::GET,
            &format!("/activity-log?per_page=100&page={page}"),
            key,
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let data = body["data"].as_array().unwrap().clone();
        if data.is_empty() {
            break;
        }
        all.extend(data);
    }
    all
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn every_mutation_is_logged_with_its_actor() {
    let (_dns, app) = app_on(vec![troubled("walk.example")]).await;
    let s = app.sign_up("admin@walk.example", "Walk Co").await;
    let session = app
        .session_token("admin@walk.example", &s.org_id, true)
        .await;
    app.sign_up("friend@walk.example", "Friend's").await;
    // (action, actor type, target id) expected in the log, in the order made.
    let mut expected: Vec<(&str, &str, Option<String>)> =
        vec![("organization.created", "USER", Some(s.org_id.clone()))];

    // API keys: created by a person, rotated and deleted with a key.
    let (status, key) = call_as(
        &app,
        Method::POST,
        "/api-keys",
        &session,
        Some(json!({"name": "ci"})),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    expected.push(("api_key.created", "USER", Some(id(&key))));
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/api-keys/{}/rotate", id(&key)),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 200);
    expected.push(("api_key.rotated", "API_KEY", Some(id(&key))));
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/api-keys/{}", id(&key)),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    expected.push(("api_key.deleted", "API_KEY", Some(id(&key))));

    // Groups and domains.
    let (_, group) = call(
        &app,
        Method::POST,
        "/groups",
        &s.key,
        Some(json!({"name": "G"})),
    )
    .await;
    expected.push(("group.created", "API_KEY", Some(id(&group))));
    let (_, _) = call_as(
        &app,
        Method::POST,
        &format!("/groups/{}", id(&group)),
        &session,
        Some(json!({"name": "G2"})),
    )
    .await;
    expected.push(("group.updated", "USER", Some(id(&group))));
    let (status, domain) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "walk.example", "group_id": id(&group)})),
    )
    .await;
    assert_eq!(status, 201);
    expected.push(("domain.created", "API_KEY", Some(id(&domain))));
    let (status, bulk) = call(
        &app,
        Method::POST,
        "/domains/bulk",
        &s.key,
        Some(json!({"domains": [{"url": "bulk.example"}]})),
    )
    .await;
    assert_eq!(status, 200, "{bulk}");
    let listed = get(&app, "/domains?sort=url&order=asc", &s.key).await;
    let bulk_id = id(&listed["data"][0]);
    expected.push(("domain.created", "API_KEY", Some(bulk_id.clone())));
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/domains/{}", id(&domain)),
        &session,
        Some(json!({"agent_proposals_enabled": false})),
    )
    .await;
    assert_eq!(status, 200);
    expected.push(("domain.updated", "USER", Some(id(&domain))));
    let (status, verified) = call(
        &app,
        Method::POST,
        &format!("/domains/{}/verify", id(&domain)),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{verified}");
    let confirmed = match &verified["verified"] {
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        other => panic!("verified is {other}"),
    };
    if confirmed {
        expected.push(("domain.verified", "API_KEY", Some(id(&domain))));
    }
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/domains/{bulk_id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    expected.push(("domain.deleted", "API_KEY", Some(bulk_id)));

    // The sweep (the service itself) moves the domain and opens tasks; a person changes one.
    mailward_workers::sweep::sweep_now(&app.stack.state)
        .await
        .unwrap();
    let swept = get(&app, &format!("/domains/{}", id(&domain)), &s.key).await;
    if swept["monitoring_status"] != domain["monitoring_status"] {
        expected.push(("domain.monitoring_changed", "SYSTEM", Some(id(&domain))));
    }
    let tasks = get(&app, "/tasks", &s.key).await;
    let task = tasks["data"][0].clone();
    expected.push(("task.opened", "SYSTEM", Some(id(&task))));
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/tasks/{}", id(&task)),
        &session,
        Some(json!({"status": "dismissed"})),
    )
    .await;
    assert_eq!(status, 200);
    expected.push(("task.updated", "USER", Some(id(&task))));

    // People. The friend first joins a child organization by accepting its invitation, so the
    // parent's key may then add them directly (tenant trust: a stranger would be invited).
    let (status, child) = call_as(
        &app,
        Method::POST,
        "/organizations",
        &session,
        Some(json!({"name": "Walk Child", "invite_email": "friend@walk.example"})),
    )
    .await;
    assert_eq!(status, 201, "{child}");
    crate::admin::accept(&app, "friend@walk.example").await;
    let (status, friend) = call(
        &app,
        Method::POST,
        "/members",
        &s.key,
        Some(json!({"email": "friend@walk.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201);
    expected.push(("member.added", "API_KEY", Some(id(&friend))));
    let (_, _) = call_as(
        &app,
        Method::POST,
        &format!("/members/{}", id(&friend)),
        &session,
        Some(json!({"roles": ["editor"]})),
    )
    .await;
    expected.push(("member.updated", "USER", Some(id(&friend))));
    let (_, _) = call(
        &app,
        Method::DELETE,
        &format!("/members/{}", id(&friend)),
        &s.key,
        None,
    )
    .await;
    expected.push(("member.removed", "API_KEY", Some(id(&friend))));
    let (status, inv) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &session,
        Some(json!({"email": "new@walk.example", "roles": ["viewer"]})),
    )
    .await;
    assert_eq!(status, 201);
    expected.push(("invitation.created", "USER", Some(id(&inv))));
    let (_, _) = call(
        &app,
        Method::POST,
        &format!("/invitations/{}/resend", id(&inv)),
        &s.key,
        None,
    )
    .await;
    expected.push(("invitation.resent", "API_KEY", Some(id(&inv))));
    let token = token_for(&app, "new@walk.example");
    let res = app
        .request(Method::POST, "/invitations/accept")
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let joined: Value = res.json().await.unwrap();
    expected.push(("invitation.accepted", "USER", Some(id(&joined["member"]))));
    let (_, inv2) = call_as(
        &app,
        Method::POST,
        "/invitations",
        &session,
        Some(json!({"email": "other@walk.example", "roles": ["viewer"]})),
    )
    .await;
    expected.push(("invitation.created", "USER", Some(id(&inv2))));
    let (_, _) = call(
        &app,
        Method::DELETE,
        &format!("/invitations/{}", id(&inv2)),
        &s.key,
        None,
    )
    .await;
    expected.push(("invitation.revoked", "API_KEY", Some(id(&inv2))));

    // Webhook endpoints.
    let (status, hook) = call(
        &app,
        Method::POST,
        "/webhook-endpoints",
        &s.key,
        Some(json!({"url": "https://hooks.walk.example/in"})),
    )
    .await;
    assert_eq!(status, 201, "{hook}");
    expected.push(("webhook_endpoint.created", "API_KEY", Some(id(&hook))));
    let (_, _) = call(
        &app,
        Method::POST,
        &format!("/webhook-endpoints/{}", id(&hook)),
        &s.key,
        Some(json!({"description": "ops"})),
    )
    .await;
    expected.push(("webhook_endpoint.updated", "API_KEY", Some(id(&hook))));
    let (_, _) = call_as(
        &app,
        Method::POST,
        &format!("/webhook-endpoints/{}/rotate-secret", id(&hook)),
        &session,
        None,
    )
    .await;
    expected.push(("webhook_endpoint.secret_rotated", "USER", Some(id(&hook))));
    let (_, _) = call(
        &app,
        Method::DELETE,
        &format!("/webhook-endpoints/{}", id(&hook)),
        &s.key,
        None,
    )
    .await;
    expected.push(("webhook_endpoint.deleted", "API_KEY", Some(id(&hook))));

    // The organization.
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/organizations/{}", s.org_id),
        &s.key,
        Some(json!({"website": "https://walk.example"})),
    )
    .await;
    assert_eq!(status, 200);
    expected.push(("organization.updated", "API_KEY", Some(s.org_id.clone())));
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/organizations/{}/onboarding/dismiss", s.org_id),
        &session,
        None,
    )
    .await;
    assert_eq!(status, 200);
    expected.push((
        "organization.onboarding_dismissed",
        "USER",
        Some(s.org_id.clone()),
    ));
    let (_, _) = call(
        &app,
        Method::DELETE,
        &format!("/groups/{}", id(&group)),
        &s.key,
        None,
    )
    .await;
    expected.push(("group.deleted", "API_KEY", Some(id(&group))));

    // Support: a person opens a ticket, support staff answer, a key replies, a person reads.
    let (status, ticket) = call_as(
        &app,
        Method::POST,
        "/support/tickets",
        &session,
        Some(json!({"subject": "Help", "body": "Please"})),
    )
    .await;
    assert_eq!(status, 201);
    expected.push(("support.ticket_opened", "USER", Some(id(&ticket))));
    mailward_services::support::staff_reply(
        &app.stack.state,
        s.org_id.parse().unwrap(),
        id(&ticket).parse().unwrap(),
        "Hello",
        &[],
        false,
    )
    .await
    .unwrap();
    expected.push(("support.replied", "SERVICE_STAFF", Some(id(&ticket))));
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/support/tickets/{}/replies", id(&ticket)),
        &s.key,
        Some(json!({"body": "Thanks"})),
    )
    .await;
    assert_eq!(status, 201);
    expected.push(("support.replied", "API_KEY", Some(id(&ticket))));
    let (status, _) = call_as(
        &app,
        Method::POST,
        &format!("/support/tickets/{}/read", id(&ticket)),
        &session,
        None,
    )
    .await;
    assert_eq!(status, 200);
    expected.push(("support.read", "USER", Some(id(&ticket))));

    let log = whole_log(&app, &s.key).await;
    for (action, actor, target) in &expected {
        let found = log.iter().any(|e| {
            e["action"] == *action
                && e["actor_type"] == *actor
                && e["target_id"].as_str().map(str::to_owned) == *target
        });
        assert!(
            found,
            "no {actor} {action} on {target:?} in the log:\n{}",
            serde_json::to_string_pretty(&log).unwrap()
        );
    }
    // Actors are named: the person's account, the key's id; the service has none.
    let user = log.iter().find(|e| e["actor_type"] == "USER").unwrap();
    assert!(user["actor_id"].is_string());
    assert!(
        log.iter()
            .filter(|e| e["actor_type"] == "SYSTEM")
            .all(|e| e["actor_id"].is_null())
    );
    assert!(
        log.iter()
            .filter(|e| e["actor_type"] == "API_KEY")
            .all(|e| e["actor_id"] == s.key_id.as_str())
    );
    // Changes carry what they replaced.
    let update = log
        .iter()
        .find(|e| e["action"] == "organization.updated")
        .unwrap();
    assert_eq!(update["previous"]["website"], Value::Null);
    assert!(
        update["previous"]
            .as_object()
            .unwrap()
            .contains_key("website")
    );

    // Every action seen is in the catalogue.
    let actions = get(&app, "/activity-log/actions", &s.key).await;
    let known = strings(&actions, "action");
    assert!(
        log.iter()
            .all(|e| known.iter().any(|k| e["action"] == k.as_str()))
    );

    // Filters, one entry, and refusals.
    let by_key = get(
        &app,
        "/activity-log?actor_type=API_KEY&per_page=100",
        &s.key,
    )
    .await;
    assert!(
        by_key["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["actor_type"] == "API_KEY")
    );
    let on_group = get(
        &app,
        &format!("/activity-log?target_id={}", id(&group)),
        &s.key,
    )
    .await;
    let actions_on_group = strings(&on_group["data"], "action");
    assert_eq!(actions_on_group.len(), 3, "{actions_on_group:?}");
    let created = get(
        &app,
        "/activity-log?action=domain.created&target_type=domain",
        &s.key,
    )
    .await;
    assert_eq!(created["page_info"]["total_count"], 2);
    let future = get(&app, "/activity-log?since=2100-01-01T00:00:00Z", &s.key).await;
    assert_eq!(future["page_info"]["total_count"], 0);
    let past = get(&app, "/activity-log?until=2000-01-01T00:00:00Z", &s.key).await;
    assert_eq!(past["page_info"]["total_count"], 0);
    let one = &log[0];
    let (status, read) = call(
        &app,
        Method::GET,
        &format!("/activity-log/{}", id(one)),
        &s.key,
        None,
    )
    .await;
    assert_eq!((status, &read), (StatusCode::OK, one));
    for (query, param) in [
        ("actor_type=ROBOT", "actor_type"),
        ("action=domain.exploded", "action"),
        ("since=yesterday", "since"),
        ("per_page=0", "per_page"),
    ] {
        let (status, body) = call(
            &app,
            Method::GET,
            &format!("/activity-log?{query}"),
            &s.key,
            None,
        )
        .await;
        assert_eq!(
            (status, body["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{query}"
        );
    }
    // Another organization cannot read these entries.
    let other = app.sign_up("admin@other-walk.example", "Other Walk").await;
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/activity-log/{}", id(one)),
        &other.key,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let theirs = whole_log(&app, &other.key).await;
    assert_eq!(theirs.len(), 1, "only their own signup");
}
