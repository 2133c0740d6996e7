//! `observe` + `classify` against the in-process DNS fixture: each failure reason produced from a
//! fixture zone, full monitoring (case-insensitive `rua` with a `!10m` suffix), the CNAME
//! delegation, the parent-only case and DNS timeouts (indeterminate, never "missing").

use mailward_dns::HickoryResolver;
use mailward_dns_fixture::{Fault, FixtureServer, Scope, Zone};
use mailward_domain::dns::RecordType;
use mailward_domain::domain::{FailureReason, Policy};
use mailward_monitoring::{
    Delegation, Expectation, NameserverOutcome, Observation, ParentOutcome, Verdict, classify,
    observe,
};
use std::time::Duration;

const RUA: &str = "tok@reports.mailward.example";
const HOSTED: &str = "hosted-test.dmarc.mailward.test";

fn zones() -> Vec<Zone> {
    vec![
        // The parent of every zone below, so the tree walk gets NXDOMAIN above them.
        Zone::new("test"),
        Zone::new("full.test").a("@", "192.0.2.1").txt(
            "_dmarc",
            "v=DMARC1; p=reject; rua=mailto:other@x.example,MAILTO:TOK@Reports.Mailward.Example!10m",
        ),
        Zone::new("missing.test")
            .a("@", "192.0.2.1")
            .txt("@", "v=spf1 -all"),
        Zone::new("norua.test").txt(
            "_dmarc",
            "v=DMARC1; p=quarantine; rua=mailto:someone@elsewhere.example",
        ),
        Zone::new("multi.test")
            .txt("_dmarc", &format!("v=DMARC1; p=none; rua=mailto:{RUA}"))
            .txt("_dmarc", "v=DMARC1; p=reject"),
        Zone::new("invalid.test").txt("_dmarc", "v=DMARC1; p=bogus"),
        Zone::new("nearmiss.test").txt("_dmarc", "v=dmarc1 p=none"),
        Zone::new("hosted.test")
            .a("@", "192.0.2.1")
            .cname("_dmarc", &format!("{HOSTED}.")),
        Zone::new("mailward.test").txt(
            "hosted-test.dmarc",
            &format!("v=DMARC1; p=quarantine; rua=mailto:{RUA}"),
        ),
        Zone::new("txtnotcname.test")
            .txt("_dmarc", &format!("v=DMARC1; p=none; rua=mailto:{RUA}")),
        Zone::new("parent.test")
            .txt(
                "_dmarc",
                "v=DMARC1; p=reject; sp=quarantine; rua=mailto:agg@parent.example",
            )
            .a("sub", "192.0.2.2"),
        Zone::new("slow.test").txt("_dmarc", &format!("v=DMARC1; p=none; rua=mailto:{RUA}")),
    ]
}

async fn start() -> (FixtureServer, HickoryResolver) {
    let server = FixtureServer::start(zones()).await.unwrap();
    let mut settings = server.settings();
    settings.timeout = Duration::from_millis(300);
    let resolver = HickoryResolver::new(settings).unwrap();
    (server, resolver)
}

fn expect() -> Expectation {
    Expectation {
        monitoring_email: RUA.into(),
        delegated_target: None,
    }
}

fn hosted() -> Expectation {
    Expectation {
        monitoring_email: RUA.into(),
        delegated_target: Some(HOSTED.into()),
    }
}

async fn verdict(
    resolver: &HickoryResolver,
    domain: &str,
    expect: &Expectation,
) -> (Observation, Verdict) {
    let observation = observe(resolver, domain, expect).await;
    let verdict = classify(&observation);
    (observation, verdict)
}

fn reason_of(verdict: &Verdict) -> FailureReason {
    match verdict {
        Verdict::NotMonitored { reason, .. } => *reason,
        other => panic!("expected not monitored, got {other:?}"),
    }
}

