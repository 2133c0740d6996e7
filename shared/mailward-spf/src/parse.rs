//! Strict parser for `v=spf1` records (RFC 7208 §4.6, §5, §6, §7.1 and the ABNF of §12).
//!
//! The whole record is parsed before anything is evaluated, because "any syntax errors anywhere in
//! the record MUST be detected" (§4.6): a bad term after a matching one is still a permerror.
//! Every rejection carries a [`SyntaxErrorCode`] (a stable snake_case string) and a message naming
//! the offending term, so diagnostics can say exactly what to fix.
//!
//! Decisions the RFC leaves to the reader, made as the RFC 7208 test suite expects:
//! - A term is a modifier only when it is `name=` with a valid name; `redirect:x` is an unknown
//!   mechanism, `1up=x` and `=x` are invalid modifier names (all permerror).
//! - `redirect=` and `exp=` are never treated as unknown modifiers, so a bad domain-spec in them is
//!   an error rather than an ignored modifier.
//! - CIDR lengths have no leading zeros (`/032` is an error), as for the address octets.
//! - The dual CIDR suffix of `a` and `mx` is taken from the end of the term (`/24`, `//64`,
//!   `/24//64`); a domain-spec may itself contain `/` and `:` (`a:foo:bar/baz.example.com`).

use crate::macros::{MacroPlace, MacroString};
pub use crate::syntax::{SyntaxError, SyntaxErrorCode};
use serde::Serialize;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A mechanism's qualifier; it is the result when the mechanism matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Qualifier {
    /// `+` (the default).
    Pass,
    /// `-`.
    Fail,
    /// `~`.
    SoftFail,
    /// `?`.
    Neutral,
}

impl Qualifier {
    /// The qualifier character.
    pub fn as_char(self) -> char {
        match self {
            Qualifier::Pass => '+',
            Qualifier::Fail => '-',
            Qualifier::SoftFail => '~',
            Qualifier::Neutral => '?',
        }
    }
}

/// The two CIDR lengths of `a` and `mx` (defaults /32 and /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DualCidr {
    /// Prefix applied to IPv4 addresses.
    pub v4: u8,
    /// Prefix applied to IPv6 addresses.
    pub v6: u8,
}

impl Default for DualCidr {
    fn default() -> Self {
        DualCidr { v4: 32, v6: 128 }
    }
}

/// A mechanism (RFC 7208 §5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mechanism {
    /// `all`: always matches.
    All,
    /// `include:<domain-spec>`: matches when the target's check passes.
    Include {
        /// Target domain-spec.
        domain: MacroString,
    },
    /// `a[:<domain-spec>][cidr]`.
    A {
        /// Target, or the current domain when absent.
        domain: Option<MacroString>,
        /// Prefix lengths.
        cidr: DualCidr,
    },
    /// `mx[:<domain-spec>][cidr]`.
    Mx {
        /// Target, or the current domain when absent.
        domain: Option<MacroString>,
        /// Prefix lengths.
        cidr: DualCidr,
    },
    /// `ptr[:<domain-spec>]` (deprecated, §5.5).
    Ptr {
        /// Target, or the current domain when absent.
        domain: Option<MacroString>,
    },
    /// `ip4:<network>[/len]`.
    Ip4 {
        /// Network address.
        network: Ipv4Addr,
        /// Prefix length, 0 to 32.
        prefix: u8,
    },
    /// `ip6:<network>[/len]`.
    Ip6 {
        /// Network address.
        network: Ipv6Addr,
        /// Prefix length, 0 to 128.
        prefix: u8,
    },
    /// `exists:<domain-spec>`: matches when the name has an A record.
    Exists {
        /// Name to look up.
        domain: MacroString,
    },
}

impl Mechanism {
    /// True for the mechanisms that count against the ten-lookup limit (§4.6.4).
    pub fn costs_lookup(&self) -> bool {
        matches!(
            self,
            Mechanism::Include { .. }
                | Mechanism::A { .. }
                | Mechanism::Mx { .. }
                | Mechanism::Ptr { .. }
                | Mechanism::Exists { .. }
        )
    }
}

/// A qualified mechanism with its source text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Directive {
    /// Result when it matches.
    pub qualifier: Qualifier,
    /// The mechanism.
    pub mechanism: Mechanism,
    /// The term as written in the record.
    pub text: String,
}

