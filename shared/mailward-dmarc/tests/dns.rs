//! Discovery, tree walk, existence and authorization against the in-memory resolver.

mod common;

use common::FakeResolver;
use mailward_dmarc::{
    AuthorizationStatus, DiscoveryStatus, DnsFailure, DomainExistence, OrgDomainRule, Policy,
    PolicySource, PolicyStatus, PolicyTag, StepOutcome, check_report_destinations, discover_policy,
    discover_record, domain_exists, organizational_domain, parse_record, walk_targets,
};
use mailward_domain::dns::{DnsError, RecordData, RecordType};
use std::net::Ipv4Addr;

fn a_record() -> Vec<RecordData> {
    vec![RecordData::A(Ipv4Addr::new(192, 0, 2, 1))]
}

// ---- record discovery -------------------------------------------------------------------

#[tokio::test]
async fn discovery_found_missing_multiple_failed() {
    let r = FakeResolver::new()
        .txt("_dmarc.ok.example", &["v=DMARC1; p=reject", "unrelated"])
        .txt(
            "_dmarc.two.example",
            &["v=DMARC1; p=none", "v=DMARC1; p=reject", "v=DMARC1x"],
        )
        .txt("_dmarc.miss.example", &["p=reject; v=DMARC1"])
        .fail("_dmarc.down.example", RecordType::Txt, DnsError::ServFail)
        .fail("_dmarc.slow.example", RecordType::Txt, DnsError::Timeout);
    let d = discover_record(&r, "OK.example.").await;
    assert_eq!(d.status, DiscoveryStatus::Found);
    assert_eq!(d.record.as_ref().and_then(|r| r.p), Some(Policy::Reject));
    assert_eq!(d.txt_record_count, 2);
    assert!(!d.via_cname);

    let d = discover_record(&r, "two.example").await;
    assert_eq!(d.status, DiscoveryStatus::MultipleRecords);
    assert_eq!(d.status.code(), "multiple_records");
    assert_eq!(d.dmarc_record_count, 2);
    assert!(d.record.is_none());

    let d = discover_record(&r, "miss.example").await;
    assert_eq!(d.status, DiscoveryStatus::NoRecord);
    assert_eq!(d.near_misses.len(), 1);

    let d = discover_record(&r, "absent.example").await;
    assert_eq!(d.status, DiscoveryStatus::NoRecord);
    assert!(!d.dangling_cname);

    let d = discover_record(&r, "down.example").await;
    assert_eq!(d.status, DiscoveryStatus::LookupFailed);
    assert_eq!(d.failure, Some(DnsFailure::ServFail));
    let d = discover_record(&r, "slow.example").await;
    assert_eq!(d.status, DiscoveryStatus::LookupFailed);
    assert_eq!(d.failure, Some(DnsFailure::Timeout));

    let d = discover_record(&r, "bad..name").await;
    assert_eq!(d.status, DiscoveryStatus::LookupFailed);
    assert_eq!(d.failure, Some(DnsFailure::InvalidName));
}

#[tokio::test]
async fn discovery_through_cname() {
    let r = FakeResolver::new().txt_via_cname(
        "_dmarc.customer.example",
        &["customer-example.dmarc.mailward.example"],
        &["v=DMARC1; p=quarantine; rua=mailto:r@mailward.example"],
    );
    let d = discover_record(&r, "customer.example").await;
    assert_eq!(d.status, DiscoveryStatus::Found);
    assert!(d.via_cname);
    let cname = d.cname.clone().expect("cname");
    assert_eq!(cname.target, "customer-example.dmarc.mailward.example");
    assert!(cname.points_into("dmarc.mailward.example"));
    assert!(cname.points_into("mailward.example."));
    assert!(!cname.points_into("ailward.example"));
}