#[tokio::test]
async fn full_monitoring_with_case_insensitive_rua_and_size_suffix() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "Full.Test.", &expect()).await;
    assert_eq!(
        v,
        Verdict::FullMonitoring {
            policy: Policy::Reject
        }
    );
    assert_eq!(o.domain, "full.test");
    assert!(o.has_monitoring_rua);
    assert_eq!(o.record_count, 1);
    assert_eq!(o.rua.len(), 2);
    assert!(matches!(o.nameservers, NameserverOutcome::Answered { .. }));
    assert!(o.transient_failures.is_empty());
}

#[tokio::test]
async fn hosted_dmarc_through_the_cname_delegation() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    assert_eq!(o.delegation, Delegation::Delegated, "{o:?}");
    assert_eq!(o.record_host, HOSTED);
    assert_eq!(
        v,
        Verdict::FullMonitoring {
            policy: Policy::Quarantine
        }
    );
}

#[tokio::test]
async fn nameservers_unresolvable_for_a_domain_that_does_not_exist() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "ghost.test", &expect()).await;
    assert_eq!(o.nameservers, NameserverOutcome::DomainDoesNotExist);
    assert_eq!(reason_of(&v), FailureReason::NameserversUnresolvable);
    let Verdict::NotMonitored { detail, .. } = v else {
        unreachable!()
    };
    assert_eq!(detail.from_hostname.as_deref(), Some("ghost.test"));
    assert_eq!(detail.expected_rua.as_deref(), Some(RUA));
}

#[tokio::test]
async fn dmarc_record_missing() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "missing.test", &expect()).await;
    assert_eq!(o.parent, ParentOutcome::NoRecord);
    assert_eq!(reason_of(&v), FailureReason::DmarcRecordMissing);
    let Verdict::NotMonitored { detail, policy, .. } = v else {
        unreachable!()
    };
    assert_eq!(detail.record_count, Some(0));
    assert_eq!(detail.from_hostname.as_deref(), Some("_dmarc.missing.test"));
    assert_eq!(policy, None);
}

#[tokio::test]
async fn dmarc_record_added_as_txt_not_cname() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "txtnotcname.test", &hosted()).await;
    assert_eq!(o.delegation, Delegation::TxtInsteadOfCname);
    assert_eq!(reason_of(&v), FailureReason::DmarcRecordAddedAsTxtNotCname);
    // The same zone without a delegation expected is fully monitored.
    let (_, v) = verdict(&resolver, "txtnotcname.test", &expect()).await;
    assert!(matches!(v, Verdict::FullMonitoring { .. }));
}

#[tokio::test]
async fn dmarc_record_on_parent_only() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "sub.parent.test", &expect()).await;
    assert_eq!(
        reason_of(&v),
        FailureReason::DmarcRecordOnParentOnly,
        "{o:?}"
    );
    let Verdict::NotMonitored { detail, policy, .. } = v else {
        unreachable!()
    };
    assert_eq!(detail.from_hostname.as_deref(), Some("_dmarc.parent.test"));
    assert_eq!(
        detail.observed.as_deref(),
        Some("v=DMARC1; p=reject; sp=quarantine; rua=mailto:agg@parent.example")
    );
    assert_eq!(detail.record_count, Some(1));
    // The parent's sp applies to the existing subdomain.
    assert_eq!(policy, Some(Policy::Quarantine));
}

#[tokio::test]
async fn dmarc_record_missing_mailward_rua() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "norua.test", &expect()).await;
    assert!(!o.has_monitoring_rua);
    assert_eq!(reason_of(&v), FailureReason::DmarcRecordMissingMailwardRua);
    let Verdict::NotMonitored { detail, policy, .. } = v else {
        unreachable!()
    };
    assert_eq!(
        detail.observed.as_deref(),
        Some("v=DMARC1; p=quarantine; rua=mailto:someone@elsewhere.example")
    );
    assert_eq!(detail.from_hostname.as_deref(), Some("_dmarc.norua.test"));
    assert_eq!(detail.record_count, Some(1));
    assert_eq!(policy, Some(Policy::Quarantine));
}

