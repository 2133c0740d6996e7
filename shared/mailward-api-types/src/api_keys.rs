//! API keys (SPEC §5.4): the key as listed, the key with its secret (shown once) and the body
//! that creates one.

use crate::common::PageInfo;
use mailward_domain::model::{self, ApiKeyAccess};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// API key access level.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ApiKeyAccessView {
    /// Reads and writes.
    #[default]
    ReadWrite,
    /// Reads only; writes answer 403.
    ReadOnly,
}

impl From<ApiKeyAccess> for ApiKeyAccessView {
    fn from(a: ApiKeyAccess) -> Self {
        match a {
            ApiKeyAccess::ReadWrite => Self::ReadWrite,
            ApiKeyAccess::ReadOnly => Self::ReadOnly,
        }
    }
}

impl From<ApiKeyAccessView> for ApiKeyAccess {
    fn from(a: ApiKeyAccessView) -> Self {
        match a {
            ApiKeyAccessView::ReadWrite => Self::ReadWrite,
            ApiKeyAccessView::ReadOnly => Self::ReadOnly,
        }
    }
}

/// An API key as listed: never the key itself.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKey {
    pub id: Uuid,
    pub name: String,
    pub access: ApiKeyAccessView,
    /// Last four characters of the key, to tell keys apart.
    pub last_four: String,
    /// The account that created it; null for the key made by headless signup.
    pub created_by: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub rotated_at: Option<OffsetDateTime>,
}

impl From<&model::ApiKey> for ApiKey {
    fn from(k: &model::ApiKey) -> Self {
        Self {
            id: k.id,
            name: k.name.clone(),
            access: k.access.into(),
            last_four: k.last_four.clone(),
            created_by: k.created_by,
            created_at: k.created_at,
            rotated_at: k.rotated_at,
        }
    }
}

/// An API key together with its secret value, returned exactly once (creation, rotation,
/// signup).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyWithSecret {
    #[serde(flatten)]
    pub api_key: ApiKey,
    /// The key. Send it as the HTTP Basic user name with an empty password. Shown only now.
    pub key: String,
}

/// A page of API keys.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyList {
    pub data: Vec<ApiKey>,
    pub page_info: PageInfo,
}

/// `POST /api-keys` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKeyRequest {
    /// A label for people, 1 to 100 characters without control characters (surrounding spaces
    /// are trimmed).
    #[schema(value_type = crate::constraints::Label)]
    pub name: String,
    /// `read_write` (default) or `read_only`.
    #[serde(default)]
    pub access: ApiKeyAccessView,
}
