//! Organization deletion (SPEC `DELETE /organizations/{id}`): the whole store and the whole
//! bucket are listed before and after the purge, and nothing of the organization is left:
//! not its partition, not its entries in the global indexes (domain names, API keys,
//! invitation and SCIM tokens), not its people's sessions and connections in it, not the
//! accounts only it had, not its objects. What other organizations share survives.

use crate::common::{add_domain, call, call_as, for_org};
use mailward_api_tests::{SignedUp, TestApp};
use mailward_domain::store::scan_all;
use mailward_reports::Limits;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// Every stored item as `pk | sk | data` text, and every object key.
async fn everything(app: &TestApp) -> (Vec<String>, Vec<String>) {
    let state = &app.stack.state;
    let items = scan_all(state.store.as_ref())
        .await
        .unwrap()
        .into_iter()
        .map(|i| format!("{} | {} | {}", i.pk, i.sk, String::from_utf8_lossy(&i.data)))
        .collect();
    let objects = state.objects.as_ref().expect("objects").list("").await;
    (items, objects.unwrap())
}

/// What mentions any of `needles` (case-insensitively).
fn mentions(all: &[String], needles: &[String]) -> Vec<String> {
    all.iter()
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            needles
                .iter()
                .any(|n| lower.contains(&n.to_ascii_lowercase()))
        })
        .cloned()
        .collect()
}

/// An organization with something of every kind: people (one only here, one shared), a
/// pending invitation, keys, a SCIM token, domains (one also watched next door), reports,
/// a ticket with an attachment, a subscription, sessions.
async fn furnish(app: &TestApp, leaving: &SignedUp, staying: &SignedUp) -> Vec<String> {
    let shared_person = "both@purge.example";
    crate::admin::member(app, leaving, shared_person, &["editor"], &[]).await;
    let token = app
        .session_token(&leaving.email, &leaving.org_id, false)
        .await;
    let posts: [(&str, Value); 4] = [
        ("/api-keys", json!({"name": "CI"})),
        ("/scim-tokens", json!({"name": "Okta"})),
        (
            "/invitations",
            json!({"email": "later@purge.example", "roles": ["viewer"]}),
        ),
        (
            "/support/presigned-url",
            json!({"file_name": "shot.png", "mime_type": "image/png"}),
        ),
    ];
    let mut bodies = Vec::new();
    for (path, body) in posts {
        let (status, answer) = call_as(app, Method::POST, path, &token, Some(body)).await;
        assert!(status.is_success(), "{path}: {answer}");
        bodies.push(answer);
    }
    let form = &bodies[3];
    let mut multipart = reqwest::multipart::Form::new();
    for (name, value) in form["fields"].as_object().unwrap() {
        multipart = multipart.text(name.clone(), value.as_str().unwrap().to_owned());
    }
    let png = reqwest::multipart::Part::bytes(vec![0x89, b'P', b'N', b'G']).file_name("shot.png");
    let res = app
        .http
        .post(form["url"].as_str().unwrap())
        .multipart(multipart.part("file", png))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "upload");
    let ticket = json!({"subject": "Help", "body": "Our DMARC", "attachments": [form["key"]]});
    let (status, answer) = call(
        app,
        Method::POST,
        "/support/tickets",
        &leaving.key,
        Some(ticket),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    app.subscribe(leaving, "it_teams").await;

    let own = add_domain(app, &leaving.key, "only-leaving.purge.example").await;
    let both = add_domain(app, &leaving.key, "both.purge.example").await;
    add_domain(app, &staying.key, "both.purge.example").await;
    for (name, id) in [
        ("only-leaving.purge.example", "r1"),
        ("both.purge.example", "r2"),
    ] {
        let delivery = for_org(leaving);
        mailward_workers::ingest::ingest(
            &app.stack.state,
            &crate::retention::dmarc(app, name, id, 2),
            &delivery,
            &Limits::default(),
        )
        .await
        .unwrap();
    }
    let mut needles = vec![leaving.org_id.clone(), leaving.email.clone()];
    for value in [
        &own["id"],
        &both["id"],
        &bodies[0]["id"],
        &bodies[1]["id"],
        &bodies[2]["id"],
    ] {
        needles.push(value.as_str().expect("an id").to_owned());
    }
    needles.push(leaving.key.clone());
    needles
}

/// Waits until the store and the bucket stop changing (the jobs the imports queued are done).
async fn settle(app: &TestApp) {
    let mut last = everything(app).await;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = everything(app).await;
        if now == last {
            return;
        }
        last = now;
    }
}

