//! `GET /tools/audit` over HTTP against a matrix of fixture domains: every dimension's pass, warn
//! and fail paths, the optional dimensions' `info`, DNS failures (timeout, SERVFAIL) that must
//! never read as "missing", parked domains and a domain that does not exist.
//!
//! Scores follow `mailward_audit::score`: weights dmarc 35, spf 25, dkim 20, mx 10, bimi 10;
//! mtaSts and tlsRpt are never scored. DKIM keys sit at `google`, one of the selectors of the
//! sending-source catalogue the service probes.

use mailward_api_tests::TestApp;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use mailward_domain::dns::RecordType;
use reqwest::Method;
use serde_json::Value;

/// A 2048-bit RSA public key (SPKI, base64), as in the audit engine's own fixture tests.
pub(crate) const KEY_2048: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr+yaDax+Q7JKiRtEo58HVYrEsK1CcE/oKY6ASKvlKs+bLLytOuCzHO4IfFFePMldibGJioOAZxXG69tEFPU6iTzVyoPTmHsyTume1KxOO1IudivAfC0PmtH5m6Thg74u00utR1PgFkxA5f4CZeRoeY57Px0EHB+6tBlAM3NcyD7H+fo/L5C/HLNgto5H8KWyfkbc4Lh03oQOUKim1ZtPpCbCvPYB6MKT8izpwf5VSBmKc0JVaRuZrALxY/o+DajzCq3igOtMOczwlNKxxfAIn8UpPIdGQvBUguomF939xRKGWabehBezWSLNdwmxUSnLRm0Mb3ufnRsKzZK9df6uWwIDAQAB";
/// A 1024-bit RSA public key (SPKI, base64): accepted but weak.
const KEY_1024: &str = "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCbPsEmNCidIobSwiUIqawIH939MOHg0OH1VQihbjPIrrsU+i+uYpNurp0J+17SWuVg/u1wQy/xVgQplw0lux6wDZe+NlwdjVGjL9trG4gHktuIzLA9giEX1bti4LLuNdVQqTKG+sWAumOcEV3w18mKp4EZ4N9FqLpvQRlUdSYcrwIDAQAB";

const SPF_STRICT: &str = "v=spf1 ip4:192.0.2.0/24 -all";

/// Name server and one resolvable MX host.
fn mail_base(origin: &str) -> Zone {
    Zone::new(origin)
        .ns("@", &format!("ns1.{origin}."))
        .mx("@", 10, &format!("mx1.{origin}."))
        .a("mx1", "192.0.2.25")
}

/// SPF, DMARC (reject unless given), DKIM (`google`), BIMI and TLS-RPT on top of `zone`.
fn protect(zone: Zone, spf: &str, dmarc: Option<&str>, dkim: Option<&str>) -> Zone {
    let origin = zone.origin();
    let origin = origin.trim_end_matches('.');
    let dmarc = dmarc.map_or_else(
        || format!("v=DMARC1; p=reject; rua=mailto:dmarc@{origin}"),
        str::to_string,
    );
    let dkim = dkim.map_or_else(|| format!("v=DKIM1; k=rsa; p={KEY_2048}"), str::to_string);
    zone.txt("@", spf)
        .txt("_dmarc", &dmarc)
        .txt("google._domainkey", &dkim)
        .txt(
            "default._bimi",
            &format!("v=BIMI1; l=https://{origin}/logo.svg; a=https://{origin}/vmc.pem"),
        )
        .txt(
            "_smtp._tls",
            &format!("v=TLSRPTv1; rua=mailto:tls@{origin}"),
        )
}

/// A fully protected domain (MTA-STS not published: the policy fetch cannot succeed here).
fn full(origin: &str) -> Zone {
    protect(mail_base(origin), SPF_STRICT, None, None)
}