/// A modifier (§6 and unknown ones, which are kept but have no effect).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Modifier {
    /// `redirect=<domain-spec>`.
    Redirect {
        /// Target domain-spec.
        domain: MacroString,
    },
    /// `exp=<domain-spec>`.
    Explanation {
        /// Domain whose TXT record holds the explanation.
        domain: MacroString,
    },
    /// Any other `name=value`; ignored by evaluation (§6).
    Unknown {
        /// Modifier name as written.
        name: String,
        /// Value (checked as a macro-string).
        value: MacroString,
    },
}

/// A term, in record order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Term {
    /// A mechanism.
    Directive(Directive),
    /// A modifier.
    Modifier(Modifier),
}

/// A parsed record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// Terms in order.
    pub terms: Vec<Term>,
}

impl Record {
    /// The directives in order.
    pub fn directives(&self) -> impl Iterator<Item = &Directive> {
        self.terms.iter().filter_map(|t| match t {
            Term::Directive(d) => Some(d),
            Term::Modifier(_) => None,
        })
    }

    /// The `redirect=` target, if any.
    pub fn redirect(&self) -> Option<&MacroString> {
        self.terms.iter().find_map(|t| match t {
            Term::Modifier(Modifier::Redirect { domain }) => Some(domain),
            _ => None,
        })
    }

    /// The `exp=` domain-spec, if any.
    pub fn explanation(&self) -> Option<&MacroString> {
        self.terms.iter().find_map(|t| match t {
            Term::Modifier(Modifier::Explanation { domain }) => Some(domain),
            _ => None,
        })
    }

    /// True when the record has an `all` mechanism anywhere, which makes `redirect` ignored (§6.1).
    pub fn has_all(&self) -> bool {
        self.directives()
            .any(|d| matches!(d.mechanism, Mechanism::All))
    }
}

impl fmt::Display for Qualifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// True when `text` is an SPF version 1 record: `v=spf1` (any case) then a space or the end (§4.5).
pub fn is_spf_record(text: &[u8]) -> bool {
    text.get(..6)
        .is_some_and(|version| version.eq_ignore_ascii_case(b"v=spf1"))
        && matches!(text.get(6), None | Some(b' '))
}

/// Parses a whole record (with its `v=spf1` prefix).
pub fn parse_record(text: &str) -> Result<Record, SyntaxError> {
    if let Some(bad) = text.chars().find(|c| !(*c == ' ' || c.is_ascii_graphic())) {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidCharacter,
            text,
            format!(
                "character {bad:?} is not allowed: SPF records are printable ASCII separated by spaces"
            ),
        ));
    }
    if !is_spf_record(text.as_bytes()) {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidVersion,
            text,
            "the record must start with 'v=spf1' followed by a space or its end".to_string(),
        ));
    }
    let mut terms = Vec::new();
    let mut seen_redirect = false;
    let mut seen_exp = false;
    for raw in text
        .get(6..)
        .unwrap_or_default()
        .split(' ')
        .filter(|t| !t.is_empty())
    {
        let term = parse_term(raw)?;
        if let Term::Modifier(m) = &term {
            let seen = match m {
                Modifier::Redirect { .. } => Some(&mut seen_redirect),
                Modifier::Explanation { .. } => Some(&mut seen_exp),
                Modifier::Unknown { .. } => None,
            };
            if let Some(seen) = seen {
                if *seen {
                    return Err(SyntaxError::new(
                        SyntaxErrorCode::DuplicateModifier,
                        raw,
                        "'redirect' and 'exp' may each appear only once".to_string(),
                    ));
                }
                *seen = true;
            }
        }
        terms.push(term);
    }
    Ok(Record { terms })
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// Parses one term (no spaces).
pub fn parse_term(raw: &str) -> Result<Term, SyntaxError> {
    let bytes = raw.as_bytes();
    // Modifier: name "=" value, name = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." ).
    if bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        let name_len = bytes.iter().take_while(|b| is_name_char(**b)).count();
        if bytes.get(name_len) == Some(&b'=') {
            return parse_modifier(raw, &raw[..name_len], &raw[name_len + 1..]).map(Term::Modifier);
        }
    }
    let (qualifier, body) = match bytes.first() {
        Some(b'+') => (Qualifier::Pass, &raw[1..]),
        Some(b'-') => (Qualifier::Fail, &raw[1..]),
        Some(b'~') => (Qualifier::SoftFail, &raw[1..]),
        Some(b'?') => (Qualifier::Neutral, &raw[1..]),
        _ => (Qualifier::Pass, raw),
    };
    let name_end = body.find([':', '/']).unwrap_or(body.len());
    let (name, args) = body.split_at(name_end);
    if name.contains('=') {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidModifierName,
            raw,
            "a modifier name must start with a letter and contain only letters, digits, '-', '_' and '.', and modifiers take no qualifier".to_string(),
        ));
    }
    let mechanism = match name.to_ascii_lowercase().as_str() {
        "all" => {
            no_args(raw, "all", args)?;
            Mechanism::All
        }
        "include" => Mechanism::Include {
            domain: required_domain(raw, "include", args)?,
        },
        "exists" => Mechanism::Exists {
            domain: required_domain(raw, "exists", args)?,
        },
        "ptr" => Mechanism::Ptr {
            domain: match args.strip_prefix(':') {
                Some(spec) => Some(domain_spec(raw, spec)?),
                None => {
                    no_args(raw, "ptr", args)?;
                    None
                }
            },
        },
        "a" => {
            let (domain, cidr) = domain_and_cidr(raw, args)?;
            Mechanism::A { domain, cidr }
        }
        "mx" => {
            let (domain, cidr) = domain_and_cidr(raw, args)?;
            Mechanism::Mx { domain, cidr }
        }
        "ip4" => {
            let (network, prefix) = ip_args(raw, args, 32, SyntaxErrorCode::InvalidIp4)?;
            let network = parse_ip4(network).ok_or_else(|| {
                SyntaxError::new(
                    SyntaxErrorCode::InvalidIp4,
                    raw,
                    format!("'{network}' is not a dotted-quad IPv4 address without leading zeros"),
                )
            })?;
            Mechanism::Ip4 { network, prefix }
        }
        "ip6" => {
            let (network, prefix) = ip_args(raw, args, 128, SyntaxErrorCode::InvalidIp6)?;
            let network: Ipv6Addr = network.parse().map_err(|_| {
                SyntaxError::new(
                    SyntaxErrorCode::InvalidIp6,
                    raw,
                    format!("'{network}' is not an IPv6 address"),
                )
            })?;
            Mechanism::Ip6 { network, prefix }
        }
        _ => {
            return Err(SyntaxError::new(
                SyntaxErrorCode::UnknownMechanism,
                raw,
                format!("unknown mechanism '{name}'"),
            ));
        }
    };
    Ok(Term::Directive(Directive {
        qualifier,
        mechanism,
        text: raw.to_string(),
    }))
}

