//! `POST /tools/header-analyze` over HTTP: every fixture message of `tests/api/fixtures/headers`
//! (mail-auth, dkimpy, the ValiMail ARC suite) gives the expected verdicts with its keys served
//! by the DNS fixture; trust of Authentication-Results; hops; and bad input.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/headers")
}

/// Publishes TXT `records` (absolute names), creating each name's zone (its parent after
/// `_domainkey`) when needed.
fn publish(dns: &FixtureServer, records: &[(String, String)]) {
    let mut zones: std::collections::BTreeMap<String, Zone> = std::collections::BTreeMap::new();
    for (name, value) in records {
        let origin = name
            .split_once("._domainkey.")
            .map_or(name.as_str(), |(_, d)| d)
            .to_owned();
        let zone = zones.remove(&origin).unwrap_or_else(|| Zone::new(&origin));
        zones.insert(origin, zone.txt(&format!("{name}."), value));
    }
    for (origin, zone) in zones {
        dns.add_zone(zone)
            .unwrap_or_else(|e| panic!("{origin}: {e}"));
    }
}

/// A mail-auth fixture: its records and message.
fn mail_auth_fixture(path: &str) -> (Vec<(String, String)>, String) {
    let text = std::fs::read_to_string(fixtures().join(path)).unwrap();
    let (records, message) = text.split_once("\n\n").unwrap();
    let records = records
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n.trim_end_matches('.').to_owned(), v.to_owned()))
        .collect();
    (records, message.to_owned())
}

async fn analyze(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let res = app
        .with_key(Method::POST, "/tools/header-analyze", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

async fn start() -> (FixtureServer, TestApp, String) {
    let dns = FixtureServer::start(vec![Zone::new("test")]).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.rate_limits.push((
            mailward_services::config::Scope::Dns,
            "100000/60".parse().unwrap(),
        ));
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKeyDns,
            "100000/60".parse().unwrap(),
        ));
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKey,
            "100000/60".parse().unwrap(),
        ));
        s.rate_limits.push((
            mailward_services::config::Scope::Global,
            "100000/60".parse().unwrap(),
        ));
    })
    .await;
    let s = app.sign_up("headers@analyze.example", "Headers Co").await;
    (dns, app, s.key)
}

#[tokio::test]
async fn the_mail_auth_and_dkimpy_messages_verify_as_expected() {
    let (dns, app, key) = start().await;
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("mail-auth/expected.json")).unwrap(),
    )
    .unwrap();
    for (file, spec) in expected["dkim"].as_object().unwrap() {
        let (records, message) = mail_auth_fixture(&format!("mail-auth/dkim/{file}"));
        publish(&dns, &records);
        let (status, body) = analyze(&app, &key, json!({"headers": message})).await;
        assert_eq!(status, 200, "{file}: {body}");
        let checks = body["dnsValidation"]["dkim"].as_array().unwrap();
        let signatures = spec["signatures"].as_array().unwrap();
        assert_eq!(checks.len(), signatures.len(), "{file}: {checks:?}");
        for (check, want) in checks.iter().zip(signatures) {
            assert_eq!(check["domain"], want["d"], "{file}");
            assert_eq!(check["selector"], want["s"], "{file}");
            // 005 carries x=1667930064: it passed at its time and is expired now (RFC 6376
            // §6.1.1), which the analysis judges at the time of the request.
            let verdict = if file == "005.txt" {
                "fail"
            } else {
                want["dkimpy_result"].as_str().unwrap()
            };
            assert_eq!(check["result"], verdict, "{file}: {check}");
            if file == "005.txt" {
                assert!(
                    check["detail"]
                        .as_str()
                        .unwrap()
                        .to_lowercase()
                        .contains("expired"),
                    "{check}"
                );
            }
        }
    }
    for (file, spec) in expected["arc"].as_object().unwrap() {
        let (records, message) = mail_auth_fixture(&format!("mail-auth/arc/{file}"));
        publish(&dns, &records);
        let (status, body) = analyze(&app, &key, json!({"headers": message})).await;
        assert_eq!(status, 200, "{file}: {body}");
        let validation = &body["dnsValidation"];
        for (check, want) in validation["dkim"]
            .as_array()
            .unwrap()
            .iter()
            .zip(spec["dkim_signatures"].as_array().unwrap())
        {
            assert_eq!(check["result"], want["dkimpy_result"], "{file}: {check}");
        }
        // 002's first set is sealed with ed25519: RFC 8617 defines only rsa-sha256 (dkimpy agrees).
        let arc = if file == "002.txt" { "fail" } else { "pass" };
        assert_eq!(
            validation["arc"]["result"], arc,
            "{file}: {}",
            validation["arc"]
        );
    }
    // dkimpy: the RFC 6376 example signed twice (ed25519 and rsa, simple/simple).
    let dkimpy: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("dkimpy/expected.json")).unwrap(),
    )
    .unwrap();
    let spec = &dkimpy["messages"]["rfc6376.signed.msg"];
    let records: Vec<(String, String)> = spec["dns"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, v)| {
            (
                n.trim_end_matches('.').to_owned(),
                v.as_str().unwrap().to_owned(),
            )
        })
        .collect();
    publish(&dns, &records);
    let message = std::fs::read_to_string(fixtures().join("dkimpy/rfc6376.signed.msg")).unwrap();
    let (status, body) = analyze(&app, &key, json!({"headers": message})).await;
    assert_eq!(status, 200, "{body}");
    let results: Vec<&str> = body["dnsValidation"]["dkim"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, vec!["pass", "pass"], "{body}");
}

