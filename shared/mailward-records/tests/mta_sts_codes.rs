//! One or more cases per MTA-STS problem code, MX matching, coverage and the generator.

use mailward_records::ProblemCode;
use mailward_records::mta_sts::{self, Mode, MtaStsCode};
use std::collections::BTreeSet;

fn txt_codes(record: &str) -> Vec<MtaStsCode> {
    mta_sts::parse_txt(record)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

fn policy_codes(body: &str) -> Vec<MtaStsCode> {
    mta_sts::parse_policy(body)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

const BASE: &str = "version: STSv1\nmode: enforce\nmx: mail.example.com\nmax_age: 604800\n";

#[test]
fn each_code() {
    let mut seen = BTreeSet::new();
    let txt: Vec<(&str, MtaStsCode)> = vec![
        ("v=STSv1; id=1; junk", MtaStsCode::SyntaxError),
        ("id=1", MtaStsCode::MissingVersion),
        ("v=STSv2; id=1", MtaStsCode::InvalidVersion),
        ("v=stsv1; id=1", MtaStsCode::InvalidVersion),
        ("id=1; v=STSv1", MtaStsCode::VersionNotFirst),
        ("v=STSv1", MtaStsCode::MissingId),
        ("v=STSv1; id=a-b", MtaStsCode::InvalidId),
        ("v=STSv1; id=", MtaStsCode::InvalidId),
        ("v=STSv1; id=1; id=2", MtaStsCode::DuplicateField),
    ];
    for (record, code) in &txt {
        let got = txt_codes(record);
        assert!(got.contains(code), "{record}: expected {code}, got {got:?}");
        seen.insert(*code);
    }
    let lookup = mta_sts::parse_txt_records(&["v=STSv1; id=1", "v=STSv1; id=2", "other"]);
    assert_eq!(lookup.problems[0].code, MtaStsCode::MultipleRecords);
    seen.insert(MtaStsCode::MultipleRecords);

    let policy: Vec<(&str, MtaStsCode)> = vec![
        ("garbage", MtaStsCode::PolicySyntaxError),
        (
            "version: STSv1\nbad key: x\nmode: none\nmax_age: 86400",
            MtaStsCode::PolicySyntaxError,
        ),
        (
            "mode: enforce\nmx: a.example\nmax_age: 86400",
            MtaStsCode::PolicyMissingVersion,
        ),
        (
            "version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 86400",
            MtaStsCode::PolicyInvalidVersion,
        ),
        (
            "version: STSv1\nmx: a.example\nmax_age: 86400",
            MtaStsCode::MissingMode,
        ),
        (
            "version: STSv1\nmode: Enforce\nmx: a.example\nmax_age: 86400",
            MtaStsCode::InvalidMode,
        ),
        (
            "version: STSv1\nmode: testing\nmax_age: 86400",
            MtaStsCode::MissingMx,
        ),
        (
            "version: STSv1\nmode: none\nmax_age: 86400",
            MtaStsCode::MxMissingInNoneMode,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: *.*.example\nmax_age: 86400",
            MtaStsCode::InvalidMxPattern,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: 192.0.2.1\nmax_age: 86400",
            MtaStsCode::InvalidMxPattern,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example\nmx: A.example.\nmax_age: 86400",
            MtaStsCode::DuplicateMxPattern,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example",
            MtaStsCode::MissingMaxAge,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example\nmax_age: -1",
            MtaStsCode::InvalidMaxAge,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 12345678901",
            MtaStsCode::InvalidMaxAge,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 9999999999",
            MtaStsCode::MaxAgeTooLarge,
        ),
        (
            "version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 300",
            MtaStsCode::MaxAgeShort,
        ),
        (
            "version: STSv1\nmode: enforce\nmode: none\nmx: a.example\nmax_age: 86400",
            MtaStsCode::DuplicateKey,
        ),
    ];
    for (body, code) in &policy {
        let got = policy_codes(body);
        assert!(got.contains(code), "{body:?}: expected {code}, got {got:?}");
        seen.insert(*code);
    }

    let cov = mta_sts::check_mx_coverage(
        &["mail.example.com", "old.example.com"],
        &["mail.example.com", "mx2.example.com"],
    );
    let got: Vec<MtaStsCode> = cov.problems.iter().map(|p| p.code).collect();
    assert_eq!(
        got,
        [MtaStsCode::MxNotCovered, MtaStsCode::PatternMatchesNoMx]
    );
    seen.extend(got);

    let err = mta_sts::generate(Mode::Enforce, &["mx.example.com"], 3600).expect_err("too short");
    assert_eq!(err[0].code, MtaStsCode::MaxAgeOutOfRange);
    seen.insert(MtaStsCode::MaxAgeOutOfRange);

    for code in MtaStsCode::ALL {
        assert!(seen.contains(code), "no test case for {code}");
    }
}

#[test]
fn extension_names() {
    assert!(
        mta_sts::parse_txt("v=STSv1; id=1; x-ext.v2=a")
            .problems
            .is_empty()
    );
    let p = mta_sts::parse_policy(&format!("{BASE}x-ext.v2: anything at all\n"));
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert!(!mta_sts::parse_policy(&format!("{BASE}-x: 1\n")).is_valid());
}

#[test]
fn policy_details() {
    let p = mta_sts::parse_policy(BASE);
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    // First value of a duplicated key is the one reported.
    let p = mta_sts::parse_policy(
        "version: STSv1\nmode: testing\nmode: enforce\nmx: a.example\nmax_age: 86400",
    );
    assert_eq!(p.mode, Some(Mode::Testing));
    // Whitespace after the colon and trailing whitespace are not part of the value.
    let p = mta_sts::parse_policy(
        "version:STSv1\r\nmode:\tenforce  \r\nmx:   a.example\r\nmax_age: 86400\r\n\r\n",
    );
    assert!(p.is_valid(), "{:?}", p.problems);
    assert_eq!(p.mx, ["a.example"]);
    // An HTML error page is not a policy.
    let p = mta_sts::parse_policy("<html>\n<body>version: STSv1</body>\n</html>");
    assert!(!p.is_valid());
    assert_eq!(
        mta_sts::parse_policy("").problems.len(),
        4,
        "all four required fields missing"
    );
}

#[test]
fn mx_matching_rules() {
    assert!(mta_sts::mx_pattern_matches(
        "mail.example.com.",
        "mail.example.com"
    ));
    assert!(mta_sts::mx_pattern_matches(
        "mail.example.com",
        "MAIL.EXAMPLE.COM."
    ));
    assert!(mta_sts::mx_pattern_matches(
        "*.Example.NET",
        "mx1.example.net."
    ));
    assert!(!mta_sts::mx_pattern_matches(
        "*.example.net",
        ".example.net"
    ));
    assert!(!mta_sts::mx_pattern_matches(
        "*.example.net",
        "mx1example.net"
    ));
    assert!(!mta_sts::mx_pattern_matches("*.", "a."));
    assert!(!mta_sts::mx_pattern_matches("", ""));
    assert!(!mta_sts::mx_pattern_matches("mail.example.com", ""));
    assert!(!mta_sts::mx_pattern_matches(
        "x*.example.net",
        "xa.example.net"
    ));
}

#[test]
fn coverage_all_good_and_null_mx() {
    let cov = mta_sts::check_mx_coverage(
        &["*.mail.example.com"],
        &["a.mail.example.com.", "B.mail.example.com"],
    );
    assert!(
        cov.problems.is_empty() && cov.uncovered_hosts.is_empty() && cov.unused_patterns.is_empty()
    );
    let cov = mta_sts::check_mx_coverage(&["mx.example.com"], &["", "."]);
    assert_eq!(cov.unused_patterns, ["mx.example.com"]);
    assert!(cov.uncovered_hosts.is_empty());
    let cov = mta_sts::check_mx_coverage::<&str, &str>(&[], &["mx.example.com", "MX.example.com."]);
    assert_eq!(cov.uncovered_hosts, ["mx.example.com"], "reported once");
}

#[test]
fn generator() {
    let g = mta_sts::generate(
        Mode::Enforce,
        &["MX1.example.com.", "*.mail.example.net", "mx1.example.com"],
        604800,
    )
    .expect("valid");
    assert_eq!(
        g.policy,
        "version: STSv1\r\nmode: enforce\r\nmx: mx1.example.com\r\nmx: *.mail.example.net\r\nmax_age: 604800\r\n"
    );
    assert_eq!(g.id.len(), 32);
    assert_eq!(g.txt, format!("v=STSv1; id={}", g.id));
    let parsed = mta_sts::parse_policy(&g.policy);
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert!(mta_sts::parse_txt(&g.txt).problems.is_empty());

    // Same input, same id; any change, new id.
    let again = mta_sts::generate(
        Mode::Enforce,
        &["mx1.example.com", "*.mail.example.net"],
        604800,
    )
    .expect("valid");
    assert_eq!(again.id, g.id);
    let testing = mta_sts::generate(
        Mode::Testing,
        &["mx1.example.com", "*.mail.example.net"],
        604800,
    )
    .expect("valid");
    assert_ne!(testing.id, g.id);

    // Bounds from SPEC §8.2.
    assert!(mta_sts::generate(Mode::Testing, &["a.example"], 86_400).is_ok());
    assert!(mta_sts::generate(Mode::Testing, &["a.example"], 31_557_600).is_ok());
    assert!(mta_sts::generate(Mode::Testing, &["a.example"], 86_399).is_err());
    assert!(mta_sts::generate(Mode::Testing, &["a.example"], 31_557_601).is_err());

    // mx is required unless mode none.
    let err = mta_sts::generate::<&str>(Mode::Enforce, &[], 86_400).expect_err("no mx");
    assert_eq!(err[0].code, MtaStsCode::MissingMx);
    let none = mta_sts::generate::<&str>(Mode::None, &[], 86_400).expect("none without mx");
    assert!(mta_sts::parse_policy(&none.policy).is_valid());
    let err = mta_sts::generate(Mode::Enforce, &["bad host"], 86_400).expect_err("bad mx");
    assert_eq!(err[0].code, MtaStsCode::InvalidMxPattern);
}

#[test]
fn codes_are_snake_case() {
    for c in MtaStsCode::ALL {
        let s = c.as_str();
        assert!(
            s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{s}"
        );
    }
}
