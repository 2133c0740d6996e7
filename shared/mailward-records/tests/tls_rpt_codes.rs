//! One or more cases per TLS-RPT problem code, and the generator.

use mailward_records::tls_rpt::{self, TlsRptCode};
use std::collections::BTreeSet;

fn codes(record: &str) -> Vec<TlsRptCode> {
    tls_rpt::parse(record)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

#[test]
fn each_code() {
    let table: Vec<(&str, TlsRptCode)> = vec![
        (
            "v=TLSRPTv1; rua=mailto:a@example.com; junk",
            TlsRptCode::SyntaxError,
        ),
        ("rua=mailto:a@example.com", TlsRptCode::MissingVersion),
        (
            "v=TLSRPTv2; rua=mailto:a@example.com",
            TlsRptCode::InvalidVersion,
        ),
        (
            "v=tlsrptv1; rua=mailto:a@example.com",
            TlsRptCode::InvalidVersion,
        ),
        (
            "rua=mailto:a@example.com; v=TLSRPTv1",
            TlsRptCode::VersionNotFirst,
        ),
        (
            "v=TLSRPTv1; rua=mailto:a@example.com; rua=mailto:b@example.com",
            TlsRptCode::DuplicateField,
        ),
        ("v=TLSRPTv1", TlsRptCode::MissingRua),
        ("v=TLSRPTv1; rua=", TlsRptCode::EmptyRua),
        (
            "v=TLSRPTv1; rua=reports@example.com",
            TlsRptCode::InvalidRuaUri,
        ),
        (
            "v=TLSRPTv1; rua=mailto:example.com",
            TlsRptCode::InvalidRuaUri,
        ),
        (
            "v=TLSRPTv1; rua=mailto:a@example.com,,https://r.example",
            TlsRptCode::InvalidRuaUri,
        ),
        (
            "v=TLSRPTv1; rua=http://r.example.com/",
            TlsRptCode::UnsupportedRuaScheme,
        ),
        (
            "v=TLSRPTv1; rua=ftp://r.example.com/",
            TlsRptCode::UnsupportedRuaScheme,
        ),
    ];
    let mut seen = BTreeSet::new();
    for (record, code) in &table {
        let got = codes(record);
        assert!(got.contains(code), "{record}: expected {code}, got {got:?}");
        seen.insert(*code);
    }
    let lookup = tls_rpt::parse_records(&[
        "v=TLSRPTv1; rua=mailto:a@e.com",
        "v=TLSRPTv1; rua=mailto:b@e.com",
    ]);
    assert_eq!(lookup.problems[0].code, TlsRptCode::MultipleRecords);
    seen.insert(TlsRptCode::MultipleRecords);
    for code in TlsRptCode::ALL {
        assert!(seen.contains(code), "no test case for {code}");
    }
}

#[test]
fn extension_fields_with_rfc_names_are_ignored() {
    let r = tls_rpt::parse("v=TLSRPTv1; rua=mailto:a@e.com; x-ext.v2=1");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
}

#[test]
fn lookup_ignores_other_records() {
    let l = tls_rpt::parse_records(&["v=spf1 -all", " v=TLSRPTv1; rua=mailto:a@e.com"]);
    assert_eq!(
        l.record.map(|r| r.rua),
        Some(vec!["mailto:a@e.com".to_string()])
    );
    let l = tls_rpt::parse_records(&["google-site-verification=abc"]);
    assert!(l.record.is_none() && l.problems.is_empty());
}

#[test]
fn generator() {
    let v = tls_rpt::generate(&[
        "tls@example.com",
        "https://r.example.net/v1",
        "mailto:tls@example.com",
    ])
    .expect("ok");
    assert_eq!(
        v,
        "v=TLSRPTv1; rua=mailto:tls@example.com,https://r.example.net/v1"
    );
    assert!(tls_rpt::parse(&v).problems.is_empty());
    let err = tls_rpt::generate::<&str>(&[]).expect_err("empty");
    assert_eq!(err[0].code, TlsRptCode::MissingRua);
    let err = tls_rpt::generate(&["http://r.example.net"]).expect_err("http");
    assert_eq!(err[0].code, TlsRptCode::UnsupportedRuaScheme);
    let err = tls_rpt::generate(&["https://r.example.net/a;b"]).expect_err("semicolon");
    assert_eq!(err[0].code, TlsRptCode::InvalidRuaUri);
    let err = tls_rpt::generate(&["https://r.example.net/a,b"]).expect_err("comma");
    assert_eq!(err[0].code, TlsRptCode::InvalidRuaUri);
}
