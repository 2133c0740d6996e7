//! The audit against the in-process DNS fixture: every verdict path the brief lists.

mod common;

use common::{fetcher, input, zones};
use mailward_audit::{AuditResult, AuditStatus, Verdict, audit};
use mailward_dns::HickoryResolver;
use mailward_dns_fixture::{Fault, FixtureServer, Scope};
use std::time::Duration;

async fn server() -> FixtureServer {
    FixtureServer::start(zones()).await.expect("fixture starts")
}

async fn run(server: &FixtureServer, domain: &str) -> AuditResult {
    let resolver = server.resolver().expect("resolver");
    run_with(&resolver, domain, input(domain)).await
}

async fn run_with(
    resolver: &HickoryResolver,
    _domain: &str,
    input: mailward_audit::AuditInput,
) -> AuditResult {
    audit(resolver, &fetcher(), &input).await
}

fn codes(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

#[tokio::test]
async fn fully_protected_domain_passes_everything() {
    let s = server().await;
    let r = run(&s, "good.test").await;
    assert_eq!(r.status, AuditStatus::Success);
    let sum = &r.summary;
    let dims = [
        ("mx", sum.mx),
        ("spf", sum.spf),
        ("dkim", sum.dkim),
        ("dmarc", sum.dmarc),
        ("bimi", sum.bimi),
        ("mtaSts", sum.mta_sts),
        ("tlsRpt", sum.tls_rpt),
    ];
    assert!(
        dims.iter().all(|(_, v)| *v == Verdict::Pass),
        "{dims:?}\n{r:#?}"
    );
    assert_eq!(sum.score, 100);
    assert!(!sum.parked);
    assert_eq!(sum.email.as_deref(), Some("lead@example.com"));
    assert_eq!(
        r.nameservers.as_deref(),
        Some(&["ns1.good.test".to_string()][..])
    );
    let spf = r.spf.as_ref().unwrap();
    assert_eq!(spf.lookup_count, 2);
    assert!(spf.tree.iter().any(|n| n.kind == "include" && n.depth == 1));
    let dkim = r.dkim.as_ref().unwrap();
    assert_eq!(dkim.found_selectors, vec!["sel1".to_string()]);
    assert_eq!(dkim.selectors[0].key_bits, Some(2048));
    let dmarc = r.dmarc.as_ref().unwrap();
    assert_eq!(dmarc.monitoring_state.status, "active");
    let tags = dmarc.tags.as_ref().unwrap();
    assert_eq!(tags.p.as_deref(), Some("reject"));
    assert_eq!(tags.pct, None);
    let mx = r.mx.as_ref().unwrap();
    assert_eq!(mx.records[0].addresses, vec!["192.0.2.10".to_string()]);
    assert_eq!(mx.records[0].resolvable, Some(true));
    let bimi = r.bimi.as_ref().unwrap();
    assert!(bimi.logo.https && bimi.logo.svg && bimi.certificate.present);
    assert_eq!(
        r.mta_sts
            .as_ref()
            .unwrap()
            .policy
            .as_ref()
            .unwrap()
            .mode
            .as_deref(),
        Some("enforce")
    );
    assert_eq!(r.mx.as_ref().unwrap().assessment.state.code, "ok");
}

#[tokio::test]
async fn bare_domain_fails_with_a_low_score() {
    let s = server().await;
    let r = run(&s, "bare.test").await;
    assert_eq!(r.status, AuditStatus::Success);
    assert_eq!(r.summary.spf, Verdict::Fail);
    assert_eq!(r.summary.dmarc, Verdict::Fail);
    assert_eq!(r.summary.dkim, Verdict::Fail);
    assert_eq!(r.summary.mx, Verdict::Pass);
    assert!(!r.summary.parked);
    assert_eq!(r.summary.score, 10, "{:#?}", r.summary);
    let dmarc = r.dmarc.as_ref().unwrap();
    assert!(codes(&dmarc.assessment.errors).contains(&"dmarc_record_missing"));
    assert_eq!(dmarc.assessment.score, -35);
    assert_eq!(
        dmarc.monitoring_state.reason.as_deref(),
        Some("dmarc_record_missing")
    );
    assert!(codes(&r.spf.as_ref().unwrap().assessment.errors).contains(&"no_spf_record"));
    assert!(codes(&r.dkim.as_ref().unwrap().assessment.errors).contains(&"no_dkim_key_found"));
    assert_eq!(r.summary.mta_sts, Verdict::Info);
    assert_eq!(r.summary.tls_rpt, Verdict::Info);
    assert!(
        codes(&r.mta_sts.as_ref().unwrap().assessment.info).contains(&"mta_sts_not_configured")
    );
}

#[tokio::test]
async fn parked_domains_count_only_spf_and_dmarc() {
    let s = server().await;
    let r = run(&s, "parked.test").await;
    assert!(r.summary.parked);
    assert_eq!(
        r.parking.as_ref().unwrap().reason.as_deref(),
        Some("no_mail_setup")
    );
    assert!(r.mx.as_ref().unwrap().null_mx);
    assert_eq!(r.summary.spf, Verdict::Pass);
    assert_eq!(r.summary.dmarc, Verdict::Pass);
    // DKIM and BIMI are absent but do not count.
    assert_eq!(r.summary.dkim, Verdict::Fail);
    assert_eq!(r.summary.score, 100);

    let r = run(&s, "sedo.test").await;
    assert!(r.summary.parked);
    let parking = r.parking.as_ref().unwrap();
    assert_eq!(parking.service.as_deref(), Some("sedoparking.com"));
    // No SPF, no DMARC: both lose everything, rescaled to 0.
    assert_eq!(r.summary.score, 0);
}

#[tokio::test]
async fn dmarc_p_none_is_in_progress() {
    let s = server().await;
    let r = run(&s, "monitor.test").await;
    assert_eq!(r.summary.dmarc, Verdict::InProgress);
    let dmarc = r.dmarc.as_ref().unwrap();
    assert_eq!(dmarc.policy_state, mailward_audit::PolicyState::None);
    assert!(codes(&dmarc.assessment.warnings).contains(&"policy_none"));
    assert_eq!(dmarc.assessment.score, -20);
    // -20 (policy_none) and -5 on BIMI (dmarc_not_enforced_for_bimi).
    assert_eq!(r.summary.score, 75);
    // BIMI needs an enforced DMARC policy.
    assert!(
        codes(&r.bimi.as_ref().unwrap().assessment.warnings)
            .contains(&"dmarc_not_enforced_for_bimi")
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["summary"]["dmarc"], "in progress");
    assert_eq!(json["dmarc"]["state"]["status"], "in progress");
}

#[tokio::test]
async fn mta_sts_testing_is_in_progress_and_absent_is_info() {
    let s = server().await;
    let r = run(&s, "testing.test").await;
    assert_eq!(r.summary.mta_sts, Verdict::InProgress, "{:#?}", r.mta_sts);
    // Not scored.
    assert_eq!(r.mta_sts.as_ref().unwrap().assessment.score, 0);
    assert_eq!(r.summary.score, 100);

    let r = run(&s, "weak.test").await;
    assert_eq!(r.summary.mta_sts, Verdict::Info);
    assert_eq!(r.summary.tls_rpt, Verdict::Info);
    assert!(
        codes(&r.tls_rpt.as_ref().unwrap().assessment.info).contains(&"tls_rpt_not_configured")
    );
}

#[tokio::test]
async fn mta_sts_policy_must_cover_the_real_mx() {
    let s = server().await;
    let resolver = s.resolver().unwrap();
    let mut f = fetcher();
    f.policies.insert(
        "good.test".into(),
        Ok(common::policy("enforce", "mx.elsewhere.test")),
    );
    let r = audit(&resolver, &f, &input("good.test")).await;
    let sts = r.mta_sts.as_ref().unwrap();
    assert_eq!(sts.assessment.status, Verdict::Fail);
    assert!(codes(&sts.assessment.errors).contains(&"mx_not_covered"));
    assert_eq!(sts.uncovered_hosts, vec!["mx1.good.test".to_string()]);
    f.policies
        .insert("good.test".into(), Err(mailward_audit::FetchError::Timeout));
    let r = audit(&resolver, &f, &input("good.test")).await;
    assert!(
        codes(&r.mta_sts.as_ref().unwrap().assessment.errors).contains(&"policy_fetch_timeout")
    );
}

#[tokio::test]
async fn dkim_weak_and_revoked_keys() {
    let s = server().await;
    let r = run(&s, "weak.test").await;
    let dkim = r.dkim.as_ref().unwrap();
    assert_eq!(dkim.assessment.status, Verdict::Warn, "{dkim:#?}");
    assert!(codes(&dkim.assessment.warnings).contains(&"rsa_key_weak"));
    assert_eq!(dkim.selectors[0].key_bits, Some(1024));
    assert_eq!(dkim.assessment.score, -5);

    let r = run(&s, "revoked.test").await;
    let dkim = r.dkim.as_ref().unwrap();
    assert_eq!(dkim.assessment.status, Verdict::Fail);
    assert!(dkim.selectors[0].revoked);
    assert!(codes(&dkim.assessment.warnings).contains(&"key_revoked"));
    assert!(codes(&dkim.assessment.errors).contains(&"no_usable_dkim_key"));
}

#[tokio::test]
async fn dkim_without_catalogue_is_error() {
    let s = server().await;
    let resolver = s.resolver().unwrap();
    let mut i = input("good.test");
    i.dkim_selectors = None;
    i.extra_selectors = vec!["SEL1".into(), "bad selector!".into()];
    let r = audit(&resolver, &fetcher(), &i).await;
    let dkim = r.dkim.as_ref().unwrap();
    assert_eq!(r.summary.dkim, Verdict::Error);
    assert!(codes(&dkim.assessment.errors).contains(&"probe_catalogue_unavailable"));
    assert_eq!(dkim.found_selectors, vec!["sel1".to_string()]);
    assert_eq!(dkim.probed_count, 1);
    assert!(!dkim.catalogue_available);
}

#[tokio::test]
async fn dmarc_timeout_is_not_missing() {
    let s = server().await;
    s.inject(Scope::name("_dmarc.good.test"), Fault::Timeout);
    let r = run(&s, "good.test").await;
    let dmarc = r.dmarc.as_ref().unwrap();
    assert_eq!(dmarc.assessment.status, Verdict::Warn, "{dmarc:#?}");
    assert!(codes(&dmarc.assessment.warnings).contains(&"dns_lookup_failed"));
    assert!(
        !dmarc
            .assessment
            .errors
            .iter()
            .any(|c| c.contains("missing"))
    );
    assert_eq!(dmarc.policy_state, mailward_audit::PolicyState::Unknown);
    assert_eq!(dmarc.monitoring_state.status, "unknown");
    assert_eq!(dmarc.assessment.score, -17);
    // The other dimensions are unaffected.
    assert_eq!(r.summary.spf, Verdict::Pass);
}

#[tokio::test]
async fn servfail_in_spf_is_not_missing() {
    let s = server().await;
    s.inject(
        Scope::name_type("good.test", mailward_domain::dns::RecordType::Txt),
        Fault::ServFail,
    );
    let r = run(&s, "good.test").await;
    let spf = r.spf.as_ref().unwrap();
    assert_eq!(spf.assessment.status, Verdict::Warn);
    assert!(!codes(&spf.assessment.errors).contains(&"no_spf_record"));
    assert!(codes(&spf.assessment.warnings).contains(&"dns_lookup_failed"));
    assert!(!r.summary.parked);
}

#[tokio::test]
async fn nonexistent_domain_is_error_with_summary_only() {
    let s = server().await;
    let r = run(&s, "nonexistent.test").await;
    assert_eq!(r.status, AuditStatus::Error);
    assert_eq!(r.summary.error_code.as_deref(), Some("domain_not_found"));
    let json = serde_json::to_value(&r).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["status", "summary"]);
    assert_eq!(json["status"], "error");
}