fn parse_modifier(raw: &str, name: &str, value: &str) -> Result<Modifier, SyntaxError> {
    match name.to_ascii_lowercase().as_str() {
        "redirect" => Ok(Modifier::Redirect {
            domain: modifier_domain(raw, value)?,
        }),
        "exp" => Ok(Modifier::Explanation {
            domain: modifier_domain(raw, value)?,
        }),
        _ => Ok(Modifier::Unknown {
            name: name.to_string(),
            value: MacroString::parse(value, MacroPlace::Record).map_err(|e| in_term(e, raw))?,
        }),
    }
}

fn modifier_domain(raw: &str, value: &str) -> Result<MacroString, SyntaxError> {
    if value.is_empty() {
        return Err(SyntaxError::new(
            SyntaxErrorCode::MissingDomain,
            raw,
            "the modifier needs a domain-spec after '='".to_string(),
        ));
    }
    domain_spec(raw, value)
}

fn in_term(mut error: SyntaxError, raw: &str) -> SyntaxError {
    error.term = raw.to_string();
    error
}

fn no_args(raw: &str, name: &str, args: &str) -> Result<(), SyntaxError> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(SyntaxError::new(
            SyntaxErrorCode::UnexpectedArgument,
            raw,
            format!("'{name}' does not take '{args}'"),
        ))
    }
}

fn required_domain(raw: &str, name: &str, args: &str) -> Result<MacroString, SyntaxError> {
    match args.strip_prefix(':') {
        Some(spec) => domain_spec(raw, spec),
        None if args.is_empty() => Err(SyntaxError::new(
            SyntaxErrorCode::MissingDomain,
            raw,
            format!("'{name}' needs ':' and a domain-spec"),
        )),
        None => Err(SyntaxError::new(
            SyntaxErrorCode::UnexpectedArgument,
            raw,
            format!("'{name}' takes no CIDR length"),
        )),
    }
}

