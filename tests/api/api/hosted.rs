//! Hosted DMARC and the report authorizations over HTTP: the record served by the embedded DNS
//! server, republished on policy edits; `managed_dns_status.dmarc` syncing → ready when the
//! customer's CNAME appears in live DNS (the DNS fixture) and error (drift) when it goes, with
//! `domain.hosted_record.*` events; the RFC 9989 authorization of every monitored domain; and
//! the refusals.

use crate::admin::member;
use crate::common::{add_domain, outbox_events};
use crate::common::{call, call_as, next_pass_and_reconcile};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use mailward_domain::hosted_zone::{HostedZone, ZoneError, ZoneRecord, ZoneRecordKind};
use reqwest::Method;
use serde_json::{Value, json};

const HOSTED_ZONE: &str = "hosted.mailward.local";

pub(crate) async fn start() -> (FixtureServer, TestApp, mailward_api_tests::SignedUp) {
    start_adjusted(|_| {}).await
}

/// [`start`] with more settings.
pub(crate) async fn start_adjusted(
    adjust: impl FnOnce(&mut mailward_local_stack::Settings),
) -> (FixtureServer, TestApp, mailward_api_tests::SignedUp) {
    let client = Zone::new("client.test")
        .ns("@", "ns1.client.test.")
        .mx("@", 10, "mx.client.test.")
        .a("mx", "192.0.2.10")
        .txt("@", "v=spf1 mx -all")
        .txt("_dmarc", "v=DMARC1; p=none");
    // Stands in for the Internet's delegation of the hosted zone: the test copies what the
    // embedded server serves into it.
    let hosted = Zone::new(HOSTED_ZONE);
    let dns = FixtureServer::start(vec![Zone::new("test"), client, hosted])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
        s.publish_outbox = false;
        s.evaluate_new_domains = false;
        s.dns_listen = Some("127.0.0.1:0".parse().unwrap());
        adjust(s);
    })
    .await;
    let s = app.sign_up("owner@hosted.example", "Hosted Co").await;
    (dns, app, s)
}

/// A resolver asking only the stack's embedded DNS server.
/// The owner part of the names served for a domain: 12 hex digits of its id, then its name.
pub(crate) fn owner(id: &str, domain: &str) -> String {
    format!("{}.{domain}", &id.replace('-', "")[..12])
}

pub(crate) fn embedded(app: &TestApp) -> mailward_dns::HickoryResolver {
    let addr = app.stack.dns_addr().expect("the DNS server runs");
    let mut settings = mailward_dns::ResolverSettings::from_server_list(&addr.to_string()).unwrap();
    settings.cache_ttl_cap = std::time::Duration::ZERO;
    mailward_dns::HickoryResolver::new(settings).unwrap()
}

pub(crate) async fn served_txt(app: &TestApp, name: &str) -> Result<Vec<String>, DnsError> {
    let answer = embedded(app).lookup(name, RecordType::Txt).await?;
    Ok(answer
        .records
        .into_iter()
        .filter_map(|r| match r {
            RecordData::Txt(strings) => {
                Some(String::from_utf8_lossy(&strings.concat()).into_owned())
            }
            _ => None,
        })
        .collect())
}

/// `GET /domains/{id}/dns-records`.
async fn dns_records(app: &TestApp, key: &str, id: &str) -> Value {
    call(
        app,
        Method::GET,
        &format!("/domains/{id}/dns-records"),
        key,
        None,
    )
    .await
    .1
}

