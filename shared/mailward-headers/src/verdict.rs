//! The verdict words of SPF, DKIM, DMARC and ARC results (RFC 8601 §2.7).

use serde::Serialize;

/// One authentication verdict. Anything a header says that is not one of these words is
/// `unknown` (an authentication service's private word, or a missing result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Authenticated.
    Pass,
    /// Not authenticated.
    Fail,
    /// SPF `~`: probably not authorized.
    Softfail,
    /// No assertion.
    Neutral,
    /// Nothing to evaluate (no record, no signature).
    None,
    /// A transient error.
    Temperror,
    /// A permanent error in the published data.
    Permerror,
    /// Not said, or a word outside the standard set.
    Unknown,
}

impl Verdict {
    /// The wire word (lower case).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Softfail => "softfail",
            Verdict::Neutral => "neutral",
            Verdict::None => "none",
            Verdict::Temperror => "temperror",
            Verdict::Permerror => "permerror",
            Verdict::Unknown => "unknown",
        }
    }

    /// Reads a result word, case-insensitively; `hardfail` is the old spelling of `fail`.
    pub fn parse(word: &str) -> Verdict {
        match word.trim().to_ascii_lowercase().as_str() {
            "pass" => Verdict::Pass,
            "fail" | "hardfail" => Verdict::Fail,
            "softfail" => Verdict::Softfail,
            "neutral" => Verdict::Neutral,
            "none" => Verdict::None,
            "temperror" => Verdict::Temperror,
            "permerror" => Verdict::Permerror,
            _ => Verdict::Unknown,
        }
    }
}

#[cfg(test)]
mod wire_tests {
    use super::Verdict;

    #[test]
    fn wire_words_are_the_serde_names() {
        for v in [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Softfail,
            Verdict::Neutral,
            Verdict::None,
            Verdict::Temperror,
            Verdict::Permerror,
            Verdict::Unknown,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
    }
}