async fn fixture() -> FixtureServer {
    let mut zones = vec![
        // The parent: names above the zones below answer NXDOMAIN (not REFUSED), and so does
        // `nowhere.test`.
        Zone::new("test").ns("@", "ns1.test."),
        full("full.test"),
        mail_base("bare.test").a("@", "192.0.2.7"),
        protect(
            mail_base("monitor.test"),
            SPF_STRICT,
            Some("v=DMARC1; p=none; rua=mailto:dmarc@monitor.test"),
            None,
        ),
        protect(
            mail_base("quarantine.test"),
            SPF_STRICT,
            Some("v=DMARC1; p=quarantine; rua=mailto:dmarc@quarantine.test"),
            None,
        ),
        protect(
            mail_base("softfail.test"),
            "v=spf1 ip4:192.0.2.0/24 ~all",
            None,
            None,
        ),
        protect(
            mail_base("neutral.test"),
            "v=spf1 ip4:192.0.2.0/24 ?all",
            None,
            None,
        ),
        protect(
            mail_base("open.test"),
            "v=spf1 ip4:192.0.2.0/24 +all",
            None,
            None,
        ),
        protect(
            mail_base("weakdkim.test"),
            SPF_STRICT,
            None,
            Some(&format!("v=DKIM1; k=rsa; p={KEY_1024}")),
        ),
        protect(
            mail_base("revoked.test"),
            SPF_STRICT,
            None,
            Some("v=DKIM1; k=rsa; p="),
        ),
        // Null MX, `v=spf1 -all`, DMARC reject: parked and fully protected against spoofing.
        Zone::new("parked.test")
            .ns("@", "ns1.parked.test.")
            .mx("@", 0, ".")
            .txt("@", "v=spf1 -all")
            .txt("_dmarc", "v=DMARC1; p=reject; rua=mailto:d@parked.test"),
        // Null MX, no SPF, DMARC p=none: parked, weakly protected.
        Zone::new("parkednone.test")
            .ns("@", "ns1.parkednone.test.")
            .mx("@", 0, ".")
            .txt("_dmarc", "v=DMARC1; p=none; rua=mailto:d@parkednone.test"),
        // The only MX host has no address.
        protect(
            Zone::new("mxdead.test")
                .ns("@", "ns1.mxdead.test.")
                .mx("@", 10, "mx1.mxdead.test."),
            SPF_STRICT,
            None,
            None,
        ),
        // One of two MX hosts has no address.
        full("mxhalf.test").mx("@", 20, "mx2.mxhalf.test."),
        // BIMI with an http logo and no certificate.
        Zone::new("bimihttp.test")
            .ns("@", "ns1.bimihttp.test.")
            .mx("@", 10, "mx1.bimihttp.test.")
            .a("mx1", "192.0.2.25")
            .txt("@", SPF_STRICT)
            .txt("_dmarc", "v=DMARC1; p=reject; rua=mailto:d@bimihttp.test")
            .txt(
                "google._domainkey",
                &format!("v=DKIM1; k=rsa; p={KEY_2048}"),
            )
            .txt("default._bimi", "v=BIMI1; l=http://bimihttp.test/logo.svg"),
        // No BIMI record, otherwise fully protected.
        Zone::new("nobimi.test")
            .ns("@", "ns1.nobimi.test.")
            .mx("@", 10, "mx1.nobimi.test.")
            .a("mx1", "192.0.2.25")
            .txt("@", SPF_STRICT)
            .txt("_dmarc", "v=DMARC1; p=reject; rua=mailto:d@nobimi.test")
            .txt(
                "google._domainkey",
                &format!("v=DKIM1; k=rsa; p={KEY_2048}"),
            ),
        // MTA-STS announced (its policy cannot be fetched), TLS-RPT absent.
        Zone::new("sts.test")
            .ns("@", "ns1.sts.test.")
            .mx("@", 10, "mx1.sts.test.")
            .a("mx1", "192.0.2.25")
            .txt("@", SPF_STRICT)
            .txt("_dmarc", "v=DMARC1; p=reject; rua=mailto:d@sts.test")
            .txt(
                "google._domainkey",
                &format!("v=DKIM1; k=rsa; p={KEY_2048}"),
            )
            .txt(
                "default._bimi",
                "v=BIMI1; l=https://sts.test/logo.svg; a=https://sts.test/vmc.pem",
            )
            .txt("_mta-sts", "v=STSv1; id=20240101"),
        // Faults are injected on these two (see `dns_failures_are_never_missing`).
        full("slowdmarc.test"),
        full("spffail.test"),
    ];
    // More than ten DNS-querying terms: eleven includes, each with its own valid record.
    let mut over = mail_base("overlimit.test");
    let mut spf = String::from("v=spf1");
    for n in 1..=11 {
        over = over.txt(&format!("i{n}"), &format!("v=spf1 ip4:192.0.2.{n} -all"));
        spf.push_str(&format!(" include:i{n}.overlimit.test"));
    }
    spf.push_str(" -all");
    zones.push(protect(over, &spf, None, None));
    FixtureServer::start(zones).await.unwrap()
}

