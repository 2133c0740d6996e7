//! The RFC 7208 §7 macro language: parsing macro-strings and expanding them.
//!
//! A macro-string is parsed once, strictly, when its record is parsed (a bad `%` is a permerror
//! anywhere in the record, §4.6), and expanded later against [`MacroValues`]. Values the caller
//! does not have (the auditor has no sender and no client address) are `None`, and expansion then
//! reports [`ExpandError::Unavailable`] instead of inventing text: that is how the auditor tells an
//! unexpandable `exists:%{i}._spf.example.com` from an expandable `include:_spf.%{d}`.
//!
//! Output size is bounded ([`MAX_EXPANSION_LEN`]) because records are attacker-controlled and a
//! few hundred `%{s}` would otherwise multiply a long sender many times over.

use crate::syntax::{SyntaxError, SyntaxErrorCode};
use serde::{Serialize, Serializer};
use std::fmt;
use std::net::IpAddr;

/// Largest expansion produced, in bytes; longer ones fail with [`ExpandError::TooLong`].
pub const MAX_EXPANSION_LEN: usize = 8192;

/// A macro letter (RFC 7208 §7.2). `c`, `r` and `t` are allowed only in explanation text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MacroLetter {
    /// `s`: the sender (`local-part@domain`).
    Sender,
    /// `l`: the sender's local-part.
    LocalPart,
    /// `o`: the sender's domain.
    SenderDomain,
    /// `d`: the current domain (of the include or redirect being evaluated).
    Domain,
    /// `i`: the client address, dotted quad or dot-separated nibbles.
    Ip,
    /// `p`: the validated domain name of the client address, or `unknown`.
    ValidatedDomain,
    /// `v`: `in-addr` for IPv4, `ip6` for IPv6.
    IpVersion,
    /// `h`: the HELO/EHLO domain.
    Helo,
    /// `c`: the client address in readable form (explanations only).
    ClientIp,
    /// `r`: the receiving host's domain name (explanations only).
    Receiver,
    /// `t`: the current timestamp in seconds (explanations only).
    Timestamp,
}

impl MacroLetter {
    fn from_char(c: char) -> Option<MacroLetter> {
        Some(match c.to_ascii_lowercase() {
            's' => MacroLetter::Sender,
            'l' => MacroLetter::LocalPart,
            'o' => MacroLetter::SenderDomain,
            'd' => MacroLetter::Domain,
            'i' => MacroLetter::Ip,
            'p' => MacroLetter::ValidatedDomain,
            'v' => MacroLetter::IpVersion,
            'h' => MacroLetter::Helo,
            'c' => MacroLetter::ClientIp,
            'r' => MacroLetter::Receiver,
            't' => MacroLetter::Timestamp,
            _ => return None,
        })
    }

    /// The letter as written in a record, lower-case.
    pub fn as_char(self) -> char {
        match self {
            MacroLetter::Sender => 's',
            MacroLetter::LocalPart => 'l',
            MacroLetter::SenderDomain => 'o',
            MacroLetter::Domain => 'd',
            MacroLetter::Ip => 'i',
            MacroLetter::ValidatedDomain => 'p',
            MacroLetter::IpVersion => 'v',
            MacroLetter::Helo => 'h',
            MacroLetter::ClientIp => 'c',
            MacroLetter::Receiver => 'r',
            MacroLetter::Timestamp => 't',
        }
    }

    fn explanation_only(self) -> bool {
        matches!(
            self,
            MacroLetter::ClientIp | MacroLetter::Receiver | MacroLetter::Timestamp
        )
    }
}

/// One `%{...}` expression: letter, transformers and delimiters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacroExpression {
    /// Which value to expand.
    pub letter: MacroLetter,
    /// Upper-case letter: URL-escape the result (§7.3).
    pub url_escape: bool,
    /// Keep only this many right-hand parts (never zero).
    pub keep: Option<u32>,
    /// Reverse the parts before keeping.
    pub reverse: bool,
    /// Characters to split on; empty means `.`.
    pub delimiters: String,
}

/// A piece of a macro-string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MacroPiece {
    /// Literal text, with `%%`, `%_` and `%-` already decoded.
    Literal(String),
    /// A macro expression.
    Expression(MacroExpression),
}

/// Where a macro-string appears, which decides the letters and characters it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacroPlace {
    /// A domain-spec or an unknown modifier's value in a record: no `c`, `r`, `t`, no spaces.
    Record,
    /// Explanation text fetched by `exp=`: every letter, and spaces.
    Explanation,
}

/// A parsed macro-string, keeping its source text for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroString {
    text: String,
    pieces: Vec<MacroPiece>,
    ends_with_macro_expand: bool,
}

