//! DNS connections: an organization connects the DNS host of its domains so Mailward can read
//! their zones (and say which domains a connection serves). The [`DnsHosts`] port is what a
//! provider implements; Route 53 is the first (`mailward_aws::dns_hosts`), others join behind
//! the same trait.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// How Mailward authenticates to the provider. Stored sealed (encrypted at rest), never
/// answered back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DnsHostCredentials {
    /// A Route 53 IAM user's access keys.
    Route53Keys {
        /// `AKIA…`.
        access_key_id: String,
        /// The secret.
        secret_access_key: String,
    },
    /// A role in the customer's account that Mailward's own role assumes.
    Route53Role {
        /// `arn:aws:iam::<account>:role/<name>`.
        role_arn: String,
        /// The external id the role's trust policy requires, if any.
        external_id: Option<String>,
    },
}

impl DnsHostCredentials {
    /// The provider these credentials are for.
    pub fn provider(&self) -> &'static str {
        match self {
            DnsHostCredentials::Route53Keys { .. } | DnsHostCredentials::Route53Role { .. } => {
                "route53"
            }
        }
    }

    /// `keys` or `role`.
    pub fn kind(&self) -> &'static str {
        match self {
            DnsHostCredentials::Route53Keys { .. } => "keys",
            DnsHostCredentials::Route53Role { .. } => "role",
        }
    }

    /// What may be shown of them: the last four characters of an access key id, or the
    /// role ARN.
    pub fn hint(&self) -> String {
        match self {
            DnsHostCredentials::Route53Keys { access_key_id, .. } => {
                format!("access key …{}", crate::secrets::last_four(access_key_id))
            }
            DnsHostCredentials::Route53Role { role_arn, .. } => role_arn.clone(),
        }
    }
}

/// A zone the provider hosts for the connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsHostZone {
    /// The provider's zone id.
    pub id: String,
    /// The apex, lower-case without the trailing dot.
    pub name: String,
    /// A private zone (answers only inside a network): it serves no public domain.
    pub private: bool,
}

/// Why the provider could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnsHostError {
    /// The credentials were refused, or the role could not be assumed.
    #[error("the provider refused the credentials: {0}")]
    Denied(String),
    /// The provider did not answer usefully.
    #[error("the provider did not answer: {0}")]
    Unavailable(String),
}

/// A DNS provider's API.
#[async_trait]
pub trait DnsHosts: Send + Sync {
    /// Every zone the credentials can see.
    async fn zones(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<Vec<DnsHostZone>, DnsHostError>;

    /// One of those zones, to read and write record sets in (the hosted-zone port, over the
    /// customer's zone).
    async fn zone(
        &self,
        credentials: &DnsHostCredentials,
        zone: &DnsHostZone,
    ) -> Result<Box<dyn crate::hosted_zone::HostedZone>, DnsHostError>;
}

/// A stored connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsConnection {
    pub id: Uuid,
    pub org_id: Uuid,
    /// `route53`.
    pub provider: String,
    /// A person's label.
    pub name: String,
    /// `keys` or `role`.
    pub credential_kind: String,
    /// What may be shown of the credentials.
    pub credential_hint: String,
    /// The credentials, sealed with the service key.
    pub sealed_credentials: String,
    /// The zones seen at the last check.
    pub zones: Vec<DnsHostZone>,
    /// `active`, or `error` when the last check failed.
    pub status: String,
    /// Why the last check failed.
    pub error: Option<String>,
    /// Who connected it.
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the zones were last read.
    #[serde(with = "time::serde::rfc3339")]
    pub checked_at: OffsetDateTime,
}