async fn app(dns: &FixtureServer) -> TestApp {
    let addr = dns.addr().to_string();
    TestApp::start_with(|s| s.dns = Some(addr)).await
}

async fn audit(app: &TestApp, domain: &str) -> Value {
    let res = app
        .request(Method::GET, &format!("/tools/audit?domain={domain}"))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 200, "{domain}: {body}");
    body
}

/// The codes of one category (`errors`, `warnings`, `info`) of one dimension.
fn codes(body: &Value, dimension: &str, category: &str) -> Vec<String> {
    body[dimension][category]
        .as_array()
        .unwrap_or_else(|| panic!("{dimension}.{category} in {body}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

fn has(body: &Value, dimension: &str, category: &str, code: &str) -> bool {
    codes(body, dimension, category).iter().any(|c| c == code)
}

fn score(body: &Value) -> u64 {
    body["summary"]["score"].as_u64().unwrap()
}

fn verdict<'a>(body: &'a Value, dimension: &str) -> &'a str {
    body["summary"][dimension].as_str().unwrap()
}

#[tokio::test]
async fn fully_protected_domain_scores_100() {
    let dns = fixture().await;
    let app = app(&dns).await;
    let body = audit(&app, "full.test").await;
    assert_eq!(body["status"], "success");
    for dimension in ["mx", "spf", "dkim", "dmarc", "bimi", "tlsRpt"] {
        assert_eq!(verdict(&body, dimension), "pass", "{dimension}: {body}");
        assert_eq!(body[dimension]["status"], "pass");
        assert_eq!(body[dimension]["score"], 0, "{dimension}");
        assert!(codes(&body, dimension, "errors").is_empty(), "{dimension}");
        assert!(
            codes(&body, dimension, "warnings").is_empty(),
            "{dimension}"
        );
        assert_eq!(body[dimension]["state"]["code"], "ok", "{dimension}");
    }
    // MTA-STS is optional: not published is `info`, never scored.
    assert_eq!(verdict(&body, "mtaSts"), "info");
    assert!(has(&body, "mtaSts", "info", "mta_sts_not_configured"));
    assert_eq!(body["mtaSts"]["fetchError"], Value::Null);
    assert_eq!(score(&body), 100, "{body}");
    assert_eq!(body["summary"]["parked"], false);
    assert_eq!(body["nameservers"], serde_json::json!(["ns1.full.test"]));

    assert_eq!(
        body["dkim"]["foundSelectors"],
        serde_json::json!(["google"])
    );
    assert_eq!(body["dkim"]["selectors"][0]["keyBits"], 2048);
    assert_eq!(body["dkim"]["catalogueAvailable"], true);
    assert!(body["dkim"]["probedCount"].as_u64().unwrap() > 1);
    assert_eq!(body["dmarc"]["policyState"], "reject");
    assert_eq!(body["dmarc"]["monitoringState"]["status"], "active");
    assert_eq!(
        body["dmarc"]["reportDestinations"][0]["status"],
        "not_required"
    );
    assert_eq!(body["spf"]["lookupCount"], 0);
    assert_eq!(body["mx"]["records"][0]["resolvable"], true);
    assert_eq!(body["bimi"]["logo"]["https"], true);
    assert_eq!(body["bimi"]["logo"]["svg"], true);
    assert_eq!(body["bimi"]["certificate"]["present"], true);
    assert_eq!(
        body["tlsRpt"]["rua"],
        serde_json::json!(["mailto:tls@full.test"])
    );
}

#[tokio::test]
async fn missing_records_fail_and_unknown_domains_are_errors() {
    let dns = fixture().await;
    let app = app(&dns).await;

    // Bare: MX only.
    let bare = audit(&app, "bare.test").await;
    assert_eq!(bare["status"], "success");
    assert_eq!(verdict(&bare, "mx"), "pass");
    assert_eq!(verdict(&bare, "spf"), "fail");
    assert_eq!(verdict(&bare, "dmarc"), "fail");
    assert_eq!(verdict(&bare, "dkim"), "fail");
    assert_eq!(verdict(&bare, "bimi"), "warn");
    assert_eq!(verdict(&bare, "mtaSts"), "info");
    assert_eq!(verdict(&bare, "tlsRpt"), "info");
    assert!(has(&bare, "spf", "errors", "no_spf_record"));
    assert!(has(&bare, "dmarc", "errors", "dmarc_record_missing"));
    assert!(has(&bare, "dkim", "errors", "no_dkim_key_found"));
    assert!(has(&bare, "bimi", "warnings", "bimi_record_missing"));
    assert!(has(&bare, "tlsRpt", "info", "tls_rpt_not_configured"));
    assert_eq!(bare["dmarc"]["policyState"], "missing");
    assert_eq!(bare["dmarc"]["state"]["code"], "dmarc_record_missing");
    assert_eq!(bare["dmarc"]["score"], -35);
    assert_eq!(bare["spf"]["score"], -25);
    assert_eq!(bare["dkim"]["score"], -20);
    assert_eq!(bare["bimi"]["score"], -10);
    // Not parked: it has a real MX host.
    assert_eq!(bare["summary"]["parked"], false);
    assert_eq!(score(&bare), 10, "{bare}");

    // Only BIMI missing: a warning costing its whole weight.
    let nobimi = audit(&app, "nobimi.test").await;
    assert_eq!(verdict(&nobimi, "bimi"), "warn");
    assert!(has(&nobimi, "bimi", "warnings", "bimi_record_missing"));
    assert_eq!(nobimi["bimi"]["record"], Value::Null);
    assert_eq!(score(&nobimi), 90);

    // A name that does not exist: the audit cannot run, only the summary is returned.
    let nowhere = audit(&app, "nowhere.test").await;
    assert_eq!(nowhere["status"], "error", "{nowhere}");
    let keys: Vec<&String> = nowhere.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 2, "{nowhere}");
    assert!(nowhere.get("summary").is_some() && nowhere.get("status").is_some());
    assert_eq!(nowhere["summary"]["errorCode"], "domain_not_found");
    assert_eq!(score(&nowhere), 0);
    for dimension in ["mx", "spf", "dkim", "dmarc", "bimi", "mtaSts", "tlsRpt"] {
        assert_eq!(verdict(&nowhere, dimension), "error", "{dimension}");
        assert!(nowhere.get(dimension).is_none(), "{dimension}");
    }
}

