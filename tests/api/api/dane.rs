//! Issue 38 §4, DANE for SMTP (RFC 7672) as an audit finding: `GET /tools/audit` reads the TLSA
//! records of each MX host from the DNS fixture (the OpenSSL-made vectors of
//! `shared/mailward-records/tests/fixtures/dane`: a matching record, a malformed one, a zone
//! without DNSSEC), never scores them, and a monitored domain's MX TLS probe matches them
//! against the certificate its MX presents: a self-signed certificate DANE vouches for is no
//! problem, a mismatch is a `fix_mx_certificate` task.

use crate::common::{add_domain, get, next_pass, sweep};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_domain::dns::{RecordData, RecordType};
use reqwest::Method;
use serde_json::Value;

/// The `3 1 1` vector of `mx.pem` and a digest one octet short (from `tlsa-vectors.txt`).
fn vectors() -> (String, String) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/mailward-records/tests/fixtures/dane/tlsa-vectors.txt"
    ))
    .unwrap();
    let find = |verdict: &str| {
        text.lines()
            .find(|l| l.starts_with("3 1 1") && l.ends_with(verdict))
            .map(|l| l.split_whitespace().nth(3).unwrap().to_owned())
            .unwrap()
    };
    (find(" match"), find(" malformed"))
}

fn mail_zone(origin: &str) -> Zone {
    Zone::new(origin)
        .ns("@", &format!("ns1.{origin}."))
        .mx("@", 10, &format!("mx.{origin}."))
        .a("mx", "192.0.2.25")
        .txt("@", "v=spf1 mx -all")
        .txt("_dmarc", "v=DMARC1; p=reject")
}