impl Serialize for MacroString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl fmt::Display for MacroString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Values available for expansion; `None` means "not known here" (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MacroValues {
    /// `%{s}`.
    pub sender: Option<String>,
    /// `%{l}`.
    pub local_part: Option<String>,
    /// `%{o}`.
    pub sender_domain: Option<String>,
    /// `%{d}`: always known, it is the domain whose record is being read.
    pub domain: String,
    /// `%{i}`, `%{c}`, `%{v}` (already un-mapped from IPv4-mapped IPv6).
    pub ip: Option<IpAddr>,
    /// `%{p}`, computed by the evaluator only when a string uses it.
    pub validated_domain: Option<String>,
    /// `%{h}`.
    pub helo: Option<String>,
    /// `%{r}`.
    pub receiver: Option<String>,
    /// `%{t}`.
    pub timestamp: Option<u64>,
}

/// Why a macro-string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// The string needs a value that is not known here (the auditor has no sender).
    #[error("macro %{{{}}} needs a value that is not known without a sender", .0.as_char())]
    Unavailable(MacroLetter),
    /// The expansion exceeded [`MAX_EXPANSION_LEN`].
    #[error("macro expansion longer than {MAX_EXPANSION_LEN} bytes")]
    TooLong,
}

impl MacroString {
    /// Parses `text` strictly; any `%` not starting `%{`, `%%`, `%_` or `%-` is an error (§7.1).
    pub fn parse(text: &str, place: MacroPlace) -> Result<MacroString, SyntaxError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut ends_with_macro_expand = false;
        let mut chars = text.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            ends_with_macro_expand = false;
            if c != '%' {
                let visible = c.is_ascii_graphic();
                if !(visible || (c == ' ' && place == MacroPlace::Explanation)) {
                    return Err(SyntaxError::new(
                        SyntaxErrorCode::InvalidCharacter,
                        text,
                        format!("character {c:?} is not allowed in a macro-string"),
                    ));
                }
                literal.push(c);
                continue;
            }
            match chars.next() {
                Some((_, '%')) => literal.push('%'),
                Some((_, '_')) => literal.push(' '),
                Some((_, '-')) => literal.push_str("%20"),
                Some((_, '{')) => {
                    if !literal.is_empty() {
                        pieces.push(MacroPiece::Literal(std::mem::take(&mut literal)));
                    }
                    let mut body = String::new();
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        body.push(c);
                    }
                    if !closed {
                        return Err(SyntaxError::new(
                            SyntaxErrorCode::InvalidMacro,
                            text,
                            "unterminated macro: '%{' without '}'".to_string(),
                        ));
                    }
                    pieces.push(MacroPiece::Expression(parse_expression(
                        &body, text, place,
                    )?));
                }
                other => {
                    let found = match other {
                        Some((_, c)) => format!("{c:?}"),
                        None => "the end of the string".to_string(),
                    };
                    return Err(SyntaxError::new(
                        SyntaxErrorCode::InvalidMacro,
                        text,
                        format!("'%' must be followed by '{{', '%', '_' or '-', not {found}"),
                    ));
                }
            }
            ends_with_macro_expand = true;
        }
        if !literal.is_empty() {
            pieces.push(MacroPiece::Literal(literal));
        }
        Ok(MacroString {
            text: text.to_string(),
            pieces,
            ends_with_macro_expand,
        })
    }

    /// The source text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed pieces.
    pub fn pieces(&self) -> &[MacroPiece] {
        &self.pieces
    }

    /// True when the string ends with a macro-expand (`%{..}`, `%%`, `%_`, `%-`), which is one of
    /// the two allowed endings of a domain-spec (§7.1).
    pub fn ends_with_macro_expand(&self) -> bool {
        self.ends_with_macro_expand
    }

    /// True when the string contains an expression (so its value depends on the message).
    pub fn has_expressions(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, MacroPiece::Expression(_)))
    }

    /// True when some expression uses `letter`.
    pub fn uses(&self, letter: MacroLetter) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, MacroPiece::Expression(e) if e.letter == letter))
    }

    /// Expands the string (§7.3). Domain callers still apply [`crate::names::truncate_left`].
    pub fn expand(&self, values: &MacroValues) -> Result<String, ExpandError> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                MacroPiece::Literal(text) => out.push_str(text),
                MacroPiece::Expression(expr) => out.push_str(&expand_expression(expr, values)?),
            }
            if out.len() > MAX_EXPANSION_LEN {
                return Err(ExpandError::TooLong);
            }
        }
        Ok(out)
    }
}

