//! What the service learned of a domain's certificates: its MX hosts' TLS certificates and its
//! BIMI mark certificate. Checked about daily by the sweep and kept on the domain, so the task
//! engine can judge them on every pass without fetching them again.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// A TLS certificate problem of one MX host (from a STARTTLS probe).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MxCertificateFinding {
    /// The MX host.
    pub host: String,
    /// What is wrong, for a person (expired, not valid for that name, expiring on ...).
    pub problem: String,
}

/// The BIMI mark certificate as last fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmcFinding {
    /// The certificate's URL (the BIMI record's `a=`).
    pub url: String,
    /// When it expires.
    #[serde(with = "time::serde::rfc3339")]
    pub not_after: OffsetDateTime,
}

/// The last MX certificate probe of a domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MxTlsCheck {
    /// The problems found (empty: every probed host had a good certificate).
    pub findings: Vec<MxCertificateFinding>,
    /// When the probe ran.
    #[serde(with = "time::serde::rfc3339")]
    pub checked_at: OffsetDateTime,
}

/// The last fetch of a domain's BIMI mark certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmcCheck {
    /// What was read.
    pub finding: VmcFinding,
    /// When it was fetched.
    #[serde(with = "time::serde::rfc3339")]
    pub checked_at: OffsetDateTime,
}
