//! Failure reports from public samples (parsedmarc's `samples/failure`, Apache-2.0; see
//! `fixtures/failure/SOURCES.md`): LinkedIn's and a German relay's ARF reports, Netease's
//! (`multipart/mixed` with a base64 feedback part), and Exim's plain text without ARF.

use mailward_reports::failure::{parse, redact_local_parts};
use mailward_reports::{Content, Limits, extract};

fn sample(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/failure/parsedmarc/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn linkedins_arf_report_reads_whole() {
    let r = parse(&sample("dmarc_ruf_report_linkedin.eml")).expect("a failure report");
    assert!(r.arf);
    assert_eq!(r.feedback_type.as_deref(), Some("auth-failure"));
    assert_eq!(r.auth_failure.as_deref(), Some("dmarc"));
    assert_eq!(r.reported_domain.as_deref(), Some("example.com"));
    assert_eq!(r.source_ip.as_deref(), Some("10.10.10.10"));
    assert_eq!(
        r.arrival_date.as_deref(),
        Some("Tue, 30 Apr 2019 02:09:00 +0000")
    );
    assert_eq!(r.original_mail_from, None, "empty in the report");
    assert_eq!(r.original_rcpt_to, ["recipient@linkedin.com"]);
    assert_eq!(r.delivery_result.as_deref(), Some("delivered"));
    let headers = r.original_headers.expect("headers");
    assert!(headers.contains("From: Sender <sender@example.com>"));
    assert!(headers.contains("X-Linkedin-fe: false"));
    assert!(!headers.contains("HTML Text"), "never the body");
    assert!(r.unread.is_empty(), "{:?}", r.unread);
}

#[test]
fn neteases_base64_feedback_part_reads() {
    let r = parse(&sample("[Netease DMARC Failure Report] Rent Reminder.eml")).unwrap();
    assert!(r.arf);
    assert_eq!(r.reported_domain.as_deref(), Some("cardinal.com"));
    assert_eq!(r.source_ip.as_deref(), Some("167.89.69.24"));
    assert_eq!(r.dkim_domain.as_deref(), Some("entrata.com"));
    assert_eq!(r.delivery_result.as_deref(), Some("delivered"));
    assert_eq!(r.identity_alignment.as_deref(), Some("spf,dkim"));
    assert_eq!(
        r.original_mail_from.as_deref(),
        Some("bounces+1137616-c1ad-xsj399=163.com@email.entrata.com")
    );
    // Netease leaves Auth-Failure out: said, not guessed.
    assert_eq!(r.auth_failure, None);
    assert_eq!(r.unread, ["Auth-Failure"]);
    let headers = r.original_headers.unwrap();
    assert!(headers.contains("Subject: Rent Reminder"));
}

#[test]
fn a_relays_arf_report_reads() {
    let name =
        "DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml";
    let r = parse(&sample(name)).unwrap();
    assert_eq!(r.reported_domain.as_deref(), Some("domain.de"));
    assert_eq!(r.delivery_result.as_deref(), Some("smg-policy-action"));
    assert_eq!(r.original_rcpt_to, ["peter.pan@domain.de"]);
    assert!(r.original_headers.is_some());
}

#[test]
fn exims_plain_text_report_reads_what_it_can_and_says_what_not() {
    let r = parse(&sample("exim_plain_text_only_no_arf_part.eml")).unwrap();
    assert!(!r.arf);
    assert_eq!(r.reported_domain.as_deref(), Some("example.com"));
    assert_eq!(r.source_ip.as_deref(), Some("203.0.113.68"));
    assert_eq!(
        r.arrival_date.as_deref(),
        Some("Mon, 07 Apr 2025 23:16:09 +0200")
    );
    let headers = r.original_headers.unwrap();
    assert!(
        headers.starts_with("Received: from [203.0.113.68]"),
        "{headers}"
    );
    assert!(headers.contains("Subject: Payment from your account."));
    assert!(r.unread.iter().any(|u| u.contains("no ARF part")));
    assert!(r.unread.contains(&"Auth-Failure".to_owned()));
}

#[test]
fn every_sample_is_recognised_by_the_container_and_redacts() {
    for name in [
        "dmarc_ruf_report_linkedin.eml",
        "[Netease DMARC Failure Report] Rent Reminder.eml",
    ] {
        let found = extract(&sample(name), &Limits::default());
        assert!(
            found.iter().any(|e| matches!(e.content, Content::Failure)),
            "{name}"
        );
        let headers = parse(&sample(name)).unwrap().original_headers.unwrap();
        let redacted = redact_local_parts(&headers);
        assert!(!redacted.contains("sender@") && !redacted.contains("info@cardinal"));
        assert!(redacted.contains("@example.com") || redacted.contains("@cardinal.com"));
    }
}

#[test]
fn other_mail_is_not_a_failure_report() {
    assert_eq!(
        parse(b"From: a@b.example\r\nSubject: hi\r\n\r\nhello\r\n"),
        None
    );
    assert_eq!(parse(b""), None);
}
