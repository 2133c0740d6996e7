//! DNS tools against an in-process authoritative DNS fixture: lookups, provider detection,
//! include validation, and the DNS rate-limit buckets.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use reqwest::Method;
use serde_json::{Value, json};

async fn fixture() -> FixtureServer {
    let example = Zone::new("example.test")
        .txt("@", "v=spf1 include:_spf.example.test -all")
        .mx("@", 20, "mx2.example.test.")
        .mx("@", 10, "mx1.example.test.")
        .ns("@", "ada.ns.cloudflare.com.")
        .ns("@", "bob.ns.cloudflare.com.")
        .a("@", "192.0.2.1")
        .cname("www", "example.test.")
        .txt("_spf", "v=spf1 ip4:192.0.2.0/24 include:_spf2.example.test -all")
        .txt("_spf2", "v=spf1 ip4:198.51.100.0/24 -all")
        .txt("nospf", "hello world")
        .txt("slow", "v=spf1 -all")
        .txt("open", "v=spf1 +all")
        .txt(
            "heavy",
            "v=spf1 include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test include:_spf2.example.test -all",
        );
    let other = Zone::new("other.test")
        .ns("@", "ns1.unknown-host.test.")
        .txt("@", "only text");
    FixtureServer::start(vec![example, other]).await.unwrap()
}

async fn app_with(
    dns: &FixtureServer,
    adjust: impl FnOnce(&mut mailward_local_stack::Settings),
) -> TestApp {
    let addr = dns.addr().to_string();
    TestApp::start_with(|s| {
        s.dns = Some(addr);
        adjust(s);
    })
    .await
}