#[tokio::test]
async fn dangling_cname_is_reported() {
    let r = FakeResolver::new().records(
        "_dmarc.gone.example",
        RecordType::Cname,
        vec![RecordData::Cname("gone.dmarc.mailward.example".into())],
    );
    let d = discover_record(&r, "gone.example").await;
    assert_eq!(d.status, DiscoveryStatus::NoRecord);
    assert!(d.dangling_cname);
    assert_eq!(
        d.cname.map(|c| c.target),
        Some("gone.dmarc.mailward.example".into())
    );

    // CNAME resolved, target has only unrelated TXT.
    let r = FakeResolver::new().txt_via_cname("_dmarc.x.example", &["t.example"], &["hello"]);
    let d = discover_record(&r, "x.example").await;
    assert_eq!(d.status, DiscoveryStatus::NoRecord);
    assert!(d.via_cname && d.dangling_cname);
}

// ---- tree walk ---------------------------------------------------------------------------

#[test]
fn walk_targets_and_label_skipping() {
    assert_eq!(
        walk_targets("a.mail.example.com"),
        vec![
            "a.mail.example.com",
            "mail.example.com",
            "example.com",
            "com"
        ]
    );
    assert_eq!(walk_targets("com"), vec!["com"]);
    assert!(walk_targets("").is_empty());
    let seven = "a.b.c.d.e.f.g";
    assert_eq!(walk_targets(seven).len(), 7);
    let eight = "a.b.c.d.e.f.g.h";
    assert_eq!(
        walk_targets(eight),
        vec![
            eight,
            "b.c.d.e.f.g.h",
            "c.d.e.f.g.h",
            "d.e.f.g.h",
            "e.f.g.h",
            "f.g.h",
            "g.h",
            "h"
        ]
    );
    let long = (0..40)
        .map(|i| format!("l{i}"))
        .collect::<Vec<_>>()
        .join(".");
    let t = walk_targets(&long);
    assert_eq!(t.len(), 8);
    assert_eq!(t[0], long);
    assert_eq!(t[1], "l33.l34.l35.l36.l37.l38.l39");
    assert_eq!(t[7], "l39");
}

#[tokio::test]
async fn policy_from_author_domain() {
    let r = FakeResolver::new()
        .txt("_dmarc.mail.example.com", &["v=DMARC1; p=quarantine"])
        .txt("_dmarc.example.com", &["v=DMARC1; p=reject"]);
    let p = discover_policy(&r, "mail.example.com").await;
    assert_eq!(p.status, PolicyStatus::Found);
    assert_eq!(p.source, Some(PolicySource::AuthorDomain));
    assert_eq!(p.applicable_tag, Some(PolicyTag::P));
    assert_eq!(p.policy, Some(Policy::Quarantine));
    assert_eq!(p.policy_domain.as_deref(), Some("mail.example.com"));
    assert_eq!(p.organizational_domain.as_deref(), Some("example.com"));
    assert_eq!(p.org_domain_rule, Some(OrgDomainRule::FewestLabels));
    assert_eq!(p.existence, DomainExistence::NotChecked);
    assert_eq!(
        r.txt_queries(),
        vec![
            "_dmarc.mail.example.com",
            "_dmarc.example.com",
            "_dmarc.com"
        ]
    );
}

#[tokio::test]
async fn policy_inherited_sp_and_np() {
    let record = "v=DMARC1; p=reject; sp=quarantine; np=none";
    let r = FakeResolver::new()
        .txt("_dmarc.example.com", &[record])
        .records("www.example.com", RecordType::A, a_record());
    let p = discover_policy(&r, "www.example.com").await;
    assert_eq!(p.source, Some(PolicySource::OrganizationalDomain));
    assert_eq!(p.applicable_tag, Some(PolicyTag::Sp));
    assert_eq!(p.policy, Some(Policy::Quarantine));
    assert_eq!(p.existence, DomainExistence::Exists);

    let p = discover_policy(&r, "nope.example.com").await;
    assert_eq!(p.applicable_tag, Some(PolicyTag::Np));
    assert_eq!(p.policy, Some(Policy::None));
    assert_eq!(p.existence, DomainExistence::DoesNotExist);

    // Existence unknown: sp applies, and we say so.
    let r = FakeResolver::new()
        .txt("_dmarc.example.com", &[record])
        .fail("flaky.example.com", RecordType::A, DnsError::Timeout);
    let p = discover_policy(&r, "flaky.example.com").await;
    assert_eq!(p.existence, DomainExistence::Unknown);
    assert_eq!(p.applicable_tag, Some(PolicyTag::Sp));
}

