//! Scoring: dimension weights, per-code deductions and the overall 0-100 score.
//!
//! Why data, not code: the OpenAPI description of `GET /tools/audit` is generated from
//! [`WEIGHTS`] and [`DEDUCTIONS`], so the documentation cannot drift from the arithmetic.
//!
//! # Rules
//!
//! * Each scored dimension starts at 0 and loses the points of every distinct code it reports
//!   (errors, warnings and info alike; most info codes cost 0), capped at the dimension's weight:
//!   `score = -min(weight, Σ points)`. MTA-STS and TLS-RPT are reported but never scored (their
//!   deductions are always 0).
//! * A code not in the table costs [`UNLISTED_ERROR_POINTS`] as an error,
//!   [`UNLISTED_WARNING_POINTS`] as a warning and 0 as info. This covers parser codes passed
//!   through from `mailward-spf`, `mailward-dmarc` and `mailward-records` (their own module docs
//!   list them) so a new parser code is scored sensibly without an edit here.
//! * Overall = `100 + Σ scores` of mx, spf, dkim, dmarc and bimi, clamped to 0..=100.
//! * Parked domain (see [`crate::parked`]): only spf and dmarc count, rescaled:
//!   `round(100 × (60 + spf + dmarc) / 60)`.
//! * `dns_lookup_failed` (we could not find out) costs about half the weight: neither "missing"
//!   nor a free pass.
//!
//! # Weights
//!
//! | dimension | weight |
//! |---|---|
//! | dmarc | 35 |
//! | spf | 25 |
//! | dkim | 20 |
//! | mx | 10 |
//! | bimi | 10 |
//! | mtaSts | 0 (not scored) |
//! | tlsRpt | 0 (not scored) |
//! | dane | 0 (not scored) |
//!
//! # Deductions
//!
//! | dimension | code | category | points |
//! |---|---|---|---|
//! | mx | `mx_all_hosts_unresolvable` | error | 10 |
//! | mx | `null_mx_with_other_records` | error | 10 |
//! | mx | `mx_ip_literal` | error | 10 |
//! | mx | `invalid_mx_host` | error | 10 |
//! | mx | `no_mx_records` | warning | 5 |
//! | mx | `mx_host_unresolvable` | warning | 5 |
//! | mx | `mx_host_lookup_failed` | warning | 2 |
//! | mx | `mx_is_cname` | warning | 3 |
//! | mx | `duplicate_mx_host` | warning | 1 |
//! | mx | `null_mx_nonzero_preference` | warning | 1 |
//! | mx | `dns_lookup_failed` | warning | 5 |
//! | mx | `null_mx` | info | 0 |
//! | spf | `no_spf_record` | error | 25 |
//! | spf | `multiple_spf_records` | error | 25 |
//! | spf | `syntax_error` | error | 25 |
//! | spf | `lookup_limit_exceeded` | error | 20 |
//! | spf | `include_loop` | error | 20 |
//! | spf | `permissive_all` | error (`+all`) / warning (`?all`) | 20 |
//! | spf | `void_lookup_limit_exceeded` | error | 15 |
//! | spf | `include_target_without_spf` | error | 15 |
//! | spf | `redirect_target_without_spf` | error | 15 |
//! | spf | `string_too_long` | error | 10 |
//! | spf | `invalid_target_name` | error | 10 |
//! | spf | `mx_too_many_records` | error | 10 |
//! | spf | `ptr_deprecated` | warning | 5 |
//! | spf | `audit_truncated` | warning | 5 |
//! | spf | `macro_unexpandable` | warning | 2 |
//! | spf | `redirect_ignored_with_all` | warning | 2 |
//! | spf | `terms_after_all` | warning | 2 |
//! | spf | `dns_lookup_failed` | warning | 12 |
//! | dkim | `no_dkim_key_found` | error | 20 |
//! | dkim | `no_usable_dkim_key` | error | 20 |
//! | dkim | `rsa_key_too_short` | error | 15 |
//! | dkim | `probe_catalogue_unavailable` | error | 10 |
//! | dkim | `sha1_only` | error | 10 |
//! | dkim | `rsa_key_weak` | warning | 5 |
//! | dkim | `multiple_key_records` | warning | 5 |
//! | dkim | `testing_mode` | warning | 3 |
//! | dkim | `key_revoked` | warning | 2 |
//! | dkim | `dns_lookup_failed` | warning | 10 |
//! | dkim | `selector_is_cname` | info | 0 |
//! | dmarc | `dmarc_record_missing` | error | 35 |
//! | dmarc | `dmarc_multiple_records` | error | 35 |
//! | dmarc | `dmarc_record_invalid` | error | 35 |
//! | dmarc | `dmarc_dangling_cname` | error | 35 |
//! | dmarc | `policy_none` | warning | 20 |
//! | dmarc | `policy_quarantine` | warning | 8 |
//! | dmarc | `testing_mode` | warning | 5 |
//! | dmarc | `subdomain_policy_weaker` | warning | 5 |
//! | dmarc | `dmarc_record_on_parent_only` | warning | 5 |
//! | dmarc | `rua_missing` | warning | 5 |
//! | dmarc | `rua_destination_unauthorized` | warning | 5 |
//! | dmarc | `rua_authorization_unknown` | warning | 1 |
//! | dmarc | `dmarc_near_miss_record` | warning | 0 |
//! | dmarc | `policy_treated_as_none` | warning | 0 (already costed by `policy_none`) |
//! | dmarc | `legacy_tag_pct` | info/warning | 0 |
//! | dmarc | `dns_lookup_failed` | warning | 17 |
//! | dmarc | `dmarc_cname_delegated`, `dmarc_hosted` | info | 0 |
//! | bimi | `bimi_record_missing` | warning | 10 |
//! | bimi | `bimi_declined` | warning | 10 |
//! | bimi | `dmarc_not_enforced_for_bimi` | warning | 5 |
//! | bimi | `missing_certificate` | warning | 3 |
//! | bimi | `logo_not_svg` | warning | 3 |
//! | bimi | `dns_lookup_failed` | warning | 5 |
//! | mtaSts, tlsRpt, dane | every code | any | 0 |