/// How many of the ARC suite's 171 validation tests give the suite's `cv` (the two others:
/// `ams_fields_c_na` and `ams_fields_h_empty`, where `mail-auth` canonicalizes differently).
pub const ARC_SUITE_PASSING: usize = 169;

#[tokio::test]
async fn the_arc_test_suite_validates() {
    let (dns, app, key) = start().await;
    let suite: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("arc-test-suite/arc-draft-validation-tests.json"))
            .unwrap(),
    )
    .unwrap();
    let mut total = 0;
    let mut agreed = 0;
    let mut disagreed = Vec::new();
    for scenario in suite.as_array().unwrap() {
        let records: Vec<(String, String)> = scenario["txt-records"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(n, v)| {
                        (
                            n.trim_end_matches('.').to_owned(),
                            v.as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        publish(&dns, &records);
        for (name, test) in scenario["tests"].as_object().unwrap() {
            total += 1;
            let want = match test["cv"].as_str().unwrap_or_default() {
                "Pass" => "pass",
                "None" => "none",
                _ => "fail",
            };
            let message = test["message"].as_str().unwrap();
            let (status, body) = analyze(&app, &key, json!({"headers": message})).await;
            let got = if status == 200 {
                body["dnsValidation"]["arc"]["result"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned()
            } else if status == 400 && !message.contains(':') {
                // No header field at all: the API refuses the input (param headers); there is
                // no chain, which is the suite's "None".
                "none".to_owned()
            } else {
                format!("http {status}")
            };
            if got == want {
                agreed += 1;
            } else {
                disagreed.push(format!("{name}: want {want}, got {got}"));
            }
        }
    }
    println!("ARC suite: {agreed} of {total} validation tests agree");
    for d in &disagreed {
        println!("  {d}");
    }
    assert_eq!(total, 171);
    assert!(
        agreed >= ARC_SUITE_PASSING,
        "{agreed} < {ARC_SUITE_PASSING}: {disagreed:#?}"
    );
}

#[tokio::test]
async fn trust_hops_and_bad_input() {
    let (_dns, app, key) = start().await;
    // A forged Authentication-Results from a hop below the receiver's acceptance is not believed.
    let message = "Authentication-Results: mx.receiver.example; spf=fail smtp.mailfrom=ceo@bank.example; dkim=none; dmarc=fail header.from=bank.example\r\nReceived: from evil.example (evil.example [192.0.2.66]) by mx.receiver.example with ESMTP; Tue, 1 Oct 2024 10:00:05 +0000\r\nAuthentication-Results: mx.receiver.example; spf=pass; dkim=pass header.d=bank.example; dmarc=pass header.from=bank.example\r\nReceived: from sender (unknown [198.51.100.1]) by evil.example; Tue, 1 Oct 2024 10:00:09 +0000\r\nFrom: =?UTF-8?Q?Bank?= <ceo@bank.example>\r\nSubject: =?UTF-8?B?VXJnZW50?=\r\nDate: Tue, 1 Oct 2024 10:00:00 +0000\r\n";
    let (status, body) = analyze(
        &app,
        &key,
        json!({"headers": message, "include_dns_validation": false}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["verdicts"]["dmarc"], "fail", "{body}");
    assert_eq!(body["verdicts"]["spf"], "fail");
    assert_eq!(body["verdicts"]["trustedAuthservId"], "mx.receiver.example");
    let results = body["authenticationResults"].as_array().unwrap();
    assert_eq!(results[0]["trusted"], true);
    assert_eq!(results[1]["trusted"], false, "{}", results[1]);
    assert!(body["dnsValidation"].is_null());
    assert_eq!(body["subject"], "Urgent");
    let hops = body["receivedHops"].as_array().unwrap();
    assert_eq!(hops.len(), 2);
    assert_eq!(hops[0]["hop"], 1);
    assert_eq!(hops[0]["delayMs"], 9000);
    assert_eq!(hops[1]["delayMs"], 0, "never negative: {}", hops[1]);
    assert_eq!(hops[1]["clockSkewMs"], 4000);
    assert_eq!(hops[1]["fromIp"], "192.0.2.66");

    // Live validation: SPF judged for the IP the receiver saw.
    let (status, body) = analyze(&app, &key, json!({"headers": message})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dnsValidation"]["spf"]["ip"], "192.0.2.66", "{body}");
    assert_eq!(body["dnsValidation"]["spf"]["hop"], 2);

    // No Received lines at all; folded headers.
    let (status, body) = analyze(
        &app,
        &key,
        json!({"headers": "From: a@b.example\nSubject: a folded\n  subject line\n"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["receivedHops"].as_array().unwrap().is_empty());
    assert_eq!(body["subject"], "a folded subject line");
    assert_eq!(body["verdicts"]["dkim"], "unknown");

    // Bad input names the field.
    for bad in [
        json!({"headers": "short"}),
        json!({"headers": "x".repeat(100_001)}),
        json!({"headers": "\n\nOnly a body here, no header fields at all."}),
        json!({"headers": 42}),
        json!({}),
    ] {
        let (status, body) = analyze(&app, &key, bad).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["param"], "headers", "{body}");
    }
    // The upper bound itself is accepted.
    let big = format!("From: a@b.example\nX-Filler: {}\n", "y".repeat(99_950));
    let (status, _) = analyze(
        &app,
        &key,
        json!({"headers": big, "include_dns_validation": false}),
    )
    .await;
    assert_eq!(status, 200);
    // Credentials are required.
    let res = app
        .request(Method::POST, "/tools/header-analyze")
        .json(&json!({"headers": "From: a@b.example\n"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}