/// Parses and checks a domain-spec (§7.1): macro-string ending in a macro or "." toplabel ["."].
pub fn domain_spec(raw: &str, spec: &str) -> Result<MacroString, SyntaxError> {
    if spec.is_empty() {
        return Err(SyntaxError::new(
            SyntaxErrorCode::MissingDomain,
            raw,
            "empty domain-spec".to_string(),
        ));
    }
    let parsed = MacroString::parse(spec, MacroPlace::Record).map_err(|e| in_term(e, raw))?;
    if parsed.ends_with_macro_expand() {
        return Ok(parsed);
    }
    let without_dot = spec.strip_suffix('.').unwrap_or(spec);
    let top_label = without_dot.rsplit_once('.').map(|(_, top)| top);
    match top_label {
        Some(top) if is_top_label(top) => Ok(parsed),
        _ => Err(SyntaxError::new(
            SyntaxErrorCode::InvalidDomainSpec,
            raw,
            format!(
                "domain-spec '{spec}' must end in a macro or in '.' and a top label of letters, digits and inner hyphens that is not all numeric"
            ),
        )),
    }
}

/// `toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum )`.
fn is_top_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    if bytes.is_empty()
        || !bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    {
        return false;
    }
    if bytes.contains(&b'-') {
        bytes.first().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
    } else {
        bytes.iter().any(u8::is_ascii_alphabetic)
    }
}

fn domain_and_cidr(raw: &str, args: &str) -> Result<(Option<MacroString>, DualCidr), SyntaxError> {
    let (rest, v4, v6) = split_dual_cidr(args);
    let mut cidr = DualCidr::default();
    if let Some(v4) = v4 {
        cidr.v4 = cidr_length(raw, v4, 32)?;
    }
    if let Some(v6) = v6 {
        cidr.v6 = cidr_length(raw, v6, 128)?;
    }
    if rest.is_empty() {
        return Ok((None, cidr));
    }
    match rest.strip_prefix(':') {
        Some(spec) => Ok((Some(domain_spec(raw, spec)?), cidr)),
        None => Err(SyntaxError::new(
            SyntaxErrorCode::InvalidCidr,
            raw,
            format!("'{args}' is not a dual CIDR length ('/n', '//n' or '/n//m')"),
        )),
    }
}

/// Splits `[":" domain-spec] ["/" v4] ["//" v6]` from the end; lengths are returned unchecked.
fn split_dual_cidr(args: &str) -> (&str, Option<&str>, Option<&str>) {
    let mut rest = args;
    let mut v6 = None;
    let mut v4 = None;
    if let Some(pos) = rest.rfind("//") {
        let digits = &rest[pos + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            v6 = Some(digits);
            rest = &rest[..pos];
        }
    }
    if let Some(pos) = rest.rfind('/') {
        let digits = &rest[pos + 1..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            v4 = Some(digits);
            rest = &rest[..pos];
        }
    }
    (rest, v4, v6)
}

fn cidr_length(raw: &str, digits: &str, max: u8) -> Result<u8, SyntaxError> {
    let bad = |why: &str| {
        SyntaxError::new(
            SyntaxErrorCode::InvalidCidr,
            raw,
            format!("CIDR length '/{digits}' {why}"),
        )
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("is not a number"));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(bad("has a leading zero"));
    }
    match digits.parse::<u8>() {
        Ok(value) if value <= max => Ok(value),
        _ => Err(bad(&format!("is over {max}"))),
    }
}

fn ip_args<'a>(
    raw: &str,
    args: &'a str,
    max: u8,
    code: SyntaxErrorCode,
) -> Result<(&'a str, u8), SyntaxError> {
    let Some(spec) = args.strip_prefix(':') else {
        return Err(SyntaxError::new(
            code,
            raw,
            "the mechanism needs ':' and a network".to_string(),
        ));
    };
    match spec.split_once('/') {
        Some((network, digits)) => Ok((network, cidr_length(raw, digits, max)?)),
        None => Ok((spec, max)),
    }
}