use serde::{Deserialize, Serialize};

/// The audited dimensions, named as in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Dimension {
    /// MX records.
    Mx,
    /// SPF.
    Spf,
    /// DKIM keys.
    Dkim,
    /// DMARC policy.
    Dmarc,
    /// BIMI record.
    Bimi,
    /// MTA-STS.
    MtaSts,
    /// TLS-RPT.
    TlsRpt,
    /// DANE for SMTP (informational).
    Dane,
}

impl Dimension {
    /// The JSON name, for documentation and table lookups.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Mx => "mx",
            Dimension::Spf => "spf",
            Dimension::Dkim => "dkim",
            Dimension::Dmarc => "dmarc",
            Dimension::Bimi => "bimi",
            Dimension::MtaSts => "mtaSts",
            Dimension::TlsRpt => "tlsRpt",
            Dimension::Dane => "dane",
        }
    }
}

/// A dimension's share of the 100 points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight {
    /// The dimension.
    pub dimension: Dimension,
    /// Its points.
    pub points: i32,
}

/// The weights of the scored dimensions (they add up to 100). MTA-STS and TLS-RPT are absent:
/// they are never scored.
pub const WEIGHTS: [Weight; 5] = [
    Weight {
        dimension: Dimension::Dmarc,
        points: 35,
    },
    Weight {
        dimension: Dimension::Spf,
        points: 25,
    },
    Weight {
        dimension: Dimension::Dkim,
        points: 20,
    },
    Weight {
        dimension: Dimension::Mx,
        points: 10,
    },
    Weight {
        dimension: Dimension::Bimi,
        points: 10,
    },
];

/// The dimensions that count for a parked domain.
pub const PARKED_DIMENSIONS: [Dimension; 2] = [Dimension::Spf, Dimension::Dmarc];

/// Points for an error code missing from [`DEDUCTIONS`].
pub const UNLISTED_ERROR_POINTS: i32 = 10;
/// Points for a warning code missing from [`DEDUCTIONS`].
pub const UNLISTED_WARNING_POINTS: i32 = 2;

/// One row of the deduction table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deduction {
    /// The dimension reporting the code.
    pub dimension: Dimension,
    /// The stable code.
    pub code: &'static str,
    /// Points taken off when the code is reported.
    pub points: i32,
    /// One line for the OpenAPI description.
    pub meaning: &'static str,
}

const fn d(
    dimension: Dimension,
    code: &'static str,
    points: i32,
    meaning: &'static str,
) -> Deduction {
    Deduction {
        dimension,
        code,
        points,
        meaning,
    }
}

