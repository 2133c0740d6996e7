//! The planner against the in-process DNS fixture: fresh, published, delegation wanted over a
//! TXT, SPF merge, a timeout, `t=y`, BIMI, verification scopes, uncached verification.

use async_trait::async_trait;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use mailward_domain::domain::{BimiOptions, DmarcOptions, Policy, SpfOptions};
use mailward_plan::*;
use mailward_records::mta_sts::Mode;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

const HOSTED: &str = "hosted.mailward.test";

fn ctx(domain: &str) -> PlanContext {
    PlanContext {
        domain: domain.to_string(),
        dmarc: DmarcOptions::default(),
        spf: SpfOptions::default(),
        bimi: BimiOptions::default(),
        target_spf: None,
        hosted_spf_record: None,
        live_spf: None,
        monitoring_email: format!("{}@reports.mailward.test", domain.replace('.', "-")),
        report_domain: "reports.mailward.test".into(),
        hosted_zone: HOSTED.into(),
        hosted_owner: domain.to_string(),
        dmarc_delegated: false,
        bimi_delegated: false,
        mta_sts: None,
        tls_rpt_rua: None,
        tls_rpt_https: None,
        dkim: vec![DkimPlan {
            selector: "s1".into(),
            record_type: RecordKind::Txt,
            value: "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA".into(),
        }],
        known_sender_includes: vec!["_spf.sender.test".into()],
        parked: false,
        previously_verified: BTreeSet::new(),
    }
}

fn full(domain: &str) -> PlanContext {
    let mut c = ctx(domain);
    c.dkim.push(DkimPlan {
        selector: "s2".into(),
        record_type: RecordKind::Cname,
        value: "s2.dkim.sender.test.".into(),
    });
    c.mta_sts = Some(MtaStsPlan {
        mode: Mode::Testing,
        max_age: 86400,
        mx_hosts: vec!["mx1.example.net".into()],
        txt_target: None,
        certificate_validation: Vec::new(),
    });
    c.tls_rpt_rua = Some(format!("tls@{}", c.report_domain));
    c
}

async fn start(zones: Vec<Zone>) -> FixtureServer {
    let mut all = vec![Zone::new("test")];
    all.extend(zones);
    FixtureServer::start(all).await.expect("fixture starts")
}

/// A zone serving exactly the planned records.
fn publish(mut zone: Zone, records: &[ExpectedRecord]) -> Zone {
    for r in records {
        let owner = format!("{}.", r.host);
        zone = match r.record_type {
            RecordKind::Txt => zone.txt(&owner, &r.value),
            RecordKind::Cname => zone.cname(&owner, &format!("{}.", r.value)),
            RecordKind::Ns => zone,
        };
    }
    zone
}

fn of(states: &[RecordState], purpose: Purpose) -> Vec<&RecordState> {
    states
        .iter()
        .filter(|s| s.record.purpose == purpose)
        .collect()
}

fn codes(w: &[Warning]) -> Vec<&str> {
    w.iter().map(|w| w.code.as_str()).collect()
}

#[tokio::test]
async fn fresh_domain_is_all_create_and_pending() {
    let server = start(vec![Zone::new("fresh.test")]).await;
    let resolver = server.resolver().expect("resolver");
    let c = full("fresh.test");
    let expected = expected_records(&c);
    let purposes: Vec<Purpose> = expected.iter().map(|r| r.purpose).collect();
    assert_eq!(
        purposes,
        [
            Purpose::Dmarc,
            Purpose::Spf,
            Purpose::Dkim,
            Purpose::Dkim,
            Purpose::MtaSts,
            Purpose::MtaStsPolicy,
            Purpose::TlsRpt
        ]
    );
    let dmarc = &expected[0];
    assert_eq!(dmarc.host, "_dmarc.fresh.test");
    assert_eq!(dmarc.relative_host, "_dmarc");
    assert_eq!(
        dmarc.value,
        "v=DMARC1; p=none; rua=mailto:fresh-test@reports.mailward.test"
    );
    assert!(dmarc.required);
    assert_eq!(expected[1].relative_host, "@");
    assert_eq!(expected[1].value, "v=spf1 include:_spf.sender.test ~all");
    assert_eq!(expected[3].value, "s2.dkim.sender.test");
    assert_eq!(expected[5].value, "fresh.test.mta-sts.hosted.mailward.test");
    assert!(!expected[4].required && !expected[5].required && !expected[6].required);
    assert!(expected.iter().all(|r| r.ttl == RECOMMENDED_TTL));

    let states = compare(&resolver, &expected).await;
    assert_eq!(states.len(), expected.len());
    for s in &states {
        assert_eq!(s.action, Action::Create, "{}", s.record.host);
        assert_eq!(s.status, Status::Pending, "{}", s.record.host);
        assert_eq!(s.already_published, Some(false), "{}", s.record.host);
        assert!(s.live_values.is_empty());
    }
    assert!(!all_verified(&states));
    let w = warnings(&c, &states);
    assert!(!codes(&w).contains(&"enforcing_policy_without_working_auth"));

    let v = verify(&resolver, &expected, None).await;
    assert!(v.verified.is_empty());
    assert_eq!(
        serde_json::to_value(&v).expect("json"),
        serde_json::json!({"verified": {}, "results": {"dmarc": false, "spf": false, "dkim": false, "mta_sts": false, "bimi": false}})
    );
}

