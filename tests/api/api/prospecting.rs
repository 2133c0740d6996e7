//! Prospecting reports over HTTP, against the DNS fixture: previews as data and HTML, stored
//! reports with their public PDF link (typeset once, text extractable, in both languages and
//! themes), the 90-day expiry, deletion, group visibility and bad input.

use crate::admin::{group, member};
use crate::audit_matrix::KEY_2048;
use crate::common::{call, call_as};
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use reqwest::Method;
use serde_json::{Value, json};

async fn fixture() -> FixtureServer {
    // Google Workspace authorised and signing; SendGrid authorised but not signing; DMARC at reject.
    let protected = Zone::new("protected.test")
        .ns("@", "ns1.protected.test.")
        .mx("@", 10, "mx1.protected.test.")
        .a("mx1", "192.0.2.25")
        .txt(
            "@",
            "v=spf1 include:_spf.google.com include:sendgrid.net -all",
        )
        .txt(
            "google._domainkey",
            &format!("v=DKIM1; k=rsa; p={KEY_2048}"),
        )
        .txt(
            "_dmarc",
            "v=DMARC1; p=reject; rua=mailto:dmarc@protected.test",
        )
        // DANE: a well-formed DANE-EE record in a zone with a key (issue 38 §4).
        .dnskey("@")
        .tlsa("_25._tcp.mx1", 3, 1, 1, &"11".repeat(32));
    // DMARC at p=none: monitored, not protected.
    let weak = Zone::new("weak.test")
        .ns("@", "ns1.weak.test.")
        .mx("@", 10, "mail.weak.test.")
        .a("mail", "192.0.2.30")
        .txt("@", "v=spf1 ip4:192.0.2.0/24 ~all")
        .txt("_dmarc", "v=DMARC1; p=none; rua=mailto:dmarc@weak.test");
    // No SPF, no DMARC.
    let bare = Zone::new("bare.test")
        .ns("@", "ns1.bare.test.")
        .mx("@", 10, "mail.bare.test.")
        .a("mail", "192.0.2.8");
    let google = Zone::new("_spf.google.com").txt("@", "v=spf1 ip4:198.51.100.0/24 ~all");
    let sendgrid = Zone::new("sendgrid.net").txt("@", "v=spf1 ip4:203.0.113.0/24 ~all");
    FixtureServer::start(vec![
        Zone::new("test"),
        protected,
        weak,
        bare,
        google,
        sendgrid,
    ])
    .await
    .unwrap()
}

async fn start() -> (FixtureServer, TestApp, mailward_api_tests::SignedUp) {
    let dns = fixture().await;
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        for scope in [
            mailward_services::config::Scope::Dns,
            mailward_services::config::Scope::ApiKeyDns,
        ] {
            s.rate_limits.push((scope, "100000/60".parse().unwrap()));
        }
    })
    .await;
    let s = app.sign_up("owner@msp.example", "Northwind MSP").await;
    (dns, app, s)
}

fn body(extra: Value) -> Value {
    let mut base = json!({
        "generated_for": "Contoso Ltd",
        "domains": ["protected.test", "weak.test", "bare.test", "not a domain!", "nowhere.test", "PROTECTED.test"],
    });
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    base
}

fn domain<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["domains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["domain"] == name)
        .unwrap_or_else(|| panic!("{name} not in {report}"))
}

fn finding<'a>(d: &'a Value, dimension: &str) -> Option<&'a Value> {
    d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["dimension"] == dimension)
}

/// The status of a keyed request without body on one report.
async fn on_report(app: &TestApp, method: Method, id: &str, key: &str) -> u16 {
    let path = format!("/prospecting-reports/{id}");
    call(app, method, &path, key, None).await.0.as_u16()
}

async fn download(app: &TestApp, id: &str, accept: Option<&str>) -> reqwest::Response {
    let mut req = app.request(Method::GET, &format!("/prospecting-reports/{id}/download"));
    if let Some(accept) = accept {
        req = req.header("accept", accept);
    }
    req.send().await.unwrap()
}