/// `ip4-network = qnum "." qnum "." qnum "." qnum`, no leading zeros, no shortened forms.
fn parse_ip4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty()
            || part.len() > 3
            || !part.bytes().all(|b| b.is_ascii_digit())
            || (part.len() > 1 && part.starts_with('0'))
        {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(Ipv4Addr::from(octets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Record {
        parse_record(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn err(text: &str) -> SyntaxErrorCode {
        match parse_record(text) {
            Ok(r) => panic!("{text} parsed: {r:?}"),
            Err(e) => e.code,
        }
    }

    #[test]
    fn valid_records_parse() {
        let cases = [
            "v=spf1",
            "V=SpF1 -all",
            "v=spf1 a  -all ",
            "v=spf1 moo.cow-far_out=man:dog/cat ip4:1.2.3.4 -all",
            "v=spf1 a:foo:bar/baz.example.com",
            "v=spf1 a/24//64 mx//0 a:foo.example.com/24",
            "v=spf1 a:foo.example.xn--zckzah -all",
            "v=spf1 ip6:::1.1.1.1/0 ip6:Cafe:Babe:8000::/33",
            "v=spf1 ip4:1.2.3.4/32 ip4:0.0.0.0/0",
            "v=spf1 exists:%{i}._spf.%{d2} ptr ptr:example.com",
            "v=spf1 include:_spf.%{d} redirect=%{d}.d.spf.example.com.",
            "v=spf1 default=pass default=+ foo=",
            "v=spf1 a:macro%%percent%_%_space%-url-space.example.com -all",
            "v=spf1 exp=msg8.%{D2} -all",
            "v=spf1 a:mail.example...com",
            "v=spf1 ?include:webmail.pair.com ~all",
        ];
        for text in cases {
            ok(text);
        }
    }

    #[test]
    fn parsed_shapes() {
        let record = ok(
            "v=spf1 -a/24//64 mx:example.org ~ip4:192.0.2.0/24 redirect=x.example.com exp=e.example.com",
        );
        let directives: Vec<&Directive> = record.directives().collect();
        assert_eq!(directives.len(), 3);
        assert_eq!(directives[0].qualifier, Qualifier::Fail);
        assert_eq!(
            directives[0].mechanism,
            Mechanism::A {
                domain: None,
                cidr: DualCidr { v4: 24, v6: 64 }
            }
        );
        assert!(
            matches!(&directives[1].mechanism, Mechanism::Mx { domain: Some(d), cidr } if d.as_str() == "example.org" && *cidr == DualCidr::default())
        );
        assert_eq!(
            directives[2].mechanism,
            Mechanism::Ip4 {
                network: Ipv4Addr::new(192, 0, 2, 0),
                prefix: 24
            }
        );
        assert_eq!(record.redirect().unwrap().as_str(), "x.example.com");
        assert_eq!(record.explanation().unwrap().as_str(), "e.example.com");
        assert!(!record.has_all());
        assert!(ok("v=spf1 all -all").has_all());
    }

    #[test]
    fn syntax_errors_have_precise_codes() {
        use SyntaxErrorCode::*;
        let cases = [
            ("v=spf10", InvalidVersion),
            ("spf1 -all", InvalidVersion),
            ("v=spf1 a:ctrl.example.com\rptr -all", InvalidCharacter),
            ("v=spf1 a:foo.example.com\0", InvalidCharacter),
            ("v=spf1 \u{80}a:example.net -all", InvalidCharacter),
            ("v=spf1 ip4:1.2.3.4 -all moo", UnknownMechanism),
            ("v=spf1 moo.cow/far_out=man:dog/cat", UnknownMechanism),
            ("v=spf1 moo.cow:far_out=man:dog/cat", UnknownMechanism),
            ("v=spf1 redirect:t2.example.com", UnknownMechanism),
            ("v=spf1 -all.", UnknownMechanism),
            ("v=spf1 1up=foo", InvalidModifierName),
            ("v=spf1 =all", InvalidModifierName),
            ("v=spf1 -redirect=x.example.com", InvalidModifierName),
            ("v=spf1 -all:foobar", UnexpectedArgument),
            ("v=spf1 -all/8", UnexpectedArgument),
            ("v=spf1 ptr/0 -all", UnexpectedArgument),
            ("v=spf1 include:ip5.example.com/24", InvalidDomainSpec),
            ("v=spf1 include", MissingDomain),
            ("v=spf1 include: -all", MissingDomain),
            ("v=spf1 exists", MissingDomain),
            ("v=spf1 exists:", MissingDomain),
            ("v=spf1 exists:mail.example.com/24", InvalidDomainSpec),
            ("v=spf1 ptr:", MissingDomain),
            ("v=spf1 a:", MissingDomain),
            ("v=spf1 exp= -all", MissingDomain),
            ("v=spf1 ?all redirect=", MissingDomain),
            ("v=spf1 exp=-all", InvalidDomainSpec),
            ("v=spf1 redirect=-all ?all", InvalidDomainSpec),
            ("v=spf1 a:foo-bar -all", InvalidDomainSpec),
            ("v=spf1 a:museum", InvalidDomainSpec),
            ("v=spf1 a:museum.", InvalidDomainSpec),
            ("v=spf1 a:111.222.33.44", InvalidDomainSpec),
            ("v=spf1 a:abc.123", InvalidDomainSpec),
            ("v=spf1 a:example.-com", InvalidDomainSpec),
            ("v=spf1 a:example.com:8080", InvalidDomainSpec),
            ("v=spf1 a/33 -all", InvalidCidr),
            ("v=spf1 a//129 -all", InvalidCidr),
            ("v=spf1 a/24/64 -all", InvalidCidr),
            ("v=spf1 ip4:1.2.3.4/33", InvalidCidr),
            ("v=spf1 ip4:1.2.3.4/032", InvalidCidr),
            ("v=spf1 ip4:1.2.3.4//32", InvalidCidr),
            ("v=spf1 ip4:1.2.3.4/", InvalidCidr),
            ("v=spf1 ip4:1.2.3.4/99999999999999", InvalidCidr),
            ("v=spf1 ip4", InvalidIp4),
            ("v=spf1 ip4:1.2.3.4:8080", InvalidIp4),
            ("v=spf1 ip4:1.2.3", InvalidIp4),
            ("v=spf1 ip4:01.2.3.4", InvalidIp4),
            ("v=spf1 -all ip6", InvalidIp6),
            ("v=spf1 ip6::CAFE::BABE", InvalidIp6),
            ("v=spf1 ip6:::1.1.1.1/129", InvalidCidr),
            ("v=spf1 ip6:::1.1.1.1//33", InvalidCidr),
            ("v=spf1 -exists:%(ir).sbl.example.com ?all", InvalidMacro),
            ("v=spf1 exists:foo%.sbl.example.com", InvalidMacro),
            ("v=spf1 -all foo=%abc", InvalidMacro),
            ("v=spf1 a:%{a}.example.com", InvalidMacro),
            ("v=spf1 -all exp=%{r}.example.com", MacroLetterNotAllowed),
            (
                "v=spf1 exp=a.example.com -all exp=b.example.com",
                DuplicateModifier,
            ),
            (
                "v=spf1 redirect=a.example.com redirect=a.example.com",
                DuplicateModifier,
            ),
        ];
        for (text, code) in cases {
            assert_eq!(err(text), code, "{text}");
        }
    }

    #[test]
    fn version_detection() {
        assert!(is_spf_record(b"v=spf1"));
        assert!(is_spf_record(b"V=SPF1 -all"));
        assert!(!is_spf_record(b"v=spf10"));
        assert!(!is_spf_record(b"v=spf1mx"));
        assert!(!is_spf_record(b""));
    }

    /// A deterministic fuzz loop over the characters that drive the parser's branches, including
    /// multi-byte ones, through the public entry points.
    #[test]
    fn random_terms_never_panic() {
        let alphabet: Vec<char> = "aAlmxpinc4e6ldsvhrt0123456789.:/%{}=+-~?_ é😀\r"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let values = crate::macros::MacroValues {
            sender: Some("a.b@c.d".into()),
            local_part: Some("a.b".into()),
            sender_domain: Some("c.d".into()),
            domain: "c.d".into(),
            ip: Some("2001:db8::1".parse().unwrap()),
            validated_domain: Some("unknown".into()),
            helo: Some("h.e".into()),
            receiver: None,
            timestamp: Some(1),
        };
        for _ in 0..20_000 {
            let len = usize::try_from(next() % 24).unwrap();
            let term: String = (0..len)
                .map(|_| alphabet[usize::try_from(next()).unwrap() % alphabet.len()])
                .collect();
            let _ = parse_term(&term);
            let _ = parse_record(&format!("v=spf1 {term}"));
            for place in [MacroPlace::Record, MacroPlace::Explanation] {
                if let Ok(parsed) = MacroString::parse(&term, place) {
                    let _ = parsed.expand(&values);
                }
            }
        }
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let long = format!("v=spf1 {}", "a:%{d}.x ".repeat(5000));
        assert!(parse_record(&long).is_ok());
        for text in [
            "v=spf1 %",
            "v=spf1 a:%{",
            "v=spf1 a:/",
            "v=spf1 a:://",
            "v=spf1 mx:x.com///",
            "v=spf1 ip6:",
            "v=spf1 ip4:/",
            "v=spf1 +",
            "v=spf1 -",
            "v=spf1 a:%{d99999999999999999999999r.-+,/_=}.com",
        ] {
            let _ = parse_record(text);
        }
    }
}