#[tokio::test]
async fn enforcing_policy_on_a_fresh_domain_is_warned_about() {
    let server = start(vec![Zone::new("enforce.test")]).await;
    let resolver = server.resolver().expect("resolver");
    let mut c = ctx("enforce.test");
    c.dmarc.policy = Policy::Reject;
    let states = compare(&resolver, &expected_records(&c)).await;
    assert!(codes(&warnings(&c, &states)).contains(&"enforcing_policy_without_working_auth"));
}

#[tokio::test]
async fn published_domain_is_verified_then_drifts() {
    let mut c = full("pub.test");
    c.dmarc.policy = Policy::Quarantine;
    let expected = expected_records(&c);
    let zone = publish(Zone::new("pub.test"), &expected).txt("@", "google-site-verification=xyz");
    let server = start(vec![zone]).await;
    let resolver = server.resolver().expect("resolver");

    let states = compare(&resolver, &expected).await;
    assert_eq!(states.len(), expected.len());
    for s in &states {
        assert_eq!(s.status, Status::Verified, "{}", s.record.host);
        assert_eq!(s.already_published, Some(true), "{}", s.record.host);
        assert_eq!(s.action, Action::Create);
        assert_eq!(s.live_values.len(), 1, "{}", s.record.host);
    }
    assert!(all_verified(&states));
    assert!(
        warnings(&c, &states).is_empty(),
        "{:?}",
        warnings(&c, &states)
    );

    let v = verify(&resolver, &expected, None).await;
    let keys: Vec<Purpose> = v.verified.keys().copied().collect();
    assert_eq!(
        keys,
        [Purpose::Dmarc, Purpose::Spf, Purpose::Dkim, Purpose::MtaSts]
    );
    let json = serde_json::to_value(&v).expect("json");
    assert_eq!(
        json,
        serde_json::json!({
            "verified": {"dmarc": true, "spf": true, "dkim": true, "mta_sts": true},
            "results": {"dmarc": true, "spf": true, "dkim": true, "mta_sts": true, "bimi": false}
        })
    );

    // The wire shape of one record (SPEC §2.5).
    let dmarc = serde_json::to_value(&states[0]).expect("json");
    assert_eq!(dmarc["type"], "TXT");
    assert_eq!(dmarc["purpose"], "dmarc");
    assert_eq!(dmarc["status"], "verified");
    assert_eq!(dmarc["action"], "create");
    assert_eq!(dmarc["already_published"], true);
    assert!(dmarc.get("previously_verified").is_none());
    assert!(dmarc.get("spf_lookup_count").is_none());

    // Break DMARC after it was verified: drifted, and replace.
    server
        .set_txt("_dmarc.pub.test", "v=DMARC1; p=none")
        .expect("edit");
    c.previously_verified = v.confirmed().collect();
    let expected = expected_records(&c);
    let states = compare(&resolver, &expected).await;
    let dmarc = of(&states, Purpose::Dmarc);
    assert_eq!(dmarc[0].status, Status::Drifted);
    assert_eq!(dmarc[0].action, Action::Replace);
    assert_eq!(dmarc[0].live_values, ["v=DMARC1; p=none"]);
    assert!(!all_verified(&states));
    let v = verify(&resolver, &expected, None).await;
    assert!(!v.verified.contains_key(&Purpose::Dmarc));
    assert!(!v.results.dmarc && v.results.spf);
}