async fn audit(app: &TestApp, domain: &str) -> Value {
    let res = app
        .request(
            Method::GET,
            &format!("/tools/audit?domain={domain}&refresh=true"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

fn codes(dane: &Value) -> Vec<String> {
    ["errors", "warnings", "info"]
        .iter()
        .flat_map(|k| dane[k].as_array().cloned().unwrap_or_default())
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tlsa_records_are_read_checked_and_never_scored() {
    let (good, short) = vectors();
    let zones = vec![
        Zone::new("test"),
        mail_zone("signed.test")
            .dnskey("@")
            .tlsa("_25._tcp.mx", 3, 1, 1, &good)
            .tlsa("_25._tcp.mx", 1, 1, 1, &good),
        mail_zone("broken.test")
            .dnskey("@")
            .tlsa("_25._tcp.mx", 3, 1, 1, &short),
        mail_zone("unsigned.test").tlsa("_25._tcp.mx", 3, 1, 1, &good),
        mail_zone("plain.test"),
    ];
    let dns = FixtureServer::start(zones).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;

    let signed = audit(&app, "signed.test").await;
    let dane = &signed["dane"];
    assert_eq!(dane["status"], "warn", "{dane}");
    assert_eq!(dane["score"], 0);
    assert_eq!(dane["dnssecSigned"], true);
    let host = &dane["hosts"][0];
    assert_eq!(host["host"], "mx.signed.test");
    assert_eq!(host["usable"], 1, "{host}");
    assert_eq!(host["dnssecSigned"], true);
    assert!(
        host["records"]
            .as_array()
            .unwrap()
            .contains(&Value::from(format!("3 1 1 {good}")))
    );
    // The PKIX-EE record beside it is unusable for SMTP: a warning, not a failure.
    let found = codes(dane);
    assert!(found.contains(&"tlsa_pkix_usage".to_owned()), "{found:?}");
    assert!(found.contains(&"dane_certificate_not_checked".to_owned()));

    let broken = audit(&app, "broken.test").await;
    let found = codes(&broken["dane"]);
    assert_eq!(broken["dane"]["status"], "fail");
    for code in ["tlsa_bad_digest_length", "dane_no_usable_record"] {
        assert!(found.contains(&code.to_owned()), "{code}: {found:?}");
    }
    let unsigned = audit(&app, "unsigned.test").await;
    assert!(codes(&unsigned["dane"]).contains(&"dane_zone_unsigned".to_owned()));
    assert_eq!(unsigned["dane"]["dnssecSigned"], false);
    let plain = audit(&app, "plain.test").await;
    assert_eq!(plain["dane"]["status"], "info");
    assert_eq!(codes(&plain["dane"]), ["dane_not_configured"]);
    // Never scored: the broken DANE domain scores what the plain one does.
    assert_eq!(broken["summary"]["score"], plain["summary"]["score"]);

    // The records guidance names MTA-STS and DANE where neither protects inbound mail.
    let owner = app.sign_up("admin@plain.test", "Plain").await;
    let warnings = |records: &Value| -> Vec<Value> {
        records["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "inbound_tls_unprotected")
            .cloned()
            .collect()
    };
    let plain_id = add_domain(&app, &owner.key, "plain.test").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let records = get(
        &app,
        &format!("/domains/{plain_id}/dns-records"),
        &owner.key,
    )
    .await;
    let advice = warnings(&records);
    assert_eq!(advice.len(), 1, "{records}");
    assert!(
        advice[0]["message"]
            .as_str()
            .unwrap()
            .contains("_25._tcp.mx.plain.test"),
        "{advice:?}"
    );
    let signed_id = add_domain(&app, &owner.key, "signed.test").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let records = get(
        &app,
        &format!("/domains/{signed_id}/dns-records"),
        &owner.key,
    )
    .await;
    assert!(warnings(&records).is_empty(), "{records}");
}

#[tokio::test]
async fn the_mx_probe_judges_a_dane_host_by_its_tlsa_records() {
    use mailward_api_tests::smtp_tls::SmtpTlsServer;
    let dir = tempfile::tempdir().unwrap();
    let later = time::OffsetDateTime::now_utc() + time::Duration::days(300);
    let smtp = SmtpTlsServer::start(dir.path(), "mx.dane.test", later).await;
    // A self-signed certificate: no authority vouches for it, the TLSA record does.
    smtp.set_self_signed("mx.dane.test", later);
    let tlsa = mailward_records::dane::recommended_for(&smtp.certificate_der()).unwrap();
    let zone = Zone::new("dane.test")
        .ns("@", "ns1.dane.test.")
        .mx("@", 10, "mx.dane.test.")
        .a("mx", "127.0.0.1")
        .txt("@", "v=spf1 mx -all")
        .txt("_dmarc", "v=DMARC1; p=reject")
        .dnskey("@")
        .record(
            "_25._tcp.mx",
            RecordData::Tlsa {
                usage: tlsa.usage,
                selector: tlsa.selector,
                matching: tlsa.matching,
                data: tlsa.data.clone(),
            },
        );
    let dns = FixtureServer::start(vec![Zone::new("test"), zone])
        .await
        .unwrap();
    let (dns_addr, smtp_port) = (dns.addr().to_string(), smtp.addr.port());
    let app = TestApp::start_with(|s| {
        s.dns = Some(dns_addr);
        s.publish_outbox = false;
        s.dns_cache_ttl_cap = Some(std::time::Duration::ZERO);
        s.webhook_allow_loopback = true;
        s.mx_tls_probe = true;
        s.mx_tls_port = smtp_port;
    })
    .await;
    let owner = app.sign_up("admin@dane.test", "Dane").await;
    add_domain(&app, &owner.key, "dane.test").await;
    sweep(&app).await;
    let mx_tasks = |list: Value| -> Vec<Value> {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] == "fix_mx_certificate" && t["status"] == "open")
            .cloned()
            .collect()
    };
    let listed = get(&app, "/tasks?per_page=100", &owner.key).await;
    assert!(mx_tasks(listed.clone()).is_empty(), "{listed}");

    // The record no longer matches what the MX presents: DANE senders stop delivering.
    let other = mailward_records::dane::Tlsa {
        data: vec![0xab; 32],
        ..tlsa
    };
    dns.remove("_25._tcp.mx.dane.test", Some(RecordType::Tlsa))
        .unwrap();
    dns.add(
        "_25._tcp.mx.dane.test",
        RecordData::Tlsa {
            usage: other.usage,
            selector: other.selector,
            matching: other.matching,
            data: other.data,
        },
    )
    .unwrap();
    app.clock.advance(time::Duration::days(2));
    next_pass(&app).await;
    let listed = get(&app, "/tasks?per_page=100", &owner.key).await;
    let open = mx_tasks(listed.clone());
    assert_eq!(open.len(), 1, "{listed}");
    let description = open[0]["description"].as_str().unwrap();
    assert!(
        description.contains("matches none of its TLSA records"),
        "{description}"
    );
}
