//! One test per issue code (and the parse rules behind them), plus the generator.

use mailward_dmarc::{
    GenerateError, GenerateOptions, IssueCode, Policy, PsdFlag, RecordStatus, Severity,
    SubdomainPolicyOption, generate_record, parse_record, to_character_strings,
};

fn has(text: &str, code: IssueCode) -> bool {
    parse_record(text).has_issue(code)
}

#[test]
fn version_codes() {
    assert!(has("p=none", IssueCode::MissingV));
    assert!(has("", IssueCode::MissingV));
    assert!(has("v=DMARC2; p=none", IssueCode::InvalidVersion));
    assert!(has("v=dmarc1; p=none", IssueCode::InvalidVersion));
    assert!(has("p=reject; v=DMARC1", IssueCode::VersionNotFirst));
    assert_eq!(
        parse_record("v=DMARC1 p=none").status,
        RecordStatus::NotDmarc
    );
    assert_eq!(parse_record("V=DMARC1; p=none").status, RecordStatus::Valid);
    assert_eq!(parse_record("v=DMARC1").status, RecordStatus::NoPolicy);
    assert_eq!(parse_record("v=DMARC1;").status, RecordStatus::NoPolicy);
    let r = parse_record(" v=DMARC1; p=none");
    assert_eq!(r.status, RecordStatus::Valid);
    assert!(r.has_issue(IssueCode::LeadingWhitespace));
}

#[test]
fn p_need_not_follow_v() {
    let r = parse_record("v=DMARC1; rua=mailto:a@example.com; p=reject");
    assert_eq!(r.status, RecordStatus::Valid);
    assert_eq!(r.p, Some(Policy::Reject));
}

#[test]
fn malformed_and_duplicate_and_unknown() {
    assert!(has("v=DMARC1; p=none; junk", IssueCode::MalformedTag));
    assert!(has("v=DMARC1; p=none;; sp=none", IssueCode::MalformedTag));
    assert!(has("v=DMARC1; p=none; 1x=2", IssueCode::MalformedTag));
    assert!(!has("v=DMARC1; p=none; ", IssueCode::MalformedTag));
    let r = parse_record("v=DMARC1; p=none; p=reject");
    assert!(r.has_issue(IssueCode::DuplicateTag));
    assert_eq!(r.p, Some(Policy::None));
    let r = parse_record("v=DMARC1; p=none; foo=bar");
    assert!(r.has_issue(IssueCode::UnknownTag));
    assert_eq!(r.unknown_tags, vec!["foo".to_string()]);
    assert_eq!(r.status, RecordStatus::Valid);
}

#[test]
fn policy_codes() {
    let r = parse_record("v=DMARC1; rua=mailto:a@example.com");
    assert!(r.has_issue(IssueCode::MissingPolicy));
    assert!(r.has_issue(IssueCode::PolicyTreatedAsNone));
    assert_eq!(r.status, RecordStatus::TreatAsPNone);
    let r = parse_record("v=DMARC1; p=bogus");
    assert!(r.has_issue(IssueCode::InvalidPolicy));
    assert_eq!(r.status, RecordStatus::NoPolicy);
    assert_eq!(r.p, None);
    // An invalid rua does not rescue an invalid p.
    let r = parse_record("v=DMARC1; p=bogus; rua=nonsense");
    assert_eq!(r.status, RecordStatus::NoPolicy);
    // Invalid sp / np: RFC 9989 §4.10.1 treats them like an invalid p.
    let r = parse_record("v=DMARC1; p=reject; sp=maybe; rua=mailto:a@example.com");
    assert!(r.has_issue(IssueCode::InvalidSubdomainPolicy));
    assert_eq!(r.status, RecordStatus::TreatAsPNone);
    assert_eq!(r.effective_sp(), Some(Policy::None));
    let r = parse_record("v=DMARC1; p=reject; np=maybe");
    assert!(r.has_issue(IssueCode::InvalidNonexistentPolicy));
    assert_eq!(r.status, RecordStatus::NoPolicy);
    let r = parse_record("v=DMARC1; p=reject; sp=none; np=quarantine");
    assert_eq!(r.effective_sp(), Some(Policy::None));
    assert_eq!(r.effective_np(), Some(Policy::Quarantine));
    let r = parse_record("v=DMARC1; p=reject; sp=none");
    assert_eq!(r.effective_np(), Some(Policy::None));
}

