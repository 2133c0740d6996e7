//! HTTPS fronts for hosted MTA-STS policy hosts. Senders fetch a policy only over HTTPS with a
//! certificate valid for `mta-sts.<domain>` (RFC 8461 §3.3), so every hosted domain needs a
//! certificate for that name and a front that presents it and forwards to the policy route.
//!
//! The [`PolicyFronts`] port opens, advances and closes one front per policy host:
//! - on AWS (`mailward_aws::policy_fronts`) an ACM certificate validated by DNS and a
//!   CloudFront distribution with the host as its alias;
//! - in the local stack ([`DirectFronts`]) the process serves the policy itself by `Host`
//!   over plain HTTP, so there is no certificate to obtain and the front is active at once.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The header a front names the policy host in when it forwards to the policy route with
/// the API's own `Host` (lower-case: an HTTP header name).
pub const FRONT_HOST_HEADER: &str = "x-mailward-policy-host";

/// Where a front stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontStage {
    /// The certificate waits for its DNS validation record.
    PendingValidation,
    /// The certificate is issued; the front is being deployed.
    Deploying,
    /// The front serves the host over HTTPS.
    Active,
    /// The process serves the host itself (the local stack): no certificate is involved.
    NotRequired,
    /// The certificate could not be issued (`failure` says why); a retry starts over.
    Failed,
}

impl FrontStage {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontStage::PendingValidation => "pending_validation",
            FrontStage::Deploying => "deploying",
            FrontStage::Active => "active",
            FrontStage::NotRequired => "not_required",
            FrontStage::Failed => "failed",
        }
    }

    /// Still on its way to active (a retry would restart work in progress).
    pub fn in_progress(self) -> bool {
        matches!(self, FrontStage::PendingValidation | FrontStage::Deploying)
    }

    /// Serving.
    pub fn serving(self) -> bool {
        matches!(self, FrontStage::Active | FrontStage::NotRequired)
    }
}

/// A DNS record the certificate authority needs to see before it issues (ACM's validation
/// CNAME). It stays published: renewals validate against it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationRecord {
    /// The owner name, without the trailing dot.
    pub name: String,
    /// `CNAME`.
    pub record_type: String,
    /// The value, without the trailing dot.
    pub value: String,
}

/// One front: what the adapter needs to find it again and what the service shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyFront {
    /// The policy host, `mta-sts.<domain>`.
    pub host: String,
    /// Where it stands.
    pub stage: FrontStage,
    /// The adapter's certificate id (an ACM ARN); empty when none is involved.
    pub certificate_id: String,
    /// The adapter's front id (a CloudFront distribution id), once created.
    #[serde(default)]
    pub front_id: Option<String>,
    /// Where the policy host's name must lead (the distribution's domain name); `None` where
    /// the process serves the host itself.
    #[serde(default)]
    pub target: Option<String>,
    /// The records the certificate authority validates.
    #[serde(default)]
    pub validation: Vec<ValidationRecord>,
    /// The certificate's expiry, once issued.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub not_after: Option<OffsetDateTime>,
    /// Why it failed.
    #[serde(default)]
    pub failure: Option<String>,
    /// It failed because its validation record was not seen within the verification window
    /// (the service's judgement, not the provider's).
    #[serde(default)]
    pub timed_out: bool,
    /// When the certificate was requested (the verification window counts from here).
    #[serde(with = "time::serde::rfc3339")]
    pub requested_at: OffsetDateTime,
}

impl PolicyFront {
    /// A front just requested: no distribution, no validation record yet.
    pub fn requested(
        host: &str,
        stage: FrontStage,
        certificate_id: &str,
        now: OffsetDateTime,
    ) -> Self {
        Self {
            host: host.to_owned(),
            stage,
            certificate_id: certificate_id.to_owned(),
            front_id: None,
            target: None,
            validation: Vec::new(),
            not_after: None,
            failure: None,
            timed_out: false,
            requested_at: now,
        }
    }
}

/// Why the provider could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontError {
    /// The provider refused or did not answer usefully; the next pass tries again.
    #[error("the certificate provider did not answer: {0}")]
    Unavailable(String),
}

/// What closing a front achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// Nothing of it is left.
    Closed,
    /// Parts are being taken down (a distribution must be disabled before deletion); call
    /// again later.
    InProgress,
}

/// The certificate and HTTPS front provider.
#[async_trait]
pub trait PolicyFronts: Send + Sync {
    /// Requests a certificate for `host` (the first step of a front), at `now`.
    async fn open(&self, host: &str, now: OffsetDateTime) -> Result<PolicyFront, FrontError>;

    /// Looks at a front again and takes the next step: creates the distribution once the
    /// certificate is issued, notices it deployed, or reports the certificate failed.
    async fn advance(&self, front: &PolicyFront) -> Result<PolicyFront, FrontError>;

    /// Takes a front down (distribution, then certificate).
    async fn close(&self, front: &PolicyFront) -> Result<Closing, FrontError>;
}

/// The local stack's front: the process serves `mta-sts.<domain>` itself by `Host` over
/// HTTP, so nothing is requested and nothing needs closing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirectFronts;

#[async_trait]
impl PolicyFronts for DirectFronts {
    async fn open(&self, host: &str, now: OffsetDateTime) -> Result<PolicyFront, FrontError> {
        Ok(PolicyFront::requested(
            host,
            FrontStage::NotRequired,
            "",
            now,
        ))
    }

    async fn advance(&self, front: &PolicyFront) -> Result<PolicyFront, FrontError> {
        Ok(front.clone())
    }

    async fn close(&self, _front: &PolicyFront) -> Result<Closing, FrontError> {
        Ok(Closing::Closed)
    }
}