#[tokio::test]
async fn dns_failing_everywhere_is_error() {
    let s = server().await;
    s.inject(Scope::Global, Fault::ServFail);
    let r = run(&s, "good.test").await;
    assert_eq!(r.status, AuditStatus::Error);
    assert_eq!(
        r.summary.error_code.as_deref(),
        Some("nameservers_unresolvable")
    );
}

#[tokio::test]
async fn hosted_dmarc_cname_is_flagged() {
    let s = server().await;
    let r = run(&s, "hosted.test").await;
    let dmarc = r.dmarc.as_ref().unwrap();
    assert!(dmarc.is_cname && dmarc.is_hosted, "{dmarc:#?}");
    assert_eq!(
        dmarc.cname_target.as_deref(),
        Some("good.dmarc.mailward.test")
    );
    assert_eq!(dmarc.policy_state, mailward_audit::PolicyState::Reject);
    // rua points at good.test, another organization without an authorization record.
    assert_eq!(dmarc.report_destinations[0].status, "unauthorized");
    assert!(codes(&dmarc.assessment.warnings).contains(&"rua_destination_unauthorized"));
}

#[tokio::test]
async fn external_report_destination_authorized() {
    let s = server().await;
    let r = run(&s, "typical.test").await;
    let dmarc = r.dmarc.as_ref().unwrap();
    assert_eq!(
        dmarc.report_destinations[0].status, "authorized",
        "{dmarc:#?}"
    );
    assert_eq!(dmarc.assessment.status, Verdict::Pass);
    assert_eq!(r.summary.mx, Verdict::Pass);
    assert_eq!(r.mx.as_ref().unwrap().records.len(), 2);
}

