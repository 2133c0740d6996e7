//! SCIM 2.0 provisioning (RFC 7643/7644) records: the bearer tokens an administrator creates for
//! the organization's identity provider, and the users it provisioned.

use crate::model::Role;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// A SCIM bearer token's metadata; the token itself is kept only as a SHA-256 lookup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScimToken {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub token_hash: String,
    pub last_four: String,
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// The lookup of a SCIM token by its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScimTokenLookup {
    pub org_id: Uuid,
    pub token_id: Uuid,
}

/// A user the identity provider provisioned: the SCIM resource; the person is a member while
/// `active`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScimUser {
    pub org_id: Uuid,
    /// The account (the SCIM `id`).
    pub account_id: Uuid,
    /// The email address (`userName`).
    pub user_name: String,
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub given_name: Option<String>,
    #[serde(default)]
    pub family_name: Option<String>,
    #[serde(default)]
    pub display_name: Option<String>,
    pub active: bool,
    /// The roles it was provisioned with (viewer when none was sent).
    pub roles: Vec<Role>,
    /// Its group limits, kept while inactive so a reactivation restores them.
    #[serde(default)]
    pub groups: Vec<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// Bumped by every change (the SCIM `meta.version`).
    #[serde(default)]
    pub revision: u64,
}