use Dimension::{Bimi, Dkim, Dmarc, Mx, Spf};

/// Every code the audit itself emits, with its cost (the module docs show the same table).
pub const DEDUCTIONS: &[Deduction] = &[
    d(
        Mx,
        "mx_all_hosts_unresolvable",
        10,
        "no MX host has an A or AAAA record",
    ),
    d(
        Mx,
        "null_mx_with_other_records",
        10,
        "a null MX beside other MX records (RFC 7505)",
    ),
    d(Mx, "mx_ip_literal", 10, "an MX target is an IP address"),
    d(Mx, "invalid_mx_host", 10, "an MX target is not a host name"),
    d(
        Mx,
        "no_mx_records",
        5,
        "no MX records: mail falls back to the A/AAAA records",
    ),
    d(
        Mx,
        "mx_host_unresolvable",
        5,
        "an MX host has no A or AAAA record",
    ),
    d(
        Mx,
        "mx_host_lookup_failed",
        2,
        "an MX host's address lookup failed (unknown)",
    ),
    d(
        Mx,
        "mx_is_cname",
        3,
        "an MX host is a CNAME (RFC 2181 §10.3)",
    ),
    d(
        Mx,
        "duplicate_mx_host",
        1,
        "the same MX host is listed twice",
    ),
    d(
        Mx,
        "null_mx_nonzero_preference",
        1,
        "the null MX preference is not 0",
    ),
    d(
        Mx,
        "dns_lookup_failed",
        5,
        "the MX lookup failed; presence unknown",
    ),
    d(
        Mx,
        "null_mx",
        0,
        "the domain declares it accepts no mail (RFC 7505)",
    ),
    d(Spf, "no_spf_record", 25, "no v=spf1 record"),
    d(
        Spf,
        "multiple_spf_records",
        25,
        "more than one v=spf1 record (permerror)",
    ),
    d(Spf, "syntax_error", 25, "the record does not parse"),
    d(
        Spf,
        "lookup_limit_exceeded",
        20,
        "more than 10 DNS-querying terms",
    ),
    d(
        Spf,
        "include_loop",
        20,
        "include/redirect loop or nesting too deep",
    ),
    d(
        Spf,
        "permissive_all",
        20,
        "+all or ?all authorizes everyone",
    ),
    d(
        Spf,
        "void_lookup_limit_exceeded",
        15,
        "more than 2 void lookups",
    ),
    d(
        Spf,
        "include_target_without_spf",
        15,
        "an include target has no SPF record",
    ),
    d(
        Spf,
        "redirect_target_without_spf",
        15,
        "a redirect target has no SPF record",
    ),
    d(Spf, "string_too_long", 10, "a TXT string over 255 octets"),
    d(
        Spf,
        "invalid_target_name",
        10,
        "a term targets an unqueryable name",
    ),
    d(
        Spf,
        "mx_too_many_records",
        10,
        "an mx term names more than 10 MX records",
    ),
    d(Spf, "ptr_deprecated", 5, "ptr is deprecated"),
    d(
        Spf,
        "audit_truncated",
        5,
        "the record tree is too large to walk",
    ),
    d(
        Spf,
        "macro_unexpandable",
        2,
        "a term needs the sender to expand",
    ),
    d(
        Spf,
        "redirect_ignored_with_all",
        2,
        "redirect is ignored because of all",
    ),
    d(
        Spf,
        "terms_after_all",
        2,
        "terms after all are never evaluated",
    ),
    d(
        Spf,
        "dns_lookup_failed",
        12,
        "an SPF lookup failed (temperror); presence unknown",
    ),
    d(
        Dkim,
        "no_dkim_key_found",
        20,
        "no DKIM key at any probed selector",
    ),
    d(
        Dkim,
        "no_usable_dkim_key",
        20,
        "keys found, but none a verifier can use",
    ),
    d(Dkim, "rsa_key_too_short", 15, "an RSA key under 1024 bits"),
    d(
        Dkim,
        "probe_catalogue_unavailable",
        10,
        "the selector catalogue was unavailable; the probe is incomplete",
    ),
    d(Dkim, "sha1_only", 10, "a key allows only rsa-sha1"),
    d(Dkim, "rsa_key_weak", 5, "an RSA key of 1024..2047 bits"),
    d(
        Dkim,
        "multiple_key_records",
        5,
        "a selector publishes several key records",
    ),
    d(Dkim, "testing_mode", 3, "a key has t=y"),
    d(
        Dkim,
        "key_revoked",
        2,
        "a selector has an empty p= (revoked)",
    ),
    d(
        Dkim,
        "dns_lookup_failed",
        10,
        "a selector lookup failed; presence unknown",
    ),
    d(
        Dkim,
        "selector_is_cname",
        0,
        "a selector is delegated by CNAME",
    ),
    d(
        Dmarc,
        "dmarc_record_missing",
        35,
        "no DMARC record for the domain or its organizational domain",
    ),
    d(
        Dmarc,
        "dmarc_multiple_records",
        35,
        "several v=DMARC1 records: no policy applies",
    ),
    d(
        Dmarc,
        "dmarc_record_invalid",
        35,
        "the record gives no DMARC processing",
    ),
    d(
        Dmarc,
        "dmarc_dangling_cname",
        35,
        "_dmarc is a CNAME whose target has no record",
    ),
    d(Dmarc, "policy_none", 20, "p=none: monitoring only"),
    d(
        Dmarc,
        "policy_quarantine",
        8,
        "p=quarantine: below full reject",
    ),
    d(
        Dmarc,
        "testing_mode",
        5,
        "t=y: the policy is applied one step weaker",
    ),
    d(Dmarc, "subdomain_policy_weaker", 5, "sp is weaker than p"),
    d(
        Dmarc,
        "dmarc_record_on_parent_only",
        5,
        "the policy is inherited from the organizational domain",
    ),
    d(Dmarc, "rua_missing", 5, "no aggregate report destination"),
    d(
        Dmarc,
        "rua_destination_unauthorized",
        5,
        "an external report destination lacks its authorization record",
    ),
    d(
        Dmarc,
        "rua_authorization_unknown",
        1,
        "an authorization lookup failed",
    ),
    d(
        Dmarc,
        "dmarc_near_miss_record",
        0,
        "a TXT record mentions DMARC but is not read by receivers",
    ),
    d(
        Dmarc,
        "policy_treated_as_none",
        0,
        "bad p with a valid rua: treated as none (costed as policy_none)",
    ),
    d(
        Dmarc,
        "legacy_tag_pct",
        0,
        "pct is ignored by RFC 9989 receivers",
    ),
    d(
        Dmarc,
        "dns_lookup_failed",
        17,
        "the DMARC lookup failed; presence unknown",
    ),
    d(
        Dmarc,
        "dmarc_cname_delegated",
        0,
        "_dmarc is delegated by CNAME",
    ),
    d(
        Dmarc,
        "dmarc_hosted",
        0,
        "the CNAME points into the hosted DMARC zone",
    ),
    d(
        Bimi,
        "bimi_record_missing",
        10,
        "no BIMI record at default._bimi",
    ),
    d(Bimi, "bimi_declined", 10, "the declination record: no logo"),
    d(
        Bimi,
        "dmarc_not_enforced_for_bimi",
        5,
        "BIMI needs DMARC quarantine or reject",
    ),
    d(Bimi, "missing_certificate", 3, "no mark certificate (a=)"),
    d(Bimi, "logo_not_svg", 3, "the logo URL does not end in .svg"),
    d(
        Bimi,
        "dns_lookup_failed",
        5,
        "the BIMI lookup failed; presence unknown",
    ),
];

