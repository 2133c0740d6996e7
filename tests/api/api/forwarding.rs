//! Issue 38 §1, forwarding counted as forwarding: RFC 9990 dropped the `forwarded` override,
//! so forwarding is derived: a receiver's `local_policy` override with `arc=pass` (Google's
//! comment), and mail failing DMARC from a forwarder's network (the catalogue's FORWARDER
//! sources, known by the address's forward-confirmed reverse DNS) that still carries a DKIM
//! signature that verified. The summary, the senders, the report data and the enforcement
//! impact all count it so, each message once. The report is hand-made after Google's format
//! (its `local_policy`/`arc=pass` reason as Google writes it).

use crate::common::{add_domain, get};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use serde_json::Value;

const DOMAIN: &str = "forwards.example";

fn zones() -> Vec<Zone> {
    vec![
        Zone::new("test"),
        Zone::new(DOMAIN),
        // A Gmail address whose name points back: the Google Workspace network (a forwarder).
        Zone::new("220.85.209.in-addr.arpa").ptr("41", "mail-sor-f41.google.com."),
        Zone::new("google.com").a("mail-sor-f41", "209.85.220.41"),
        // A hosting company's server: no forwarder.
        Zone::new("113.0.203.in-addr.arpa").ptr("9", "out1.hosting.example."),
        Zone::new("hosting.example").a("out1", "203.0.113.9"),
    ]
}

fn record(ip: &str, count: u32, from: &str, reason: &str, esp_signature: bool) -> String {
    let signature = if esp_signature {
        "<dkim><domain>esp.example</domain><selector>k1</selector><result>pass</result></dkim>"
    } else {
        ""
    };
    format!(
        "<record><row><source_ip>{ip}</source_ip><count>{count}</count><policy_evaluated>\
<disposition>none</disposition><dkim>fail</dkim><spf>fail</spf>{reason}</policy_evaluated></row>\
<identifiers><header_from>{from}</header_from></identifiers><auth_results>{signature}<spf>\
<domain>{from}</domain><result>fail</result></spf></auth_results></record>"
    )
}

/// Yesterday's report, every row failing DMARC:
/// - 20 from Google's network with an ESP's signature that verified: forwarded (derived);
/// - 4 from Google's network without any: the customer's own misconfigured mail, failing;
/// - 7 from a hosting server with the same signature: not a forwarder's network, failing;
/// - 3 overridden by the receiver as forwarded; 5 overridden by local policy with `arc=pass`.
fn report(app: &TestApp) -> Vec<u8> {
    let today = crate::common::today_start(app);
    let news = format!("news.{DOMAIN}");
    format!(
        "<feedback><report_metadata><org_name>google.com</org_name><report_id>fw-1</report_id>\
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata><policy_published>\
<domain>{DOMAIN}</domain><p>none</p></policy_published>{}{}{}{}{}</feedback>",
        today - 86_400,
        today - 1,
        record("209.85.220.41", 20, DOMAIN, "", true),
        record("209.85.220.41", 4, &news, "", false),
        record("203.0.113.9", 7, DOMAIN, "", true),
        record(
            "198.51.100.7",
            3,
            DOMAIN,
            "<reason><type>forwarded</type></reason>",
            false
        ),
        record(
            "198.51.100.8",
            5,
            DOMAIN,
            "<reason><type>local_policy</type><comment>arc=pass</comment></reason>",
            false
        ),
    )
    .into_bytes()
}

#[tokio::test]
async fn forwarded_mail_is_derived_from_forwarders_networks_and_counted_once_everywhere() {
    let dns = FixtureServer::start(zones()).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let owner = app.sign_up("admin@forwards.example", "Forwards").await;
    let domain = add_domain(&app, &owner.key, DOMAIN).await;
    let id = domain["id"].as_str().unwrap().to_owned();
    crate::common::import_for(&app, &owner, &report(&app)).await;
    // Before identification, only what the receiver said counts as forwarded.
    let summary_path = format!("/domains/{id}/reports/summary");
    let summary = || get(&app, &summary_path, &owner.key);
    assert_eq!(summary().await["totals"]["forwarded"], 8);
    crate::common::identify_now(&app, &owner, &id).await;

    let after = summary().await;
    assert_eq!(after["volume"], 39);
    assert_eq!(after["totals"]["forwarded"], 28, "{after}");
    assert_eq!(
        after["totals"]["unknown"].as_u64().unwrap()
            + after["totals"]["non_compliant"].as_u64().unwrap(),
        11,
        "{after}"
    );
    // The enforcement impact: forwarded mail is not what p=reject breaks.
    let impact = get(
        &app,
        &format!("/domains/{id}/reports/enforcement-impact?policy=reject"),
        &owner.key,
    )
    .await;
    assert_eq!(impact["forwarded"], 28, "{impact}");
    assert_eq!(
        impact["legitimate_affected"].as_u64().unwrap()
            + impact["unknown_affected"].as_u64().unwrap(),
        11,
        "{impact}"
    );
    // The senders: Google's network is a forwarder; its forwarded mail is not a failure.
    let senders = get(&app, &format!("/domains/{id}/sources"), &owner.key).await;
    let forwarded: u64 = senders
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["totals"]["forwarded"].as_u64().unwrap())
        .sum();
    assert_eq!(forwarded, 28, "{senders}");
    // The organization's report data counts the same.
    let data = get(&app, "/report-data/summary?period=last_7_days", &owner.key).await;
    assert_eq!(find_forwarded(&data), Some(28), "{data}");
}

/// The forwarded count of the report data's totals, wherever the summary keeps it.
fn find_forwarded(v: &Value) -> Option<u64> {
    v.get("forwarded")
        .and_then(Value::as_u64)
        .or_else(|| v.get("totals").and_then(find_forwarded))
}
