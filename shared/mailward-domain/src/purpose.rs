//! Record purposes (SPEC §2.5 `purpose`): what a DNS record a domain publishes is for. Shared
//! by the records plan, the stored verification state of a domain and the wire shapes.

use serde::{Deserialize, Serialize};

/// What a record is for (SPEC §2.5 `purpose`). Ordered so maps keyed by purpose list them in a
/// stable, readable order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// `_dmarc.<domain>` (TXT, or the CNAME delegation to the hosted zone).
    Dmarc,
    /// The apex `v=spf1` TXT record.
    Spf,
    /// `<selector>._domainkey.<domain>` (TXT or CNAME).
    Dkim,
    /// `_mta-sts.<domain>` TXT.
    MtaSts,
    /// `mta-sts.<domain>`, the host serving the policy file (CNAME to the hosted zone).
    MtaStsPolicy,
    /// `_smtp._tls.<domain>` TXT.
    TlsRpt,
    /// `default._bimi.<domain>` TXT.
    Bimi,
}

impl Purpose {
    /// The wire spelling, for messages and map keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Dmarc => "dmarc",
            Purpose::Spf => "spf",
            Purpose::Dkim => "dkim",
            Purpose::MtaSts => "mta_sts",
            Purpose::MtaStsPolicy => "mta_sts_policy",
            Purpose::TlsRpt => "tls_rpt",
            Purpose::Bimi => "bimi",
        }
    }
}