#[tokio::test]
async fn highest_record_is_org_domain_and_walk_continues() {
    // RFC 9989 §4.10.2 example: records at mail.example.com and example.com.
    let r = FakeResolver::new()
        .txt("_dmarc.mail.example.com", &["v=DMARC1; p=none"])
        .txt("_dmarc.example.com", &["v=DMARC1; p=reject; sp=quarantine"]);
    let p = discover_policy(&r, "a.mail.example.com").await;
    assert_eq!(p.organizational_domain.as_deref(), Some("example.com"));
    assert_eq!(p.policy_domain.as_deref(), Some("example.com"));
    assert_eq!(p.policy, Some(Policy::Quarantine));
    assert_eq!(r.txt_queries().len(), 4);
}

#[tokio::test]
async fn psd_n_stops_and_marks_org_domain() {
    let r = FakeResolver::new()
        .txt("_dmarc.dept.example.com", &["v=DMARC1; p=reject; psd=n"])
        .txt("_dmarc.example.com", &["v=DMARC1; p=none"]);
    let p = discover_policy(&r, "a.dept.example.com").await;
    assert_eq!(p.organizational_domain.as_deref(), Some("dept.example.com"));
    assert_eq!(p.org_domain_rule, Some(OrgDomainRule::PsdN));
    assert_eq!(p.policy, Some(Policy::Reject));
    assert_eq!(
        r.txt_queries(),
        vec!["_dmarc.a.dept.example.com", "_dmarc.dept.example.com"]
    );
}

#[tokio::test]
async fn psd_y_stops_and_org_is_one_below() {
    let r = FakeResolver::new()
        .txt(
            "_dmarc.example",
            &["v=DMARC1; p=reject; sp=quarantine; np=reject; psd=y"],
        )
        .records(
            "a.shop.example",
            RecordType::Mx,
            vec![RecordData::Mx {
                preference: 10,
                exchange: "mx.shop.example".into(),
            }],
        );
    let p = discover_policy(&r, "a.shop.example").await;
    assert_eq!(p.organizational_domain.as_deref(), Some("shop.example"));
    assert_eq!(p.org_domain_rule, Some(OrgDomainRule::BelowPsd));
    assert_eq!(p.source, Some(PolicySource::PublicSuffixDomain));
    assert_eq!(p.policy_domain.as_deref(), Some("example"));
    assert_eq!(p.policy, Some(Policy::Quarantine));

    // The org domain's own record beats the PSD's.
    let r = FakeResolver::new()
        .txt("_dmarc.shop.example", &["v=DMARC1; p=none"])
        .txt("_dmarc.example", &["v=DMARC1; p=reject; psd=y"]);
    let p = discover_policy(&r, "a.shop.example").await;
    assert_eq!(p.source, Some(PolicySource::OrganizationalDomain));
    assert_eq!(p.policy_domain.as_deref(), Some("shop.example"));
    assert_eq!(p.policy, Some(Policy::None));

    // psd=y at the start domain: stop, it is its own org domain.
    let r = FakeResolver::new().txt("_dmarc.gov.example", &["v=DMARC1; p=reject; psd=y"]);
    let p = discover_policy(&r, "gov.example").await;
    assert_eq!(p.organizational_domain.as_deref(), Some("gov.example"));
    assert_eq!(p.source, Some(PolicySource::AuthorDomain));
    assert_eq!(r.txt_queries().len(), 1);
}