/// The text of a PDF (poppler's `pdftotext`), whitespace collapsed; `None` when the tool is
/// missing and the test script did not require it.
pub(crate) fn pdf_text(pdf: &[u8]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = match std::process::Command::new("pdftotext")
        .arg("-enc")
        .arg("UTF-8")
        .arg(&path)
        .arg("-")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(
                std::env::var("MAILWARD_REQUIRE_PDFTOTEXT").is_err(),
                "MAILWARD_REQUIRE_PDFTOTEXT is set but pdftotext did not run: {e}"
            );
            eprintln!("pdftotext is not installed: the PDF text is not checked");
            return None;
        }
    };
    assert!(out.status.success(), "pdftotext failed on the PDF");
    let text = String::from_utf8(out.stdout).unwrap();
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[tokio::test]
async fn previews_judge_the_domains_and_list_the_skipped_ones() {
    let (_dns, app, s) = start().await;
    let (status, report) = call(
        &app,
        Method::POST,
        "/prospecting-reports/preview",
        &s.key,
        Some(body(json!({}))),
    )
    .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["language"], "en");
    assert_eq!(report["cover"]["generated_for"], "Contoso Ltd");
    assert_eq!(report["cover"]["prepared_by"], "Northwind MSP");
    assert_eq!(report["domains"].as_array().unwrap().len(), 3);

    let protected = domain(&report, "protected.test");
    assert_eq!(finding(protected, "dmarc").unwrap()["status"], "pass");
    let services = protected["sending_services"].as_array().unwrap();
    let states: Vec<(&str, &str)> = services
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["dkim"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [("Google Workspace", "signed"), ("SendGrid", "missing")]
    );
    assert!(protected["dns_records"].is_null());
    let dane = finding(protected, "dane").expect("DANE is published: reported");
    assert_eq!(dane["status"], "pass", "{dane}");
    assert_eq!(dane["title"], "Mail servers are pinned with DANE");

    let weak = domain(&report, "weak.test");
    assert_eq!(finding(weak, "dmarc").unwrap()["status"], "warn");
    assert!(
        finding(weak, "dmarc").unwrap()["codes"]
            .as_array()
            .unwrap()
            .contains(&json!("policy_none"))
    );
    let bare = domain(&report, "bare.test");
    assert_eq!(finding(bare, "dmarc").unwrap()["status"], "fail");
    assert_eq!(finding(bare, "spf").unwrap()["status"], "fail");
    assert_eq!(bare["risk"], "critical");
    assert_eq!(bare["risk_word"], "Critical");
    assert_eq!(report["cover"]["overall_risk"], "critical");
    assert!(finding(bare, "bimi").is_some());
    // Neither MTA-STS nor DANE: DANE is named as the other way to enforce encryption.
    let dane = finding(bare, "dane").unwrap();
    assert!(
        dane["codes"]
            .as_array()
            .unwrap()
            .contains(&json!("dane_not_configured"))
    );
    // Findings come most severe first.
    assert_eq!(bare["findings"][0]["status"], "fail");

    let skipped: Vec<(&str, &str)> = report["skipped_domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["domain"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("not a domain!", "invalid_domain"),
            ("nowhere.test", "domain_not_found"),
            ("PROTECTED.test", "duplicate"),
        ]
    );

    let loss = &report["potential_loss"];
    assert_eq!(loss["currency"], "USD");
    assert_eq!(loss["reference_incident_cost"], 50_000);
    let sum: u64 = loss["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["amount"].as_u64().unwrap())
        .sum();
    assert_eq!(loss["total"].as_u64().unwrap(), sum);
    let bare_score = bare["score"].as_u64().unwrap();
    let bare_loss = loss["domains"][2]["amount"].as_u64().unwrap();
    assert_eq!(
        bare_loss,
        ((50_000 * (100 - bare_score) / 100) + 50) / 100 * 100
    );
    let plan = report["plan"].as_array().unwrap();
    assert_eq!(plan.len(), 5);
    assert_eq!(plan[4]["week"], 6);

    // The switches.
    let (_, trimmed) = call(
        &app,
        Method::POST,
        "/prospecting-reports/preview",
        &s.key,
        Some(body(json!({
            "include_potential_loss": false, "include_dns_records": true, "include_bimi": false,
            "include_organization_info": false, "currency": "EUR", "deadline_weeks": 10,
        }))),
    )
    .await;
    assert!(trimmed["potential_loss"].is_null());
    assert!(trimmed["cover"]["prepared_by"].is_null());
    let protected = domain(&trimmed, "protected.test");
    assert!(finding(protected, "bimi").is_none());
    let records = protected["dns_records"].as_array().unwrap();
    assert!(records.iter().any(|r| {
        r["type"] == "TXT"
            && r["name"] == "_dmarc.protected.test"
            && r["value"]
                .as_str()
                .unwrap()
                .starts_with("v=DMARC1; p=reject")
    }));
    assert!(records.iter().any(|r| r["type"] == "MX"));
    assert!(
        records.iter().any(|r| r["type"] == "TLSA"
            && r["name"] == "_25._tcp.mx1.protected.test"
            && r["value"] == format!("3 1 1 {}", "11".repeat(32))),
        "{records:?}"
    );
    assert_eq!(trimmed["plan"][4]["week"], 10);

    // Nothing was stored.
    let (_, list) = call(&app, Method::GET, "/prospecting-reports", &s.key, None).await;
    assert_eq!(list["page_info"]["total_count"], 0);
}

