//! Hosted SPF with flattening over HTTP: a domain whose record names eight sending services
//! (33 lookups, a permerror today) gets one include of a served chain that a receiver evaluates
//! in at most ten lookups and that still authorizes every service's hosts; the state follows
//! the customer's record (syncing → ready → drift) with `domain.hosted_record.*` events and the
//! `hosted_spf_live` mail; the hourly re-flattening records a service's changed ranges; turning
//! it off withdraws the records; a sender's DNS failing at enable changes nothing.

use crate::common::{add_domain, outbox_events};
use crate::common::{call, next_pass_and_reconcile};
use crate::hosted::{hosted_events, owner, served_txt, start};
use mailward_dns_fixture::{Fault, Scope, Zone};
use mailward_domain::dns::DnsError;
use reqwest::Method;
use serde_json::json;
use std::net::IpAddr;

const HOSTED_ZONE: &str = "hosted.mailward.local";

/// Eight sending services, each an include of two more (one with an `a` mechanism): four
/// lookups apiece when served as themselves.
fn providers() -> Zone {
    let mut zone = Zone::new("providers.test");
    for p in 0..8 {
        zone = zone
            .txt(
                &format!("_spf.p{p}"),
                &format!(
                    "v=spf1 include:_a.p{p}.providers.test include:_b.p{p}.providers.test ~all"
                ),
            )
            .txt(
                &format!("_a.p{p}"),
                &format!("v=spf1 ip4:10.{}.0.0/16 ip4:172.16.{p}.0/24 -all", 2 * p),
            )
            .txt(
                &format!("_b.p{p}"),
                &format!(
                    "v=spf1 ip6:2001:db8:{:x}::/48 a:mail.p{p}.providers.test -all",
                    2 * p
                ),
            )
            .a(&format!("mail.p{p}"), &format!("192.0.2.{}", 10 + 2 * p));
    }
    zone
}

fn customer_record() -> String {
    let includes: Vec<String> = (0..8)
        .map(|p| format!("include:_spf.p{p}.providers.test"))
        .collect();
    format!("v=spf1 mx {} -all", includes.join(" "))
}

async fn spf_check(resolver: &mailward_dns::HickoryResolver, ip: &str) -> mailward_spf::SpfResult {
    let ip: IpAddr = ip.parse().unwrap();
    let request = mailward_spf::SpfRequest::mail_from(ip, "news@spf.test", "mx.spf.test");
    mailward_spf::check_host(resolver, &request).await.result
}

/// The stack with the fixture's providers and `spf.test` publishing `record`, and the domain
/// added: `(dns, app, owner, domain id)`.
async fn setup(
    record: &str,
) -> (
    mailward_dns_fixture::FixtureServer,
    mailward_api_tests::TestApp,
    mailward_api_tests::SignedUp,
    String,
) {
    let (dns, app, s) = start().await;
    dns.add_zone(providers()).unwrap();
    dns.add_zone(
        Zone::new("spf.test")
            .ns("@", "ns1.spf.test.")
            .mx("@", 10, "mx.spf.test.")
            .a("mx", "198.51.100.25")
            .txt("@", record)
            .txt("_dmarc", "v=DMARC1; p=none"),
    )
    .unwrap();
    let domain = add_domain(&app, &s.key, "spf.test").await;
    assert_eq!(domain["is_spf_managed"], false);
    assert_eq!(domain["managed_dns_status"]["spf"], "unknown");
    let id = domain["id"].as_str().unwrap().to_owned();
    (dns, app, s, id)
}

/// `POST /domains/{id}` with `body`.
async fn update(
    app: &mailward_api_tests::TestApp,
    key: &str,
    id: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let (status, value) = call(
        app,
        Method::POST,
        &format!("/domains/{id}"),
        key,
        Some(body),
    )
    .await;
    (status.as_u16(), value)
}

/// `hosted_spf` of `GET /domains/{id}/spf`.
async fn hosted_state(app: &mailward_api_tests::TestApp, key: &str, id: &str) -> serde_json::Value {
    let (status, diag) = call(app, Method::GET, &format!("/domains/{id}/spf"), key, None).await;
    assert_eq!(status, 200, "{diag}");
    diag["hosted_spf"].clone()
}