#[test]
fn tag_value_codes() {
    assert!(has(
        "v=DMARC1; p=none; adkim=x",
        IssueCode::InvalidAlignment
    ));
    assert!(has("v=DMARC1; p=none; aspf=", IssueCode::InvalidAlignment));
    assert!(has(
        "v=DMARC1; p=none; fo=2; ruf=mailto:a@example.com",
        IssueCode::InvalidFo
    ));
    let r = parse_record("v=DMARC1; p=none; fo=D:S; ruf=mailto:a@example.com");
    assert_eq!(r.fo, "d:s");
    assert!(!r.has_issue(IssueCode::InvalidFo));
    assert!(has("v=DMARC1; p=none; fo=1", IssueCode::FoWithoutRuf));
    assert!(has("v=DMARC1; p=none; psd=x", IssueCode::InvalidPsd));
    assert_eq!(parse_record("v=DMARC1; p=none; psd=Y").psd, PsdFlag::Yes);
    assert!(has("v=DMARC1; p=none; t=maybe", IssueCode::InvalidTesting));
    let r = parse_record("v=DMARC1; p=reject; t=y");
    assert!(r.testing);
    assert!(r.has_issue(IssueCode::TestingMode));
}

#[test]
fn uri_codes() {
    let r = parse_record("v=DMARC1; p=none; rua=mailto:a@example.com, mailto:nohost, bad uri");
    assert_eq!(r.rua.len(), 3);
    assert!(r.rua[0].valid);
    assert_eq!(r.rua[0].host.as_deref(), Some("example.com"));
    assert!(!r.rua[1].valid);
    assert!(!r.rua[2].valid);
    assert_eq!(
        r.issues
            .iter()
            .filter(|i| i.code == IssueCode::InvalidUri)
            .count(),
        2
    );
    assert!(has(
        "v=DMARC1; p=none; rua=mailto:@example.com",
        IssueCode::InvalidUri
    ));
    assert!(has(
        "v=DMARC1; p=none; rua=mailto:a@1.2.3.4",
        IssueCode::InvalidUri
    ));
    assert!(has(
        "v=DMARC1; p=none; rua=https://example.com/r",
        IssueCode::UnsupportedUriScheme
    ));
    assert!(has("v=DMARC1; p=none; rua=", IssueCode::EmptyUriList));
    let r = parse_record("v=DMARC1; p=none; rua=mailto:d%2Bx@Example.COM.");
    assert_eq!(r.rua[0].address.as_deref(), Some("d+x@Example.COM."));
    assert_eq!(r.rua[0].host.as_deref(), Some("example.com"));
}

#[test]
fn size_limit_codes() {
    let r = parse_record("v=DMARC1; p=none; rua=mailto:a@example.com!10m");
    let limit = r.rua[0].size_limit.clone().expect("limit");
    assert_eq!(limit.bytes, Some(10 * 1024 * 1024));
    assert!(r.has_issue(IssueCode::LegacySizeLimit));
    assert!(r.rua[0].valid);
    for bad in [
        "!",
        "!10x",
        "!m",
        "!99999999999999999999",
        "!18446744073709551615t",
    ] {
        let r = parse_record(&format!("v=DMARC1; p=none; rua=mailto:a@example.com{bad}"));
        assert!(r.has_issue(IssueCode::InvalidSizeLimit), "{bad}");
    }
    assert_eq!(
        parse_record("v=DMARC1; p=none; rua=mailto:a@example.com!500").rua[0]
            .size_limit
            .clone()
            .and_then(|l| l.bytes),
        Some(500)
    );
}

#[test]
fn legacy_codes() {
    let r = parse_record("v=DMARC1; p=reject; pct=50; rf=afrf; ri=3600");
    assert!(r.has_issue(IssueCode::LegacyTagPct));
    assert!(r.has_issue(IssueCode::LegacyTagRf));
    assert!(r.has_issue(IssueCode::LegacyTagRi));
    assert_eq!(r.pct, Some(50));
    assert_eq!(r.rf.as_deref(), Some("afrf"));
    assert_eq!(r.ri, Some(3600));
    assert_eq!(r.legacy_tags, vec!["pct", "rf", "ri"]);
    assert_eq!(r.status, RecordStatus::Valid);
    assert!(has("v=DMARC1; p=reject; pct=101", IssueCode::InvalidPct));
    assert!(has("v=DMARC1; p=reject; pct=+5", IssueCode::InvalidPct));
    assert!(has("v=DMARC1; p=reject; rf=xml", IssueCode::InvalidRf));
    assert!(has("v=DMARC1; p=reject; ri=-1", IssueCode::InvalidRi));
}

#[test]
fn codes_are_stable_snake_case() {
    let r = parse_record("v=DMARC1; p=bogus");
    let json = serde_json::to_value(&r.issues).expect("serialize");
    assert_eq!(json[0]["code"], "invalid_policy");
    assert_eq!(json[0]["severity"], "error");
    assert_eq!(IssueCode::LegacyTagPct.as_str(), "legacy_tag_pct");
    assert_eq!(
        serde_json::to_value(IssueCode::InvalidNonexistentPolicy).expect("ser"),
        IssueCode::InvalidNonexistentPolicy.as_str()
    );
    assert_eq!(r.issues[0].severity, Severity::Error);
}