/// What of the organization is left, waiting up to ten seconds for `done` to hold.
async fn left_until(
    app: &TestApp,
    needles: &[String],
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut left = Vec::new();
    for _ in 0..200 {
        let (items, objects) = everything(app).await;
        left = mentions(&items, needles);
        left.extend(mentions(&objects, needles));
        if done(&left) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    left
}

#[tokio::test]
async fn a_deleted_organization_leaves_nothing_in_the_store_or_the_bucket() {
    let app = mailward_api_tests::TestApp::start_with(|s| {
        s.publish_outbox = false;
        s.purge_final_pass_delay = Some(Duration::from_secs(900));
    })
    .await;
    let leaving = app.sign_up("owner@purge.example", "Leaving Org").await;
    let staying = app.sign_up("next@purge.example", "Staying Org").await;
    let needles = furnish(&app, &leaving, &staying).await;
    // Identification and publication settle.
    app.clock.advance(time::Duration::seconds(10));
    settle(&app).await;
    let (items, objects) = everything(&app).await;
    assert!(
        mentions(&items, &needles).len() > 20,
        "the organization is stored"
    );
    assert!(
        objects.iter().any(|k| k.contains(&leaving.org_id)),
        "its attachment is in the bucket: {objects:?}"
    );
    let raw_before = objects
        .iter()
        .filter(|k| k.starts_with("reports/raw/"))
        .count();
    assert_eq!(raw_before, 2, "{objects:?}");

    let res = app
        .with_key(
            Method::DELETE,
            &format!("/organizations/{}", leaving.org_id),
            &leaving.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    // The first pass keeps the organization's record (still deleting) and a note per domain.
    // A job already running when the purge began (a sender identification in its reverse-DNS
    // lookups, slow on moto) may still write an item of one of those domains after the pass
    // (its sender requirements, say): the final pass removes such stragglers, checked below.
    let org_pk = format!("ORG#{} | ", leaving.org_id);
    let noted = |left: &[String]| -> Vec<String> {
        left.iter()
            .filter_map(|line| line.strip_prefix(&format!("{org_pk}DOMAINGONE#")))
            .filter_map(|rest| rest.split(' ').next())
            .map(str::to_owned)
            .collect()
    };
    let kept = |line: &String| {
        (line.starts_with(&format!("{org_pk}META")) && line.contains("\"state\":\"deleting\""))
            || line.starts_with(&format!("{org_pk}DOMAINGONE#"))
    };
    let first_pass_done = |left: &[String]| {
        let notes = noted(left);
        notes.len() == 2
            && left.iter().all(|line| {
                kept(line)
                    || (notes.iter().any(|d| line.contains(d.as_str()))
                        && !line.starts_with(&format!("{org_pk}DOMAIN#"))
                        && !line.starts_with(&format!("{org_pk}DCARD#")))
            })
    };
    let left = left_until(&app, &needles, first_pass_done).await;
    assert!(
        first_pass_done(&left),
        "after the first pass:\n{}",
        left.join("\n")
    );
    assert_eq!(
        left.iter().filter(|line| kept(line)).count(),
        3,
        "the record and two notes:\n{}",
        left.join("\n")
    );
    // A job that was running when the purge began writes into a domain's partition after it
    // (a sender identification finishing its lookups).
    let own = left
        .iter()
        .find_map(|line| line.split("DOMAINGONE#").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|id| uuid::Uuid::parse_str(id).ok())
        .expect("a note names a domain");
    let org: uuid::Uuid = leaving.org_id.parse().unwrap();
    app.stack
        .state
        .store
        .put(
            mailward_domain::store::Item::new(
                mailward_store::keys::domain_pk(org, own),
                mailward_store::keys::report_total_sk(own, "2026-11-01"),
                b"{}".to_vec(),
            ),
            mailward_domain::store::Condition::None,
        )
        .await
        .unwrap();
    // The final pass, fifteen minutes later, removes it and the record.
    app.clock.advance(time::Duration::seconds(901));
    let left = left_until(&app, &needles, <[String]>::is_empty).await;
    assert!(left.is_empty(), "left behind:\n{}", left.join("\n"));

    // The raw delivery only the leaving organization received is gone; the one a neighbour
    // watching the same name may still need stays.
    let (items, objects) = everything(&app).await;
    let raw_after = objects
        .iter()
        .filter(|k| k.starts_with("reports/raw/"))
        .count();
    assert_eq!(raw_after, 1, "{objects:?}");
    // The neighbour and the person both organizations had are untouched.
    assert!(mentions(&items, &["both@purge.example".to_owned()]).len() >= 2);
    let (status, domains) = call(&app, Method::GET, "/domains", &staying.key, None).await;
    assert_eq!(status, 200);
    assert_eq!(domains["data"][0]["url"], "both.purge.example", "{domains}");
    let watchers =
        mailward_store::reports::watchers(app.stack.state.store.as_ref(), "both.purge.example")
            .await
            .unwrap();
    assert_eq!(watchers.len(), 1, "only the neighbour watches the name now");
}
