//! Verdicts and the per-dimension findings they are derived from.
//!
//! Why one module: every dimension reports the same shape (`score`, `status`, `info`, `errors`,
//! `warnings`, `state`), and the rules that turn codes into a verdict must be the same
//! everywhere, with the few dimension-specific overrides (`in progress`, `info`, `error`) stated
//! once here.
//!
//! Base rule ([`base_verdict`]): any error code → `fail`; else any warning → `warn`; else `pass`.
//! Overrides, applied by the dimension modules through [`Findings::verdict_with`]:
//!
//! | verdict | when |
//! |---|---|
//! | `in progress` | DMARC without errors whose policy is below full reject (`p=none`, `p=quarantine`, or `t=y`); MTA-STS without errors in `testing` mode |
//! | `info` | MTA-STS, TLS-RPT or DANE not published (optional features) |
//! | `error` | DKIM when the selector probe catalogue was unavailable (we could not look properly) |
//! | `warn` | a DNS lookup of the dimension failed (SERVFAIL, timeout, REFUSED, budget): code `dns_lookup_failed`, never "missing" |

use crate::score::{self, Dimension};
use serde::{Deserialize, Serialize};

/// A dimension's verdict. Serialized lower-case, with `in progress` written with a space as the
/// interface (SPEC §2.12) spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Configured and healthy.
    Pass,
    /// Works, with weaknesses (or we could not find out because DNS failed).
    Warn,
    /// Missing or broken.
    Fail,
    /// On the way to full protection (DMARC below reject, MTA-STS testing).
    #[serde(rename = "in progress")]
    InProgress,
    /// An optional feature is absent (MTA-STS, TLS-RPT).
    Info,
    /// The check itself could not run (DKIM without the probe catalogue).
    Error,
}

/// The code stated in [`DimensionState::code`] when a dimension has no finding at all.
pub const OK_CODE: &str = "ok";

/// The code reported when a DNS lookup of a dimension failed (SERVFAIL, timeout, REFUSED, query
/// budget spent): the record's presence is unknown, so it is never reported as missing.
pub const DNS_LOOKUP_FAILED: &str = "dns_lookup_failed";

/// Stable snake_case codes found by a dimension, by category. Why a builder: codes are deduplicated
/// (several DKIM selectors may share a problem) and kept in first-seen order so output is stable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Neutral facts.
    pub info: Vec<String>,
    /// Problems that break the dimension.
    pub errors: Vec<String>,
    /// Weaknesses.
    pub warnings: Vec<String>,
}

fn push_unique(list: &mut Vec<String>, code: &str) {
    if !list.iter().any(|c| c == code) {
        list.push(code.to_string());
    }
}

impl Findings {
    /// Records an error code (once).
    pub fn error(&mut self, code: &str) {
        push_unique(&mut self.errors, code);
    }

    /// Records a warning code (once).
    pub fn warning(&mut self, code: &str) {
        push_unique(&mut self.warnings, code);
    }

    /// Records an info code (once).
    pub fn info(&mut self, code: &str) {
        push_unique(&mut self.info, code);
    }

    /// True when `code` was recorded in any category.
    pub fn has(&self, code: &str) -> bool {
        self.errors
            .iter()
            .chain(&self.warnings)
            .chain(&self.info)
            .any(|c| c == code)
    }

    /// The verdict by the base rule.
    pub fn verdict(&self) -> Verdict {
        base_verdict(self)
    }

    /// The dimension's score from these findings ([`score::dimension_score`]).
    pub fn score(&self, dimension: Dimension) -> i32 {
        score::dimension_score(dimension, &self.errors, &self.warnings, &self.info)
    }

    /// Builds the dimension's assessment with an explicit verdict (after overrides).
    pub fn verdict_with(self, dimension: Dimension, status: Verdict) -> Assessment {
        Assessment::new(dimension, self, status)
    }
}

/// The base rule: errors → fail, warnings → warn, else pass.
pub fn base_verdict(findings: &Findings) -> Verdict {
    if !findings.errors.is_empty() {
        Verdict::Fail
    } else if !findings.warnings.is_empty() {
        Verdict::Warn
    } else {
        Verdict::Pass
    }
}

/// The compact state object every dimension carries (SPEC §2.12): the verdict, the single most
/// significant code, the points taken off and the warnings. Why: list views show one line per
/// dimension without reading the detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DimensionState {
    /// The verdict.
    pub status: Verdict,
    /// The first error, else the first warning, else the first info code, else `ok`.
    pub code: String,
    /// Points taken off (0 or negative).
    pub score: i32,
    /// The warning codes.
    pub warnings: Vec<String>,
}

/// The common part of every dimension object. Flattened into each dimension, so the JSON has
/// `score`, `status`, `info`, `errors`, `warnings` and `state` beside the details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// Points taken off this dimension (0 or negative, never below minus its weight).
    pub score: i32,
    /// The verdict.
    pub status: Verdict,
    /// Info codes.
    pub info: Vec<String>,
    /// Error codes.
    pub errors: Vec<String>,
    /// Warning codes.
    pub warnings: Vec<String>,
    /// The compact state.
    pub state: DimensionState,
}

impl Assessment {
    /// Scores `findings` for `dimension` and assembles the object.
    pub fn new(dimension: Dimension, findings: Findings, status: Verdict) -> Assessment {
        let score = findings.score(dimension);
        let code = findings
            .errors
            .first()
            .or(findings.warnings.first())
            .or(findings.info.first())
            .cloned()
            .unwrap_or_else(|| OK_CODE.to_string());
        Assessment {
            score,
            status,
            state: DimensionState {
                status,
                code,
                score,
                warnings: findings.warnings.clone(),
            },
            info: findings.info,
            errors: findings.errors,
            warnings: findings.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_rule_orders_errors_before_warnings() {
        let mut f = Findings::default();
        assert_eq!(f.verdict(), Verdict::Pass);
        f.warning("x");
        assert_eq!(f.verdict(), Verdict::Warn);
        f.error("y");
        f.error("y");
        assert_eq!(f.errors.len(), 1);
        assert_eq!(f.verdict(), Verdict::Fail);
    }
}
