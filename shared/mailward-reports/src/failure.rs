//! DMARC failure reports (RFC 9991, formerly RFC 6591: the Authentication Failure Reporting
//! Format over ARF, RFC 5965). A report is a `multipart/report` (some reporters send
//! `multipart/mixed`) with a human-readable part, a `message/feedback-report` part of
//! `Name: value` fields, and the original message (`message/rfc822`) or its headers
//! (`text/rfc822-headers`).
//!
//! What is kept is the feedback fields and the original **headers**, never a body: failure
//! reports carry personal data, so nothing beyond the headers is read, and [`redact_local_parts`]
//! removes the local parts of addresses (RFC 6590) unless the organization chose otherwise.
//!
//! Some MTAs (Exim's DMARC module, for one) send plain text without an ARF part: the domain,
//! address and date are read from its `Name: value` lines and the headers from the copy it
//! quotes; what could not be read is listed in [`FailureReport::unread`].

use mail_parser::{MessageParser, MimeHeaders as _, PartType};

/// Largest original-headers block kept (bytes).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

pub use mailward_domain::failure_reports::FailureReport;

/// Reads a failure report from a whole message; `None` when it is not one.
pub fn parse(message: &[u8]) -> Option<FailureReport> {
    let parsed = MessageParser::default().parse(message)?;
    let mut report = FailureReport::default();
    let mut plain: Option<String> = None;
    for part in &parsed.parts {
        let kind = crate::mime::part_type(part);
        match (kind.as_str(), &part.body) {
            ("message/feedback-report", _) => {
                report.arf = true;
                read_fields(&mut report, &String::from_utf8_lossy(part.contents()));
            }
            ("message/rfc822" | "message/global", PartType::Message(inner)) => {
                report.original_headers = Some(headers_of(inner.raw_message()));
            }
            ("message/rfc822" | "text/rfc822-headers" | "message/global-headers", _) => {
                report.original_headers = Some(headers_of(part.contents()));
            }
            ("text/plain", _) if plain.is_none() && part.attachment_name().is_none() => {
                plain = Some(String::from_utf8_lossy(part.contents()).into_owned());
            }
            _ => {}
        }
    }
    if !report.arf {
        let text = plain?;
        read_plain(&mut report, &text)?;
    }
    note_unread(&mut report);
    Some(report)
}

/// The header block of a message: everything up to the first empty line, capped.
fn headers_of(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let end = text
        .find("\r\n\r\n")
        .or_else(|| text.find("\n\n"))
        .unwrap_or(text.len());
    let mut block = text[..end].trim_start_matches(['\r', '\n']).to_owned();
    if block.len() > MAX_HEADER_BYTES {
        let mut cut = MAX_HEADER_BYTES;
        while !block.is_char_boundary(cut) {
            cut -= 1;
        }
        block.truncate(cut);
    }
    block
}

/// `Name: value` fields with folded continuation lines (RFC 5322 §2.2.3).
fn fields(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = out.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':')
            && !name.is_empty()
            && !name.contains(' ')
        {
            out.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    out
}

fn some(value: &str) -> Option<String> {
    let v = value
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim();
    (!v.is_empty()).then(|| v.to_owned())
}

fn read_fields(report: &mut FailureReport, text: &str) {
    for (name, value) in fields(text) {
        let slot = match name.as_str() {
            "feedback-type" => &mut report.feedback_type,
            "auth-failure" => &mut report.auth_failure,
            "reported-domain" => &mut report.reported_domain,
            "source-ip" => &mut report.source_ip,
            "arrival-date" | "received-date" => &mut report.arrival_date,
            "original-mail-from" => &mut report.original_mail_from,
            "dkim-domain" => &mut report.dkim_domain,
            "dkim-selector" => &mut report.dkim_selector,
            "dkim-identity" => &mut report.dkim_identity,
            "spf-dns" => &mut report.spf_dns,
            "delivery-result" => &mut report.delivery_result,
            "identity-alignment" => &mut report.identity_alignment,
            "user-agent" => &mut report.user_agent,
            "original-rcpt-to" => {
                report.original_rcpt_to.extend(some(&value));
                continue;
            }
            _ => continue,
        };
        if slot.is_none() {
            *slot = some(&value);
        }
    }
}

/// A plain-text report (no ARF part): the summary's `Name: value` lines, and the headers it
/// quotes after a line announcing them. `None` when nothing says it is a failure report.
fn read_plain(report: &mut FailureReport, text: &str) -> Option<()> {
    let lower = text.to_ascii_lowercase();
    if !lower.contains("dmarc") {
        return None;
    }
    let (summary, quoted) = match lower.find("headers") {
        Some(at) => {
            let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            (&text[..at], Some(&text[line_end..]))
        }
        None => (text, None),
    };
    // The summary's names have spaces (`Sender Domain: …`).
    for line in summary.lines() {
        if let Some((name, value)) = line.trim().split_once(':') {
            let slot = match name.trim().to_ascii_lowercase().as_str() {
                "sender domain" | "reported domain" => &mut report.reported_domain,
                "sender ip address" | "source ip address" => &mut report.source_ip,
                "received date" | "arrival date" => &mut report.arrival_date,
                _ => continue,
            };
            if slot.is_none() {
                *slot = some(value);
            }
        }
    }
    report.original_headers = quoted
        .map(|q| headers_of(q.trim_start_matches(['\r', '\n']).as_bytes()))
        .filter(|h| !h.is_empty());
    report.feedback_type = Some("auth-failure".into());
    Some(())
}

fn note_unread(report: &mut FailureReport) {
    let checks = [
        (
            !report.arf,
            "the report has no ARF part (RFC 6591): only its text was read",
        ),
        (report.auth_failure.is_none(), "Auth-Failure"),
        (report.reported_domain.is_none(), "Reported-Domain"),
        (report.source_ip.is_none(), "Source-IP"),
        (report.arrival_date.is_none(), "Arrival-Date"),
        (report.original_headers.is_none(), "the original headers"),
    ];
    for (missing, what) in checks {
        if missing {
            report.unread.push(what.to_owned());
        }
    }
}

/// Replaces the local part of every address in `text` with `redacted` (RFC 6590 §3): the
/// domains stay, who wrote or received the mail does not.
pub fn redact_local_parts(text: &str) -> String {
    const LOCAL: &[u8] = b"!#$%&'*+-/=?^_`{|}~.";
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices('@') {
        let mut start = at;
        while start > copied
            && (bytes[start - 1].is_ascii_alphanumeric() || LOCAL.contains(&bytes[start - 1]))
        {
            start -= 1;
        }
        let domain_follows = bytes.get(at + 1).is_some_and(u8::is_ascii_alphanumeric);
        if start == at || !domain_follows {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str("redacted");
        copied = at;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_parts_are_redacted_and_domains_kept() {
        assert_eq!(
            redact_local_parts("From: Ann <ann.lee+x@example.com>, bob@b.example; @home"),
            "From: Ann <redacted@example.com>, redacted@b.example; @home"
        );
        assert_eq!(redact_local_parts("no address"), "no address");
    }

    #[test]
    fn folded_fields_are_joined() {
        let f = fields("Feedback-Type: auth-failure\nAuthentication-Results: a;\n\tdkim=fail\n");
        assert_eq!(
            f[1],
            ("authentication-results".into(), "a; dkim=fail".into())
        );
    }
}
