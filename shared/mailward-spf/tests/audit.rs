//! Auditor behaviour beyond the RFC suites: the LESSONS.md SPF cases and every problem code.

mod common;

use common::{Entry, FakeResolver};
use mailward_domain::dns::RecordData;
use mailward_spf::{Health, NodeKind, ProblemCode, Severity, SpfAudit, audit_domain, audit_record};

fn codes(audit: &SpfAudit) -> Vec<ProblemCode> {
    audit.problems.iter().map(|p| p.code).collect()
}

fn has(audit: &SpfAudit, code: ProblemCode) -> bool {
    audit.problems.iter().any(|p| p.code == code)
}

#[tokio::test]
async fn mx_term_costs_one_with_three_hosts() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 mx -all");
    for (i, host) in ["mx1.example.com", "mx2.example.com", "mx3.example.com"]
        .iter()
        .enumerate()
    {
        zone.mx("example.com", u16::try_from(i).unwrap() * 10, host);
        zone.a(host, &format!("192.0.2.{}", i + 1));
    }
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 1, "{audit:#?}");
    assert_eq!(audit.remaining_lookups, 9);
    assert_eq!(audit.tree.len(), 4);
    assert_eq!(audit.tree[0].kind, NodeKind::Mx);
    assert_eq!(audit.tree[0].cost, 1);
    let hosts: Vec<_> = audit.tree[1..]
        .iter()
        .map(|n| (n.kind, n.operand.as_str(), n.cost, n.depth))
        .collect();
    assert_eq!(
        hosts,
        vec![
            (NodeKind::ExpandedDomain, "mx1.example.com", 0, 1),
            (NodeKind::ExpandedDomain, "mx2.example.com", 0, 1),
            (NodeKind::ExpandedDomain, "mx3.example.com", 0, 1),
        ]
    );
    assert_eq!(audit.health, Health::Pass, "{:?}", audit.problems);
    assert_eq!(audit.ttl, Some(300));
}

#[tokio::test]
async fn void_lookup_is_counted_once() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 a:gone.example.com -all");
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.void_lookups_ipv4, 1);
    assert_eq!(audit.void_lookups_ipv6, 1);
    assert_eq!(audit.void_lookups, 1);
    assert!(!has(&audit, ProblemCode::VoidLookupLimitExceeded));
}

#[tokio::test]
async fn ipv6_senders_can_exceed_the_void_limit_alone() {
    let mut zone = FakeResolver::default();
    zone.txt(
        "example.com",
        "v=spf1 a:h1.example.com a:h2.example.com a:h3.example.com -all",
    );
    for host in ["h1.example.com", "h2.example.com", "h3.example.com"] {
        zone.a(host, "192.0.2.1");
    }
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!((audit.void_lookups_ipv4, audit.void_lookups_ipv6), (0, 3));
    let problem = audit
        .problems
        .iter()
        .find(|p| p.code == ProblemCode::VoidLookupLimitExceeded)
        .expect("void limit problem");
    assert!(problem.message.contains("IPv6"), "{}", problem.message);
    assert_eq!(audit.health, Health::Fail);
}

#[tokio::test]
async fn percent_d_in_an_include_is_the_include_domain() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 include:spf.provider.example -all");
    zone.txt("spf.provider.example", "v=spf1 include:_ip4.%{d} -all");
    zone.txt(
        "_ip4.spf.provider.example",
        "v=spf1 ip4:198.51.100.0/24 -all",
    );
    let audit = audit_domain(&zone, "example.com").await;
    let operands: Vec<_> = audit
        .tree
        .iter()
        .map(|n| (n.operand.as_str(), n.depth))
        .collect();
    assert_eq!(
        operands,
        vec![
            ("spf.provider.example", 0),
            ("_ip4.spf.provider.example", 1)
        ]
    );
    assert_eq!(audit.lookup_count, 2);
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
}

#[tokio::test]
async fn split_txt_strings_are_joined_and_only_a_single_long_string_is_a_problem() {
    let mut zone = FakeResolver::default();
    let tail = "ip4:192.0.2.1 ".repeat(12) + "-all";
    let long_tail = "ip4:192.0.2.1 ".repeat(20) + "-all";
    zone.add(
        "split.example",
        Entry::Data(RecordData::Txt(vec![
            format!("v=spf1 {tail} ip4:192.0.2.").into_bytes(),
            format!("9 {tail}").into_bytes(),
        ])),
    );
    zone.add(
        "long.example",
        Entry::Data(RecordData::Txt(vec![
            format!("v=spf1 {long_tail}").into_bytes(),
        ])),
    );
    let split = audit_domain(&zone, "split.example").await;
    let record = split.record.as_deref().unwrap();
    assert!(
        record.len() > 255,
        "the joined record is longer than one string"
    );
    assert!(record.contains("-all ip4:192.0.2.9 ip4:"), "{record}");
    assert!(split.problems.is_empty(), "{:?}", split.problems);
    let long = audit_domain(&zone, "long.example").await;
    assert_eq!(codes(&long), vec![ProblemCode::StringTooLong]);
}

