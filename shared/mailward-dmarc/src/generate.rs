//! The DMARC record Mailward tells users to publish, built from the domain's `dmarc_options`
//! (SPEC.md §2.1). Output is always an RFC 9989 record: `pct`, `rf` and `ri` are never emitted.

use crate::parse::{Policy, parse_report_uri};
use serde::Serialize;

/// The `sp` option: a policy, or `same` (inherit `p`, so no `sp` tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubdomainPolicyOption {
    /// `sp=none`.
    None,
    /// `sp=quarantine`.
    Quarantine,
    /// `sp=reject`.
    Reject,
    /// Same as `p`: the tag is omitted.
    Same,
}

/// Generator input, mirroring `dmarc_options`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenerateOptions {
    /// `p`.
    pub policy: Policy,
    /// `sp`.
    pub subdomain_policy: SubdomainPolicyOption,
    /// The interface's `pct`, 0..=100; mapped to `t` (see [`generate_record`]).
    pub pct: u8,
    /// `aspf=s` when true.
    pub strict_spf: bool,
    /// `adkim=s` when true.
    pub strict_dkim: bool,
    /// Aggregate report addresses (`user@host` or `mailto:user@host`), in order.
    pub rua: Vec<String>,
    /// Optional failure report addresses (legacy_ruf_emails).
    pub ruf: Vec<String>,
}

/// Why options could not be turned into a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(rename_all = "snake_case", tag = "code")]
pub enum GenerateError {
    /// `pct` above 100.
    #[error("pct must be between 0 and 100")]
    InvalidPct,
    /// An address that is not a valid mailto destination.
    #[error("invalid report address: {address}")]
    InvalidAddress {
        /// The address as given.
        address: String,
    },
}

/// Turns one user-supplied address into a `mailto:` URI, encoding the characters DMARC
/// reserves (`,` `!` `;`) and refusing anything that does not parse as a mailto destination.
fn mailto(address: &str) -> Result<String, GenerateError> {
    let trimmed = address.trim();
    let bare = match (trimmed.get(..7), trimmed.get(7..)) {
        (Some(prefix), Some(rest)) if prefix.eq_ignore_ascii_case("mailto:") => rest,
        _ => trimmed,
    };
    let mut encoded = String::with_capacity(bare.len() + 7);
    encoded.push_str("mailto:");
    for c in bare.chars() {
        match c {
            ',' => encoded.push_str("%2C"),
            '!' => encoded.push_str("%21"),
            ';' => encoded.push_str("%3B"),
            c => encoded.push(c),
        }
    }
    let parsed = parse_report_uri(&encoded);
    if parsed.valid && parsed.host.is_some() && !bare.contains('?') {
        Ok(encoded)
    } else {
        Err(GenerateError::InvalidAddress {
            address: address.to_string(),
        })
    }
}

/// Builds the exact TXT value to publish at `_dmarc.<domain>`.
///
/// Tag order: `v`, `p`, `sp`, `adkim`, `aspf`, `t`, `rua`, `ruf`. `sp` is emitted only when it
/// differs from `p` (`same` or equal means no tag); `adkim`/`aspf` only when strict (relaxed is
/// the default).
///
/// **`pct` mapping (RFC 9989 removed `pct`):** `pct = 100` emits no `t` tag (the policy applies
/// in full); `pct < 100` (including 0) emits `t=y`, which asks receivers to apply the policy one
/// step weaker (reject → quarantine, quarantine → none): the RFC 9989 way to roll out gradually.
/// When neither `p` nor the effective `sp` is stricter than `none`, `t=y` would change nothing
/// and is omitted. `pct`, `rf` and `ri` are never emitted.
pub fn generate_record(options: &GenerateOptions) -> Result<String, GenerateError> {
    if options.pct > 100 {
        return Err(GenerateError::InvalidPct);
    }
    let mut tags = vec![
        "v=DMARC1".to_string(),
        format!("p={}", options.policy.as_str()),
    ];
    let sp = match options.subdomain_policy {
        SubdomainPolicyOption::None => Some(Policy::None),
        SubdomainPolicyOption::Quarantine => Some(Policy::Quarantine),
        SubdomainPolicyOption::Reject => Some(Policy::Reject),
        SubdomainPolicyOption::Same => None,
    }
    .filter(|sp| *sp != options.policy);
    if let Some(sp) = sp {
        tags.push(format!("sp={}", sp.as_str()));
    }
    if options.strict_dkim {
        tags.push("adkim=s".to_string());
    }
    if options.strict_spf {
        tags.push("aspf=s".to_string());
    }
    let strictest = sp.map_or(options.policy, |sp| sp.max(options.policy));
    if options.pct < 100 && strictest != Policy::None {
        tags.push("t=y".to_string());
    }
    for (name, list) in [("rua", &options.rua), ("ruf", &options.ruf)] {
        if list.is_empty() {
            continue;
        }
        let uris = list
            .iter()
            .map(|a| mailto(a))
            .collect::<Result<Vec<_>, _>>()?;
        tags.push(format!("{name}={}", uris.join(",")));
    }
    Ok(tags.join("; "))
}

/// Splits a TXT value into character-strings of at most 255 bytes (on character boundaries),
/// for DNS providers that need them split.
pub fn to_character_strings(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in value.chars() {
        if current.len() + c.len_utf8() > 255 {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current);
    }
    out
}