#[tokio::test]
async fn dmarc_below_reject_is_in_progress() {
    let dns = fixture().await;
    let app = app(&dns).await;

    let none = audit(&app, "monitor.test").await;
    assert_eq!(verdict(&none, "dmarc"), "in progress");
    assert_eq!(none["dmarc"]["state"]["status"], "in progress");
    assert_eq!(none["dmarc"]["policyState"], "none");
    assert!(has(&none, "dmarc", "warnings", "policy_none"));
    assert!(codes(&none, "dmarc", "errors").is_empty());
    assert_eq!(none["dmarc"]["score"], -20);
    assert_eq!(none["dmarc"]["monitoringState"]["status"], "active");
    // BIMI is ignored by mailbox providers without an enforced DMARC policy.
    assert_eq!(verdict(&none, "bimi"), "warn");
    assert!(has(
        &none,
        "bimi",
        "warnings",
        "dmarc_not_enforced_for_bimi"
    ));
    assert_eq!(none["bimi"]["score"], -5);
    assert_eq!(score(&none), 75);

    let quarantine = audit(&app, "quarantine.test").await;
    assert_eq!(verdict(&quarantine, "dmarc"), "in progress");
    assert_eq!(quarantine["dmarc"]["policyState"], "quarantine");
    assert!(has(&quarantine, "dmarc", "warnings", "policy_quarantine"));
    assert_eq!(quarantine["dmarc"]["score"], -8);
    // Quarantine is enforcement enough for BIMI.
    assert_eq!(verdict(&quarantine, "bimi"), "pass");
    assert_eq!(score(&quarantine), 92);

    let reject = audit(&app, "full.test").await;
    assert!(score(&none) < score(&quarantine) && score(&quarantine) < score(&reject));
}