#[tokio::test]
async fn html_previews_are_self_contained_and_translated() {
    let (_dns, app, s) = start().await;
    let res = app
        .with_key(Method::POST, "/prospecting-reports/preview", &s.key)
        .json(&body(
            json!({"format": "html", "language": "fr", "theme": "dark"}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = res.text().await.unwrap();
    if let Ok(dir) = std::env::var("PROSPECTING_PDF_OUT") {
        std::fs::write(format!("{dir}/fr-dark.html"), &html).unwrap();
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<html lang=\"fr\">"));
    assert!(html.contains("Évaluation de la sécurité de la messagerie"));
    assert!(html.contains("Aucune protection DMARC"));
    assert!(html.contains("Critique"));
    assert!(html.contains("#111827"), "dark background");
    assert!(html.contains("Contoso Ltd"));
    for forbidden in ["<script", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(forbidden), "{forbidden} in the HTML");
    }
    // The input is escaped.
    let res = app
        .with_key(Method::POST, "/prospecting-reports/preview", &s.key)
        .json(&json!({"generated_for": "<b>Evil & Co</b>", "domains": ["bare.test"], "format": "html"}))
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    assert!(html.contains("&lt;b&gt;Evil &amp; Co&lt;/b&gt;"));
    assert!(!html.contains("<b>Evil"));
}

#[tokio::test]
async fn stored_reports_serve_a_pdf_for_ninety_days() {
    let (_dns, app, s) = start().await;
    let mut ids = Vec::new();
    for (language, theme) in [
        ("en", "light"),
        ("en", "dark"),
        ("fr", "light"),
        ("fr", "dark"),
    ] {
        let (status, created) = call(
            &app,
            Method::POST,
            "/prospecting-reports",
            &s.key,
            Some(body(
                json!({"language": language, "theme": theme, "include_dns_records": true}),
            )),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        // The answer is what the document says (a schemathesis finding: the plan's steps were
        // documented with the domain plan's fields).
        let doc = crate::common::get_json(&app, Method::GET, "/swagger.json", &s.key).await;
        let schema = crate::openapi::response_schema(&doc, "/prospecting-reports", "post", 201);
        assert!(schema.is_object(), "documented");
        let departures = crate::openapi::departures(&doc, &schema, &created, "$");
        assert!(departures.is_empty(), "{departures:?}");
        let id = created["id"].as_str().unwrap().to_owned();
        assert_eq!(
            created["url"].as_str().unwrap(),
            app.url(&format!("/prospecting-reports/{id}/download"))
        );
        assert_eq!(created["report"]["language"], language);

        let res = download(&app, &id, None).await;
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "application/pdf");
        assert!(
            res.headers()["content-disposition"]
                .to_str()
                .unwrap()
                .contains("mailward-report-protected-test.pdf")
        );
        let pdf = res.bytes().await.unwrap();
        assert!(pdf.starts_with(b"%PDF-"));
        // To look at the pages: PROSPECTING_PDF_OUT=/some/dir, then pdftoppm.
        if let Ok(dir) = std::env::var("PROSPECTING_PDF_OUT") {
            std::fs::write(format!("{dir}/{language}-{theme}.pdf"), &pdf).unwrap();
        }
        if let Some(text) = pdf_text(&pdf) {
            let report = &created["report"];
            let expect = |needle: &str| {
                assert!(
                    text.contains(needle),
                    "{language}/{theme}: {needle:?} missing from the PDF text: {text}"
                )
            };
            expect(report["cover"]["title"].as_str().unwrap());
            expect("Contoso Ltd");
            expect("Northwind MSP");
            for d in report["domains"].as_array().unwrap() {
                expect(d["domain"].as_str().unwrap());
                expect(d["risk_word"].as_str().unwrap());
                for f in d["findings"].as_array().unwrap() {
                    expect(f["title"].as_str().unwrap());
                }
                for s in d["sending_services"].as_array().unwrap() {
                    expect(s["name"].as_str().unwrap());
                }
            }
            for step in report["plan"].as_array().unwrap() {
                expect(step["title"].as_str().unwrap());
            }
            expect("nowhere.test");
            if language == "fr" {
                expect("Constats");
                // The cover's labels are set in capitals.
                expect("PRÉPARÉ POUR");
            }
        }
        // Later downloads serve the stored PDF.
        let again = download(&app, &id, None).await.bytes().await.unwrap();
        assert_eq!(again, pdf);
        ids.push(id);
        app.clock.advance(time::Duration::seconds(1));
    }

    // Newest first, without content; the single read has it.
    let (_, list) = call(
        &app,
        Method::GET,
        "/prospecting-reports?per_page=2",
        &s.key,
        None,
    )
    .await;
    assert_eq!(list["page_info"]["total_count"], 4);
    assert_eq!(list["data"][0]["id"], ids[3].as_str());
    assert!(list["data"][0].get("report").is_none());
    let (status, one) = call(
        &app,
        Method::GET,
        &format!("/prospecting-reports/{}", ids[0]),
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(one["report"]["cover"]["generated_for"], "Contoso Ltd");
    let doc = crate::common::get_json(&app, Method::GET, "/swagger.json", &s.key).await;
    let schema = crate::openapi::response_schema(&doc, "/prospecting-reports/{id}", "get", 200);
    let departures = crate::openapi::departures(&doc, &schema, &one, "$");
    assert!(departures.is_empty(), "{departures:?}");

    // Unknown ids: JSON (SPEC §7.5, any Accept or none: a schemathesis finding was HTML to a
    // client that did not ask for it), a page for a browser.
    let unknown = uuid::Uuid::new_v4();
    for accept in [None, Some("application/json"), Some("*/*")] {
        let res = download(&app, &unknown.to_string(), accept).await;
        assert_eq!(res.status(), 404);
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{accept:?}"
        );
        assert_eq!(
            res.json::<Value>().await.unwrap()["code"],
            "resource_not_found"
        );
    }
    let browser = Some("text/html,application/xhtml+xml,*/*;q=0.8");
    let res = download(&app, &unknown.to_string(), browser).await;
    assert_eq!(res.status(), 404);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/")
    );

    // Day 89 still works, day 90 is gone.
    app.clock.advance(time::Duration::days(89));
    assert_eq!(download(&app, &ids[0], None).await.status(), 200);
    app.clock.advance(time::Duration::days(1));
    let res = download(&app, &ids[0], Some("text/html")).await;
    assert_eq!(res.status(), 410);
    assert!(res.text().await.unwrap().contains("expired"));
    let res = download(&app, &ids[0], Some("application/json")).await;
    assert_eq!(res.status(), 410);
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "prospecting_report_expired"
    );

    // Deletion removes the report and its link.
    assert_eq!(on_report(&app, Method::DELETE, &ids[1], &s.key).await, 204);
    assert_eq!(on_report(&app, Method::GET, &ids[1], &s.key).await, 404);
    assert_eq!(download(&app, &ids[1], None).await.status(), 404);
    assert_eq!(on_report(&app, Method::DELETE, &ids[1], &s.key).await, 404);

    // Another organization sees none of them.
    let other = app.sign_up("other@elsewhere.example", "Elsewhere").await;
    assert_eq!(on_report(&app, Method::GET, &ids[2], &other.key).await, 404);
    let (_, list) = call(&app, Method::GET, "/prospecting-reports", &other.key, None).await;
    assert_eq!(list["page_info"]["total_count"], 0);
}