#[tokio::test]
async fn dmarc_txt_while_delegation_is_wanted() {
    let zone = Zone::new("deleg.test").txt("_dmarc", "v=DMARC1; p=none; rua=mailto:old@else.test");
    let server = start(vec![zone]).await;
    let resolver = server.resolver().expect("resolver");
    let mut c = ctx("deleg.test");
    c.dmarc_delegated = true;
    let expected = expected_records(&c);
    assert_eq!(expected[0].record_type, RecordKind::Cname);
    assert_eq!(expected[0].value, "deleg.test._dmarc.hosted.mailward.test");
    assert_eq!(dmarc_delegation_record(&c), expected[0]);
    assert!(
        dmarc_txt_value(&c)
            .is_some_and(|v| v.starts_with("v=DMARC1; p=none; rua=mailto:deleg-test@"))
    );

    let states = compare(&resolver, &expected).await;
    let dmarc = of(&states, Purpose::Dmarc);
    assert_eq!(dmarc.len(), 2);
    assert_eq!(dmarc[0].record.record_type, RecordKind::Cname);
    assert_eq!(dmarc[0].action, Action::Create);
    assert_eq!(dmarc[0].status, Status::Verifying);
    assert_eq!(dmarc[0].already_published, Some(false));
    assert_eq!(dmarc[1].action, Action::Delete);
    assert_eq!(dmarc[1].record.record_type, RecordKind::Txt);
    assert_eq!(
        dmarc[1].record.value,
        "v=DMARC1; p=none; rua=mailto:old@else.test"
    );
    assert!(dmarc[1].record.required);
    assert!(!all_verified(&states));
    assert!(codes(&warnings(&c, &states)).contains(&"records_to_delete"));

    // Do as told: delete the TXT, publish the CNAME.
    server.remove("_dmarc.deleg.test", None).expect("edit");
    server
        .add(
            "_dmarc.deleg.test",
            mailward_domain::dns::RecordData::Cname(
                "deleg.test._dmarc.hosted.mailward.test".into(),
            ),
        )
        .expect("edit");
    let states = compare(&resolver, &expected).await;
    let dmarc = of(&states, Purpose::Dmarc);
    assert_eq!(dmarc.len(), 1);
    assert_eq!(dmarc[0].status, Status::Verified);
    let v = verify(&resolver, &expected, Some(Purpose::Dmarc)).await;
    assert_eq!(v.verified.get(&Purpose::Dmarc), Some(&true));
}

#[tokio::test]
async fn spf_is_merged_with_known_senders_and_duplicates_deleted() {
    let live = "v=spf1 ip4:192.0.2.1 include:_spf.mail.test -all";
    let zone = Zone::new("merge.test")
        .txt("@", live)
        .txt("@", "v=spf1 include:old.test ~all");
    let server = start(vec![zone]).await;
    let resolver = server.resolver().expect("resolver");
    let mut c = ctx("merge.test");
    c.known_sender_includes = vec!["include:_spf.sender.test".into(), "_SPF.mail.test.".into()];
    c.live_spf = fetch_live_spf(&resolver, "merge.test")
        .await
        .expect("lookup");
    assert_eq!(c.live_spf.as_deref(), Some(live));
    let expected = expected_records(&c);
    let spf = &expected[1];
    assert_eq!(
        spf.value,
        "v=spf1 ip4:192.0.2.1 include:_spf.mail.test include:_spf.sender.test -all"
    );
    let states = compare(&resolver, &expected).await;
    let spf = of(&states, Purpose::Spf);
    assert_eq!(spf.len(), 2);
    assert_eq!(spf[0].action, Action::Replace);
    assert_eq!(spf[0].status, Status::Verifying);
    assert_eq!(spf[0].already_published, Some(false));
    assert_eq!(spf[0].live_values.len(), 2);
    assert!(spf[0].spf_lookup_count.is_some());
    assert_eq!(spf[1].action, Action::Delete);
    assert_eq!(spf[1].record.value, "v=spf1 include:old.test ~all");

    // Publish the merged record alone: verified.
    server
        .set_txt("merge.test", &expected[1].value)
        .expect("edit");
    let states = compare(&resolver, &expected).await;
    let spf = of(&states, Purpose::Spf);
    assert_eq!(spf.len(), 1);
    assert_eq!(spf[0].status, Status::Verified);
}

