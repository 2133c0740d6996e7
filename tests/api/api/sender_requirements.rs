//! Issue 38 §3, mailbox-provider requirements per domain: `GET /domains/{id}/sender-requirements`
//! judges Gmail's, Yahoo's and Outlook.com's requirements from live DNS (the DNS fixture), the
//! aggregate reports each provider sent (hand-made after each provider's format: Google's
//! `google.com`, `Yahoo` and `Outlook.com` reporters), the reverse DNS of the sending addresses
//! (a Google, an Amazon SES and a Microsoft address), a header analysis of a DKIM-signed
//! message with one-click unsubscribe, and a spam rate the organization supplies. A failing
//! requirement opens a `meet_sender_requirement` task naming the provider's codes.

use crate::common::{add_domain, call, get};
use base64::Engine as _;
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter as _;
use mail_auth::dkim::DkimSigner;
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};

const DOMAIN: &str = "brand.example";
const SELECTOR: &str = "s1";

fn zones(public_key: &[u8]) -> Vec<Zone> {
    vec![
        Zone::new("test"),
        Zone::new(DOMAIN)
            .txt(
                &format!("{DOMAIN}."),
                "v=spf1 ip4:209.85.220.0/24 include:amazonses.com ~all",
            )
            .txt(&format!("_dmarc.{DOMAIN}."), "v=DMARC1; p=none")
            .txt(
                &format!("{SELECTOR}._domainkey.{DOMAIN}."),
                &format!(
                    "v=DKIM1; k=ed25519; p={}",
                    base64::engine::general_purpose::STANDARD.encode(public_key)
                ),
            ),
        // Google's network, forward-confirmed.
        Zone::new("220.85.209.in-addr.arpa").ptr("41", "mail-sor-f41.google.com."),
        Zone::new("google.com").a("mail-sor-f41", "209.85.220.41"),
        // Amazon SES, forward-confirmed.
        Zone::new("8.240.54.in-addr.arpa").ptr("1", "a8-1.smtp-out.amazonses.com."),
        Zone::new("amazonses.com").a("a8-1.smtp-out", "54.240.8.1"),
        // A Microsoft address with no reverse-DNS name.
        Zone::new("22.107.40.in-addr.arpa"),
    ]
}

/// One record: `dkim`/`spf` the aligned results, `spf_domain` the envelope's SPF result.
fn record(ip: &str, count: u32, aligned: (&str, &str), spf_raw: (&str, &str)) -> String {
    let (dkim, spf) = aligned;
    let dkim_auth = if dkim == "pass" {
        format!(
            "<dkim><domain>{DOMAIN}</domain><selector>{SELECTOR}</selector><result>pass</result></dkim>"
        )
    } else {
        String::new()
    };
    format!(
        "<record><row><source_ip>{ip}</source_ip><count>{count}</count><policy_evaluated>\
<disposition>none</disposition><dkim>{dkim}</dkim><spf>{spf}</spf></policy_evaluated></row>\
<identifiers><header_from>{DOMAIN}</header_from></identifiers><auth_results>{dkim_auth}<spf>\
<domain>{}</domain><result>{}</result></spf></auth_results></record>",
        spf_raw.0, spf_raw.1
    )
}

fn report(app: &TestApp, reporter: &str, id: &str, records: &[String]) -> Vec<u8> {
    let today = crate::common::today_start(app);
    format!(
        "<feedback><report_metadata><org_name>{reporter}</org_name><report_id>{id}</report_id>\
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata><policy_published>\
<domain>{DOMAIN}</domain><p>none</p></policy_published>{}</feedback>",
        today - 86_400,
        today - 1,
        records.concat()
    )
    .into_bytes()
}

fn requirement<'a>(view: &'a Value, provider: &str, name: &str) -> &'a Value {
    let p = view["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["provider"] == provider)
        .unwrap_or_else(|| panic!("{provider}: {view}"));
    p["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["requirement"] == name)
        .unwrap_or_else(|| panic!("{provider}/{name}: {view}"))
}

fn status<'a>(view: &'a Value, provider: &str, name: &str) -> &'a str {
    requirement(view, provider, name)["status"]
        .as_str()
        .unwrap()
}