#[tokio::test]
async fn dns_lookup_returns_each_type_that_answers() {
    let dns = fixture().await;
    let app = app_with(&dns, |_| {}).await;
    let res = app
        .request(Method::POST, "/tools/dns-lookup")
        .json(&json!({"host": "Example.TEST."}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["host"], "example.test");
    let r = &body["records"];
    assert_eq!(r["TXT"], json!(["v=spf1 include:_spf.example.test -all"]));
    assert_eq!(
        r["MX"],
        json!([{"preference": 10, "exchange": "mx1.example.test"}, {"preference": 20, "exchange": "mx2.example.test"}])
    );
    assert_eq!(r["A"], json!(["192.0.2.1"]));
    assert_eq!(r["NS"].as_array().unwrap().len(), 2);
    assert!(
        r.get("CNAME").is_none(),
        "types without an answer are absent"
    );

    let body: Value = app
        .request(Method::POST, "/tools/dns-lookup")
        .json(&json!({"host": "www.example.test"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["records"]["CNAME"], json!(["example.test"]));

    let body: Value = app
        .request(Method::POST, "/tools/dns-lookup")
        .json(&json!({"host": "other.test"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["records"]["TXT"], json!(["only text"]));
    assert!(body["records"].get("MX").is_none() && body["records"].get("A").is_none());

    for bad in [
        json!({"host": "not a host"}),
        json!({"host": ""}),
        json!({"host": 5}),
        json!({}),
    ] {
        let res = app
            .request(Method::POST, "/tools/dns-lookup")
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{bad}");
        assert_eq!(res.json::<Value>().await.unwrap()["param"], "host");
    }
}

#[tokio::test]
async fn providers_are_detected_and_failures_give_empty_nameservers() {
    let dns = fixture().await;
    let app = app_with(&dns, |_| {}).await;
    let s = app.sign_up("tools@example.com", "Tools Org").await;
    let get = |domain: &str| {
        app.with_key(
            Method::GET,
            &format!("/dns-providers/detect?domain={domain}"),
            &s.key,
        )
        .send()
    };
    let body: Value = get("example.test").await.unwrap().json().await.unwrap();
    assert_eq!(body["id"], "cloudflare");
    assert_eq!(
        body["nameservers"],
        json!(["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"])
    );
    let body: Value = get("other.test").await.unwrap().json().await.unwrap();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["nameservers"], json!(["ns1.unknown-host.test"]));
    // A failed lookup (never cached: this name was not asked before) gives no name servers.
    dns.inject(Scope::name("broken.test"), Fault::ServFail);
    let body: Value = get("broken.test").await.unwrap().json().await.unwrap();
    assert_eq!(body, json!({"id": null, "nameservers": []}));
    let res = get("bad domain").await.unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "domain");
    let res = app
        .request(Method::GET, "/dns-providers/detect?domain=example.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}

#[tokio::test]
async fn include_targets_are_validated_with_their_lookup_cost() {
    let dns = fixture().await;
    let app = app_with(&dns, |_| {}).await;
    let s = app.sign_up("spf@example.com", "Spf Org").await;
    let check = |domain: &str| {
        let url = format!("/tools/validate-include?domain={domain}");
        let req = app.with_key(Method::GET, &url, &s.key);
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    assert_eq!(
        check("_spf.example.test").await,
        json!({"valid": true, "lookups": 2})
    );
    assert_eq!(
        check("_spf2.example.test").await,
        json!({"valid": true, "lookups": 1})
    );
    assert_eq!(
        check("nospf.example.test").await,
        json!({"valid": false, "reason": "no_spf_record"})
    );
    assert_eq!(
        check("open.example.test").await,
        json!({"valid": false, "reason": "permissive_all"})
    );
    assert_eq!(
        check("heavy.example.test").await,
        json!({"valid": false, "reason": "lookup_limit_exceeded"})
    );
    dns.inject(Scope::name("slow.example.test"), Fault::Timeout);
    let body = check("slow.example.test").await;
    assert_eq!(body["valid"], false);
    assert_eq!(
        body["reason"], "dns_temporary_error",
        "a timeout is never 'no record'"
    );
}

#[tokio::test]
async fn dns_tools_count_in_the_dns_buckets() {
    let dns = fixture().await;
    let app = app_with(&dns, |s| {
        s.rate_limits.push((
            mailward_services::config::Scope::Dns,
            "3/60".parse().unwrap(),
        ));
        s.rate_limits.push((
            mailward_services::config::Scope::ApiKeyDns,
            "1/60".parse().unwrap(),
        ));
    })
    .await;
    let lookup = || {
        app.request(Method::POST, "/tools/dns-lookup")
            .json(&json!({"host": "example.test"}))
            .send()
    };
    assert_eq!(lookup().await.unwrap().status(), 200);
    assert_eq!(lookup().await.unwrap().status(), 200);
    assert_eq!(lookup().await.unwrap().status(), 200);
    let res = lookup().await.unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(res.json::<Value>().await.unwrap()["scope"], "dns");

    let s = app.sign_up("bucket@example.com", "Bucket Org").await;
    let with_key = || {
        app.with_key(Method::POST, "/tools/dns-lookup", &s.key)
            .json(&json!({"host": "example.test"}))
            .send()
    };
    assert_eq!(with_key().await.unwrap().status(), 200);
    let res = with_key().await.unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(res.json::<Value>().await.unwrap()["scope"], "api_key_dns");
}

#[tokio::test]
async fn the_mailbox_provider_comes_from_the_mx_hosts() {
    let google = Zone::new("gmail-hosted.test")
        .mx("@", 1, "aspmx.l.google.com.")
        .mx("@", 5, "alt1.aspmx.l.google.com.");
    let gateway = Zone::new("gateway.test").mx("@", 10, "eu-smtp-inbound-1.mimecast.com.");
    let unknown = Zone::new("unknown.test").mx("@", 10, "mail.unknown.test.");
    let nomx = Zone::new("nomx.test").a("@", "192.0.2.9");
    let dns = FixtureServer::start(vec![google, gateway, unknown, nomx])
        .await
        .unwrap();
    let app = app_with(&dns, |_| {}).await;
    let get = |domain: &str| {
        let req = app.request(
            Method::GET,
            &format!("/tools/mailbox-provider?domain={domain}"),
        );
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let body = get("gmail-hosted.test").await;
    assert_eq!(
        body["provider"]["external_id"], "google-workspace",
        "{body}"
    );
    assert_eq!(body["reason"], Value::Null);
    assert_eq!(body["mx"][0], "aspmx.l.google.com");
    let body = get("gateway.test").await;
    assert_eq!(
        (body["provider"].clone(), body["reason"].clone()),
        (Value::Null, json!("security_gateway"))
    );
    assert_eq!(get("unknown.test").await["reason"], "unknown_mx");
    assert_eq!(get("nomx.test").await["reason"], "no_mx");
    dns.inject(Scope::name("slow-mx.test"), Fault::Timeout);
    assert_eq!(get("slow-mx.test").await["reason"], "dns_lookup_failed");
}

#[tokio::test]
async fn the_source_catalogue_is_served_with_optional_auth() {
    let app = TestApp::start().await;
    let res = app.request(Method::GET, "/sources").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let sources: Vec<Value> = res.json().await.unwrap();
    assert!(sources.len() >= 60, "{} sources", sources.len());
    let google = sources
        .iter()
        .find(|s| s["external_id"] == "google-workspace")
        .expect("google");
    for field in [
        "id",
        "name",
        "homepage",
        "category",
        "spf_support",
        "dkim_support",
        "base_domains",
        "documentation",
        "instructions_curation",
        "created_at",
        "status",
    ] {
        assert!(google.get(field).is_some(), "missing {field}");
    }
    assert_eq!(google["instructions_curation"], Value::Null);
    let id = google["id"].as_str().unwrap();
    let one: Value = app
        .request(Method::GET, &format!("/sources/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(one["name"], google["name"]);
    let res = app
        .request(Method::GET, &format!("/sources/{}", uuid::Uuid::new_v4()))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let spf: Vec<Value> = app
        .request(Method::GET, "/sources/spf-index")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let google_spf = spf
        .iter()
        .find(|s| s["id"] == google["id"])
        .expect("google in the spf index");
    assert!(
        google_spf["recognition_values"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "include:_spf.google.com")
    );
    let dkim: Vec<Value> = app
        .request(Method::GET, "/sources/dkim-index")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        dkim.iter()
            .all(|s| !s["selectors"].as_array().unwrap().is_empty()
                || !s["base_domains"].as_array().unwrap().is_empty())
    );
    let active: Vec<Value> = app
        .request(Method::GET, "/sources?status=ACTIVE")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(active.len(), sources.len());
    let rejected: Vec<Value> = app
        .request(Method::GET, "/sources?status=REJECTED")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(rejected.is_empty());
    let res = app
        .request(Method::GET, "/sources?status=bogus")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["param"], "status");
    // A credential that is sent must be valid even on optional-auth routes.
    let res = app
        .request(Method::GET, "/sources")
        .basic_auth("mw_bogus", Some(""))
        .header("Mailward-Version", "2025-04-30")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}