#[tokio::test]
async fn eleven_term_record_is_over_the_limit_even_if_it_passes_for_some_senders() {
    let mut zone = FakeResolver::default();
    let terms: Vec<String> = (1..=11).map(|i| format!("a:h{i}.example.com")).collect();
    zone.txt("example.com", &format!("v=spf1 {} -all", terms.join(" ")));
    for i in 1..=11 {
        zone.a(&format!("h{i}.example.com"), &format!("192.0.2.{i}"));
        zone.aaaa(&format!("h{i}.example.com"), &format!("2001:db8::{i}"));
    }
    let request = mailward_spf::SpfRequest::mail_from(
        "192.0.2.1".parse().unwrap(),
        "a@example.com",
        "mail.example.com",
    );
    let outcome = mailward_spf::check_host(&zone, &request).await;
    assert_eq!(
        outcome.result,
        mailward_spf::SpfResult::Pass,
        "the evaluator stops at the first match"
    );
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 11);
    assert_eq!(audit.remaining_lookups, 0);
    assert_eq!(codes(&audit), vec![ProblemCode::LookupLimitExceeded]);
    assert!(audit.tree[10].error);
    assert!(!audit.tree[9].error);
    assert_eq!(audit.health, Health::Fail);
}

#[tokio::test]
async fn redirect_with_all_is_ignored_and_not_charged() {
    let mut zone = FakeResolver::default();
    zone.txt(
        "example.com",
        "v=spf1 ip4:192.0.2.1 redirect=other.example ~all",
    );
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 0);
    assert_eq!(audit.tree.len(), 1);
    assert_eq!(audit.tree[0].kind, NodeKind::Redirect);
    assert_eq!(audit.tree[0].cost, 0);
    assert_eq!(codes(&audit), vec![ProblemCode::RedirectIgnoredWithAll]);
    assert_eq!(audit.health, Health::Warn);
}

#[tokio::test]
async fn redirect_without_all_is_followed_and_charged() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 redirect=_spf.example.com");
    zone.txt("_spf.example.com", "v=spf1 include:missing.example -all");
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 2);
    assert_eq!(audit.tree[0].kind, NodeKind::Redirect);
    assert_eq!(audit.tree[1].kind, NodeKind::Include);
    assert_eq!(audit.tree[1].depth, 1);
    assert!(audit.tree[1].error);
    assert_eq!(codes(&audit), vec![ProblemCode::IncludeTargetWithoutSpf]);
    assert_eq!(audit.problems[0].host, "_spf.example.com");
}

#[tokio::test]
async fn terms_after_all_are_not_charged() {
    let mut zone = FakeResolver::default();
    zone.txt(
        "example.com",
        "v=spf1 -all include:a.example include:b.example",
    );
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 0);
    assert!(audit.tree.iter().all(|n| n.cost == 0));
    assert_eq!(codes(&audit), vec![ProblemCode::TermsAfterAll]);
}

#[tokio::test]
async fn macro_terms_without_a_sender_cost_one_and_are_reported() {
    let mut zone = FakeResolver::default();
    zone.txt(
        "example.com",
        "v=spf1 exists:%{i}._spf.example.com include:%{l}.users.example.com -all",
    );
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(audit.lookup_count, 2);
    assert_eq!(audit.tree[0].operand, "%{i}._spf.example.com");
    assert_eq!(
        codes(&audit),
        vec![
            ProblemCode::MacroUnexpandable,
            ProblemCode::MacroUnexpandable
        ]
    );
    assert!(
        audit
            .problems
            .iter()
            .all(|p| p.severity == Severity::Warning)
    );
}