#[tokio::test]
async fn dmarc_record_invalid() {
    let (_server, resolver) = start().await;
    let (_, v) = verdict(&resolver, "invalid.test", &expect()).await;
    assert_eq!(reason_of(&v), FailureReason::DmarcRecordInvalid);
    // A TXT that almost is a record is invalid too, with the text as evidence.
    let (_, v) = verdict(&resolver, "nearmiss.test", &expect()).await;
    assert_eq!(reason_of(&v), FailureReason::DmarcRecordInvalid);
    let Verdict::NotMonitored { detail, .. } = v else {
        unreachable!()
    };
    assert_eq!(detail.observed.as_deref(), Some("v=dmarc1 p=none"));
}

#[tokio::test]
async fn dmarc_multiple_records() {
    let (_server, resolver) = start().await;
    let (o, v) = verdict(&resolver, "multi.test", &expect()).await;
    assert_eq!(o.record_count, 2);
    assert_eq!(reason_of(&v), FailureReason::DmarcMultipleRecords);
    let Verdict::NotMonitored { detail, .. } = v else {
        unreachable!()
    };
    assert_eq!(detail.record_count, Some(2));
    let observed = detail.observed.unwrap_or_default();
    assert!(
        observed.contains("p=reject") && observed.contains("p=none"),
        "{observed}"
    );
}

#[tokio::test]
async fn a_timeout_is_indeterminate_never_missing() {
    let (server, resolver) = start().await;
    server.inject(Scope::name("_dmarc.slow.test"), Fault::Timeout);
    let (o, v) = verdict(&resolver, "slow.test", &expect()).await;
    assert!(matches!(v, Verdict::Indeterminate { .. }), "{v:?}");
    assert!(!o.transient_failures.is_empty());

    // SERVFAIL likewise.
    server.clear_all_faults();
    server.inject(Scope::name("_dmarc.slow.test"), Fault::ServFail);
    let (_, v) = verdict(&resolver, "slow.test", &expect()).await;
    assert!(matches!(v, Verdict::Indeterminate { .. }), "{v:?}");

    // A timed-out NS lookup with a missing record: "missing" cannot be told from
    // "unresolvable", so nothing is concluded.
    server.clear_all_faults();
    server.inject(
        Scope::name_type("missing.test", RecordType::Ns),
        Fault::Timeout,
    );
    let (_, v) = verdict(&resolver, "missing.test", &expect()).await;
    assert!(matches!(v, Verdict::Indeterminate { .. }), "{v:?}");

    // A failed parent walk leaves the domain's own answer standing: it has no record of its own
    // (so no monitoring), only whether a parent has one is unknown.
    server.clear_all_faults();
    server.inject(Scope::name("_dmarc.parent.test"), Fault::ServFail);
    let (o, v) = verdict(&resolver, "sub.parent.test", &expect()).await;
    assert!(matches!(v, Verdict::NoOwnRecord { .. }), "{v:?} {o:?}");
    // REFUSED there (an authoritative server asked about a zone it does not serve) likewise.
    server.clear_all_faults();
    server.inject(Scope::name("_dmarc.parent.test"), Fault::Refused);
    let (_, v) = verdict(&resolver, "sub.parent.test", &expect()).await;
    let Verdict::NoOwnRecord { detail } = v else {
        panic!("{v:?}")
    };
    assert_eq!(
        detail.from_hostname.as_deref(),
        Some("_dmarc.sub.parent.test")
    );
    assert_eq!(detail.record_count, Some(0));

    // A timed-out NS lookup does not hide a record that answered.
    server.clear_all_faults();
    server.inject(
        Scope::name_type("full.test", RecordType::Ns),
        Fault::Timeout,
    );
    let (_, v) = verdict(&resolver, "full.test", &expect()).await;
    assert!(matches!(v, Verdict::FullMonitoring { .. }), "{v:?}");
}