#[tokio::test]
async fn spf_qualifiers_and_the_lookup_limit() {
    let dns = fixture().await;
    let app = app(&dns).await;

    // `~all` (softfail) is an accepted ending: no finding.
    let softfail = audit(&app, "softfail.test").await;
    assert_eq!(verdict(&softfail, "spf"), "pass", "{}", softfail["spf"]);
    assert!(codes(&softfail, "spf", "warnings").is_empty());
    assert_eq!(score(&softfail), 100);

    // `?all` protects nothing: a warning.
    let neutral = audit(&app, "neutral.test").await;
    assert_eq!(verdict(&neutral, "spf"), "warn");
    assert!(has(&neutral, "spf", "warnings", "permissive_all"));
    assert!(codes(&neutral, "spf", "errors").is_empty());
    assert_eq!(neutral["spf"]["score"], -20);
    assert_eq!(score(&neutral), 80);

    // `+all` authorizes everyone: an error.
    let open = audit(&app, "open.test").await;
    assert_eq!(verdict(&open, "spf"), "fail");
    assert!(has(&open, "spf", "errors", "permissive_all"));
    assert_eq!(open["spf"]["score"], -20);
    assert_eq!(score(&open), 80);

    // Eleven includes: over the ten-lookup limit.
    let over = audit(&app, "overlimit.test").await;
    assert_eq!(verdict(&over, "spf"), "fail", "{}", over["spf"]);
    assert!(has(&over, "spf", "errors", "lookup_limit_exceeded"));
    assert!(!has(&over, "spf", "errors", "void_lookup_limit_exceeded"));
    assert_eq!(over["spf"]["lookupLimit"], 10);
    assert!(
        over["spf"]["lookupCount"].as_u64().unwrap() > 10,
        "{}",
        over["spf"]
    );
    assert!(
        over["spf"]["tree"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["kind"] == "include")
    );
    assert_eq!(over["spf"]["score"], -20);
    assert_eq!(score(&over), 80);
}

#[tokio::test]
async fn weak_and_revoked_dkim_keys() {
    let dns = fixture().await;
    let app = app(&dns).await;

    let weak = audit(&app, "weakdkim.test").await;
    assert_eq!(verdict(&weak, "dkim"), "warn", "{}", weak["dkim"]);
    assert!(has(&weak, "dkim", "warnings", "rsa_key_weak"));
    assert_eq!(weak["dkim"]["selectors"][0]["keyBits"], 1024);
    assert_eq!(weak["dkim"]["selectors"][0]["usable"], true);
    assert_eq!(weak["dkim"]["score"], -5);
    assert_eq!(score(&weak), 95);

    let revoked = audit(&app, "revoked.test").await;
    assert_eq!(verdict(&revoked, "dkim"), "fail", "{}", revoked["dkim"]);
    assert_eq!(revoked["dkim"]["selectors"][0]["revoked"], true);
    assert_eq!(
        revoked["dkim"]["foundSelectors"],
        serde_json::json!(["google"])
    );
    assert!(has(&revoked, "dkim", "warnings", "key_revoked"));
    assert!(has(&revoked, "dkim", "errors", "no_usable_dkim_key"));
    assert_eq!(revoked["dkim"]["score"], -20);
    assert_eq!(score(&revoked), 80);
    assert!(score(&revoked) < score(&weak));
}