#[tokio::test]
async fn multiple_records_missing_records_and_syntax_errors() {
    let mut zone = FakeResolver::default();
    zone.txt("two.example", "v=spf1 -all");
    zone.txt("two.example", "v=spf1 ~all");
    zone.txt("none.example", "google-site-verification=x");
    zone.txt("bad.example", "v=spf1 ip4:192.0.2.300 -all");
    let two = audit_domain(&zone, "two.example").await;
    assert_eq!(two.records.len(), 2);
    assert_eq!(two.record, None);
    assert_eq!(codes(&two), vec![ProblemCode::MultipleSpfRecords]);
    let none = audit_domain(&zone, "none.example").await;
    assert_eq!(codes(&none), vec![ProblemCode::NoSpfRecord]);
    let nx = audit_domain(&zone, "nxdomain.example").await;
    assert_eq!(codes(&nx), vec![ProblemCode::NoSpfRecord]);
    let bad = audit_domain(&zone, "bad.example").await;
    assert_eq!(codes(&bad), vec![ProblemCode::SyntaxError]);
    assert!(
        bad.problems[0].message.starts_with("invalid_ip4"),
        "{}",
        bad.problems[0].message
    );
}

#[tokio::test]
async fn dns_failures_are_errors_never_missing_records() {
    let mut zone = FakeResolver::default();
    zone.timeout("slow.example");
    zone.txt(
        "example.com",
        "v=spf1 include:slow.example a:slow.example -all",
    );
    let root = audit_domain(&zone, "slow.example").await;
    assert_eq!(codes(&root), vec![ProblemCode::DnsTemporaryError]);
    let audit = audit_domain(&zone, "example.com").await;
    assert_eq!(
        codes(&audit),
        vec![
            ProblemCode::DnsTemporaryError,
            ProblemCode::DnsTemporaryError
        ]
    );
    assert!(audit.tree.iter().all(|n| n.error));
    assert_eq!(audit.void_lookups, 0);
}

#[tokio::test]
async fn permissive_all_ptr_and_loops() {
    let mut zone = FakeResolver::default();
    zone.txt("plus.example", "v=spf1 ptr +all");
    zone.txt("neutral.example", "v=spf1 ?all");
    zone.txt("loop1.example", "v=spf1 include:loop2.example -all");
    zone.txt("loop2.example", "v=spf1 include:loop1.example -all");
    let plus = audit_domain(&zone, "plus.example").await;
    assert_eq!(
        codes(&plus),
        vec![ProblemCode::PtrDeprecated, ProblemCode::PermissiveAll]
    );
    assert_eq!(plus.problems[1].severity, Severity::Error);
    assert_eq!(plus.lookup_count, 1);
    let neutral = audit_domain(&zone, "neutral.example").await;
    assert_eq!(neutral.problems[0].severity, Severity::Warning);
    assert_eq!(neutral.health, Health::Warn);
    let looped = audit_domain(&zone, "loop1.example").await;
    assert_eq!(codes(&looped), vec![ProblemCode::IncludeLoop]);
    assert_eq!(looped.lookup_count, 2);
}

#[tokio::test]
async fn too_many_mx_records_and_audit_of_a_proposed_record() {
    let mut zone = FakeResolver::default();
    for i in 0..12u16 {
        zone.mx("big.example", i, &format!("mx{i}.big.example"));
    }
    let audit = audit_record(&zone, "big.example", "v=spf1 mx -all").await;
    assert_eq!(codes(&audit), vec![ProblemCode::MxTooManyRecords]);
    assert_eq!(audit.lookup_count, 1);
    assert_eq!(
        audit.tree.len(),
        11,
        "the term plus the ten hosts evaluation may use"
    );
}

#[tokio::test]
async fn huge_include_trees_are_bounded() {
    let mut zone = FakeResolver::default();
    let fanout: Vec<String> = (0..40).map(|i| format!("include:n{i}.example")).collect();
    zone.txt("root.example", &format!("v=spf1 {} -all", fanout.join(" ")));
    for i in 0..40 {
        zone.txt(
            &format!("n{i}.example"),
            &format!("v=spf1 {} -all", fanout.join(" ")),
        );
    }
    let audit = audit_domain(&zone, "root.example").await;
    assert!(audit.tree.len() <= mailward_spf::audit::MAX_NODES);
    assert!(has(&audit, ProblemCode::AuditTruncated));
    assert!(has(&audit, ProblemCode::LookupLimitExceeded));
}

#[tokio::test]
async fn results_serialize_with_stable_names() {
    let mut zone = FakeResolver::default();
    zone.txt("example.com", "v=spf1 mx ?all");
    zone.mx("example.com", 10, "mx.example.com");
    let audit = audit_domain(&zone, "example.com").await;
    let yaml = serde_norway::to_string(&audit).expect("serialize");
    assert!(yaml.contains("kind: expanded-domain"), "{yaml}");
    assert!(yaml.contains("kind: mx"), "{yaml}");
    assert!(yaml.contains("code: permissive_all"), "{yaml}");
    assert!(yaml.contains("severity: warning"), "{yaml}");
    assert!(yaml.contains("health: warn"), "{yaml}");
}
