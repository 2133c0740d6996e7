//! The records guidance (`GET /domains/{id}/dns-records`), its verification
//! (`POST /domains/{id}/verify`) and the SPF diagnostics (`GET /domains/{id}/spf`) against the
//! DNS fixture: what to publish, what is published, and what DNS says about it.

use crate::common::{add_domain, app_on, get_json, read, record_of, sweep};
use crate::sweep::DKIM_KEY;
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn records_are_read_published_and_verified_until_all_verified() {
    let zone = Zone::new("guide.test")
        .ns("@", "ada.ns.cloudflare.com.")
        .txt("@", "v=spf1 mx -all")
        .mx("@", 10, "mx.guide.test.")
        .a("mx", "192.0.2.11");
    let (dns, app) = app_on(vec![Zone::new("test"), zone]).await;
    let s = app.sign_up("guide@example.com", "Guide Org").await;
    let created = add_domain(&app, &s.key, "guide.test").await;
    let id = created["id"].as_str().unwrap().to_owned();

    let records: Value = app
        .with_key(Method::GET, &format!("/domains/{id}/dns-records"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(records["all_verified"], false, "{records}");
    assert_eq!(records["dns_provider"]["id"], "cloudflare");
    let dmarc = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["purpose"] == "dmarc")
        .expect("a DMARC record")
        .clone();
    assert_eq!(
        (
            dmarc["type"].as_str(),
            dmarc["host"].as_str(),
            dmarc["relative_host"].as_str()
        ),
        (Some("TXT"), Some("_dmarc.guide.test"), Some("_dmarc"))
    );
    assert_eq!(
        (
            dmarc["action"].as_str(),
            dmarc["already_published"].as_bool(),
            dmarc["status"].as_str()
        ),
        (Some("create"), Some(false), Some("pending"))
    );
    assert_eq!(dmarc["required"], true);
    let value = dmarc["value"].as_str().unwrap().to_owned();
    assert!(
        value.contains(created["monitoring_email"].as_str().unwrap()),
        "{value}"
    );
    let spf = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["purpose"] == "spf")
        .expect("an SPF record");
    assert_eq!(
        spf["status"], "verified",
        "the live SPF record is kept: {spf}"
    );

    // Verify before publishing: nothing new is confirmed.
    let verify: Value = app
        .with_key(Method::POST, &format!("/domains/{id}/verify"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(verify["queued"], false);
    assert_eq!(verify["results"]["dmarc"], false);
    assert!(
        verify["verified"].get("dmarc").is_none(),
        "only purposes confirmed in this pass appear: {verify}"
    );
    assert!(
        verify["verified"].get("tls_rpt").is_none()
            && verify["verified"].get("mta_sts_policy").is_none()
    );

    // Publish exactly what was asked and verify until all_verified.
    dns.set_txt("_dmarc.guide.test", &value).unwrap();
    let verify: Value = app
        .with_key(Method::POST, &format!("/domains/{id}/verify"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(verify["verified"]["dmarc"], true, "{verify}");
    let spf_only: Value = app
        .with_key(Method::POST, &format!("/domains/{id}/verify/spf"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(spf_only["verified"], json!({"spf": true}));
    let records: Value = app
        .with_key(Method::GET, &format!("/domains/{id}/dns-records"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(records["all_verified"], true, "{records}");

    // The sweep agrees: monitoring is set up.
    sweep(&app).await;
    assert_eq!(read(&app, &s.key, &id).await["monitoring_status"], "setup");

    // Breaking the record after verification shows as drifted in the guidance.
    dns.set_txt("_dmarc.guide.test", "v=DMARC1; p=none")
        .unwrap();
    let records: Value = app
        .with_key(Method::GET, &format!("/domains/{id}/dns-records"), &s.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let dmarc = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["purpose"] == "dmarc" && r["action"] != "delete")
        .unwrap()
        .clone();
    assert_eq!(
        (dmarc["status"].as_str(), dmarc["action"].as_str()),
        (Some("drifted"), Some("replace")),
        "{dmarc}"
    );
    let res = app
        .with_key(
            Method::GET,
            &format!("/domains/{}/dns-records", uuid::Uuid::new_v4()),
            &s.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn spf_diagnostics_report_the_tree_problems_and_next_action() {
    let includes: String = (0..11).map(|i| format!("include:i{i}.spf.test ")).collect();
    let mut zone = Zone::new("spf.test")
        .txt("@", "v=spf1 include:a.spf.test mx -all")
        .txt("a", "v=spf1 ip4:192.0.2.0/24 -all")
        .mx("@", 10, "mx.spf.test.")
        .a("mx", "192.0.2.1");
    zone = zone
        .txt("heavy", &format!("v=spf1 {includes}-all"))
        .txt("two", "v=spf1 -all")
        .txt("two", "v=spf1 ~all");
    for i in 0..11 {
        zone = zone.txt(&format!("i{i}"), "v=spf1 ip4:198.51.100.1 -all");
    }
    let dns = FixtureServer::start(vec![Zone::new("test"), zone])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let s = app.sign_up("spfdiag@example.com", "Spf Diag Org").await;
    let diag = |name: &str| {
        let name = name.to_owned();
        let app = &app;
        let key = s.key.clone();
        async move {
            let created: Value = app
                .with_key(Method::POST, "/domains", &key)
                .json(&json!({"url": name}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let id = created["id"].as_str().unwrap().to_owned();
            app.with_key(Method::GET, &format!("/domains/{id}/spf"), &key)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let healthy = diag("spf.test").await;
    assert_eq!(healthy["record"], "v=spf1 include:a.spf.test mx -all");
    assert_eq!(healthy["health"], "pass", "{healthy}");
    assert_eq!(healthy["lookup_count"], 2, "include and mx cost one each");
    assert_eq!(healthy["lookup_limit"], 10);
    assert_eq!(healthy["remaining_lookups"], 8);
    assert!(
        healthy["tree"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["kind"] == "include" && n["operand"] == "a.spf.test")
    );
    assert_eq!(healthy["next_action"]["code"], "none");
    assert_eq!(healthy["hosted_spf"]["active"], false);

    let heavy = diag("heavy.spf.test").await;
    assert_eq!(heavy["health"], "fail");
    assert_eq!(heavy["lookup_count"], 11);
    assert!(
        heavy["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["code"] == "lookup_limit_exceeded" && p["severity"] == "error")
    );
    assert_eq!(heavy["next_action"]["code"], "reduce_spf_lookups");

    let two = diag("two.spf.test").await;
    assert_eq!(two["records"].as_array().unwrap().len(), 2);
    assert_eq!(
        two["ttl"], 300,
        "the TTL is known with several records too: {two}"
    );
    assert_eq!(two["next_action"]["code"], "merge_spf_records");
}

#[tokio::test]
async fn guidance_plans_served_dkim_keys_tls_rpt_and_locks_down_parked_domains() {
    let key = format!("v=DKIM1; k=rsa; p={DKIM_KEY}");
    let zone = Zone::new("keys.test")
        .txt("@", "v=spf1 -all")
        .txt("google._domainkey", &key);
    let parked = Zone::new("parked.test").txt("@", "v=spf1 ~all");
    let (_dns, app) = app_on(vec![Zone::new("test"), zone, parked]).await;
    let s = app.sign_up("keys@example.com", "Keys Org").await;
    let created = add_domain(&app, &s.key, "keys.test").await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["managed_dns_status_since"]["dmarc"], Value::Null);
    let records_path = format!("/domains/{id}/dns-records");

    // TLS-RPT is planned (optional) with the domain's report address; no DKIM key known yet.
    let records = get_json(&app, Method::GET, &records_path, &s.key).await;
    let tls = record_of(&records, "tls_rpt").unwrap_or_else(|| panic!("{records}"));
    assert_eq!(tls["host"], "_smtp._tls.keys.test");
    assert_eq!(tls["required"], false);
    assert!(
        tls["value"]
            .as_str()
            .unwrap()
            .contains(created["monitoring_email"].as_str().unwrap()),
        "{tls}"
    );
    assert!(record_of(&records, "dkim").is_none(), "{records}");

    // Verifying DKIM probes the selector catalogue and confirms the served key.
    let verify = get_json(
        &app,
        Method::POST,
        &format!("/domains/{id}/verify/dkim"),
        &s.key,
    )
    .await;
    assert_eq!(verify["verified"], json!({"dkim": true}), "{verify}");
    assert_eq!(verify["results"]["dkim"], true);
    assert_eq!(verify["results"]["bimi"], false, "all five are booleans");
    let records = get_json(&app, Method::GET, &records_path, &s.key).await;
    let dkim = record_of(&records, "dkim").unwrap_or_else(|| panic!("{records}"));
    assert_eq!(dkim["host"], "google._domainkey.keys.test");
    assert_eq!(dkim["status"], "verified");

    // A parked domain is told to lock down: reject everything, no senders.
    let parked = add_domain(&app, &s.key, "parked.test").await;
    let parked_id = parked["id"].as_str().unwrap();
    let res = app
        .with_key(Method::POST, &format!("/domains/{parked_id}"), &s.key)
        .json(&json!({"is_parked": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let records = get_json(
        &app,
        Method::GET,
        &format!("/domains/{parked_id}/dns-records"),
        &s.key,
    )
    .await;
    let spf = record_of(&records, "spf").unwrap();
    assert_eq!(
        (spf["value"].as_str(), spf["action"].as_str()),
        (Some("v=spf1 -all"), Some("replace")),
        "{spf}"
    );
    let dmarc = record_of(&records, "dmarc").unwrap();
    assert!(
        dmarc["value"].as_str().unwrap().contains("p=reject"),
        "{dmarc}"
    );
    assert!(
        !records["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "enforcing_policy_without_working_auth"),
        "{records}"
    );
}

#[tokio::test]
async fn guidance_for_a_domain_missing_from_dns_says_so() {
    let (_dns, app) = app_on(vec![Zone::new("test")]).await;
    let s = app.sign_up("nx@example.com", "Nx Org").await;
    let created = add_domain(&app, &s.key, "absent.test").await;
    let id = created["id"].as_str().unwrap();
    let records = get_json(
        &app,
        Method::GET,
        &format!("/domains/{id}/dns-records"),
        &s.key,
    )
    .await;
    assert!(
        records["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "domain_does_not_exist"),
        "{records}"
    );
    assert_eq!(records["all_verified"], false);
}

#[tokio::test]
async fn records_guidance_counts_in_the_dns_buckets() {
    let dns = FixtureServer::start(vec![Zone::new("test")]).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKeyDns,
            "1/60".parse().unwrap(),
        ));
    })
    .await;
    let s = app.sign_up("quota@example.com", "Quota Org").await;
    let created = add_domain(&app, &s.key, "quota.test").await;
    let path = format!("/domains/{}/dns-records", created["id"].as_str().unwrap());
    let first = app
        .with_key(Method::GET, &path, &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let second = app
        .with_key(Method::GET, &path, &s.key)
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 429);
    assert_eq!(
        second.json::<Value>().await.unwrap()["scope"],
        "api_key_dns"
    );
}