/// The weights and deductions as one Markdown table, for the OpenAPI description of
/// `GET /tools/audit` (generated from [`WEIGHTS`] and [`DEDUCTIONS`], so it cannot drift).
pub fn markdown_table() -> String {
    let mut out = String::from("| dimension | weight |\n|---|---|\n");
    for w in WEIGHTS {
        out.push_str(&format!("| {} | {} |\n", w.dimension.as_str(), w.points));
    }
    out.push_str(
        "| mtaSts | 0 (not scored) |\n| tlsRpt | 0 (not scored) |\n| dane | 0 (not scored) |\n\n",
    );
    out.push_str("| dimension | code | points | meaning |\n|---|---|---|---|\n");
    for d in DEDUCTIONS {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            d.dimension.as_str(),
            d.code,
            d.points,
            d.meaning
        ));
    }
    out.push_str(&format!(
        "\nUnlisted codes: {UNLISTED_ERROR_POINTS} points as an error, {UNLISTED_WARNING_POINTS} as a warning, 0 as info; each dimension loses at most its weight. Parked domains count spf and dmarc only, rescaled to 100.\n"
    ));
    out
}

/// The weight of `dimension` (0 for the unscored ones).
pub fn weight(dimension: Dimension) -> i32 {
    WEIGHTS
        .iter()
        .find(|w| w.dimension == dimension)
        .map_or(0, |w| w.points)
}

