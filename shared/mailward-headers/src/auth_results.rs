//! Authentication-Results headers (RFC 8601) and which of them can be trusted.
//!
//! Anyone upstream can write an Authentication-Results header, so only the final receiver's are
//! believed: the authentication service that wrote the topmost one, and only its headers that
//! sit above the Received header with which that service's servers accepted the message (the
//! lowest Received whose `by` host is in the service's domain; without one, above every
//! Received). Everything else is listed as untrusted with the reason.

use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

/// One method's result in a header (`spf=pass smtp.mailfrom=...`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MethodResult {
    /// `spf`, `dkim`, `dmarc`, `arc`, or another method.
    pub method: String,
    /// The verdict.
    pub result: Verdict,
    /// The word as written.
    pub result_word: String,
    /// `reason=`, when given.
    pub reason: Option<String>,
    /// The properties (`smtp.mailfrom`, `header.d`, `header.from`, ...).
    pub properties: BTreeMap<String, String>,
}

/// One Authentication-Results header.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AuthResults {
    /// The authentication service that wrote it.
    pub authserv_id: String,
    /// Its position among the header fields (0 = topmost).
    pub position: usize,
    /// Whether its verdicts are believed.
    pub trusted: bool,
    /// Why (or why not).
    pub trust_reason: String,
    /// The results it states.
    pub results: Vec<MethodResult>,
    /// The header as written (unfolded).
    pub raw: String,
}

impl AuthResults {
    /// The first result of `method`.
    pub fn first(&self, method: &str) -> Option<&MethodResult> {
        self.results.iter().find(|r| r.method == method)
    }
}

/// Removes `(comments)` (nested, with quoted pairs) outside quoted strings.
fn strip_comments(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut depth = 0usize;
    let mut quoted = false;
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if depth == 0 {
                out.push(c);
            }
            escaped = false;
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                if depth == 0 {
                    out.push(c);
                }
            }
            '"' if depth == 0 => {
                quoted = !quoted;
                out.push(c);
            }
            '(' if !quoted => depth += 1,
            ')' if !quoted && depth > 0 => {
                depth -= 1;
                out.push(' ');
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn unquote(v: &str) -> String {
    v.trim().trim_matches('"').to_owned()
}

/// Reads one header's value; `position` is its index among the header fields.
pub fn parse_header(position: usize, raw_value: &str) -> AuthResults {
    let raw = raw_value
        .split(['\r', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let cleaned = strip_comments(&raw);
    let mut parts = cleaned.split(';');
    let authserv_id = parts
        .next()
        .and_then(|p| p.split_whitespace().next())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut results = Vec::new();
    for part in parts {
        let mut tokens = part.split_whitespace();
        let Some(first) = tokens.next() else { continue };
        let Some((method, word)) = first.split_once('=') else {
            continue; // `none`: no results
        };
        let method = method
            .split('/')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let mut reason = None;
        let mut properties = BTreeMap::new();
        let rest: Vec<&str> = tokens.collect();
        let mut i = 0;
        while i < rest.len() {
            let token = rest[i];
            if let Some((k, v)) = token.split_once('=') {
                let mut value = v.to_owned();
                // A quoted reason may contain spaces.
                if value.starts_with('"') && !(value.len() > 1 && value.ends_with('"')) {
                    while i + 1 < rest.len() {
                        i += 1;
                        value.push(' ');
                        value.push_str(rest[i]);
                        if rest[i].ends_with('"') {
                            break;
                        }
                    }
                }
                if k.eq_ignore_ascii_case("reason") {
                    reason = Some(unquote(&value));
                } else {
                    properties.insert(k.to_ascii_lowercase(), unquote(&value));
                }
            }
            i += 1;
        }
        results.push(MethodResult {
            method,
            result: Verdict::parse(word),
            result_word: word.to_ascii_lowercase(),
            reason,
            properties,
        });
    }
    AuthResults {
        authserv_id,
        position,
        trusted: false,
        trust_reason: String::new(),
        results,
        raw,
    }
}

/// The last two labels of a host name: an authentication service's domain, for matching the
/// `by` hosts of Received headers (a heuristic: `co.uk`-style suffixes are not special).
pub fn service_domain(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() <= 2 {
        return host;
    }
    labels[labels.len() - 2..].join(".")
}

/// Decides which headers are trusted (see the module docs); `received` are the Received
/// headers' positions and `by` hosts, top first. Returns the trusted authserv-id.
pub fn trust(auth: &mut [AuthResults], received: &[(usize, Option<String>)]) -> Option<String> {
    let top = auth.iter().min_by_key(|a| a.position)?;
    let trusted_id = top.authserv_id.clone();
    let domain = service_domain(&trusted_id);
    let accepted_at = received
        .iter()
        .filter(|(_, by)| by.as_deref().is_some_and(|b| service_domain(b) == domain))
        .map(|(p, _)| *p)
        .max();
    let boundary = accepted_at.or_else(|| received.first().map(|(p, _)| *p));
    for a in auth.iter_mut() {
        let above = boundary.is_none_or(|b| a.position < b);
        (a.trusted, a.trust_reason) = if a.authserv_id != trusted_id {
            (
                false,
                format!(
                    "written by {:?}, not by the final receiver {trusted_id:?}: anyone upstream can write this header",
                    a.authserv_id
                ),
            )
        } else if !above {
            (
                false,
                format!(
                    "names {trusted_id:?} but sits below the Received header where that service accepted the message: it was there before, so it may be forged"
                ),
            )
        } else {
            (
                true,
                format!(
                    "written by the final receiver {trusted_id:?} (the topmost Authentication-Results) after it accepted the message"
                ),
            )
        };
    }
    Some(trusted_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_comments_and_properties_are_read() {
        let a = parse_header(
            0,
            " mx.google.com;\r\n       dkim=pass header.i=@example.com header.s=sel header.b=abc;\r\n       spf=pass (google.com: domain of a@b designates 1.2.3.4 as permitted sender) smtp.mailfrom=a@example.com;\r\n       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com; arc=HardFail reason=\"chain broken\"",
        );
        assert_eq!(a.authserv_id, "mx.google.com");
        assert_eq!(a.first("dkim").unwrap().properties["header.s"], "sel");
        assert_eq!(a.first("spf").unwrap().result, Verdict::Pass);
        assert_eq!(
            a.first("spf").unwrap().properties["smtp.mailfrom"],
            "a@example.com"
        );
        assert_eq!(
            a.first("dmarc").unwrap().properties["header.from"],
            "example.com"
        );
        let arc = a.first("arc").unwrap();
        assert_eq!(arc.result, Verdict::Fail);
        assert_eq!(arc.reason.as_deref(), Some("chain broken"));
        let none = parse_header(3, "example.org 1; none");
        assert!(none.results.is_empty());
    }

    #[test]
    fn only_the_final_receivers_headers_above_its_acceptance_are_trusted() {
        let mut auth = vec![
            parse_header(1, "mx.google.com; spf=pass smtp.mailfrom=a@b.example"),
            parse_header(6, "evil.example; dmarc=pass header.from=bank.example"),
            parse_header(7, "mx.google.com; dmarc=pass header.from=bank.example"),
        ];
        let received = vec![
            (0, Some("2002:a05::1".to_owned())),
            (2, Some("mx.google.com".to_owned())),
            (5, Some("relay.evil.example".to_owned())),
        ];
        assert_eq!(
            trust(&mut auth, &received).as_deref(),
            Some("mx.google.com")
        );
        assert!(auth[0].trusted);
        assert!(!auth[1].trusted);
        assert!(!auth[2].trusted, "{}", auth[2].trust_reason);
    }
}