fn parse_expression(
    body: &str,
    text: &str,
    place: MacroPlace,
) -> Result<MacroExpression, SyntaxError> {
    let mut chars = body.chars();
    let Some(letter_char) = chars.next() else {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidMacro,
            text,
            "empty macro '%{}'".to_string(),
        ));
    };
    let Some(letter) = MacroLetter::from_char(letter_char) else {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidMacro,
            text,
            format!("unknown macro letter {letter_char:?}"),
        ));
    };
    if letter.explanation_only() && place == MacroPlace::Record {
        return Err(SyntaxError::new(
            SyntaxErrorCode::MacroLetterNotAllowed,
            text,
            format!("macro letter '{letter_char}' is allowed only in explanation text"),
        ));
    }
    let rest: &str = chars.as_str();
    let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (digits, rest) = rest.split_at(digits_len);
    let keep = if digits.is_empty() {
        None
    } else {
        // Any count at least as large as the number of parts keeps them all; saturate so a
        // 40-digit transformer cannot overflow.
        let value = digits.bytes().fold(0u32, |acc, d| {
            acc.saturating_mul(10).saturating_add(u32::from(d - b'0'))
        });
        if value == 0 {
            return Err(SyntaxError::new(
                SyntaxErrorCode::InvalidMacro,
                text,
                "macro transformer digit must be nonzero".to_string(),
            ));
        }
        Some(value)
    };
    let (reverse, rest) = match rest.strip_prefix(['r', 'R']) {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    if let Some(bad) = rest
        .chars()
        .find(|c| !matches!(c, '.' | '-' | '+' | ',' | '/' | '_' | '='))
    {
        return Err(SyntaxError::new(
            SyntaxErrorCode::InvalidMacro,
            text,
            format!("invalid macro delimiter {bad:?}"),
        ));
    }
    Ok(MacroExpression {
        letter,
        url_escape: letter_char.is_ascii_uppercase(),
        keep,
        reverse,
        delimiters: rest.to_string(),
    })
}

fn letter_value(letter: MacroLetter, values: &MacroValues) -> Result<String, ExpandError> {
    let missing = || ExpandError::Unavailable(letter);
    Ok(match letter {
        MacroLetter::Sender => values.sender.clone().ok_or_else(missing)?,
        MacroLetter::LocalPart => values.local_part.clone().ok_or_else(missing)?,
        MacroLetter::SenderDomain => values.sender_domain.clone().ok_or_else(missing)?,
        MacroLetter::Domain => values.domain.clone(),
        MacroLetter::Ip => crate::names::macro_ip(values.ip.ok_or_else(missing)?),
        MacroLetter::ValidatedDomain => values.validated_domain.clone().ok_or_else(missing)?,
        MacroLetter::IpVersion => match values.ip.ok_or_else(missing)? {
            IpAddr::V4(_) => "in-addr".to_string(),
            IpAddr::V6(_) => "ip6".to_string(),
        },
        MacroLetter::Helo => values.helo.clone().ok_or_else(missing)?,
        MacroLetter::ClientIp => values.ip.ok_or_else(missing)?.to_string(),
        MacroLetter::Receiver => values
            .receiver
            .clone()
            .unwrap_or_else(|| "unknown".to_string()),
        MacroLetter::Timestamp => values.timestamp.ok_or_else(missing)?.to_string(),
    })
}

fn expand_expression(expr: &MacroExpression, values: &MacroValues) -> Result<String, ExpandError> {
    let value = letter_value(expr.letter, values)?;
    if value.len() > MAX_EXPANSION_LEN {
        return Err(ExpandError::TooLong);
    }
    let delimiters: &str = if expr.delimiters.is_empty() {
        "."
    } else {
        &expr.delimiters
    };
    let mut parts: Vec<&str> = value.split(|c| delimiters.contains(c)).collect();
    if expr.reverse {
        parts.reverse();
    }
    if let Some(keep) = expr.keep {
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        if keep < parts.len() {
            parts.drain(..parts.len() - keep);
        }
    }
    let joined = parts.join(".");
    Ok(if expr.url_escape {
        url_escape(&joined)
    } else {
        joined
    })
}