#[tokio::test]
async fn mx_paths_and_parked_domains() {
    let dns = fixture().await;
    let app = app(&dns).await;

    // The only MX host has no address: fail.
    let dead = audit(&app, "mxdead.test").await;
    assert_eq!(verdict(&dead, "mx"), "fail", "{}", dead["mx"]);
    assert!(has(&dead, "mx", "errors", "mx_all_hosts_unresolvable"));
    assert!(has(&dead, "mx", "warnings", "mx_host_unresolvable"));
    assert_eq!(dead["mx"]["records"][0]["resolvable"], false);
    assert_eq!(dead["mx"]["score"], -10);
    assert_eq!(score(&dead), 90);

    // One of two MX hosts has no address: warn.
    let half = audit(&app, "mxhalf.test").await;
    assert_eq!(verdict(&half, "mx"), "warn", "{}", half["mx"]);
    assert!(has(&half, "mx", "warnings", "mx_host_unresolvable"));
    assert!(codes(&half, "mx", "errors").is_empty());
    assert_eq!(half["mx"]["score"], -5);
    assert_eq!(score(&half), 95);

    // Null MX and `v=spf1 -all`: parked, only spf and dmarc count.
    let parked = audit(&app, "parked.test").await;
    assert_eq!(parked["summary"]["parked"], true, "{parked}");
    assert_eq!(parked["parking"]["reason"], "no_mail_setup");
    assert_eq!(parked["mx"]["nullMx"], true);
    assert!(has(&parked, "mx", "info", "null_mx"));
    assert_eq!(verdict(&parked, "mx"), "pass");
    assert_eq!(verdict(&parked, "spf"), "pass");
    assert_eq!(verdict(&parked, "dmarc"), "pass");
    // No DKIM key and no BIMI record, but they do not count for a parked domain.
    assert_eq!(verdict(&parked, "dkim"), "fail");
    assert_eq!(verdict(&parked, "bimi"), "warn");
    assert_eq!(parked["dkim"]["score"], -20);
    assert_eq!(score(&parked), 100);

    // Parked without SPF and with p=none: (60 - 25 - 20) / 60, rescaled to 25.
    let weak = audit(&app, "parkednone.test").await;
    assert_eq!(weak["summary"]["parked"], true, "{weak}");
    assert_eq!(verdict(&weak, "spf"), "fail");
    assert_eq!(verdict(&weak, "dmarc"), "in progress");
    assert_eq!(weak["spf"]["score"], -25);
    assert_eq!(weak["dmarc"]["score"], -20);
    assert_eq!(score(&weak), 25);
}

