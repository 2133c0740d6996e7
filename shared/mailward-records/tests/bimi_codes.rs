//! One or more cases per BIMI problem code, and the generator.

use mailward_records::ProblemCode;
use mailward_records::bimi::{self, BimiCode, DECLINATION_RECORD};
use std::collections::BTreeSet;

fn codes(record: &str) -> Vec<BimiCode> {
    bimi::parse(record)
        .problems
        .iter()
        .map(|p| p.code)
        .collect()
}

const GOOD: &str = "v=BIMI1; l=https://example.com/logo.svg; a=https://example.com/vmc.pem";

#[test]
fn good_record_has_no_problems() {
    let rec = bimi::parse(GOOD);
    assert!(rec.problems.is_empty(), "{:?}", rec.problems);
    let rec = bimi::parse(
        "v=BIMI1; l=https://example.com/logo.svg; a=https://example.com/vmc.pem; avp=personal",
    );
    assert!(rec.problems.is_empty(), "{:?}", rec.problems);
    assert_eq!(rec.avatar_preference.as_deref(), Some("personal"));
}

#[test]
fn each_code() {
    let table: Vec<(&str, BimiCode)> = vec![
        (
            "v=BIMI1; junk; l=https://e.com/l.svg",
            BimiCode::SyntaxError,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg; L=https://e.com/m.svg",
            BimiCode::DuplicateTag,
        ),
        ("l=https://e.com/l.svg", BimiCode::MissingVersion),
        ("v=; l=https://e.com/l.svg", BimiCode::InvalidVersion),
        ("v=BIMI2; l=https://e.com/l.svg", BimiCode::InvalidVersion),
        ("l=https://e.com/l.svg; v=BIMI1", BimiCode::VersionNotFirst),
        ("v=BIMI1; a=https://e.com/v.pem", BimiCode::MissingLogo),
        ("v=BIMI1; l=", BimiCode::EmptyLogo),
        ("v=BIMI1; l=not a url", BimiCode::InvalidLogoUrl),
        (
            "v=BIMI1; l=https://exa mple.com/l.svg",
            BimiCode::InvalidLogoUrl,
        ),
        ("v=BIMI1; l=https://", BimiCode::InvalidLogoUrl),
        ("v=BIMI1; l=http://e.com/l.svg", BimiCode::LogoNotHttps),
        ("v=BIMI1; l=data:image/svg+xml,abc", BimiCode::LogoNotHttps),
        (
            "v=BIMI1; l=https://e.com/logo.png; a=https://e.com/v.pem",
            BimiCode::LogoNotSvg,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg; a=vmc.pem",
            BimiCode::InvalidCertificateUrl,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg; a=http://e.com/v.pem",
            BimiCode::CertificateNotHttps,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg",
            BimiCode::MissingCertificate,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg; a=",
            BimiCode::MissingCertificate,
        ),
        (
            "v=BIMI1; l=https://e.com/l.svg; a=https://e.com/v.pem; avp=logo",
            BimiCode::InvalidAvatarPreference,
        ),
    ];
    let mut seen = BTreeSet::new();
    for (record, code) in &table {
        let got = codes(record);
        assert!(got.contains(code), "{record}: expected {code}, got {got:?}");
        seen.insert(*code);
    }
    let lookup = bimi::parse_records(&[GOOD, "v=BIMI1; l=https://e.com/other.svg"]);
    assert!(lookup.record.is_none());
    assert_eq!(lookup.problems[0].code, BimiCode::MultipleRecords);
    seen.insert(BimiCode::MultipleRecords);
    for code in BimiCode::ALL {
        assert!(seen.contains(code), "no test case for {code}");
    }
}

#[test]
fn declination() {
    let rec = bimi::parse(DECLINATION_RECORD);
    assert!(
        rec.declined && rec.is_valid() && rec.problems.is_empty(),
        "{:?}",
        rec.problems
    );
    let rec = bimi::parse("v=BIMI1;l=;a=");
    assert!(rec.declined && rec.problems.is_empty());
    // An empty logo with a certificate is not a declination and not an error.
    let rec = bimi::parse("v=BIMI1; l=; a=https://e.com/v.pem");
    assert!(!rec.declined && rec.is_valid(), "{:?}", rec.problems);
}

#[test]
fn records_lookup() {
    let lookup = bimi::parse_records(&["v=spf1 -all", GOOD]);
    assert_eq!(lookup.record.map(|r| r.is_valid()), Some(true));
    assert!(lookup.problems.is_empty());
    let none = bimi::parse_records(&["hello"]);
    assert!(none.record.is_none() && none.problems.is_empty());
}

#[test]
fn generator() {
    let g = bimi::generate(
        "https://example.com/bimi/logo.svg",
        Some("https://example.com/bimi/vmc.pem"),
    )
    .expect("valid");
    assert_eq!(
        g.value,
        "v=BIMI1; l=https://example.com/bimi/logo.svg; a=https://example.com/bimi/vmc.pem"
    );
    assert!(g.warnings.is_empty());
    assert!(bimi::parse(&g.value).problems.is_empty());

    let g = bimi::generate("https://example.com/logo.svg", None).expect("valid");
    assert_eq!(g.value, "v=BIMI1; l=https://example.com/logo.svg");
    assert!(!g.value.contains("a="), "a= only with a certificate");
    assert_eq!(g.warnings[0].code, BimiCode::MissingCertificate);
    let g = bimi::generate("https://example.com/logo.svg", Some("  ")).expect("valid");
    assert!(!g.value.contains("a="));

    let g = bimi::generate("https://example.com/logo.png", Some("https://e.com/v.pem"))
        .expect("warning only");
    assert_eq!(g.warnings[0].code, BimiCode::LogoNotSvg);

    let err = bimi::generate("http://example.com/logo.svg", None).expect_err("http");
    assert_eq!(err[0].code, BimiCode::LogoNotHttps);
    let err = bimi::generate("https://e.com/l.svg", Some("ftp://e.com/v.pem")).expect_err("ftp");
    assert!(err.iter().any(|p| p.code == BimiCode::CertificateNotHttps));
    let err = bimi::generate("https://e.com/a;b.svg", None).expect_err("semicolon");
    assert!(err.iter().any(|p| p.code == BimiCode::InvalidLogoUrl));
    let err = bimi::generate("", None).expect_err("empty");
    assert!(err.iter().any(|p| p.code == BimiCode::InvalidLogoUrl));
    // Spaces are percent-encoded by the URL serializer, so the record stays one token.
    let g = bimi::generate("https://e.com/my logo.svg", Some("https://e.com/v.pem")).expect("ok");
    assert!(g.value.contains("my%20logo.svg"), "{}", g.value);
}

#[test]
fn code_strings_are_stable() {
    let names: Vec<&str> = BimiCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        names,
        [
            "syntax_error",
            "duplicate_tag",
            "missing_version",
            "invalid_version",
            "version_not_first",
            "missing_logo",
            "empty_logo",
            "invalid_logo_url",
            "logo_not_https",
            "logo_not_svg",
            "invalid_certificate_url",
            "certificate_not_https",
            "missing_certificate",
            "invalid_avatar_preference",
            "multiple_records",
        ]
    );
}