#[tokio::test]
async fn long_names_cost_at_most_eight_queries() {
    let name = (0..30)
        .map(|i| format!("x{i}"))
        .collect::<Vec<_>>()
        .join(".")
        + ".example.com";
    let r = FakeResolver::new().txt("_dmarc.example.com", &["v=DMARC1; p=reject"]);
    let p = discover_policy(&r, &name).await;
    assert_eq!(r.txt_queries().len(), 8);
    assert_eq!(p.organizational_domain.as_deref(), Some("example.com"));
    assert_eq!(p.policy, Some(Policy::Reject));
}

#[tokio::test]
async fn multiple_records_at_a_step_are_discarded() {
    let r = FakeResolver::new()
        .txt(
            "_dmarc.mail.example.com",
            &["v=DMARC1; p=none", "v=DMARC1; p=reject"],
        )
        .txt("_dmarc.example.com", &["v=DMARC1; p=quarantine"])
        .records("mail.example.com", RecordType::A, a_record());
    let p = discover_policy(&r, "mail.example.com").await;
    assert_eq!(
        p.steps[0].outcome,
        StepOutcome::MultipleRecords { count: 2 }
    );
    assert_eq!(p.source, Some(PolicySource::OrganizationalDomain));
    assert_eq!(p.policy, Some(Policy::Quarantine));
}

#[tokio::test]
async fn no_policy_and_failures() {
    let r = FakeResolver::new();
    let p = discover_policy(&r, "a.example.com").await;
    assert_eq!(p.status, PolicyStatus::NoPolicy);
    assert_eq!(p.organizational_domain.as_deref(), Some("a.example.com"));
    assert_eq!(p.org_domain_rule, Some(OrgDomainRule::StartDomain));

    // A failure above: not "no policy".
    let r = FakeResolver::new().fail("_dmarc.example.com", RecordType::Txt, DnsError::ServFail);
    let p = discover_policy(&r, "a.example.com").await;
    assert_eq!(p.status, PolicyStatus::Indeterminate);
    assert_eq!(p.failure, Some(DnsFailure::ServFail));
    assert_eq!(p.organizational_domain, None);

    // Own record known, failure above: policy found, org domain unknown.
    let r = FakeResolver::new()
        .txt("_dmarc.a.example.com", &["v=DMARC1; p=reject"])
        .fail("_dmarc.example.com", RecordType::Txt, DnsError::Timeout);
    let p = discover_policy(&r, "a.example.com").await;
    assert_eq!(p.status, PolicyStatus::Found);
    assert_eq!(p.policy, Some(Policy::Reject));
    assert_eq!(p.organizational_domain, None);
    assert_eq!(p.failure, Some(DnsFailure::Timeout));

    let p = discover_policy(&r, "").await;
    assert_eq!(p.status, PolicyStatus::Indeterminate);
}

#[tokio::test]
async fn testing_mode_weakens_one_step_and_unusable_records() {
    let r = FakeResolver::new()
        .txt("_dmarc.t.example", &["v=DMARC1; p=reject; t=y"])
        .txt("_dmarc.bad.example", &["v=DMARC1; p=bogus"]);
    let p = discover_policy(&r, "t.example").await;
    assert!(p.testing);
    assert_eq!(p.policy, Some(Policy::Reject));
    assert_eq!(p.enforced_policy, Some(Policy::Quarantine));
    let p = discover_policy(&r, "bad.example").await;
    assert_eq!(p.status, PolicyStatus::Found);
    assert_eq!(p.policy, None);
}