#[tokio::test]
async fn eight_senders_flatten_within_ten_lookups_and_follow_the_customer_record() {
    let (dns, app, s, id) = setup(&customer_record()).await;
    let fixture = dns.resolver().unwrap();
    // Today: 33 lookups, a permerror for every receiver.
    let before = mailward_spf::audit_domain(&fixture, "spf.test").await;
    assert!(before.lookup_count > 10, "{}", before.lookup_count);

    let descriptions = json!({"include:_spf.p3.providers.test": "Newsletter service"});
    let on_body = json!({"spf_options": {"enabled": true, "force_flattening": false, "mechanism_descriptions": descriptions}});
    let (status, on) = update(&app, &s.key, &id, on_body).await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(on["is_spf_managed"], true);
    assert_eq!(on["managed_dns_status"]["spf"], "syncing");
    assert!(on["managed_dns_status_since"]["spf"].is_string());
    assert!(on["spf_error_reason"].is_null());

    let first = format!("{}._spf.{HOSTED_ZONE}", owner(&id, "spf.test"));
    let hosted = hosted_state(&app, &s.key, &id).await;
    assert_eq!(hosted["enabled"], true);
    assert_eq!(hosted["active"], false);
    assert_eq!(hosted["status"], "syncing");
    assert_eq!(hosted["include"], first.as_str());
    let record = hosted["record"].as_str().unwrap().to_owned();
    assert_eq!(record, format!("v=spf1 include:{first} -all"));
    let (_, diag) = call(
        &app,
        Method::GET,
        &format!("/domains/{id}/spf"),
        &s.key,
        None,
    )
    .await;
    assert_eq!(diag["next_action"]["code"], "publish_hosted_spf_record");
    assert!(
        diag["next_action"]["message"]
            .as_str()
            .unwrap()
            .contains(&record)
    );
    assert!(hosted["lookup_count"].as_u64().unwrap() <= 10, "{hosted}");
    let terms = hosted["terms"].as_array().unwrap();
    assert_eq!(terms.len(), 9, "mx and eight includes: {hosted}");
    assert!(terms.iter().any(|t| t["flattened"] == true));
    let p3 = terms
        .iter()
        .find(|t| t["term"] == "include:_spf.p3.providers.test")
        .unwrap();
    assert_eq!(p3["description"], "Newsletter service");
    assert_eq!(p3["lookups"], 4);

    // The embedded server serves the chain exactly; the Internet's delegation of the hosted
    // zone (the fixture) gets a copy, and the customer publishes the one include.
    let served = hosted["served_records"].as_array().unwrap();
    assert!(!served.is_empty());
    for r in served {
        let name = r["name"].as_str().unwrap();
        let value = r["value"].as_str().unwrap();
        assert!(value.len() <= 450, "{value}");
        assert_eq!(served_txt(&app, name).await.unwrap(), [value]);
        dns.set_txt(name, value).unwrap();
    }
    // The records guidance plans the include.
    let spf = crate::common::planned(&app, &s.key, &id, "spf").await;
    let spf = &spf[0];
    assert_eq!(spf["value"], record.as_str());

    dns.set_txt("spf.test", &record).unwrap();
    let after = mailward_spf::audit_domain(&fixture, "spf.test").await;
    assert!(after.lookup_count <= 10, "{}", after.lookup_count);
    assert!(
        after
            .problems
            .iter()
            .all(|p| p.code != mailward_spf::ProblemCode::LookupLimitExceeded)
    );
    // Every service's hosts still pass, the domain's own MX too, and a stranger does not.
    for p in 0..8 {
        for ip in [
            format!("10.{}.3.4", 2 * p),
            format!("172.16.{p}.9"),
            format!("2001:db8:{:x}::1", 2 * p),
            format!("192.0.2.{}", 10 + 2 * p),
        ] {
            assert_eq!(
                spf_check(&fixture, &ip).await,
                mailward_spf::SpfResult::Pass,
                "{ip}"
            );
        }
    }
    let pass = mailward_spf::SpfResult::Pass;
    assert_eq!(spf_check(&fixture, "198.51.100.25").await, pass);
    let fail = mailward_spf::SpfResult::Fail;
    assert_eq!(spf_check(&fixture, "203.0.113.1").await, fail);

    // The sweep sees the include: ready, once, and the administrators are told.
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["spf"], "ready");
    assert_eq!(
        hosted_events(&app).await,
        [("domain.hosted_record.ready".to_owned(), "spf".to_owned())]
    );
    for row in outbox_events(&app).await {
        let event: mailward_store::outbox::OutboxEvent = serde_json::from_value(row).unwrap();
        mailward_workers::notifications::on_event(&app.stack.state, &event)
            .await
            .unwrap();
    }
    let mails = crate::notifications::mails_about(&app, "hosted SPF is live", 1).await;
    assert_eq!(mails.len(), 1);
    let text = &crate::notifications::parts(&mails[0])[0];
    assert!(
        text.contains(&first) && text.contains("hosted_spf_live"),
        "{text}"
    );

    // A service changes its ranges: within the hour nothing is re-resolved; after it the
    // served chain follows and the change is recorded.
    dns.set_txt(
        "_a.p0.providers.test",
        "v=spf1 ip4:10.0.0.0/16 ip4:172.31.0.0/24 -all",
    )
    .unwrap();
    next_pass_and_reconcile(&app).await;
    assert_eq!(
        hosted_state(&app, &s.key, &id).await["range_changes"],
        json!([])
    );
    app.clock.advance(time::Duration::hours(1));
    next_pass_and_reconcile(&app).await;
    let hosted = hosted_state(&app, &s.key, &id).await;
    let changes = hosted["range_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{hosted}");
    assert_eq!(changes[0]["term"], "include:_spf.p0.providers.test");
    assert_eq!(changes[0]["added"], json!(["ip4:172.31.0.0/24"]));
    assert_eq!(changes[0]["removed"], json!(["ip4:172.16.0.0/24"]));
    let served: Vec<&str> = hosted["served_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    let all = served.join(" ");
    let p0 = hosted["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["term"] == "include:_spf.p0.providers.test")
        .unwrap();
    if p0["flattened"] == true {
        assert!(
            all.contains("ip4:172.31.0.0/24") && !all.contains("ip4:172.16.0.0/24"),
            "{all}"
        );
    }
    assert!(p0["changed_at"].is_string());

    // The customer drops the include: drift.
    dns.set_txt("spf.test", &customer_record()).unwrap();
    next_pass_and_reconcile(&app).await;
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["managed_dns_status"]["spf"], "error");
    assert_eq!(read["spf_error_reason"], "drift");

    // Turned off: the served chain is withdrawn and the state is gone.
    let off_body = json!({"spf_options": {"enabled": false, "force_flattening": false}});
    let (status, off) = update(&app, &s.key, &id, off_body).await;
    assert_eq!(status, 200, "{off}");
    assert_eq!(off["is_spf_managed"], false);
    assert_eq!(off["managed_dns_status"]["spf"], "unknown");
    for r in hosted["served_records"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let gone = served_txt(&app, name).await;
        assert!(matches!(gone, Err(DnsError::NxDomain)), "{name}");
    }
    let hosted = hosted_state(&app, &s.key, &id).await;
    assert_eq!(hosted["enabled"], false);
    assert!(hosted["record"].is_null());
    assert_eq!(hosted["served_records"], json!([]));
}