pub(crate) async fn hosted_events(app: &TestApp) -> Vec<(String, String)> {
    let mut events = outbox_events(app).await;
    events.sort_by(|a, b| a["created"].as_str().cmp(&b["created"].as_str()));
    events
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("domain.hosted_record."))
        })
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["record"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn hosted_dmarc_is_served_republished_and_follows_the_customer_cname() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();
    let target = format!("{}._dmarc.{HOSTED_ZONE}", owner(&id, "client.test"));
    assert_eq!(domain["is_dmarc_managed"], false);
    assert_eq!(domain["managed_dns_status"]["dmarc"], "unknown");

    let path = format!("/domains/{id}/hosted-dmarc");
    let (status, enabled) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(status, 200, "{enabled}");
    assert_eq!(enabled["hosted_dmarc_active"], false);
    assert_eq!(enabled["record"]["type"], "CNAME");
    assert_eq!(enabled["record"]["host"], "_dmarc.client.test");
    assert_eq!(enabled["record"]["value"], target.as_str());
    assert!(
        enabled["instructions"]
            .as_str()
            .unwrap()
            .contains("delete any TXT")
    );
    assert_eq!(enabled["domain"]["is_dmarc_managed"], true);
    assert_eq!(enabled["domain"]["managed_dns_status"]["dmarc"], "syncing");
    assert!(enabled["domain"]["managed_dns_status_since"]["dmarc"].is_string());

    // The embedded server serves the record built from the domain's options.
    let served = served_txt(&app, &target).await.unwrap();
    assert_eq!(served.len(), 1);
    assert!(served[0].starts_with("v=DMARC1; p=none"), "{served:?}");
    assert!(served[0].contains(&format!("mailto:{rua}")), "{served:?}");
    // Idempotent.
    let (status, again) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(status, 200);
    assert_eq!(again["domain"]["managed_dns_status"]["dmarc"], "syncing");
    assert_eq!(served_txt(&app, &target).await.unwrap(), served);

    // The records guidance now plans the CNAME delegation.
    let records = dns_records(&app, &s.key, &id).await;
    let dmarc = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["purpose"] == "dmarc" && r["action"] != "delete")
        .unwrap();
    assert_eq!(dmarc["type"], "CNAME", "{records}");

    // A policy edit republishes.
    let mut options = domain["dmarc_options"].clone();
    options["policy"] = json!("quarantine");
    let (status, body) = call(
        &app,
        Method::POST,
        &format!("/domains/{id}"),
        &s.key,
        Some(json!({ "dmarc_options": options })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let served = served_txt(&app, &target).await.unwrap();
    assert!(
        served[0].starts_with("v=DMARC1; p=quarantine"),
        "{served:?}"
    );

    // The customer still has a TXT where the CNAME belongs: record_conflict.
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["dmarc"], "error", "{read}");
    assert_eq!(read["dmarc_error_reason"], "record_conflict");

    // The customer replaces it with the CNAME (the hosted zone's answer is delegated to the
    // fixture by copying it): ready, with the event.
    dns.remove("_dmarc.client.test", Some(RecordType::Txt))
        .unwrap();
    dns.set(
        "_dmarc.client.test",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{target}."))],
    )
    .unwrap();
    dns.set_txt(&target, &served[0]).unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["dmarc"], "ready", "{read}");
    assert_eq!(read["dmarc_error_reason"], Value::Null);
    let (_, active) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(active["hosted_dmarc_active"], true);

    // The CNAME is removed: drift.
    dns.remove("_dmarc.client.test", None).unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["dmarc"], "error");
    assert_eq!(read["dmarc_error_reason"], "drift");
    assert_eq!(
        hosted_events(&app).await,
        [
            ("domain.hosted_record.error".to_owned(), "dmarc".to_owned()),
            ("domain.hosted_record.ready".to_owned(), "dmarc".to_owned()),
            ("domain.hosted_record.error".to_owned(), "dmarc".to_owned()),
        ]
    );

    // The administrators are mailed that the delegation is missing: the publisher hands each
    // event to the notifications (run by hand here, the outbox being inspected), and only the
    // drift qualifies (a record conflict is not a missing delegation).
    for row in outbox_events(&app).await {
        let event: mailward_store::outbox::OutboxEvent = serde_json::from_value(row).unwrap();
        mailward_workers::notifications::on_event(&app.stack.state, &event)
            .await
            .unwrap();
    }
    let mails =
        crate::notifications::mails_about(&app, "the hosted DMARC delegation is missing", 1).await;
    assert_eq!(mails.len(), 1, "one mail for the drift");
    let text = &crate::notifications::parts(&mails[0])[0];
    assert!(text.contains(&target), "{text}");
    assert!(text.contains("was removed"), "{text}");
    assert!(text.contains("delegation_missing"), "{text}");

    // A lost record is put back by the sweep.
    app.stack
        .state
        .zone
        .remove(&[(target.clone(), ZoneRecordKind::Txt)])
        .await
        .unwrap();
    assert!(matches!(
        served_txt(&app, &target).await,
        Err(DnsError::NxDomain)
    ));
    next_pass_and_reconcile(&app).await;
    assert!(served_txt(&app, &target).await.unwrap()[0].starts_with("v=DMARC1; p=quarantine"));
}