#[test]
fn spf_rules_target_redirect_and_permissive_all() {
    let mut c = ctx("rules.test");
    c.known_sender_includes.clear();
    assert_eq!(expected_records(&c)[1].value, "v=spf1 ~all");
    assert!(codes(&warnings(&c, &[])).contains(&"spf_no_senders"));

    c.live_spf = Some("v=spf1 mx +all".into());
    assert_eq!(expected_records(&c)[1].value, "v=spf1 mx ~all");
    assert!(codes(&warnings(&c, &[])).contains(&"spf_permissive_all_replaced"));

    c.live_spf = Some("v=spf1 a redirect=_spf.rules.test".into());
    c.known_sender_includes = vec!["s.test".into()];
    assert_eq!(
        expected_records(&c)[1].value,
        "v=spf1 a include:s.test redirect=_spf.rules.test"
    );

    c.target_spf = Some("  v=spf1   include:x.test   -all ".into());
    assert_eq!(expected_records(&c)[1].value, "v=spf1 include:x.test -all");

    c.target_spf = None;
    c.live_spf = None;
    c.known_sender_includes = (0..11).map(|i| format!("s{i}.test")).collect();
    let w = warnings(&c, &[]);
    assert!(codes(&w).contains(&"spf_lookup_limit"), "{w:?}");
}

#[tokio::test]
async fn spf_lookup_limit_is_counted_through_includes() {
    let mut zone = Zone::new("senders.test");
    let nested: Vec<String> = (0..10)
        .map(|i| format!("include:n{i}.senders.test"))
        .collect();
    zone = zone.txt("big", &format!("v=spf1 {} -all", nested.join(" ")));
    for i in 0..10 {
        zone = zone.txt(&format!("n{i}"), "v=spf1 ip4:192.0.2.1 -all");
    }
    let server = start(vec![zone, Zone::new("limit.test")]).await;
    let resolver = server.resolver().expect("resolver");
    let mut c = ctx("limit.test");
    c.known_sender_includes = vec!["big.senders.test".into()];
    let states = compare(&resolver, &expected_records(&c)).await;
    assert_eq!(of(&states, Purpose::Spf)[0].spf_lookup_count, Some(11));
    let w = warnings(&c, &states);
    assert!(
        w.iter()
            .any(|w| w.code == "spf_lookup_limit" && w.message.contains("11")),
        "{w:?}"
    );
}

#[tokio::test]
async fn a_lookup_timeout_gives_null_and_a_static_hint() {
    let server = start(vec![
        Zone::new("slow.test").txt("@", "v=spf1 include:_spf.sender.test ~all"),
    ])
    .await;
    server.inject(Scope::name("_dmarc.slow.test"), Fault::Timeout);
    let resolver = server.resolver().expect("resolver");
    let mut c = ctx("slow.test");
    c.previously_verified.insert(Purpose::Dmarc);
    let expected = expected_records(&c);
    let states = compare(&resolver, &expected).await;
    let dmarc = of(&states, Purpose::Dmarc);
    assert_eq!(dmarc.len(), 1);
    assert_eq!(dmarc[0].already_published, None);
    assert_eq!(dmarc[0].action, Action::Create);
    // Never drifted on a timeout alone.
    assert_eq!(dmarc[0].status, Status::Verifying);
    assert_eq!(of(&states, Purpose::Spf)[0].status, Status::Verified);
    let w = warnings(&c, &states);
    assert!(
        w.iter()
            .any(|w| w.code == "dns_lookup_failed" && w.message.contains("_dmarc.slow.test"))
    );
    let v = verify(&resolver, &expected, None).await;
    assert!(!v.verified.contains_key(&Purpose::Dmarc));
    assert!(v.verified.contains_key(&Purpose::Spf));
}

#[test]
fn pct_below_100_becomes_t_y() {
    let mut c = ctx("pct.test");
    c.dmarc.policy = Policy::Quarantine;
    c.dmarc.pct = 50;
    c.dmarc.additional_emails = vec!["dmarc@pct.test".into(), "not an address".into()];
    c.dmarc.legacy_ruf_emails = vec!["ruf@pct.test".into()];
    let value = &expected_records(&c)[0].value;
    assert_eq!(
        value,
        "v=DMARC1; p=quarantine; t=y; rua=mailto:pct-test@reports.mailward.test,mailto:dmarc@pct.test; ruf=mailto:ruf@pct.test"
    );
    assert!(codes(&warnings(&c, &[])).contains(&"invalid_report_address"));
    c.dmarc.pct = 100;
    assert!(!expected_records(&c)[0].value.contains("t=y"));
    c.dmarc.additional_emails = vec!["agg@elsewhere.test".into()];
    assert!(codes(&warnings(&c, &[])).contains(&"external_report_destination"));
}