/// A bulk message from the domain as Gmail received it: signed by the domain's key over the
/// unsubscribe headers when `sign_unsubscribe`.
fn received_message(pkcs8: &[u8], sign_unsubscribe: bool) -> String {
    let message = format!(
        "From: News <news@{DOMAIN}>\r\nTo: someone@gmail.com\r\nSubject: Offers\r\n\
Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMessage-ID: <n1@{DOMAIN}>\r\n\
List-Unsubscribe: <mailto:u@{DOMAIN}>, <https://{DOMAIN}/u/1>\r\n\
List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n\r\nHello\r\n"
    );
    let mut signed = vec!["From", "To", "Subject", "Date"];
    if sign_unsubscribe {
        signed.extend(["List-Unsubscribe", "List-Unsubscribe-Post"]);
    }
    let key = Ed25519Key::from_pkcs8_der(pkcs8).unwrap();
    let signature = DkimSigner::from_key(key)
        .domain(DOMAIN)
        .selector(SELECTOR)
        .headers(signed)
        .sign(message.as_bytes())
        .unwrap();
    format!(
        "Authentication-Results: mx.google.com; dkim=pass header.i=@{DOMAIN}; spf=pass smtp.mailfrom={DOMAIN}\r\n\
Received: from mail-sor-f41.google.com (mail-sor-f41.google.com [209.85.220.41])\r\n \
by mx.google.com with ESMTPS id x1; Thu, 26 Nov 2026 10:00:01 +0000\r\n{}{message}",
        signature.to_header()
    )
}

