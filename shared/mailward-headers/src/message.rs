//! Reading the pasted input: line endings made CRLF (what signatures were computed over), the
//! header block split from the body, the headers parsed by `mail-parser` (folding and RFC 2047
//! encoded words included).

use crate::auth_results::{AuthResults, parse_header as parse_auth_results, trust};
use crate::received::{Hop, hops};
use crate::signature::{SignatureTags, signature_tags};
use mail_parser::{HeaderName, HeaderValue, MessageParser};
use serde::Serialize;

/// Why the input is not a header block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// No `Name: value` line before the first blank line (e.g. only a body).
    NoHeaders,
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::NoHeaders => f.write_str(
                "no header fields found: paste the message's headers (Name: value lines), optionally followed by a blank line and the body",
            ),
        }
    }
}

/// What the headers say, before any DNS.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Parsed {
    /// The From address.
    pub from: Option<String>,
    /// Its domain (what DMARC protects).
    pub from_domain: Option<String>,
    /// The Return-Path address (the envelope sender SPF checks), if kept.
    pub return_path: Option<String>,
    /// The subject, decoded.
    pub subject: Option<String>,
    /// Message-ID.
    pub message_id: Option<String>,
    /// The Date header (RFC 3339).
    pub date: Option<String>,
    /// The Received hops, in travel order (the sender's server first).
    pub received_hops: Vec<Hop>,
    /// Every Authentication-Results header, top first, with whether it can be trusted.
    pub authentication_results: Vec<AuthResults>,
    /// The authentication service whose results are trusted: the one that added the topmost
    /// Authentication-Results (the final receiver).
    pub trusted_authserv_id: Option<String>,
    /// The DKIM signatures' tags, in header order.
    pub dkim_signatures: Vec<SignatureTags>,
    /// ARC sets found (the highest `i=` of ARC-Seal).
    pub arc_sets: u32,
    /// Whether a body followed the headers.
    pub has_body: bool,
    /// Header fields read.
    pub header_count: usize,
    /// The first List-Unsubscribe field (RFC 2369), unfolded.
    pub list_unsubscribe: Option<String>,
    /// The first List-Unsubscribe-Post field (RFC 8058), unfolded.
    pub list_unsubscribe_post: Option<String>,
}

/// The input made CRLF, the parse, and the raw header fields (name, value) in order.
pub struct Input {
    /// The message with CRLF line endings (what the DKIM and ARC verifiers need).
    pub crlf: Vec<u8>,
    /// What the headers say.
    pub parsed: Parsed,
}

/// Makes every line ending CRLF.
pub fn to_crlf(raw: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 40);
    let bytes = raw.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' && (i == 0 || bytes[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Whether the first line looks like a header field (`Name:` with a printable name).
fn starts_with_header(crlf: &[u8]) -> bool {
    let line_end = crlf
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(crlf.len());
    let line = &crlf[..line_end];
    match line.iter().position(|&b| b == b':') {
        Some(colon) if colon > 0 => line[..colon]
            .iter()
            .all(|&b| (33..=126).contains(&b) && b != b':'),
        _ => false,
    }
}