/// Points one code costs in `dimension`. Why a function: the fallback rule for unlisted codes
/// lives in one place.
pub fn points(dimension: Dimension, code: &str, is_error: bool, is_warning: bool) -> i32 {
    if weight(dimension) == 0 {
        return 0;
    }
    if let Some(row) = DEDUCTIONS
        .iter()
        .find(|r| r.dimension == dimension && r.code == code)
    {
        return row.points;
    }
    if is_error {
        UNLISTED_ERROR_POINTS
    } else if is_warning {
        UNLISTED_WARNING_POINTS
    } else {
        0
    }
}

/// The dimension score: minus the capped sum of the points of its distinct codes (the error,
/// warning and info codes of its findings; [`crate::verdict::Findings::score`] passes them).
pub fn dimension_score(
    dimension: Dimension,
    errors: &[String],
    warnings: &[String],
    info: &[String],
) -> i32 {
    let total: i32 = errors
        .iter()
        .map(|c| points(dimension, c, true, false))
        .chain(warnings.iter().map(|c| points(dimension, c, false, true)))
        .chain(info.iter().map(|c| points(dimension, c, false, false)))
        .sum();
    -total.clamp(0, weight(dimension))
}

/// The overall score from the scored dimensions' scores (`(dimension, score)` pairs; others are
/// ignored). Parked domains count only spf and dmarc, rescaled to 100.
pub fn overall_score(scores: &[(Dimension, i32)], parked: bool) -> u8 {
    let counted: Vec<Dimension> = if parked {
        PARKED_DIMENSIONS.to_vec()
    } else {
        WEIGHTS.iter().map(|w| w.dimension).collect()
    };
    let max: i32 = counted.iter().map(|d| weight(*d)).sum();
    let lost: i32 = scores
        .iter()
        .filter(|(d, _)| counted.contains(d))
        .map(|(d, s)| (*s).clamp(-weight(*d), 0))
        .sum();
    if max <= 0 {
        return 0;
    }
    let kept = (max + lost).max(0);
    let scaled = (kept * 100 + max / 2) / max;
    u8::try_from(scaled.clamp(0, 100)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Findings;

    #[test]
    fn weights_add_up_to_100() {
        assert_eq!(WEIGHTS.iter().map(|w| w.points).sum::<i32>(), 100);
    }

    #[test]
    fn module_docs_list_every_deduction() {
        let docs = include_str!("score.rs");
        for row in DEDUCTIONS {
            let dim = row.dimension.as_str();
            let line = format!("//! | {dim} | `{}` |", row.code);
            let shared = docs.lines().any(|l| {
                l.starts_with(&format!("//! | {dim} | "))
                    && l.contains(&format!("`{}`", row.code))
                    && l.contains(&format!("| {} ", row.points))
            });
            assert!(shared, "docs table lacks {line} with {} points", row.points);
        }
        assert!(markdown_table().contains("`dmarc_record_missing` | 35"));
    }

    #[test]
    fn every_deduction_fits_its_dimension() {
        for row in DEDUCTIONS {
            assert!(
                row.points >= 0 && row.points <= weight(row.dimension),
                "{row:?}"
            );
        }
    }

    #[test]
    fn scores_cap_and_rescale() {
        let mut f = Findings::default();
        f.error("no_spf_record");
        f.error("syntax_error");
        assert_eq!(f.score(Dimension::Spf), -25);
        assert_eq!(overall_score(&[(Dimension::Spf, -25)], false), 75);
        assert_eq!(
            overall_score(&[(Dimension::Spf, -25), (Dimension::Dkim, -20)], true),
            58
        );
        assert_eq!(overall_score(&[], true), 100);
        let mut m = Findings::default();
        m.warning("anything");
        assert_eq!(m.score(Dimension::MtaSts), 0);
    }
}
