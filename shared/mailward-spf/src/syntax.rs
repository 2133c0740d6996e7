//! Syntax errors of SPF records and macro strings: the stable codes and the error value, shared
//! by the record parser ([`crate::parse`]) and the macro parser ([`crate::macros`]).

use serde::Serialize;

/// Stable codes for syntax errors; each is a permerror when met during evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxErrorCode {
    /// The record does not start with `v=spf1` followed by a space or its end.
    InvalidVersion,
    /// A byte outside printable ASCII (non-ASCII text, a control character, a NUL).
    InvalidCharacter,
    /// A term that is neither a known mechanism nor a modifier.
    UnknownMechanism,
    /// `name=value` whose name does not match `ALPHA *( ALPHA / DIGIT / "-" / "_" / "." )`.
    InvalidModifierName,
    /// `redirect` or `exp` appears more than once.
    DuplicateModifier,
    /// A mechanism or modifier that needs a domain-spec has none (`include`, `exists:`, `exp=`).
    MissingDomain,
    /// An argument a mechanism does not take (`all:x`, `ptr/24`, `include:x/24` is caught as
    /// [`SyntaxErrorCode::InvalidDomainSpec`]).
    UnexpectedArgument,
    /// A domain-spec that does not end in a macro or a valid top label (`a:museum`, `a:1.2.3.4`).
    InvalidDomainSpec,
    /// Bad macro syntax: a stray `%`, an unknown letter, a zero digit, a bad delimiter.
    InvalidMacro,
    /// `%{c}`, `%{r}` or `%{t}` outside explanation text.
    MacroLetterNotAllowed,
    /// An `ip4:` network that is not a dotted quad without leading zeros.
    InvalidIp4,
    /// An `ip6:` network that is not an IPv6 address.
    InvalidIp6,
    /// A CIDR length out of range, with a leading zero, or in the wrong form.
    InvalidCidr,
}

impl SyntaxErrorCode {
    /// The snake_case code, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            SyntaxErrorCode::InvalidVersion => "invalid_version",
            SyntaxErrorCode::InvalidCharacter => "invalid_character",
            SyntaxErrorCode::UnknownMechanism => "unknown_mechanism",
            SyntaxErrorCode::InvalidModifierName => "invalid_modifier_name",
            SyntaxErrorCode::DuplicateModifier => "duplicate_modifier",
            SyntaxErrorCode::MissingDomain => "missing_domain",
            SyntaxErrorCode::UnexpectedArgument => "unexpected_argument",
            SyntaxErrorCode::InvalidDomainSpec => "invalid_domain_spec",
            SyntaxErrorCode::InvalidMacro => "invalid_macro",
            SyntaxErrorCode::MacroLetterNotAllowed => "macro_letter_not_allowed",
            SyntaxErrorCode::InvalidIp4 => "invalid_ip4",
            SyntaxErrorCode::InvalidIp6 => "invalid_ip6",
            SyntaxErrorCode::InvalidCidr => "invalid_cidr",
        }
    }
}

/// A syntax error: which rule, in which term, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message} (in '{term}')", code = .code.as_str())]
pub struct SyntaxError {
    /// The stable code.
    pub code: SyntaxErrorCode,
    /// The offending term (or the whole text, for version and character errors).
    pub term: String,
    /// A readable explanation.
    pub message: String,
}

impl SyntaxError {
    pub(crate) fn new(code: SyntaxErrorCode, term: &str, message: String) -> SyntaxError {
        SyntaxError {
            code,
            term: term.to_string(),
            message,
        }
    }
}