/// A field's value on one line, trimmed.
fn unfold_value(raw: &str) -> String {
    raw.split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a pasted message or header block.
pub fn parse(raw: &str) -> Result<Input, HeaderError> {
    let trimmed = raw.trim_start_matches(['\r', '\n', ' ', '\t']);
    let crlf = to_crlf(trimmed);
    if !starts_with_header(&crlf) {
        return Err(HeaderError::NoHeaders);
    }
    let has_body = crlf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .is_some_and(|end| crlf.len() > end + 4);
    let message = MessageParser::default()
        .parse_headers(&crlf)
        .ok_or(HeaderError::NoHeaders)?;
    let headers = message.headers();
    if headers.is_empty() {
        return Err(HeaderError::NoHeaders);
    }

    let mut received = Vec::new();
    let mut auth = Vec::new();
    let mut signatures = Vec::new();
    let mut arc_sets = 0u32;
    let mut list_unsubscribe = None;
    let mut list_unsubscribe_post = None;
    for (position, header) in headers.iter().enumerate() {
        let raw_value = String::from_utf8_lossy(
            crlf.get(header.offset_start as usize..header.offset_end as usize)
                .unwrap_or_default(),
        )
        .into_owned();
        match &header.name {
            HeaderName::Received => {
                received.push((position, header.value.as_received().cloned(), raw_value));
            }
            HeaderName::AuthenticationResults => {
                auth.push(parse_auth_results(position, &raw_value));
            }
            HeaderName::DkimSignature => signatures.push(signature_tags(&raw_value)),
            HeaderName::ArcSeal => {
                let tags = signature_tags(&raw_value);
                arc_sets = arc_sets.max(tags.instance.unwrap_or(0));
            }
            name => {
                let slot = match name.as_str() {
                    n if n.eq_ignore_ascii_case("list-unsubscribe") => &mut list_unsubscribe,
                    n if n.eq_ignore_ascii_case("list-unsubscribe-post") => {
                        &mut list_unsubscribe_post
                    }
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = Some(unfold_value(&raw_value));
                }
            }
        }
    }
    let received_by: Vec<(usize, Option<String>)> = received
        .iter()
        .map(|(p, r, _)| {
            (
                *p,
                r.as_ref()
                    .and_then(|r| r.by.as_ref())
                    .map(|b| b.to_string()),
            )
        })
        .collect();
    let trusted_authserv_id = trust(&mut auth, &received_by);
    let from = message
        .from()
        .and_then(|a| a.first())
        .and_then(|a| a.address())
        .map(str::to_owned);
    let from_domain = from
        .as_deref()
        .and_then(|a| a.rsplit_once('@'))
        .map(|(_, d)| d.trim_end_matches('.').to_ascii_lowercase());
    let return_path = match message.return_path() {
        HeaderValue::Text(t) => Some(t.trim_matches(['<', '>', ' ']).to_owned()),
        HeaderValue::TextList(list) => list
            .first()
            .map(|t| t.trim_matches(['<', '>', ' ']).to_owned()),
        HeaderValue::Address(a) => a.first().and_then(|a| a.address()).map(str::to_owned),
        _ => None,
    }
    .filter(|r| !r.is_empty());
    let date = message.date().map(|d| {
        time::OffsetDateTime::from_unix_timestamp(d.to_timestamp())
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            })
            .unwrap_or_default()
    });
    let date_unix = message.date().map(|d| d.to_timestamp());
    Ok(Input {
        parsed: Parsed {
            from,
            from_domain,
            return_path,
            subject: message.subject().map(str::to_owned),
            message_id: message.message_id().map(str::to_owned),
            date,
            received_hops: hops(&received, date_unix),
            authentication_results: auth,
            trusted_authserv_id,
            dkim_signatures: signatures,
            arc_sets,
            has_body,
            header_count: headers.len(),
            list_unsubscribe,
            list_unsubscribe_post,
        },
        crlf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = "Authentication-Results: mx.receiver.example; spf=pass smtp.mailfrom=alice@example.org\nReceived: from mail.example.org (mail.example.org [192.0.2.10])\n\tby mx.receiver.example with ESMTPS id abc\n\tfor <bob@receiver.example>; Tue, 1 Oct 2024 10:00:05 +0000\nAuthentication-Results: mx.receiver.example; dmarc=pass header.from=example.org\nReceived: from laptop (unknown [198.51.100.7])\n\tby mail.example.org with ESMTPSA; Tue, 1 Oct 2024 10:00:07 +0000\nReceived: from client by laptop; Tue, 1 Oct 2024 09:59:58 +0000\nDate: Tue, 1 Oct 2024 09:59:57 +0000\nFrom: =?UTF-8?Q?Alice_=C3=89toile?= <alice@Example.org>\nSubject: =?UTF-8?B?SGVsbG8gd8O2cmxk?=\nReturn-Path: <bounce@example.org>\n\nBody line\n";

    #[test]
    fn hops_come_in_travel_order_with_delays_and_skew() {
        let input = parse(MESSAGE).unwrap();
        let p = &input.parsed;
        assert_eq!(p.received_hops.len(), 3);
        let [first, second, third] = &p.received_hops[..] else {
            panic!()
        };
        assert_eq!(first.hop, 1);
        assert_eq!(first.delay_ms, Some(1000), "Date to the first stamp");
        // The second server's clock is ahead: 9 s after the first stamp.
        assert_eq!(second.delay_ms, Some(9000));
        assert_eq!(second.from_ip.as_deref(), Some("198.51.100.7"));
        // The receiver stamped 2 s *before* the second server: no negative delay, skew shown.
        assert_eq!(third.delay_ms, Some(0));
        assert_eq!(third.clock_skew_ms, Some(2000));
        assert_eq!(third.from_ip.as_deref(), Some("192.0.2.10"));
        assert_eq!(third.by.as_deref(), Some("mx.receiver.example"));
        assert!(
            third.raw.starts_with("from mail.example.org"),
            "{}",
            third.raw
        );
    }

    #[test]
    fn encoded_words_folding_and_the_envelope_are_read() {
        let input = parse(MESSAGE).unwrap();
        let p = &input.parsed;
        assert_eq!(p.subject.as_deref(), Some("Hello wörld"));
        assert_eq!(p.from.as_deref(), Some("alice@Example.org"));
        assert_eq!(p.from_domain.as_deref(), Some("example.org"));
        assert_eq!(p.return_path.as_deref(), Some("bounce@example.org"));
        assert!(p.has_body);
        assert!(input.crlf.windows(2).any(|w| w == b"\r\n"));
        assert!(
            !input
                .crlf
                .windows(2)
                .any(|w| w[1] == b'\n' && w[0] != b'\r')
        );
        assert_eq!(
            p.trusted_authserv_id.as_deref(),
            Some("mx.receiver.example")
        );
        assert!(p.authentication_results[0].trusted);
        // The same service's name below its own acceptance: the sender could have written it.
        assert!(!p.authentication_results[1].trusted);
    }

    #[test]
    fn a_body_without_headers_or_no_received_lines_are_handled() {
        assert_eq!(
            parse("\n\nJust a body, no headers at all.\n").err(),
            Some(HeaderError::NoHeaders)
        );
        assert_eq!(parse("hello there").err(), Some(HeaderError::NoHeaders));
        let input = parse("From: a@b.example\nSubject: hi\n").unwrap();
        assert!(input.parsed.received_hops.is_empty());
        assert!(!input.parsed.has_body);
        assert!(input.parsed.trusted_authserv_id.is_none());
    }
}