#[tokio::test]
async fn injected_latency_changes_nothing_but_time() {
    let s = server().await;
    let baseline = run(&s, "typical.test").await;
    s.inject(Scope::Global, Fault::Latency(Duration::from_millis(100)));
    let slow = run(&s, "typical.test").await;
    assert_eq!(baseline, slow);
}

#[tokio::test]
async fn json_shape_is_camel_case() {
    let s = server().await;
    let r = run(&s, "good.test").await;
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "status",
        "summary",
        "nameservers",
        "parking",
        "mx",
        "spf",
        "dkim",
        "dmarc",
        "bimi",
        "mtaSts",
        "tlsRpt",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    for key in [
        "domain", "email", "parked", "score", "mx", "spf", "dkim", "dmarc", "bimi", "mtaSts",
        "tlsRpt",
    ] {
        assert!(json["summary"].get(key).is_some(), "summary.{key}");
    }
    assert!(json["summary"].get("errorCode").is_none());
    for dim in ["mx", "spf", "dkim", "dmarc", "bimi", "mtaSts", "tlsRpt"] {
        for key in ["score", "status", "info", "errors", "warnings", "state"] {
            assert!(json[dim].get(key).is_some(), "{dim}.{key}");
        }
        for key in ["status", "code", "score", "warnings"] {
            assert!(json[dim]["state"].get(key).is_some(), "{dim}.state.{key}");
        }
    }
    assert!(json["spf"]["lookupCount"].is_number());
    assert!(json["spf"]["tree"].is_array());
    for key in [
        "policyState",
        "monitoringState",
        "record",
        "tags",
        "isCname",
        "isHosted",
        "reportDestinations",
    ] {
        assert!(json["dmarc"].get(key).is_some(), "dmarc.{key}");
    }
    for key in ["p", "pct", "fo", "rua", "ruf", "adkim", "aspf", "sp"] {
        assert!(json["dmarc"]["tags"].get(key).is_some(), "dmarc.tags.{key}");
    }
    assert_eq!(json["dmarc"]["policyState"], "reject");
    assert!(json["mx"]["nullMx"].is_boolean());
    assert!(json["dkim"]["foundSelectors"].is_array());
    assert!(json["dkim"]["selectors"][0]["keyBits"].is_number());
    assert!(json["bimi"]["logo"]["https"].is_boolean());
    assert!(json["mtaSts"]["policy"]["maxAge"].is_number());
    assert_eq!(json["summary"]["mtaSts"], "pass");
    // Round trip.
    let back: AuditResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
}

#[tokio::test]
async fn hostile_inputs_end_cleanly() {
    let s = server().await;
    let resolver = s.resolver().unwrap();
    let mut i = input("");
    let r = audit(&resolver, &fetcher(), &i).await;
    assert_eq!(r.status, AuditStatus::Error);
    i = input("good.test");
    i.extra_selectors = (0..500).map(|n| format!("s{n}")).collect();
    i.extra_selectors.push("x".repeat(300));
    i.extra_selectors.push("../etc".into());
    let r = audit(&resolver, &fetcher(), &i).await;
    let dkim = r.dkim.as_ref().unwrap();
    assert_eq!(dkim.probed_count, mailward_audit::dkim::MAX_SELECTORS);
    assert_eq!(dkim.found_selectors, vec!["sel1".to_string()]);
}