#[tokio::test]
async fn bad_names_never_panic() {
    let (_server, resolver) = start().await;
    for name in ["", ".", "a..test", "exämple.test", &"a".repeat(300)] {
        let (_, v) = verdict(&resolver, name, &expect()).await;
        assert_eq!(
            reason_of(&v),
            FailureReason::NameserversUnresolvable,
            "{name}"
        );
    }
}

/// The sweep's loop for one hosted domain through live zone edits: activated, drifted when a
/// TXT replaces the CNAME, recovered when the CNAME returns, failed when the record is removed,
/// and a timeout in between changes nothing.
#[tokio::test]
async fn live_edits_walk_the_state_machine() {
    use mailward_domain::dns::RecordData;
    use mailward_domain::domain::MonitoringStatus;
    use mailward_monitoring::{MonitoringState, SweepRules, events_to_names, step};
    use time::{Duration as TimeDuration, OffsetDateTime};

    let (server, resolver) = start().await;
    let rules = SweepRules::default();
    let t0 = OffsetDateTime::UNIX_EPOCH + TimeDuration::days(20_000);
    let mut state = MonitoringState::new(t0, 80);
    let mut hour = 0;
    let mut sweep = |state: &MonitoringState, verdict: &Verdict| {
        hour += 1;
        step(state, verdict, 80, t0 + TimeDuration::hours(hour), &rules)
    };

    let (_, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    let out = sweep(&state, &v);
    assert_eq!(out.next.status, MonitoringStatus::Setup);
    assert_eq!(
        events_to_names(&out.events),
        [
            "domain.monitoring.activated",
            "domain.policy_changed",
            "domain.updated"
        ]
    );
    state = out.next;

    // The customer replaces the CNAME with their own TXT record.
    server.remove("_dmarc.hosted.test", None).unwrap();
    server
        .set_txt(
            "_dmarc.hosted.test",
            &format!("v=DMARC1; p=quarantine; rua=mailto:{RUA}"),
        )
        .unwrap();
    let (_, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    let out = sweep(&state, &v);
    assert_eq!(out.next.status, MonitoringStatus::Drifted);
    assert_eq!(
        out.next.failure_reason,
        Some(FailureReason::DmarcRecordAddedAsTxtNotCname)
    );
    assert_eq!(
        events_to_names(&out.events),
        ["domain.monitoring.drifted", "domain.updated"]
    );
    state = out.next;

    // A timeout changes nothing.
    server.inject(Scope::name("_dmarc.hosted.test"), Fault::Timeout);
    let (_, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    let out = sweep(&state, &v);
    assert_eq!(out.next.status, MonitoringStatus::Drifted);
    assert!(out.events.is_empty());
    state = out.next;
    server.clear_all_faults();

    // The CNAME comes back.
    server.remove("_dmarc.hosted.test", None).unwrap();
    server
        .add("_dmarc.hosted.test", RecordData::Cname(HOSTED.to_string()))
        .unwrap();
    let (_, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    let out = sweep(&state, &v);
    assert_eq!(out.next.status, MonitoringStatus::Setup);
    assert_eq!(
        events_to_names(&out.events),
        ["domain.monitoring.recovered", "domain.updated"]
    );
    let verified = out.next.dmarc_verified_at;
    state = out.next;

    // The record disappears entirely.
    server.remove("_dmarc.hosted.test", None).unwrap();
    let (_, v) = verdict(&resolver, "hosted.test", &hosted()).await;
    let out = sweep(&state, &v);
    assert_eq!(out.next.status, MonitoringStatus::Failed);
    assert_eq!(
        out.next.failure_reason,
        Some(FailureReason::DmarcRecordMissing)
    );
    assert_eq!(out.next.dmarc_verified_at, verified);
}