#[tokio::test]
async fn every_monitored_domain_authorizes_its_reports_until_deleted() {
    let (_dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let report_host = app.stack.state.config.report_domain.clone();
    let name = format!("client.test._report._dmarc.{report_host}");
    next_pass_and_reconcile(&app).await;
    assert_eq!(served_txt(&app, &name).await.unwrap(), ["v=DMARC1"]);

    // Another organization watching the same name keeps it after the first deletes theirs.
    let other = app.sign_up("other@hosted.example", "Other Co").await;
    let theirs = add_domain(&app, &other.key, "client.test").await;
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/domains/{id}"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(served_txt(&app, &name).await.unwrap(), ["v=DMARC1"]);
    let (status, _) = call(
        &app,
        Method::DELETE,
        &format!("/domains/{}", theirs["id"].as_str().unwrap()),
        &other.key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    assert!(matches!(
        served_txt(&app, &name).await,
        Err(DnsError::NxDomain)
    ));
    // Names outside the service's zones are refused.
    assert!(matches!(
        embedded(&app).lookup("client.test", RecordType::Txt).await,
        Err(DnsError::Refused)
    ));
}

#[tokio::test]
async fn hosted_dmarc_refusals() {
    let (_dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let path = format!("/domains/{id}/hosted-dmarc");
    let viewer = member(&app, &s, "viewer@hosted.example", &["viewer"], &[]).await;
    assert_eq!(
        call_as(&app, Method::POST, &path, &viewer, None).await.0,
        403
    );
    let other = app.sign_up("stranger@hosted.example", "Stranger Co").await;
    assert_eq!(
        call(&app, Method::POST, &path, &other.key, None).await.0,
        404
    );
    let unknown = format!("/domains/{}/hosted-dmarc", uuid::Uuid::new_v4());
    assert_eq!(
        call(&app, Method::POST, &unknown, &s.key, None).await.0,
        404
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/domains/nope/hosted-dmarc",
            &s.key,
            None
        )
        .await
        .0,
        400
    );
    // Nothing was stored by the refused calls.
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_dmarc_managed"], false);
}

#[tokio::test]
async fn dkim_keys_are_served_followed_and_soft_deleted() {
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let keys_path = format!("/domains/{id}/dkim-keys");
    let txt = format!("v=DKIM1; k=rsa; p={}", crate::audit_matrix::KEY_2048);
    let (status, key) = call(
        &app,
        Method::POST,
        &keys_path,
        &s.key,
        Some(json!({"selector": "MW1", "record_type": "TXT", "value": txt})),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    let target = format!("mw1._domainkey.{}.{HOSTED_ZONE}", owner(&id, "client.test"));
    assert_eq!(key["selector"], "mw1");
    assert_eq!(key["dns_status"], "syncing");
    assert_eq!(key["publish_error"], Value::Null);
    assert_eq!(key["ttl"], 3600);
    assert_eq!(key["cname_target"], target.as_str());
    assert_eq!(key["created_by"], s.key_id.as_str());
    assert!(key["last_published_at"].is_string());
    assert_eq!(
        served_txt(&app, &target).await.unwrap(),
        std::slice::from_ref(&txt)
    );
    let key_path = format!("{keys_path}/{}", key["id"].as_str().unwrap());
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_dkim_managed"], true);
    assert_eq!(read["managed_dns_status"]["dkim"], "syncing");
    assert!(read["managed_dns_status_since"]["dkim"].is_string());
    // The records guidance plans the hosted key as the CNAME to it.
    let records = dns_records(&app, &s.key, &id).await;
    assert!(
        records["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["purpose"] == "dkim"
                && r["type"] == "CNAME"
                && r["host"] == "mw1._domainkey.client.test"
                && r["value"] == target.as_str()),
        "{records}"
    );

    // Refusals name the field.
    let bad = [
        (
            json!({"selector": "mw1", "record_type": "TXT", "value": txt}),
            409,
            "selector",
        ),
        (
            json!({"selector": "bad selector", "record_type": "TXT", "value": txt}),
            400,
            "selector",
        ),
        (
            json!({"selector": "s2", "record_type": "TXT", "value": "v=DKIM1; p="}),
            400,
            "value",
        ),
        (
            json!({"selector": "s2", "record_type": "TXT", "value": txt, "ttl": 86401}),
            400,
            "ttl",
        ),
        (
            json!({"selector": "s2", "record_type": "TXT", "value": txt, "ttl": 0}),
            400,
            "ttl",
        ),
        (
            json!({"selector": "s2", "record_type": "MX", "value": txt}),
            400,
            "record_type",
        ),
        (
            json!({"selector": "s2", "record_type": "CNAME", "value": "not a host!"}),
            400,
            "value",
        ),
        (
            json!({"selector": "s2", "record_type": "TXT"}),
            400,
            "value",
        ),
    ];
    for (body, status, param) in bad {
        let (got, err) = call(&app, Method::POST, &keys_path, &s.key, Some(body.clone())).await;
        assert_eq!(
            (got.as_u16(), err["param"].as_str()),
            (status, Some(param)),
            "{body}: {err}"
        );
    }
    let viewer = member(&app, &s, "keys-viewer@hosted.example", &["viewer"], &[]).await;
    let (status, _) = call_as(
        &app,
        Method::POST,
        &keys_path,
        &viewer,
        Some(json!({"selector": "s3", "record_type": "TXT", "value": txt})),
    )
    .await;
    assert_eq!(status, 403);

    // The customer publishes the CNAME: the sweep marks the key ready.
    dns.set(
        "mw1._domainkey.client.test",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{target}."))],
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &key_path, &s.key, None).await;
    assert_eq!(read["dns_status"], "ready", "{read}");
    let (_, domain_now) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(
        domain_now["managed_dns_status"]["dkim"], "ready",
        "{domain_now}"
    );
    assert_eq!(
        hosted_events(&app).await,
        [("domain.hosted_record.ready".to_owned(), "dkim".to_owned())]
    );
    let (_, ready) = call(
        &app,
        Method::GET,
        &format!("{keys_path}?dns_status=ready"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(ready.as_array().unwrap().len(), 1);
    let (_, none) = call(
        &app,
        Method::GET,
        &format!("{keys_path}?dns_status=error"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(none.as_array().unwrap().len(), 0);
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("{keys_path}?dns_status=bogus"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 400);

    // Replaced by a CNAME to the sending service.
    let (status, updated) = call(
        &app,
        Method::POST,
        &key_path,
        &s.key,
        Some(json!({"selector": "mw1", "record_type": "CNAME", "value": "MW1.dkim.Sender.example.", "ttl": 300})),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["value"], "mw1.dkim.sender.example");
    let answer = embedded(&app)
        .lookup(&target, RecordType::Cname)
        .await
        .unwrap();
    assert!(
        answer
            .records
            .iter()
            .any(|r| matches!(r, RecordData::Cname(t) if t.trim_end_matches('.') == "mw1.dkim.sender.example")),
        "{answer:?}"
    );

    // Soft delete.
    let (status, _) = call(&app, Method::DELETE, &key_path, &s.key, None).await;
    assert_eq!(status, 204);
    let (status, gone) = call(&app, Method::GET, &key_path, &s.key, None).await;
    assert_eq!(status, 200);
    assert!(gone["deleted_at"].is_string());
    let (_, list) = call(&app, Method::GET, &keys_path, &s.key, None).await;
    assert_eq!(list, json!([]));
    assert!(matches!(
        embedded(&app).lookup(&target, RecordType::Cname).await,
        Err(DnsError::NxDomain)
    ));
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_dkim_managed"], false);
    assert_eq!(read["managed_dns_status"]["dkim"], "unknown");
    assert_eq!(
        call(&app, Method::DELETE, &key_path, &s.key, None).await.0,
        404
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            &key_path,
            &s.key,
            Some(json!({"selector": "mw1", "record_type": "TXT", "value": txt}))
        )
        .await
        .0,
        404
    );
    // Another organization sees nothing.
    let other = app.sign_up("keys-other@hosted.example", "Keys Other").await;
    assert_eq!(
        call(&app, Method::GET, &key_path, &other.key, None).await.0,
        404
    );
    assert_eq!(
        call(
            &app,
            Method::GET,
            &format!("/domains/{id}/dkim-keys/not-a-uuid"),
            &s.key,
            None
        )
        .await
        .0,
        400
    );
}

/// A hosted zone whose changes fail while `failing` is set (a provider throttling past its
/// retries), over the item-store zone.
struct FlakyZone {
    inner: mailward_store::hosted_zone::StoreZone,
    failing: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl HostedZone for FlakyZone {
    async fn upsert(&self, records: &[ZoneRecord]) -> Result<(), ZoneError> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ZoneError::Throttled("Rate exceeded".into()));
        }
        self.inner.upsert(records).await
    }

    async fn remove(&self, keys: &[(String, ZoneRecordKind)]) -> Result<(), ZoneError> {
        self.inner.remove(keys).await
    }

    async fn records(&self, name: &str) -> Result<Vec<ZoneRecord>, ZoneError> {
        self.inner.records(name).await
    }
}

#[tokio::test]
async fn a_failing_zone_stores_nothing_for_dmarc_and_marks_keys_in_error_until_it_recovers() {
    let dns = FixtureServer::start(vec![
        Zone::new("test"),
        Zone::new("client.test")
            .ns("@", "ns1.client.test.")
            .mx("@", 10, "mx.client.test.")
            .a("mx", "192.0.2.10"),
    ])
    .await
    .unwrap();
    let addr = dns.addr().to_string();
    // The flaky zone keeps its records in a database of its own: what matters is the failure.
    let zone_dir = tempfile::tempdir().unwrap();
    let store: std::sync::Arc<dyn mailward_domain::store::ItemStore> =
        std::sync::Arc::new(mailward_local::EmbeddedStore::new(
            mailward_local::Database::open(&zone_dir.path().join("zone.db")).unwrap(),
            std::sync::Arc::new(mailward_domain::SystemClock),
        ));
    let flaky = std::sync::Arc::new(FlakyZone {
        inner: mailward_store::hosted_zone::StoreZone::new(store),
        failing: std::sync::atomic::AtomicBool::new(true),
    });
    let injected = std::sync::Arc::clone(&flaky);
    let app = TestApp::start_with(move |s| {
        s.dns = Some(addr);
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
        s.publish_outbox = false;
        s.evaluate_new_domains = false;
        s.zone = Some(mailward_local_stack::ZoneOverride(injected));
    })
    .await;
    let s = app.sign_up("flaky@hosted.example", "Flaky Co").await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();

    // Hosted DMARC: 503 publish_failed, and nothing stored.
    let path = format!("/domains/{id}/hosted-dmarc");
    let (status, err) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(
        (status.as_u16(), err["code"].as_str()),
        (503, Some("publish_failed")),
        "{err}"
    );
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_dmarc_managed"], false);
    assert_eq!(read["managed_dns_status"]["dmarc"], "unknown");

    // A DKIM key is kept, in error, with the provider's reason.
    let txt = format!("v=DKIM1; k=rsa; p={}", crate::audit_matrix::KEY_2048);
    let (status, key) = call(
        &app,
        Method::POST,
        &format!("/domains/{id}/dkim-keys"),
        &s.key,
        Some(json!({"selector": "s1", "record_type": "TXT", "value": txt})),
    )
    .await;
    assert_eq!(status, 201, "{key}");
    assert_eq!(key["dns_status"], "error");
    assert!(
        key["publish_error"]
            .as_str()
            .unwrap()
            .contains("throttling"),
        "{key}"
    );
    assert_eq!(key["last_published_at"], Value::Null);
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["dkim"], "error");
    assert_eq!(read["dkim_error_reason"], "dkim_key_error");

    // The provider recovers: the sweep republishes the key, and hosted DMARC can be enabled.
    flaky
        .failing
        .store(false, std::sync::atomic::Ordering::SeqCst);
    next_pass_and_reconcile(&app).await;
    let key_path = format!("/domains/{id}/dkim-keys/{}", key["id"].as_str().unwrap());
    let (_, key) = call(&app, Method::GET, &key_path, &s.key, None).await;
    assert_eq!(key["dns_status"], "syncing", "{key}");
    assert_eq!(key["publish_error"], Value::Null);
    let (status, enabled) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(status, 200, "{enabled}");

    // A policy edit while the provider fails: the edit stands, the stale record is caught by
    // the sweep as publish_failed, and repaired once the provider is back.
    flaky
        .failing
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut options = domain["dmarc_options"].clone();
    options["policy"] = json!("reject");
    let (status, _) = call(
        &app,
        Method::POST,
        &format!("/domains/{id}"),
        &s.key,
        Some(json!({ "dmarc_options": options })),
    )
    .await;
    assert_eq!(status, 200);
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["dmarc_error_reason"], "publish_failed", "{read}");
    flaky
        .failing
        .store(false, std::sync::atomic::Ordering::SeqCst);
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["dmarc"], "syncing", "{read}");
    let target = format!("{}._dmarc.{HOSTED_ZONE}", owner(&id, "client.test"));
    let served = flaky.records(&target).await.unwrap();
    assert!(
        served[0].values[0].starts_with("v=DMARC1; p=reject"),
        "{served:?}"
    );
}

/// Two organizations watching the same domain name host it under different names: neither
/// overwrites what is served for the other (the customer's CNAME picks the live one).
#[tokio::test]
async fn two_organizations_hosting_one_domain_never_overwrite_each_other() {
    let (_dns, app, s) = start().await;
    let other = app
        .sign_up("other@hosted.example", "Other Hosting Co")
        .await;
    let mut served = Vec::new();
    for key in [&s.key, &other.key] {
        let domain = add_domain(&app, key, "client.test").await;
        let id = domain["id"].as_str().unwrap().to_owned();
        let path = format!("/domains/{id}/hosted-dmarc");
        let (status, enabled) = call(&app, Method::POST, &path, key, None).await;
        assert_eq!(status, 200, "{enabled}");
        let target = enabled["record"]["value"].as_str().unwrap().to_owned();
        assert_eq!(
            target,
            format!("{}._dmarc.{HOSTED_ZONE}", owner(&id, "client.test"))
        );
        let rua = domain["monitoring_email"].as_str().unwrap().to_owned();
        served.push((target, rua));
    }
    assert_ne!(served[0].0, served[1].0);
    for (target, rua) in &served {
        let txt = served_txt(&app, target).await.unwrap();
        assert!(txt[0].contains(&format!("mailto:{rua}")), "{txt:?}");
    }
}

/// Issue 32, every field real: a hosted record whose check cannot tell whether it is in place
/// (the customer's DNS answers SERVFAIL) keeps its state for a while, then is an error
/// `check_failed` (no other reason names it), and is ready again once a check answers.
#[tokio::test]
async fn a_hosted_record_that_cannot_be_checked_for_hours_is_check_failed() {
    use mailward_dns_fixture::{Fault, Scope};
    let (dns, app, s) = start().await;
    let domain = add_domain(&app, &s.key, "client.test").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let target = format!("{}._dmarc.{HOSTED_ZONE}", owner(&id, "client.test"));
    let path = format!("/domains/{id}/hosted-dmarc");
    let (status, _) = call(&app, Method::POST, &path, &s.key, None).await;
    assert_eq!(status, 200);
    let served = served_txt(&app, &target).await.unwrap();
    dns.remove("_dmarc.client.test", None).unwrap();
    dns.set(
        "_dmarc.client.test",
        RecordType::Cname,
        vec![RecordData::Cname(format!("{target}."))],
    )
    .unwrap();
    dns.set_txt(&target, &served[0]).unwrap();
    let state = async || {
        let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
        (
            read["managed_dns_status"]["dmarc"].clone(),
            read["dmarc_error_reason"].clone(),
        )
    };
    next_pass_and_reconcile(&app).await;
    assert_eq!(state().await, (json!("ready"), Value::Null));

    // The check stops answering: the state holds for a few passes...
    dns.inject(Scope::name("_dmarc.client.test"), Fault::ServFail);
    next_pass_and_reconcile(&app).await;
    app.clock.advance(time::Duration::hours(3));
    next_pass_and_reconcile(&app).await;
    assert_eq!(state().await, (json!("ready"), Value::Null), "not yet");
    // ... then, six hours on, the record is check_failed, with the event.
    app.clock.advance(time::Duration::hours(3));
    next_pass_and_reconcile(&app).await;
    assert_eq!(state().await, (json!("error"), json!("check_failed")));
    assert_eq!(
        hosted_events(&app).await.last().unwrap(),
        &("domain.hosted_record.error".to_owned(), "dmarc".to_owned())
    );
    // A check that answers again ends it.
    dns.clear_all_faults();
    next_pass_and_reconcile(&app).await;
    assert_eq!(state().await, (json!("ready"), Value::Null));
}