#[tokio::test]
async fn each_providers_requirements_are_judged_from_its_own_reports_dns_and_headers() {
    let pkcs8 = Ed25519Key::generate_pkcs8().unwrap();
    let public = Ed25519Key::from_pkcs8_der(&pkcs8).unwrap().public_key();
    let dns = FixtureServer::start(zones(&public)).await.unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| s.dns = Some(addr)).await;
    let owner = app.sign_up("admin@brand.example", "Brand").await;
    let domain = add_domain(&app, &owner.key, DOMAIN).await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let path = format!("/domains/{id}/sender-requirements");

    // Before any report: DNS is published, but nothing shows the mail passing.
    let before = get(&app, &path, &owner.key).await;
    assert_eq!(status(&before, "gmail", "spf"), "unknown", "{before}");
    assert_eq!(status(&before, "outlook", "dmarc"), "unknown", "{before}");

    let spoofer = record(
        "203.0.113.66",
        5,
        ("fail", "fail"),
        ("spoof.example", "pass"),
    );
    let google = report(
        &app,
        "google.com",
        "g-1",
        &[
            record("209.85.220.41", 100, ("pass", "pass"), (DOMAIN, "pass")),
            spoofer.clone(),
        ],
    );
    // Amazon SES: its own return-path domain passes SPF (not aligned); DKIM aligned.
    let yahoo = report(
        &app,
        "Yahoo",
        "y-1",
        &[record(
            "54.240.8.1",
            50,
            ("pass", "fail"),
            ("amazonses.com", "pass"),
        )],
    );
    // Microsoft's address: DKIM aligned, but SPF fails for the envelope domain.
    let outlook = report(
        &app,
        "Outlook.com",
        "o-1",
        &[record(
            "40.107.22.51",
            40,
            ("pass", "fail"),
            (DOMAIN, "fail"),
        )],
    );
    for r in [google, yahoo, outlook] {
        crate::common::import_for(&app, &owner, &r).await;
    }
    crate::common::identify_now(&app, &owner, &id).await;

    let view = get(&app, &path, &owner.key).await;
    let gmail = view["providers"][0].clone();
    assert_eq!(gmail["provider"], "gmail");
    assert_eq!(
        (gmail["reports"].as_u64(), gmail["messages"].as_u64()),
        (Some(1), Some(100))
    );
    // The spoofer's failing mail is not the domain's own: counted apart, not judged.
    assert_eq!(gmail["other_messages"], 5, "{gmail}");
    for (provider, name, want) in [
        ("gmail", "spf", "pass"),
        ("gmail", "dkim", "pass"),
        ("gmail", "dmarc", "pass"),
        ("gmail", "reverse_dns", "pass"),
        ("gmail", "tls", "unknown"),
        ("gmail", "one_click_unsubscribe", "unknown"),
        ("gmail", "spam_rate", "unknown"),
        ("yahoo", "spf", "pass"),
        ("yahoo", "dkim", "pass"),
        ("yahoo", "dmarc", "pass"),
        ("yahoo", "reverse_dns", "pass"),
        ("outlook", "spf", "fail"),
        ("outlook", "dkim", "pass"),
        ("outlook", "dmarc", "pass"),
    ] {
        assert_eq!(
            status(&view, provider, name),
            want,
            "{provider}/{name}: {view}"
        );
    }
    let spf = requirement(&view, "outlook", "spf");
    assert_eq!(spf["error_codes"], json!(["5.7.515"]));
    assert!(
        spf["evidence"][1]["detail"]
            .as_str()
            .unwrap()
            .contains("0 of 40"),
        "{spf}"
    );
    // The failing requirement has its task, naming the provider's code.
    let task_id = spf["task_id"].as_str().expect("a task").to_owned();
    let task = get(&app, &format!("/tasks/{task_id}"), &owner.key).await;
    assert_eq!(task["type"], "meet_sender_requirement");
    let description = task["description"].as_str().unwrap();
    assert!(
        description.contains("Outlook.com (5.7.515)"),
        "{description}"
    );

    // A header analysis of a bulk message: one-click unsubscribe signed, received over TLS.
    let (status_code, analysis) = call(
        &app,
        Method::POST,
        "/tools/header-analyze",
        &owner.key,
        Some(json!({"headers": received_message(&pkcs8, true)})),
    )
    .await;
    assert_eq!(status_code, 200, "{analysis}");
    let checks = &analysis["senderChecks"];
    assert_eq!(checks["oneClickUnsubscribe"]["status"], "pass", "{checks}");
    assert_eq!(checks["tls"]["status"], "pass", "{checks}");
    assert_eq!(checks["keptForDomainId"], id.as_str());
    let view = get(&app, &path, &owner.key).await;
    assert_eq!(
        status(&view, "gmail", "one_click_unsubscribe"),
        "pass",
        "{view}"
    );
    assert_eq!(status(&view, "yahoo", "one_click_unsubscribe"), "pass");
    assert_eq!(status(&view, "gmail", "tls"), "pass");
    assert!(view["header_analysis_at"].is_string());

    // Unsigned unsubscribe headers fail RFC 8058, and the newest analysis is what counts.
    let (_, analysis) = call(
        &app,
        Method::POST,
        "/tools/header-analyze",
        &owner.key,
        Some(json!({"headers": received_message(&pkcs8, false)})),
    )
    .await;
    assert_eq!(
        analysis["senderChecks"]["oneClickUnsubscribe"]["status"],
        "fail"
    );
    let view = get(&app, &path, &owner.key).await;
    assert_eq!(status(&view, "gmail", "one_click_unsubscribe"), "fail");
    assert!(requirement(&view, "gmail", "one_click_unsubscribe")["task_id"].is_string());

    // A supplied spam rate: above 0.3% fails Gmail's requirement; cleared, it is unknown again.
    let (code, body) = call(
        &app,
        Method::POST,
        &path,
        &owner.key,
        Some(json!({"provider": "gmail", "spam_rate_pct": 0.5})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(status(&body, "gmail", "spam_rate"), "fail");
    let spam_task = requirement(&body, "gmail", "spam_rate")["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let task = get(&app, &format!("/tasks/{spam_task}"), &owner.key).await;
    assert!(
        task["description"].as_str().unwrap().contains("5.7.28"),
        "{task}"
    );
    let (_, body) = call(
        &app,
        Method::POST,
        &path,
        &owner.key,
        Some(json!({"provider": "gmail"})),
    )
    .await;
    assert_eq!(status(&body, "gmail", "spam_rate"), "unknown");
    let task = get(&app, &format!("/tasks/{spam_task}"), &owner.key).await;
    assert_ne!(task["status"], "open", "{task}");

    // Bad input names its field.
    for (body, param) in [
        (json!({"spam_rate_pct": 0.1}), "provider"),
        (
            json!({"provider": "hotmail", "spam_rate_pct": 0.1}),
            "provider",
        ),
        (
            json!({"provider": "gmail", "spam_rate_pct": 101}),
            "spam_rate_pct",
        ),
        (
            json!({"provider": "gmail", "spam_rate_pct": "high"}),
            "spam_rate_pct",
        ),
    ] {
        let (code, err) = call(&app, Method::POST, &path, &owner.key, Some(body.clone())).await;
        assert_eq!(
            (code.as_u16(), err["param"].as_str()),
            (400, Some(param)),
            "{body}: {err}"
        );
    }
    // Another organization's domain is not found.
    let other = app.sign_up("admin@other.example", "Other").await;
    let (code, _) = call(&app, Method::GET, &path, &other.key, None).await;
    assert_eq!(code, 404);
}
