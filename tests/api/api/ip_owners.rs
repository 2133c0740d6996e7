//! Issue 38 §2, who owns each sending IP: the autonomous system, its owner and the country of
//! every source address, from IPinfo Lite (the MMDB file parsedmarc 11.1.0's package ships,
//! fetched and checked against its pinned SHA-256 by `mailward_local_stack::ipdata::fetch`),
//! installed as `mailward ipdata update` does, shown in the senders, the senders report,
//! the report data and the export; unknown senders grouped by their autonomous system.

use crate::common::{add_domain, get};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use serde_json::Value;

const DOMAIN: &str = "owners.example";

/// The pinned files, downloaded once into the target directory; `None` (the test skipped)
/// when they cannot be had and `MAILWARD_REQUIRE_IPDATA` is not set.
async fn ip_files() -> Option<mailward_local_stack::ipdata::Files> {
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(
        |_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        std::path::PathBuf::from,
    );
    match mailward_local_stack::ipdata::fetch(&target.join("ipdata-cache")).await {
        Ok(files) => Some(files),
        Err(e) => {
            assert!(
                std::env::var("MAILWARD_REQUIRE_IPDATA").is_err(),
                "MAILWARD_REQUIRE_IPDATA is set but the IP data could not be had: {e:#}"
            );
            eprintln!("SKIP: the IP data could not be downloaded: {e:#}");
            None
        }
    }
}

/// Yesterday's report with mail from a Google, a Microsoft and an Amazon SES address (real
/// networks: what the IP data says of them is checked), and a documentation address.
fn report(app: &TestApp) -> Vec<u8> {
    let today = crate::common::today_start(app);
    let record = |ip: &str, count: u32| {
        format!(
            "<record><row><source_ip>{ip}</source_ip><count>{count}</count><policy_evaluated>\
<disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>\
<identifiers><header_from>{DOMAIN}</header_from></identifiers><auth_results><spf>\
<domain>{DOMAIN}</domain><result>fail</result></spf></auth_results></record>"
        )
    };
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>own-1</report_id>\
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata><policy_published>\
<domain>{DOMAIN}</domain><p>none</p></policy_published>{}{}{}{}{}</feedback>",
        today - 86_400,
        today - 1,
        record("209.85.220.41", 30),
        record("209.85.220.69", 5),
        record("40.107.22.60", 20),
        record("54.240.8.1", 10),
        record("192.0.2.10", 3),
    )
    .into_bytes()
}

fn by_name<'a>(senders: &'a [Value], name: &str) -> &'a Value {
    senders
        .iter()
        .find(|s| s["source_name"] == name)
        .unwrap_or_else(|| panic!("no sender {name}: {senders:?}"))
}

#[tokio::test]
async fn sending_addresses_are_enriched_with_their_network_and_grouped_by_it() {
    let Some(files) = ip_files().await else {
        return;
    };
    let dns = FixtureServer::start(vec![Zone::new("test"), Zone::new(DOMAIN)])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let owner = app.sign_up("admin@owners.example", "Owners").await;
    let domain = add_domain(&app, &owner.key, DOMAIN).await;
    let id = domain["id"].as_str().unwrap().to_owned();
    crate::common::import_for(&app, &owner, &report(&app)).await;
    // Without the IP data, each unidentified address is a sender of its own.
    crate::common::identify_now(&app, &owner, &id).await;
    let before = get(&app, &format!("/domains/{id}/sources"), &owner.key).await;
    assert_eq!(before.as_array().unwrap().len(), 5, "{before}");
    assert_eq!(before[0]["source_networks"][0]["asn"], Value::Null);
    let installed =
        mailward_services::ipdata::install(&app.stack.state, files.mmdb, Some(files.map))
            .await
            .unwrap();
    assert!(installed.services > 1000, "{installed:?}");
    // With it, the next identification groups them by network, and the senders they were
    // (undecided) are gone rather than listed twice.
    crate::common::identify_now(&app, &owner, &id).await;

    // Unknown senders are grouped by autonomous system: both Google addresses are one sender.
    let senders = get(&app, &format!("/domains/{id}/sources"), &owner.key).await;
    let senders = senders.as_array().unwrap().clone();
    assert_eq!(senders.len(), 4, "{senders:?}");
    let google = by_name(&senders, "AS15169 Google LLC");
    assert_eq!(google["totals"]["unknown"], 35);
    let networks = google["source_networks"].as_array().unwrap();
    assert_eq!(networks.len(), 2);
    assert_eq!(networks[0]["ip"], "209.85.220.41");
    assert_eq!(networks[0]["asn"], 15169);
    assert_eq!(networks[0]["as_domain"], "google.com");
    assert!(
        networks[0]["country_code"]
            .as_str()
            .is_some_and(|c| c.len() == 2)
    );
    let microsoft = by_name(&senders, "AS8075 Microsoft Corporation");
    assert_eq!(
        microsoft["source_networks"][0]["as_domain"],
        "microsoft.com"
    );
    let amazon = by_name(&senders, "AS14618 Amazon.com, Inc.");
    assert_eq!(amazon["source_networks"][0]["country_code"], "US");
    // An address no network data covers keeps its own line, its network unknown.
    let unknown = by_name(&senders, "192.0.2.10");
    assert_eq!(unknown["source_networks"][0]["asn"], Value::Null);

    // The senders report (per address), the report data and the export say the same.
    let report = get(
        &app,
        &format!("/domains/{id}/reports/senders?period=last_7_days"),
        &owner.key,
    )
    .await;
    let line = report["senders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source_ip"] == "40.107.22.60")
        .unwrap()
        .clone();
    assert_eq!(line["network"]["asn"], 8075);
    let data = get(
        &app,
        &format!("/report-data/domains/{id}/senders"),
        &owner.key,
    )
    .await;
    let lines = data["senders"].as_array().unwrap();
    let amazon_line = lines
        .iter()
        .find(|s| s["name"] == "AS14618 Amazon.com, Inc.")
        .unwrap();
    assert_eq!(amazon_line["source_networks"][0]["asn"], 14618);
    let csv = app
        .with_key(
            reqwest::Method::GET,
            &format!("/domains/{id}/reports/export?data=sources&format=csv"),
            &owner.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    let csv = csv.text().await.unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",ptr,asn,as_name,country_code"),
        "{csv}"
    );
    assert!(csv.contains(",15169,Google LLC,"), "{csv}");
}
