//! `GET /tools/audit` and `GET /tools/activation-scan` over HTTP, against the DNS fixture.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_domain::store::{Query, query_all};
use reqwest::Method;
use serde_json::Value;

async fn fixture() -> FixtureServer {
    let protected = Zone::new("protected.test")
        .mx("@", 10, "mx1.protected.test.")
        .a("mx1", "192.0.2.25")
        .txt("@", "v=spf1 ip4:192.0.2.0/24 -all")
        .txt(
            "_dmarc",
            "v=DMARC1; p=reject; rua=mailto:dmarc@protected.test",
        )
        .ns("@", "ns1.protected.test.");
    let bare = Zone::new("bare.test")
        .a("@", "192.0.2.7")
        .ns("@", "ns1.bare.test.")
        .mx("@", 10, "mail.bare.test.")
        .a("mail", "192.0.2.8");
    // The parent zone answers NXDOMAIN for the DMARC tree walk's `_dmarc.test`, as real DNS would.
    let parent = Zone::new("test");
    FixtureServer::start(vec![parent, protected, bare])
        .await
        .unwrap()
}

async fn app(dns: &FixtureServer) -> TestApp {
    let addr = dns.addr().to_string();
    TestApp::start_with(|s| s.dns = Some(addr)).await
}

async fn audit(app: &TestApp, query: &str) -> (u16, Value) {
    let res = app
        .request(Method::GET, &format!("/tools/audit?{query}"))
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn audits_are_camel_case_scored_and_cached() {
    let dns = fixture().await;
    let app = app(&dns).await;
    let (status, body) = audit(&app, "domain=protected.test").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "success");
    let summary = &body["summary"];
    assert_eq!(summary["domain"], "protected.test");
    for key in [
        "mx", "spf", "dkim", "dmarc", "bimi", "mtaSts", "tlsRpt", "score", "parked",
    ] {
        assert!(summary.get(key).is_some(), "summary lacks {key}: {summary}");
    }
    assert_eq!(summary["dmarc"], "pass");
    assert_eq!(summary["spf"], "pass");
    assert_eq!(summary["mtaSts"], "info", "absent MTA-STS is informational");
    for key in ["mx", "spf", "dkim", "dmarc", "bimi", "mtaSts", "tlsRpt"] {
        let dimension = &body[key];
        for field in ["score", "status", "info", "errors", "warnings", "state"] {
            assert!(dimension.get(field).is_some(), "{key} lacks {field}");
        }
    }
    assert!(body["spf"].get("lookupCount").is_some());

    let (_, bare) = audit(&app, "domain=bare.test").await;
    assert_eq!(bare["summary"]["dmarc"], "fail");
    assert_eq!(bare["summary"]["spf"], "fail");
    assert!(bare["summary"]["score"].as_u64().unwrap() < summary["score"].as_u64().unwrap());

    // Cached ten minutes: no DNS query for the second audit; `refresh` asks again (with
    // credentials: see the next test).
    let before = dns.query_count();
    let (_, again) = audit(&app, "domain=protected.test").await;
    assert_eq!(again["summary"]["score"], summary["score"]);
    assert_eq!(dns.query_count(), before, "served from the cache");
    let s = app.sign_up("auditor@audit.example", "Auditor Co").await;
    let res = app
        .with_key(
            Method::GET,
            "/tools/audit?domain=protected.test&refresh=true",
            &s.key,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(dns.query_count() > before);
    let store = app.stack.state.store.clone();
    assert!(
        store
            .get("AUDIT#protected.test", "RESULT", true)
            .await
            .unwrap()
            .is_some()
    );
    app.clock.advance(time::Duration::seconds(601));
    assert!(
        store
            .get("AUDIT#protected.test", "RESULT", true)
            .await
            .unwrap()
            .is_none(),
        "the cache expires after ten minutes"
    );
    let (_, later) = audit(&app, "domain=protected.test").await;
    assert_eq!(later["status"], "success");
    assert!(
        store
            .get("AUDIT#protected.test", "RESULT", true)
            .await
            .unwrap()
            .is_some()
    );
}

/// Tenant trust, finding 8: `refresh=true` without credentials is served from the cache, so an
/// anonymous caller cannot make Mailward query a name's servers on every request.
#[tokio::test]
async fn an_anonymous_refresh_is_served_from_the_cache() {
    let dns = fixture().await;
    let app = app(&dns).await;
    let (status, first) = audit(&app, "domain=protected.test").await;
    assert_eq!(status, 200, "{first}");
    let before = dns.query_count();
    for _ in 0..3 {
        let (status, again) = audit(&app, "domain=protected.test&refresh=true").await;
        assert_eq!(status, 200, "{again}");
        assert_eq!(again["summary"]["score"], first["summary"]["score"]);
    }
    assert_eq!(
        dns.query_count(),
        before,
        "no DNS query for an anonymous refresh"
    );
    // Nothing cached yet: the anonymous call audits once, then is served from the cache.
    let (_, bare) = audit(&app, "domain=bare.test&refresh=true").await;
    assert_eq!(bare["status"], "success");
    let after_first = dns.query_count();
    audit(&app, "domain=bare.test&refresh=true").await;
    assert_eq!(dns.query_count(), after_first);
}

#[tokio::test]
async fn leads_are_captured_and_scans_stored_for_a_day() {
    let dns = fixture().await;
    let app = app(&dns).await;
    let journey = uuid::Uuid::new_v4();
    let res = app
        .request(
            Method::GET,
            "/tools/audit?domain=protected.test&email=Lead@Example.com&store_scan=true",
        )
        .header("X-Visitor-Journey-Id", journey.to_string())
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["summary"]["email"], "lead@example.com");
    let day =
        time::OffsetDateTime::from_unix_timestamp(mailward_domain::Clock::unix(app.clock.as_ref()))
            .unwrap()
            .date()
            .to_string();
    let leads = query_all(
        app.stack.state.store.as_ref(),
        Query::partition(format!("LEAD#{day}")),
    )
    .await
    .unwrap();
    assert_eq!(leads.len(), 1);
    let lead: Value = serde_json::from_slice(&leads[0].data).unwrap();
    assert_eq!(
        (lead["email"].as_str(), lead["domain"].as_str()),
        (Some("lead@example.com"), Some("protected.test"))
    );
    assert_eq!(lead["journey_id"], journey.to_string());

    let res = app
        .request(Method::GET, "/tools/activation-scan?domain=protected.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let scan: Value = res.json().await.unwrap();
    assert_eq!(scan["summary"]["domain"], "protected.test");
    assert_eq!(
        scan["summary"]["email"],
        Value::Null,
        "the public scan never shows the email"
    );
    app.clock
        .advance(time::Duration::hours(24) + time::Duration::seconds(1));
    let res = app
        .request(Method::GET, "/tools/activation-scan?domain=protected.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "scan_not_found");
}

#[tokio::test]
async fn bad_audit_input_names_the_field() {
    let dns = fixture().await;
    let app = app(&dns).await;
    for (query, param) in [
        ("domain=not%20a%20domain", "domain"),
        ("", "domain"),
        ("domain=protected.test&email=nope", "email"),
        ("domain=protected.test&store_scan=maybe", "store_scan"),
    ] {
        let (status, body) = audit(&app, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["param"], param, "{query}: {body}");
    }
    let res = app
        .request(
            Method::GET,
            "/tools/activation-scan?domain=never-scanned.test",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}