#[tokio::test]
async fn group_limited_members_see_their_own_and_their_domains_reports() {
    let (_dns, app, s) = start().await;
    let g = group(&app, &s.key, "Clients").await;
    let gid = g["id"].as_str().unwrap();
    let (status, d) = call(
        &app,
        Method::POST,
        "/domains",
        &s.key,
        Some(json!({"url": "weak.test", "group_id": gid})),
    )
    .await;
    assert_eq!(status, 201, "{d}");
    let create = |domains: Vec<&str>| json!({"generated_for": "X", "domains": domains});
    let (_, in_group) = call(
        &app,
        Method::POST,
        "/prospecting-reports",
        &s.key,
        Some(create(vec!["weak.test"])),
    )
    .await;
    let (_, outside) = call(
        &app,
        Method::POST,
        "/prospecting-reports",
        &s.key,
        Some(create(vec!["weak.test", "bare.test"])),
    )
    .await;
    let limited = member(&app, &s, "limited@msp.example", &["editor"], &[gid]).await;
    let (status, own) = call_as(
        &app,
        Method::POST,
        "/prospecting-reports",
        &limited,
        Some(create(vec!["bare.test"])),
    )
    .await;
    assert_eq!(status, 201, "{own}");
    let (_, list) = call_as(&app, Method::GET, "/prospecting-reports", &limited, None).await;
    let mut seen: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    seen.sort_unstable();
    let mut expected = vec![
        own["id"].as_str().unwrap(),
        in_group["id"].as_str().unwrap(),
    ];
    expected.sort_unstable();
    assert_eq!(seen, expected);
    let path = format!("/prospecting-reports/{}", outside["id"].as_str().unwrap());
    assert_eq!(
        call_as(&app, Method::GET, &path, &limited, None).await.0,
        404
    );
    // They delete only their own.
    let path = format!("/prospecting-reports/{}", in_group["id"].as_str().unwrap());
    assert_eq!(
        call_as(&app, Method::DELETE, &path, &limited, None).await.0,
        403
    );
    let path = format!("/prospecting-reports/{}", own["id"].as_str().unwrap());
    assert_eq!(
        call_as(&app, Method::DELETE, &path, &limited, None).await.0,
        204
    );
    // Viewers preview but do not create.
    let viewer = member(&app, &s, "viewer@msp.example", &["viewer"], &[]).await;
    let (status, _) = call_as(
        &app,
        Method::POST,
        "/prospecting-reports/preview",
        &viewer,
        Some(create(vec!["bare.test"])),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call_as(
        &app,
        Method::POST,
        "/prospecting-reports",
        &viewer,
        Some(create(vec!["bare.test"])),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn bad_requests_name_the_field() {
    let (_dns, app, s) = start().await;
    let eleven: Vec<String> = (0..11).map(|i| format!("d{i}.test")).collect();
    let cases = [
        (json!({"generated_for": "X", "domains": eleven}), "domains"),
        (json!({"generated_for": "X", "domains": []}), "domains"),
        (
            json!({"generated_for": "  ", "domains": ["bare.test"]}),
            "generated_for",
        ),
        (
            json!({"generated_for": "x".repeat(201), "domains": ["bare.test"]}),
            "generated_for",
        ),
        (json!({"domains": ["bare.test"]}), "generated_for"),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "currency": "JPY"}),
            "currency",
        ),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "language": "de"}),
            "language",
        ),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "theme": "blue"}),
            "theme",
        ),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "deadline_weeks": 0}),
            "deadline_weeks",
        ),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "deadline_weeks": 53}),
            "deadline_weeks",
        ),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "deadline_weeks": -1}),
            "deadline_weeks",
        ),
        (
            json!({"generated_for": "X", "domains": "bare.test"}),
            "domains",
        ),
        (json!({"generated_for": "X", "domains": [42]}), "domains[0]"),
        (
            json!({"generated_for": "X", "domains": ["bare.test"], "format": "html"}),
            "format",
        ),
    ];
    for (request, param) in cases {
        let (status, err) = call(
            &app,
            Method::POST,
            "/prospecting-reports",
            &s.key,
            Some(request.clone()),
        )
        .await;
        assert_eq!(status, 400, "{request}: {err}");
        assert_eq!(err["param"], param, "{request}: {err}");
    }
    let (status, err) = call(
        &app,
        Method::POST,
        "/prospecting-reports/preview",
        &s.key,
        Some(json!({"generated_for": "X", "domains": ["bare.test"], "format": "pdf"})),
    )
    .await;
    assert_eq!(
        (status.as_u16(), err["param"].as_str()),
        (400, Some("format"))
    );
    // Only invalid names: a report that says so, not an error.
    let (status, report) = call(
        &app,
        Method::POST,
        "/prospecting-reports/preview",
        &s.key,
        Some(json!({"generated_for": "X", "domains": ["-bad-", "a..b"]})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(report["domains"].as_array().unwrap().len(), 0);
    assert_eq!(report["skipped_domains"].as_array().unwrap().len(), 2);
    assert!(report["potential_loss"].is_null());
    assert!(report["cover"]["overall_risk"].is_null());
    let (status, _) = call(
        &app,
        Method::GET,
        "/prospecting-reports/not-a-uuid",
        &s.key,
        None,
    )
    .await;
    assert_eq!(status, 400);
    let res = app
        .request(Method::GET, "/prospecting-reports")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let res = download(&app, "not-a-uuid", None).await;
    assert_eq!(res.status(), 400);
}