#[test]
fn hostile_input_does_not_panic() {
    let long = "v=DMARC1; p=none; rua=".to_string() + &"mailto:a@example.com,".repeat(5000);
    let r = parse_record(&long);
    assert_eq!(r.rua.len(), 100);
    for text in [
        "v=DMARC1; p=none; rua=mailto:%",
        "v=DMARC1; p=none; rua=mailto:%e9@example.com",
        "v=DMARC1; p=none; rua=mailto:é@exämple.com!ß",
        "v=DMARC1;=;==;;;",
        "v=DMARC1; p=none; rua=!!!,,,",
        "\u{0}\u{ffff}",
        "v=DMARC1; p=ﬀ",
    ] {
        let _ = parse_record(text);
    }
    let _ = mailward_dmarc::parse_txt(&[vec![0xff, 0xfe], b"v=DMARC1".to_vec()]);
}

fn options() -> GenerateOptions {
    GenerateOptions {
        policy: Policy::Reject,
        subdomain_policy: SubdomainPolicyOption::Same,
        pct: 100,
        strict_spf: false,
        strict_dkim: false,
        rua: vec!["reports@dmarc.mailward.example".to_string()],
        ruf: Vec::new(),
    }
}

#[test]
fn generator_exact_output() {
    assert_eq!(
        generate_record(&options()).expect("record"),
        "v=DMARC1; p=reject; rua=mailto:reports@dmarc.mailward.example"
    );
    let mut o = options();
    o.policy = Policy::Quarantine;
    o.subdomain_policy = SubdomainPolicyOption::Reject;
    o.pct = 25;
    o.strict_spf = true;
    o.strict_dkim = true;
    o.rua.push("mailto:Ops@Example.com".to_string());
    o.ruf = vec!["forensic,x@example.com".to_string()];
    assert_eq!(
        generate_record(&o).expect("record"),
        "v=DMARC1; p=quarantine; sp=reject; adkim=s; aspf=s; t=y; \
         rua=mailto:reports@dmarc.mailward.example,mailto:Ops@Example.com; \
         ruf=mailto:forensic%2Cx@example.com"
    );
}

#[test]
fn generator_pct_mapping() {
    let mut o = options();
    o.pct = 0;
    assert!(generate_record(&o).expect("record").contains("; t=y"));
    o.pct = 99;
    assert!(generate_record(&o).expect("record").contains("; t=y"));
    o.pct = 100;
    assert!(!generate_record(&o).expect("record").contains("t="));
    o.pct = 101;
    assert_eq!(generate_record(&o), Err(GenerateError::InvalidPct));
    // Nothing to weaken under p=none with sp same: no t tag.
    o.pct = 50;
    o.policy = Policy::None;
    assert!(!generate_record(&o).expect("record").contains("t="));
    // sp equal to p is not repeated.
    o.subdomain_policy = SubdomainPolicyOption::None;
    assert!(!generate_record(&o).expect("record").contains("sp="));
}

#[test]
fn generator_round_trips_and_never_emits_legacy() {
    for pct in [0, 50, 100] {
        for policy in [Policy::None, Policy::Quarantine, Policy::Reject] {
            let mut o = options();
            o.pct = pct;
            o.policy = policy;
            o.subdomain_policy = SubdomainPolicyOption::Quarantine;
            let text = generate_record(&o).expect("record");
            let r = parse_record(&text);
            assert_eq!(r.status, RecordStatus::Valid, "{text}");
            assert!(
                r.issues.iter().all(|i| i.severity == Severity::Info),
                "{text}: {:?}",
                r.issues
            );
            assert_eq!(r.p, Some(policy));
            assert!(r.legacy_tags.is_empty());
        }
    }
}

#[test]
fn generator_rejects_bad_addresses() {
    for bad in [
        "",
        "nobody",
        "a@",
        "@example.com",
        "a@exa mple.com",
        "a@example.com?subject=x",
        "a@1.2.3.4",
    ] {
        let mut o = options();
        o.rua = vec![bad.to_string()];
        assert!(
            matches!(
                generate_record(&o),
                Err(GenerateError::InvalidAddress { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn character_strings_split_at_255() {
    let long = "x".repeat(600);
    let parts = to_character_strings(&long);
    assert_eq!(
        parts.iter().map(String::len).collect::<Vec<_>>(),
        vec![255, 255, 90]
    );
    assert_eq!(to_character_strings(""), vec![String::new()]);
}
