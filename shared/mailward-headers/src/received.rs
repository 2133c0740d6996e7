//! The Received hops in travel order, with the delay of each: the time between the previous
//! server's stamp (or the Date header, for the first) and this one's. A clock that runs behind
//! never yields a negative delay: the delay is 0 and the difference is shown as clock skew.

use mail_parser::{Host, Received};
use serde::Serialize;

/// One Received hop.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Hop {
    /// 1 for the first server the message met, counting towards the recipient.
    pub hop: u32,
    /// Who handed the message over (the name it gave, or its reverse DNS).
    pub from: Option<String>,
    /// The connecting address as the receiving server saw it.
    pub from_ip: Option<String>,
    /// The HELO/EHLO name.
    pub helo: Option<String>,
    /// The receiving server.
    pub by: Option<String>,
    /// The protocol (`ESMTPS`, `LMTP`, ...).
    pub with: Option<String>,
    /// The TLS version, when stated.
    pub tls: Option<String>,
    /// When this server stamped it (RFC 3339, UTC).
    pub timestamp: Option<String>,
    /// Milliseconds since the previous stamp (the Date header for the first hop); never
    /// negative. Null without both timestamps.
    pub delay_ms: Option<u64>,
    /// When this stamp is earlier than the previous one: by how much (clock skew between the
    /// two servers), in milliseconds.
    pub clock_skew_ms: Option<u64>,
    /// The header as written (unfolded).
    pub raw: String,
}

fn host(h: &Option<Host<'_>>) -> Option<String> {
    h.as_ref().map(|h| h.to_string())
}

fn unfold(raw: &str) -> String {
    raw.split(['\r', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The hops of the Received headers (`(position, parsed, raw)`, top first), in travel order.
pub fn hops(
    received: &[(usize, Option<Received<'_>>, String)],
    date_header: Option<i64>,
) -> Vec<Hop> {
    let mut previous = date_header;
    let mut out = Vec::with_capacity(received.len());
    for (n, (_, parsed, raw)) in received.iter().rev().enumerate() {
        let stamp = parsed
            .as_ref()
            .and_then(|r| r.date.as_ref())
            .map(|d| d.to_timestamp());
        let (delay_ms, clock_skew_ms) = match (previous, stamp) {
            (Some(before), Some(now)) if now >= before => {
                (Some(u64::try_from(now - before).unwrap_or(0) * 1000), None)
            }
            (Some(before), Some(now)) => (
                Some(0),
                Some(u64::try_from(before - now).unwrap_or(0) * 1000),
            ),
            _ => (None, None),
        };
        if stamp.is_some() {
            previous = stamp;
        }
        out.push(Hop {
            hop: u32::try_from(n + 1).unwrap_or(u32::MAX),
            from: parsed.as_ref().and_then(|r| host(&r.from)),
            from_ip: parsed
                .as_ref()
                .and_then(|r| r.from_ip)
                .map(|ip| ip.to_string()),
            helo: parsed.as_ref().and_then(|r| host(&r.helo)),
            by: parsed.as_ref().and_then(|r| host(&r.by)),
            with: parsed
                .as_ref()
                .and_then(|r| r.with)
                .map(|p| p.as_str().to_owned()),
            tls: parsed
                .as_ref()
                .and_then(|r| r.tls_version)
                .map(|v| v.as_str().to_owned()),
            timestamp: stamp.and_then(|s| {
                time::OffsetDateTime::from_unix_timestamp(s)
                    .ok()?
                    .format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            delay_ms,
            clock_skew_ms,
            raw: unfold(raw),
        });
    }
    out
}
