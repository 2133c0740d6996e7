//! The per-domain partitions (`ORG#<org>#D#<domain>`) read what the previous version wrote in
//! the organization's partition: a domain's snapshots, reports, rows, totals, senders are served
//! unchanged, moved on first read (so a versioned write that follows finds its item), and the
//! daily job (the layout's migration job) moves every other domain.

use crate::common::{add_domain, call, for_org, get_json, identify_now, today_start};
use mailward_api_tests::TestApp;
use mailward_domain::store::{Condition, Item, ItemStore, Query, WriteOp, query_all};
use reqwest::Method;
use serde_json::json;

fn report(app: &TestApp, domain: &str) -> Vec<u8> {
    let begin = today_start(app) - 86_400;
    let mut records = String::new();
    for ip in ["192.0.2.1", "192.0.2.2", "198.51.100.7"] {
        records.push_str(&format!(
            "<record><row><source_ip>{ip}</source_ip><count>5</count><policy_evaluated>\
<disposition>none</disposition><dkim>fail</dkim><spf>pass</spf></policy_evaluated></row>\
<identifiers><header_from>{domain}</header_from></identifiers>\
<auth_results><spf><domain>{domain}</domain><result>pass</result></spf></auth_results></record>"
        ));
    }
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{domain}-1</report_id>\
<date_range><begin>{begin}</begin><end>{}</end></date_range></report_metadata>\
<policy_published><domain>{domain}</domain><p>none</p></policy_published>{records}</feedback>",
        begin + 86_399
    )
    .into_bytes()
}

/// Moves every item of the domain's partition back to where the previous version kept it.
async fn back_to_old_layout(store: &dyn ItemStore, org: &str, domain: &str) -> usize {
    let items = query_all(store, Query::partition(format!("ORG#{org}#D#{domain}")))
        .await
        .unwrap();
    for item in &items {
        let old = Item {
            pk: format!("ORG#{org}"),
            ..item.clone()
        };
        store
            .transact(vec![
                WriteOp::Put {
                    item: old,
                    condition: mailward_domain::store::Condition::None,
                },
                WriteOp::Delete {
                    pk: item.pk.clone(),
                    sk: item.sk.clone(),
                    condition: mailward_domain::store::Condition::None,
                },
            ])
            .await
            .unwrap();
    }
    items.len()
}

/// Items of the domain in the organization's partition (the old place) and in its own.
async fn places(store: &dyn ItemStore, org: &str, domain: &str) -> (usize, usize) {
    let old = query_all(store, Query::partition(format!("ORG#{org}")))
        .await
        .unwrap()
        .iter()
        .filter(|i| i.sk.contains(domain))
        .filter(|i| {
            let kind = i.sk.split('#').next().unwrap_or_default();
            mailward_store::domain_data::moved_prefixes(domain.parse().unwrap())
                .iter()
                .any(|p| p.starts_with(&format!("{kind}#")))
        })
        .count();
    let new = query_all(store, Query::partition(format!("ORG#{org}#D#{domain}")))
        .await
        .unwrap()
        .len();
    (old, new)
}