#[tokio::test]
async fn existence_helper() {
    let r = FakeResolver::new()
        .records(
            "mx.example",
            RecordType::Mx,
            vec![RecordData::Mx {
                preference: 0,
                exchange: ".".into(),
            }],
        )
        .records("empty.example", RecordType::A, vec![])
        .fail("down.example", RecordType::Aaaa, DnsError::Refused);
    assert_eq!(
        domain_exists(&r, "mx.example").await,
        DomainExistence::Exists
    );
    assert_eq!(
        domain_exists(&r, "empty.example").await,
        DomainExistence::DoesNotExist
    );
    assert_eq!(
        domain_exists(&r, "nx.example").await,
        DomainExistence::DoesNotExist
    );
    assert_eq!(
        domain_exists(&r, "down.example").await,
        DomainExistence::Unknown
    );
}

// ---- authorization -----------------------------------------------------------------------

#[tokio::test]
async fn report_destination_authorization() {
    let record = parse_record(
        "v=DMARC1; p=none; rua=mailto:a@example.com,mailto:r@reports.mailward.example,\
         mailto:x@other.example,mailto:y@flaky.example,https://example.net/r; \
         ruf=mailto:f@sub.example.com,mailto:z@reports.mailward.example",
    );
    let r = FakeResolver::new()
        .txt("_dmarc.example.com", &["v=DMARC1; p=none"])
        .txt("_dmarc.mailward.example", &["v=DMARC1; p=reject"])
        .txt(
            "example.com._report._dmarc.reports.mailward.example",
            &["v=DMARC1;"],
        )
        .txt("example.com._report._dmarc.other.example", &["v=spf1 -all"])
        .fail(
            "example.com._report._dmarc.flaky.example",
            RecordType::Txt,
            DnsError::ServFail,
        );
    let checks = check_report_destinations(&r, "example.com", None, &record).await;
    let status: Vec<(&str, AuthorizationStatus)> =
        checks.iter().map(|c| (c.host.as_str(), c.status)).collect();
    assert_eq!(
        status,
        vec![
            ("example.com", AuthorizationStatus::NotRequired),
            ("reports.mailward.example", AuthorizationStatus::Authorized),
            ("other.example", AuthorizationStatus::Unauthorized),
            ("flaky.example", AuthorizationStatus::Unknown),
            ("sub.example.com", AuthorizationStatus::NotRequired),
            ("reports.mailward.example", AuthorizationStatus::Authorized),
        ]
    );
    assert_eq!(
        checks[1].host_org_domain.as_deref(),
        Some("mailward.example")
    );
    assert_eq!(
        checks[1].query_name.as_deref(),
        Some("example.com._report._dmarc.reports.mailward.example")
    );
    assert_eq!(checks[3].failure, Some(DnsFailure::ServFail));
    // The authorization record is asked once per host.
    let auth_queries = r
        .txt_queries()
        .into_iter()
        .filter(|q| q.contains("._report._dmarc.reports"))
        .count();
    assert_eq!(auth_queries, 1);
}

#[tokio::test]
async fn authorization_with_unknown_org_domain() {
    let record = parse_record("v=DMARC1; p=none; rua=mailto:a@rep.example.net");
    let r = FakeResolver::new()
        .fail("_dmarc.example.net", RecordType::Txt, DnsError::Timeout)
        .txt("example.com._report._dmarc.rep.example.net", &["v=DMARC1"]);
    let checks = check_report_destinations(&r, "example.com", Some("example.com"), &record).await;
    assert_eq!(checks[0].status, AuthorizationStatus::Authorized);

    let r = FakeResolver::new().fail("_dmarc.example.net", RecordType::Txt, DnsError::Timeout);
    let checks = check_report_destinations(&r, "example.com", Some("example.com"), &record).await;
    assert_eq!(checks[0].status, AuthorizationStatus::Unknown);
}

#[tokio::test]
async fn organizational_domain_helper() {
    let r = FakeResolver::new().txt("_dmarc.example.org", &["v=DMARC1; p=none"]);
    assert_eq!(
        organizational_domain(&r, "a.b.example.org").await,
        Ok("example.org".into())
    );
    assert_eq!(
        organizational_domain(&r, "..").await,
        Err(DnsFailure::InvalidName)
    );
}