#[test]
fn opting_in_to_failure_reports_puts_mailwards_address_first_in_ruf() {
    let mut c = ctx("ruf.test");
    c.monitoring_email = "rua+0123456789abcdef0123456789abcdef@reports.mailward.test".into();
    assert!(!expected_records(&c)[0].value.contains("ruf="));
    c.dmarc.failure_reports = true;
    c.dmarc.legacy_ruf_emails = vec!["ruf@ruf.test".into()];
    let value = &expected_records(&c)[0].value;
    assert!(
        value.ends_with(
            "ruf=mailto:ruf+0123456789abcdef0123456789abcdef@reports.mailward.test,mailto:ruf@ruf.test"
        ),
        "{value}"
    );
}

#[tokio::test]
async fn bimi_with_and_without_certificate() {
    let mut c = ctx("bimi.test");
    c.dmarc.policy = Policy::Reject;
    c.bimi = BimiOptions {
        enabled: true,
        logo: Some("https://bimi.test/logo.svg".into()),
        certificate: None,
    };
    let expected = expected_records(&c);
    let bimi = expected
        .iter()
        .find(|r| r.purpose == Purpose::Bimi)
        .expect("bimi");
    assert_eq!(bimi.host, "default._bimi.bimi.test");
    assert_eq!(bimi.relative_host, "default._bimi");
    assert_eq!(bimi.value, "v=BIMI1; l=https://bimi.test/logo.svg");
    assert!(!bimi.required);

    c.bimi.certificate = Some("https://bimi.test/vmc.pem".into());
    let with_cert = expected_records(&c);
    let bimi = with_cert
        .iter()
        .find(|r| r.purpose == Purpose::Bimi)
        .expect("bimi");
    assert_eq!(
        bimi.value,
        "v=BIMI1; l=https://bimi.test/logo.svg; a=https://bimi.test/vmc.pem"
    );

    c.bimi.enabled = false;
    assert!(
        !expected_records(&c)
            .iter()
            .any(|r| r.purpose == Purpose::Bimi)
    );

    // Published without the certificate while the plan has it: replace; verify says false.
    let server = start(vec![publish(Zone::new("bimi.test"), &expected)]).await;
    let resolver = server.resolver().expect("resolver");
    let states = compare(&resolver, &with_cert).await;
    let b = of(&states, Purpose::Bimi);
    assert_eq!(b[0].action, Action::Replace);
    assert_eq!(b[0].status, Status::Verifying);
    let v = verify(&resolver, &with_cert, None).await;
    assert!(!v.results.bimi);
    let v = verify(&resolver, &expected, Some(Purpose::Bimi)).await;
    assert!(v.results.bimi);
    assert_eq!(
        v.verified.keys().copied().collect::<Vec<_>>(),
        [Purpose::Bimi]
    );
}

/// Counts cached and uncached lookups, to prove verification bypasses caches.
struct Spy<'a> {
    inner: &'a dyn DnsResolver,
    cached: AtomicUsize,
    uncached: AtomicUsize,
}

#[async_trait]
impl DnsResolver for Spy<'_> {
    async fn lookup(&self, name: &str, t: RecordType) -> Result<Answer, DnsError> {
        self.cached.fetch_add(1, Ordering::SeqCst);
        self.inner.lookup(name, t).await
    }
    async fn lookup_uncached(&self, name: &str, t: RecordType) -> Result<Answer, DnsError> {
        self.uncached.fetch_add(1, Ordering::SeqCst);
        self.inner.lookup_uncached(name, t).await
    }
}