#[tokio::test]
async fn data_left_in_the_organizations_partition_is_served_then_moved() {
    let app = TestApp::start_with(|s| s.publish_outbox = false).await;
    let s = app.sign_up("layout@layout.example", "Layout").await;
    let store = app.stack.state.store.clone();
    let mut ids = Vec::new();
    for name in ["read.layout.example", "job.layout.example"] {
        let domain = add_domain(&app, &s.key, name).await;
        let id = domain["id"].as_str().unwrap().to_owned();
        mailward_workers::ingest::ingest(
            &app.stack.state,
            &report(&app, name),
            &for_org(&s),
            &mailward_reports::Limits::default(),
        )
        .await
        .unwrap();
        identify_now(&app, &s, &id).await;
        ids.push(id);
    }
    let (read_id, job_id) = (&ids[0], &ids[1]);
    let summary_path = format!("/domains/{read_id}/reports/summary?period=last_30_days");
    let senders_path = format!("/domains/{read_id}/sources");
    let summary = get_json(&app, Method::GET, &summary_path, &s.key).await;
    let senders = get_json(&app, Method::GET, &senders_path, &s.key).await;
    assert_eq!(senders.as_array().unwrap().len(), 3, "{senders}");
    assert_eq!(summary["volume"], 15, "{summary}");

    // As the previous version left them.
    for id in &ids {
        let moved = back_to_old_layout(store.as_ref(), &s.org_id, id).await;
        assert!(moved >= 5, "rows, total, report, senders: {moved}");
        assert_eq!(places(store.as_ref(), &s.org_id, id).await.1, 0);
    }

    // Served unchanged, and moved by the first read.
    assert_eq!(
        get_json(&app, Method::GET, &senders_path, &s.key).await,
        senders
    );
    assert_eq!(
        get_json(&app, Method::GET, &summary_path, &s.key).await,
        summary
    );
    let (old, new) = places(store.as_ref(), &s.org_id, read_id).await;
    assert_eq!(old, 0, "nothing of the domain left in the old place");
    assert!(new >= 5);

    // A versioned write after the read finds the sender where it now lives.
    let sid = senders[0]["id"].as_str().unwrap();
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/domains/{read_id}/sources/{sid}"),
        &s.key,
        Some(json!({"confirmation_status": "confirmed"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["confirmation_status"], "confirmed");

    // The other domain, never read, is moved by the daily job.
    assert!(places(store.as_ref(), &s.org_id, job_id).await.0 > 0);
    let (removed, _) = mailward_workers::retention::run_now(&app.stack.state)
        .await
        .unwrap();
    assert!(removed.moved_items >= 5, "{removed:?}");
    let (old, new) = places(store.as_ref(), &s.org_id, job_id).await;
    assert_eq!((old > 0, new > 0), (false, true));
    let (again, _) = mailward_workers::retention::run_now(&app.stack.state)
        .await
        .unwrap();
    assert_eq!(again.moved_items, 0, "a second run has nothing to move");
}

#[tokio::test]
async fn a_deleted_domains_partition_is_emptied_by_the_daily_job() {
    let app = TestApp::start_with(|s| s.publish_outbox = false).await;
    let s = app.sign_up("gone@layout.example", "Gone").await;
    let domain = add_domain(&app, &s.key, "gone.layout.example").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    mailward_workers::ingest::ingest(
        &app.stack.state,
        &report(&app, "gone.layout.example"),
        &for_org(&s),
        &mailward_reports::Limits::default(),
    )
    .await
    .unwrap();
    identify_now(&app, &s, &id).await;
    let store = app.stack.state.store.clone();
    assert!(places(store.as_ref(), &s.org_id, &id).await.1 >= 5);

    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/domains/{id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (removed, _) = mailward_workers::retention::run_now(&app.stack.state)
        .await
        .unwrap();
    assert!(removed.gone_items >= 5, "{removed:?}");
    assert_eq!(places(store.as_ref(), &s.org_id, &id).await, (0, 0));
    let notes = query_all(
        store.as_ref(),
        Query::partition(format!("ORG#{}", s.org_id)).prefix("DOMAINGONE#"),
    )
    .await
    .unwrap();
    assert!(notes.is_empty(), "the note goes with the partition");
}

/// The organization's list cards (`DCARD#<domain>`) and whether its `DCARDS` note is there.
async fn cards_of(store: &dyn ItemStore, org: &str) -> (Vec<Item>, bool) {
    let items = query_all(
        store,
        Query::partition(format!("ORG#{org}")).prefix("DCARD"),
    )
    .await
    .unwrap();
    let ready = items.iter().any(|item| item.sk == "DCARDS");
    (
        items
            .into_iter()
            .filter(|i| i.sk.starts_with("DCARD#"))
            .collect(),
        ready,
    )
}

/// `GET /domains` filters and sorts the domains' list cards, kept with every change of a listed
/// field; an organization from before cards (none, and no `DCARDS` note) is listed from its
/// domains until the daily job (the cards' migration job) builds them.
#[tokio::test]
async fn the_domain_list_reads_cards_and_an_organization_from_before_them_gets_them_daily() {
    let app = TestApp::start().await;
    let s = app.sign_up("cards@layout.example", "Cards").await;
    let mut ids = Vec::new();
    for name in ["b.cards.example", "a.cards.example", "c.cards.example"] {
        ids.push(
            add_domain(&app, &s.key, name).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        app.clock.advance(time::Duration::seconds(1));
    }
    let urls = |query: &'static str| {
        let app = &app;
        let key = s.key.clone();
        async move {
            let body = get_json(app, Method::GET, &format!("/domains?{query}"), &key).await;
            let urls: Vec<String> = body["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["url"].as_str().unwrap().to_owned())
                .collect();
            (urls, body["page_info"]["total_count"].as_u64().unwrap())
        }
    };
    let store = app.stack.state.store.clone();
    assert_eq!(cards_of(store.as_ref(), &s.org_id).await.0.len(), 3);
    // A change of a listed field moves the domain in the list at once.
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/domains/{}", ids[2]),
        &s.key,
        Some(json!({"is_parked": true})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let parked = urls("is_parked=true").await;
    assert_eq!(parked, (vec!["c.cards.example".to_owned()], 1));
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/domains/{}", ids[0]),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (cards, ready) = cards_of(store.as_ref(), &s.org_id).await;
    assert_eq!(
        (cards.len(), ready),
        (2, true),
        "the deleted domain's card went with it"
    );
    let expected = urls("sort=url&order=asc").await;
    assert_eq!(expected.0, ["a.cards.example", "c.cards.example"]);

    // Back to the previous version's items: no cards, no note. The list reads the domains.
    let deletes: Vec<WriteOp> = cards
        .iter()
        .map(|item| (item.pk.clone(), item.sk.clone()))
        .chain([(format!("ORG#{}", s.org_id), "DCARDS".to_owned())])
        .map(|(pk, sk)| WriteOp::Delete {
            pk,
            sk,
            condition: mailward_domain::store::Condition::None,
        })
        .collect();
    store.transact(deletes).await.unwrap();
    assert_eq!(urls("sort=url&order=asc").await, expected);
    assert_eq!(urls("is_parked=true").await, parked);

    // The daily job builds the cards and the note; a second run has nothing to build.
    let (removed, _) = mailward_workers::retention::run_now(&app.stack.state)
        .await
        .unwrap();
    assert_eq!(removed.cards_built, 2, "{removed:?}");
    let (cards, ready) = cards_of(store.as_ref(), &s.org_id).await;
    assert_eq!((cards.len(), ready), (2, true));
    assert_eq!(urls("sort=url&order=asc").await, expected);
    assert_eq!(urls("is_parked=true").await, parked);
    let (again, _) = mailward_workers::retention::run_now(&app.stack.state)
        .await
        .unwrap();
    assert_eq!(again.cards_built, 0);
}

/// Each process keeps its copy of an organization's cards and reads them again only when the
/// organization's card counter moved (every write of a card through the store counts on it):
/// a card removed without counting (as by a process that died before its increment) is still
/// listed from the copy, and the next count makes the list read the cards again.
#[tokio::test]
async fn the_process_copy_of_the_cards_is_read_again_when_the_card_counter_moves() {
    let app = TestApp::start().await;
    let s = app.sign_up("copy@layout.example", "Copy").await;
    for name in ["a.copy.example", "b.copy.example"] {
        add_domain(&app, &s.key, name).await;
    }
    let total = || {
        let (app, key) = (&app, s.key.clone());
        async move {
            get_json(app, Method::GET, "/domains?sort=url", &key).await["page_info"]["total_count"]
                .as_u64()
                .unwrap()
        }
    };
    // Written through the API, counted: the list follows at once.
    assert_eq!(total().await, 2);
    let c = add_domain(&app, &s.key, "c.copy.example").await;
    assert_eq!(total().await, 3);

    let store = app.stack.state.store.clone();
    let pk = format!("ORG#{}", s.org_id);
    let version = |store: std::sync::Arc<dyn ItemStore>, pk: String| async move {
        store
            .get(&pk, "CARDVER", true)
            .await
            .unwrap()
            .and_then(|i| i.counter)
            .unwrap()
    };
    let before = version(store.clone(), pk.clone()).await;
    assert!(
        before >= 4,
        "the organization and three domains counted: {before}"
    );
    let removed = store
        .delete(
            &pk,
            &format!("DCARD#{}", c["id"].as_str().unwrap()),
            Condition::None,
        )
        .await
        .unwrap();
    assert!(removed);
    assert_eq!(
        version(store.clone(), pk.clone()).await,
        before,
        "not counted"
    );
    assert_eq!(total().await, 3, "served from the copy");
    store.increment(&pk, "CARDVER", 1, None).await.unwrap();
    assert_eq!(total().await, 2, "read again once the counter moved");
}