#[tokio::test]
async fn bimi_and_the_optional_dimensions() {
    let dns = fixture().await;
    let app = app(&dns).await;

    // An http logo is an error; no certificate is a warning.
    let http = audit(&app, "bimihttp.test").await;
    assert_eq!(verdict(&http, "bimi"), "fail", "{}", http["bimi"]);
    assert!(has(&http, "bimi", "errors", "logo_not_https"));
    assert!(has(&http, "bimi", "warnings", "missing_certificate"));
    assert_eq!(http["bimi"]["logo"]["https"], false);
    assert_eq!(http["bimi"]["logo"]["svg"], true);
    assert_eq!(http["bimi"]["certificate"]["present"], false);
    // logo_not_https is not in the deduction table: 10 as an unlisted error, capped at 10.
    assert_eq!(http["bimi"]["score"], -10);
    // TLS-RPT absent: informational.
    assert_eq!(verdict(&http, "tlsRpt"), "info");
    assert_eq!(score(&http), 90);

    // MTA-STS announced but its policy cannot be fetched (the test host has no such site):
    // the engine reports the fetch failure, not a pass; neither MTA-STS nor TLS-RPT is scored.
    let sts = audit(&app, "sts.test").await;
    assert_eq!(verdict(&sts, "mtaSts"), "fail", "{}", sts["mtaSts"]);
    assert_eq!(sts["mtaSts"]["record"], "v=STSv1; id=20240101");
    assert_eq!(sts["mtaSts"]["id"], "20240101");
    assert!(
        has(&sts, "mtaSts", "errors", "policy_not_found"),
        "{}",
        sts["mtaSts"]
    );
    assert_eq!(sts["mtaSts"]["fetchError"], "notFound", "{}", sts["mtaSts"]);
    assert_eq!(sts["mtaSts"]["policy"], Value::Null);
    assert_eq!(sts["mtaSts"]["score"], 0);
    assert_eq!(verdict(&sts, "tlsRpt"), "info");
    assert!(has(&sts, "tlsRpt", "info", "tls_rpt_not_configured"));
    assert_eq!(sts["tlsRpt"]["score"], 0);
    assert_eq!(score(&sts), 100);
}

#[tokio::test]
async fn dns_failures_are_never_missing() {
    let dns = fixture().await;
    dns.inject(Scope::name("_dmarc.slowdmarc.test"), Fault::Timeout);
    dns.inject(
        Scope::name_type("spffail.test", RecordType::Txt),
        Fault::ServFail,
    );
    let app = app(&dns).await;

    // DMARC times out: warn with dns_lookup_failed, never "missing".
    let slow = audit(&app, "slowdmarc.test").await;
    assert_eq!(slow["status"], "success");
    assert_eq!(verdict(&slow, "dmarc"), "warn", "{}", slow["dmarc"]);
    assert!(has(&slow, "dmarc", "warnings", "dns_lookup_failed"));
    assert!(
        codes(&slow, "dmarc", "errors").is_empty(),
        "{}",
        slow["dmarc"]
    );
    assert!(!has(&slow, "dmarc", "errors", "dmarc_record_missing"));
    assert_eq!(slow["dmarc"]["policyState"], "unknown");
    assert_eq!(slow["dmarc"]["monitoringState"]["status"], "unknown");
    assert_eq!(slow["dmarc"]["state"]["code"], "dns_lookup_failed");
    assert_eq!(slow["dmarc"]["score"], -17);
    // The other dimensions are unaffected.
    for dimension in ["mx", "spf", "dkim"] {
        assert_eq!(verdict(&slow, dimension), "pass", "{dimension}");
    }
    // An unknown DMARC policy is not "not enforced": BIMI draws no finding from it.
    assert!(!has(
        &slow,
        "bimi",
        "warnings",
        "dmarc_not_enforced_for_bimi"
    ));
    assert_eq!(score(&slow), 83);

    // SPF SERVFAIL: warn with dns_lookup_failed, never `no_spf_record`, and not parked.
    let servfail = audit(&app, "spffail.test").await;
    assert_eq!(servfail["status"], "success");
    assert_eq!(verdict(&servfail, "spf"), "warn", "{}", servfail["spf"]);
    assert!(has(&servfail, "spf", "warnings", "dns_lookup_failed"));
    assert!(!has(&servfail, "spf", "errors", "no_spf_record"));
    assert!(codes(&servfail, "spf", "errors").is_empty());
    assert_eq!(servfail["spf"]["score"], -12);
    assert_eq!(servfail["summary"]["parked"], false);
    assert_eq!(verdict(&servfail, "dmarc"), "pass");
    assert_eq!(score(&servfail), 88);

    // A failed lookup costs about half the weight: between pass and missing.
    let full = audit(&app, "full.test").await;
    let bare = audit(&app, "bare.test").await;
    assert!(score(&bare) < score(&slow) && score(&slow) < score(&full));
    assert!(score(&servfail) < score(&full));
}
