//! One or more cases per MX problem code, and null-MX detection over resolver answers.

use mailward_domain::dns::RecordData;
use mailward_records::mx::{self, MxCode, MxHost};
use std::collections::BTreeSet;

fn h(preference: u16, exchange: &str) -> MxHost {
    MxHost::new(preference, exchange)
}

fn codes(records: &[MxHost], cnames: &[&str]) -> Vec<MxCode> {
    mx::check(records, cnames)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

#[test]
fn null_mx_as_the_resolver_port_represents_it() {
    // RecordData::Mx stores exchanges without the trailing dot, so the root is "".
    let answer = vec![RecordData::Mx {
        preference: 0,
        exchange: String::new(),
    }];
    let hosts = mx::from_answer(&answer);
    let report = mx::check::<&str>(&hosts, &[]);
    assert!(report.null_mx);
    assert!(report.hosts.is_empty());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // "." (as written in zone files) means the same.
    let report = mx::check::<&str>(&[h(0, ".")], &[]);
    assert!(report.null_mx && report.problems.is_empty());
}

#[test]
fn from_answer_skips_other_types_and_normalizes() {
    let answer = vec![
        RecordData::Cname("x.example".into()),
        RecordData::Mx {
            preference: 20,
            exchange: "MX2.Example.com.".into(),
        },
        RecordData::Mx {
            preference: 10,
            exchange: "mx1.example.com".into(),
        },
    ];
    let report = mx::check::<&str>(&mx::from_answer(&answer), &[]);
    assert!(!report.null_mx);
    let names: Vec<&str> = report.hosts.iter().map(|h| h.exchange.as_str()).collect();
    assert_eq!(
        names,
        ["mx1.example.com", "mx2.example.com"],
        "sorted by preference"
    );
    assert!(report.is_valid() && report.problems.is_empty());
}

#[test]
fn each_code() {
    let table: Vec<(Vec<MxHost>, Vec<&str>, MxCode)> = vec![
        (vec![], vec![], MxCode::NoMxRecords),
        (
            vec![h(0, ""), h(10, "mx.example.com")],
            vec![],
            MxCode::NullMxWithOtherRecords,
        ),
        (vec![h(10, ".")], vec![], MxCode::NullMxNonzeroPreference),
        (
            vec![h(10, "mx.example.com"), h(20, "MX.example.com.")],
            vec![],
            MxCode::DuplicateMxHost,
        ),
        (vec![h(10, "192.0.2.1")], vec![], MxCode::MxIpLiteral),
        (vec![h(10, "[2001:db8::1]")], vec![], MxCode::MxIpLiteral),
        (vec![h(10, "2001:db8::1")], vec![], MxCode::MxIpLiteral),
        (
            vec![h(10, "mail_server.example.com")],
            vec![],
            MxCode::InvalidMxHost,
        ),
        (
            vec![h(10, "mx.example.com")],
            vec!["MX.example.com."],
            MxCode::MxIsCname,
        ),
    ];
    let mut seen = BTreeSet::new();
    for (records, cnames, code) in &table {
        let got = codes(records, cnames);
        assert!(
            got.contains(code),
            "{records:?}: expected {code}, got {got:?}"
        );
        seen.insert(*code);
    }
    for code in MxCode::ALL {
        assert!(seen.contains(code), "no test case for {code}");
    }
    let mixed = mx::check::<&str>(&[h(0, ""), h(10, "mx.example.com")], &[]);
    assert!(!mixed.null_mx && !mixed.is_valid());
}