#[tokio::test]
async fn forced_flattening_flattens_every_include_and_failures_change_nothing() {
    let (dns, app, s, id) = setup("v=spf1 include:_spf.p0.providers.test ~all").await;
    let forced = json!({"spf_options": {"enabled": true, "force_flattening": true}});

    // A sender's record that does not answer: 503, nothing stored or served.
    dns.inject(Scope::name("_b.p0.providers.test"), Fault::ServFail);
    let (status, body) = update(&app, &s.key, &id, forced.clone()).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "spf_flattening_failed", "{body}");
    let (_, read) = call(&app, Method::GET, &format!("/domains/{id}"), &s.key, None).await;
    assert_eq!(read["is_spf_managed"], false);
    assert_eq!(read["spf_options"]["enabled"], false);
    let first = format!("{}._spf.{HOSTED_ZONE}", owner(&id, "spf.test"));
    let nothing = served_txt(&app, &first).await;
    assert!(matches!(nothing, Err(DnsError::NxDomain)));
    dns.clear_all_faults();

    // One include fits the limit as it is; forced, it is flattened all the same.
    let (status, on) = update(&app, &s.key, &id, forced).await;
    assert_eq!(status, 200, "{on}");
    let served = served_txt(&app, &first).await.unwrap();
    assert!(served[0].contains("ip4:10.0.0.0/16"), "{served:?}");
    assert!(!served[0].contains("include:"), "{served:?}");
    // A target_spf replaces what is flattened.
    let target =
        json!({"target_spf": "v=spf1 ip4:203.0.113.0/24 include:_spf.p1.providers.test -all"});
    let (status, _) = update(&app, &s.key, &id, target).await;
    assert_eq!(status, 200);
    let served = served_txt(&app, &first).await.unwrap();
    assert!(
        served[0].contains("ip4:203.0.113.0/24") && served[0].contains("ip4:10.2.0.0/16"),
        "{served:?}"
    );
    assert!(!served[0].contains("10.0.0.0/16"), "{served:?}");
    let hosted = hosted_state(&app, &s.key, &id).await;
    assert_eq!(hosted["record"], format!("v=spf1 include:{first} -all"));
    // Unflattened it would be 1 + 4 lookups; forced it costs the include alone.
    assert_eq!(hosted["lookup_count"], 1);
}