#[tokio::test]
async fn verify_only_spf_is_uncached_and_scoped() {
    let c = full("only.test");
    let expected = expected_records(&c);
    let server = start(vec![publish(Zone::new("only.test"), &expected)]).await;
    let resolver = server.resolver().expect("resolver");
    let spy = Spy {
        inner: &resolver,
        cached: AtomicUsize::new(0),
        uncached: AtomicUsize::new(0),
    };
    let v = verify(&spy, &expected, Some(Purpose::Spf)).await;
    assert_eq!(spy.cached.load(Ordering::SeqCst), 0);
    // The SPF record, then its include (the lookup count is checked).
    assert_eq!(spy.uncached.load(Ordering::SeqCst), 2);
    assert_eq!(
        v.verified.keys().copied().collect::<Vec<_>>(),
        [Purpose::Spf]
    );
    assert!(v.results.spf && !v.results.dmarc && !v.results.dkim && !v.results.mta_sts);
    assert!(!v.results.bimi);

    let v = verify(&spy, &expected, Some(Purpose::Dkim)).await;
    assert_eq!(
        v.verified.keys().copied().collect::<Vec<_>>(),
        [Purpose::Dkim]
    );
    assert_eq!(spy.cached.load(Ordering::SeqCst), 0);

    // tls_rpt and mta_sts_policy never appear, even when asked for.
    for p in [Purpose::TlsRpt, Purpose::MtaStsPolicy] {
        let v = verify(&spy, &expected, Some(p)).await;
        assert!(v.verified.is_empty());
    }
    let v = verify(&spy, &expected, None).await;
    let json = serde_json::to_string(&v).expect("json");
    assert!(
        !json.contains("tls_rpt") && !json.contains("mta_sts_policy"),
        "{json}"
    );
}

#[test]
fn a_parked_domain_is_locked_down() {
    let mut c = ctx("parked.test");
    c.parked = true;
    let records = expected_records(&c);
    let dmarc = records
        .iter()
        .find(|r| r.purpose == Purpose::Dmarc)
        .expect("dmarc");
    assert!(dmarc.value.contains("p=reject"), "{}", dmarc.value);
    // `sp` absent means the same as `p`.
    assert!(
        !dmarc.value.contains("sp=") || dmarc.value.contains("sp=reject"),
        "{}",
        dmarc.value
    );
    let spf = records
        .iter()
        .find(|r| r.purpose == Purpose::Spf)
        .expect("spf");
    assert_eq!(spf.value, "v=spf1 -all");
    assert!(!records.iter().any(|r| r.purpose == Purpose::Dkim));
    // An explicit target is kept.
    c.target_spf = Some("v=spf1 include:_spf.parked.test -all".into());
    let spf = expected_records(&c)
        .into_iter()
        .find(|r| r.purpose == Purpose::Spf)
        .expect("spf");
    assert_eq!(spf.value, "v=spf1 include:_spf.parked.test -all");
}

#[tokio::test]
async fn tls_rpt_over_https_is_offered_beside_mailto_and_either_verifies() {
    let mut c = full("rpt.test");
    c.tls_rpt_https = Some("https://api.mailward.test/tlsrpt/3f1c".into());
    let expected = expected_records(&c);
    let tls = expected
        .iter()
        .find(|r| r.purpose == Purpose::TlsRpt)
        .expect("a TLS-RPT record");
    assert_eq!(
        tls.value,
        "v=TLSRPTv1; rua=mailto:tls@reports.mailward.test"
    );
    assert_eq!(
        tls.alternatives,
        ["v=TLSRPTv1; rua=mailto:tls@reports.mailward.test,https://api.mailward.test/tlsrpt/3f1c"]
    );
    let wire = serde_json::to_value(tls).expect("json");
    assert_eq!(wire["alternatives"][0], tls.alternatives[0].as_str());
    let dmarc = expected
        .iter()
        .find(|r| r.purpose == Purpose::Dmarc)
        .unwrap();
    assert!(
        serde_json::to_value(dmarc)
            .unwrap()
            .get("alternatives")
            .is_none()
    );

    // The mailto-only record as planned: published.
    let server = start(vec![publish(Zone::new("rpt.test"), &expected)]).await;
    let resolver = server.resolver().expect("resolver");
    let states = compare(&resolver, &expected).await;
    assert_eq!(
        of(&states, Purpose::TlsRpt)[0].already_published,
        Some(true)
    );
    // The record naming both addresses: published too.
    server
        .set_txt("_smtp._tls.rpt.test", &tls.alternatives[0])
        .expect("edit");
    let states = compare(&resolver, &expected).await;
    let rpt = of(&states, Purpose::TlsRpt);
    assert_eq!(rpt.len(), 1);
    assert_eq!(rpt[0].already_published, Some(true));
    assert_eq!(rpt[0].status, Status::Verified);
    // Another address: to replace.
    server
        .set_txt(
            "_smtp._tls.rpt.test",
            "v=TLSRPTv1; rua=https://elsewhere.test/r",
        )
        .expect("edit");
    let states = compare(&resolver, &expected).await;
    assert_eq!(of(&states, Purpose::TlsRpt)[0].action, Action::Replace);
}
