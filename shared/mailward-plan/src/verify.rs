//! The verification pass behind `POST /domains/{id}/verify`, `/verify/spf` and `/verify/dkim`
//! (SPEC §4.1).
//!
//! Every lookup goes through [`Uncached`]: a person has just published a record and a cached
//! negative answer must not hide it. A purpose is confirmed when every planned record of that
//! purpose is served exactly (the comparison rules of [`crate::compare`]) and no conflicting
//! record of that purpose remains (no delete entry); a failed lookup confirms nothing.
//!
//! # The route's JSON
//!
//! The route serializes [`Verification`] and adds its own `queued` bool:
//!
//! ```json
//! {
//!   "queued": false,
//!   "verified": { "dmarc": true, "spf": true },
//!   "results": { "dmarc": true, "spf": true, "dkim": false, "mta_sts": false, "bimi": false }
//! }
//! ```
//!
//! * `verified` holds only the purposes confirmed during this pass (always `true`); purposes not
//!   confirmed, not checked (outside `only`) or not planned are absent. `tls_rpt` and
//!   `mta_sts_policy` never appear: they are not checked here at all.
//! * `results` always has the five keys: `true` when confirmed in this pass, `false` otherwise
//!   (not published, lookup failed, not checked, or nothing planned, e.g. no DKIM key or BIMI
//!   not enabled): SPEC §4.1 makes all five booleans.
//! * `mta_sts` is the `_mta-sts` TXT record only; the policy host is served over HTTPS and is
//!   not part of this pass.

use crate::compare::compare_with;
use crate::model::{Action, ExpectedRecord, Purpose};
use mailward_domain::dns::{DnsResolver, Uncached};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The purposes a verification pass can confirm, in response order.
pub const VERIFIABLE: [Purpose; 5] = [
    Purpose::Dmarc,
    Purpose::Spf,
    Purpose::Dkim,
    Purpose::MtaSts,
    Purpose::Bimi,
];

/// Per-purpose outcome of one pass (SPEC §4.1 `results`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = VerifyResults))]
pub struct Results {
    /// DMARC record (TXT or delegation CNAME) confirmed.
    pub dmarc: bool,
    /// The single SPF record confirmed.
    pub spf: bool,
    /// Every planned DKIM key confirmed (false when none is planned).
    pub dkim: bool,
    /// The `_mta-sts` TXT record confirmed.
    pub mta_sts: bool,
    /// The BIMI record confirmed (false when none is planned).
    pub bimi: bool,
}

/// What one verification pass confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Verification {
    /// Purposes confirmed during this pass, each `true`; nothing else appears.
    pub verified: BTreeMap<Purpose, bool>,
    /// The five results.
    pub results: Results,
}

impl Verification {
    /// The purposes confirmed in this pass: what the caller stores as `previously_verified`.
    pub fn confirmed(&self) -> impl Iterator<Item = Purpose> + '_ {
        self.verified.iter().filter(|(_, ok)| **ok).map(|(p, _)| *p)
    }
}

/// Runs the verification pass over `expected` (from [`crate::expected_records`]), restricted to
/// one purpose when `only` is given (`/verify/spf` → `Some(Purpose::Spf)`, `/verify/dkim` →
/// `Some(Purpose::Dkim)`). Always uncached. SPF is confirmed only when the published record's
/// include tree stays within the 10-lookup limit.
pub async fn verify(
    resolver: &dyn DnsResolver,
    expected: &[ExpectedRecord],
    only: Option<Purpose>,
) -> Verification {
    let uncached = Uncached(resolver);
    let in_scope: Vec<ExpectedRecord> = expected
        .iter()
        .filter(|r| VERIFIABLE.contains(&r.purpose))
        .filter(|r| only.is_none_or(|p| p == r.purpose))
        .cloned()
        .collect();
    // The SPF include tree is walked too: a record over the lookup limit is published but
    // broken (permerror at receivers), so it is not confirmed.
    let states = compare_with(&uncached, &in_scope, true).await;
    let mut out = Verification::default();
    for purpose in VERIFIABLE {
        let of: Vec<_> = states
            .iter()
            .filter(|s| s.record.purpose == purpose)
            .collect();
        let confirmed = !of.is_empty()
            && of.iter().all(|s| {
                s.action != Action::Delete
                    && s.already_published == Some(true)
                    && s.spf_lookup_count
                        .is_none_or(|count| count <= crate::expected::SPF_LOOKUP_LIMIT)
            });
        if confirmed {
            out.verified.insert(purpose, true);
        }
        match purpose {
            Purpose::Dmarc => out.results.dmarc = confirmed,
            Purpose::Spf => out.results.spf = confirmed,
            Purpose::Dkim => out.results.dkim = confirmed,
            Purpose::MtaSts => out.results.mta_sts = confirmed,
            Purpose::Bimi => out.results.bimi = confirmed,
            Purpose::MtaStsPolicy | Purpose::TlsRpt => {}
        }
    }
    out
}