/// Escapes every byte outside the URI unreserved set (§7.3: upper-case macro letters).
fn url_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> MacroValues {
        MacroValues {
            sender: Some("strong-bad@email.example.com".into()),
            local_part: Some("strong-bad".into()),
            sender_domain: Some("email.example.com".into()),
            domain: "email.example.com".into(),
            ip: Some("192.0.2.3".parse().unwrap()),
            validated_domain: None,
            helo: Some("mx.example.org".into()),
            receiver: Some("mx.receiver.example".into()),
            timestamp: Some(1_000),
        }
    }

    /// The examples of RFC 7208 §7.4, plus the escapes.
    #[test]
    fn rfc_examples_expand() {
        let cases = [
            ("%{s}", "strong-bad@email.example.com"),
            ("%{o}", "email.example.com"),
            ("%{d}", "email.example.com"),
            ("%{d4}", "email.example.com"),
            ("%{d3}", "email.example.com"),
            ("%{d2}", "example.com"),
            ("%{d1}", "com"),
            ("%{dr}", "com.example.email"),
            ("%{d2r}", "example.email"),
            ("%{l}", "strong-bad"),
            ("%{l-}", "strong.bad"),
            ("%{lr}", "strong-bad"),
            ("%{lr-}", "bad.strong"),
            ("%{l1r-}", "strong"),
            (
                "%{ir}.%{v}._spf.%{d2}",
                "3.2.0.192.in-addr._spf.example.com",
            ),
            ("%{lr-}.lp._spf.%{d2}", "bad.strong.lp._spf.example.com"),
            (
                "%{lr-}.lp.%{ir}.%{v}._spf.%{d2}",
                "bad.strong.lp.3.2.0.192.in-addr._spf.example.com",
            ),
            (
                "%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}",
                "3.2.0.192.in-addr.strong.lp._spf.example.com",
            ),
            (
                "%{d2}.trusted-domains.example.net",
                "example.com.trusted-domains.example.net",
            ),
            ("a%%b%_c%-d", "a%b c%20d"),
            ("%{L}", "strong-bad"),
            ("%{S}", "strong-bad%40email.example.com"),
            ("%{d999999999999999999999}", "email.example.com"),
            ("%{l+-=}", "strong.bad"),
        ];
        for (input, expect) in cases {
            let place = MacroPlace::Record;
            let parsed =
                MacroString::parse(input, place).unwrap_or_else(|e| panic!("{input}: {e:?}"));
            assert_eq!(parsed.expand(&values()).unwrap(), expect, "{input}");
        }
    }

    #[test]
    fn ipv6_and_explanation_letters() {
        let mut v = values();
        v.ip = Some("2001:db8::cb01".parse().unwrap());
        let parsed = MacroString::parse("%{ir}.%{v}._spf.%{d2}", MacroPlace::Record).unwrap();
        assert_eq!(
            parsed.expand(&v).unwrap().to_ascii_lowercase(),
            "1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6._spf.example.com"
        );
        let exp = MacroString::parse("%{c} via %{r} at %{t}", MacroPlace::Explanation).unwrap();
        assert_eq!(
            exp.expand(&v).unwrap(),
            "2001:db8::cb01 via mx.receiver.example at 1000"
        );
    }

    #[test]
    fn syntax_errors_are_precise() {
        let cases = [
            ("%(ir).sbl", SyntaxErrorCode::InvalidMacro),
            ("foo%", SyntaxErrorCode::InvalidMacro),
            ("foo%.bar", SyntaxErrorCode::InvalidMacro),
            ("%{a}.example.com", SyntaxErrorCode::InvalidMacro),
            ("%{d0}", SyntaxErrorCode::InvalidMacro),
            ("%{d", SyntaxErrorCode::InvalidMacro),
            ("%{}", SyntaxErrorCode::InvalidMacro),
            ("%{d2x}", SyntaxErrorCode::InvalidMacro),
            ("%{r}.example.com", SyntaxErrorCode::MacroLetterNotAllowed),
            ("a b", SyntaxErrorCode::InvalidCharacter),
            ("caf\u{e9}", SyntaxErrorCode::InvalidCharacter),
        ];
        for (input, code) in cases {
            let err = MacroString::parse(input, MacroPlace::Record).unwrap_err();
            assert_eq!(err.code, code, "{input}");
        }
        assert!(MacroString::parse("The %{x}-files.", MacroPlace::Explanation).is_err());
        assert!(MacroString::parse("two  spaces ok", MacroPlace::Explanation).is_ok());
    }

    #[test]
    fn unavailable_values_are_reported() {
        let v = MacroValues {
            domain: "example.com".into(),
            ..MacroValues::default()
        };
        let parsed = MacroString::parse("%{i}._spf.%{d}", MacroPlace::Record).unwrap();
        assert_eq!(
            parsed.expand(&v),
            Err(ExpandError::Unavailable(MacroLetter::Ip))
        );
        let parsed = MacroString::parse("_spf.%{d}", MacroPlace::Record).unwrap();
        assert_eq!(parsed.expand(&v).unwrap(), "_spf.example.com");
    }

    #[test]
    fn expansion_is_bounded() {
        let mut v = values();
        v.sender = Some("x".repeat(4000));
        let parsed = MacroString::parse("%{s}%{s}%{s}", MacroPlace::Record).unwrap();
        assert_eq!(parsed.expand(&v), Err(ExpandError::TooLong));
    }

    #[test]
    fn ends_with_macro_expand_tracks_escapes() {
        for (input, expect) in [
            ("%{d}", true),
            ("foo.%%", true),
            ("foo.com", false),
            ("%{d}.com", false),
        ] {
            let parsed = MacroString::parse(input, MacroPlace::Record).unwrap();
            assert_eq!(parsed.ends_with_macro_expand(), expect, "{input}");
        }
    }
}
