//! Hosted DKIM keys (SPEC §2.7, §4.1 `dkim-keys` rows).

use mailward_domain::dkim_keys::{self as model, DkimDnsStatus, DkimRecordType};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// `POST /domains/{domainId}/dkim-keys` and `POST …/{id}` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DkimKeyRequest {
    /// The selector (`<selector>._domainkey.<domain>`): DNS labels of letters, digits and
    /// hyphens, dot-separated, at most 200 characters.
    #[schema(
        pattern = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
        max_length = 200
    )]
    pub selector: String,
    /// TXT (the key record) or CNAME (the sending service's key host).
    pub record_type: DkimRecordType,
    /// TXT: a DKIM key record with a usable key (`v=DKIM1; k=rsa; p=…`, at most 4096
    /// characters); CNAME: a host name.
    #[schema(pattern = r"\S", max_length = 4096)]
    pub value: String,
    /// Seconds, 1 to 86400 (default 3600).
    #[schema(example = 300, minimum = 1, maximum = 86400)]
    pub ttl: Option<u32>,
}

/// `GET /domains/{domainId}/dkim-keys` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListDkimKeysParams {
    /// Only keys in this state: unknown, syncing, ready or error.
    #[param(value_type = Option<DkimDnsStatus>, inline)]
    pub dns_status: Option<DkimDnsStatus>,
}

/// A hosted DKIM key (SPEC §2.7).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DkimKey {
    pub id: Uuid,
    pub selector: String,
    /// TXT or CNAME.
    #[schema(value_type = String)]
    pub record_type: DkimRecordType,
    pub value: String,
    /// unknown, syncing (served; the customer's CNAME not seen yet), ready or error.
    #[schema(value_type = String)]
    pub dns_status: DkimDnsStatus,
    /// Why publishing failed; non-null only while `dns_status` is error.
    pub publish_error: Option<String>,
    pub ttl: Option<u32>,
    /// The record the customer publishes: `<selector>._domainkey.<domain>` CNAME this.
    pub cname_target: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_published_at: Option<OffsetDateTime>,
    /// Set when the key was deleted (deleted keys stay readable by id).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub deleted_at: Option<OffsetDateTime>,
    /// The account or API key that created it.
    pub created_by: Option<String>,
}

impl DkimKey {
    /// The wire shape of a stored key, with the CNAME target under `hosted_zone` (`owner` is
    /// the domain's hosted owner name).
    pub fn view(key: &model::DkimKey, owner: &str, hosted_zone: &str) -> Self {
        Self {
            id: key.id,
            selector: key.selector.clone(),
            record_type: key.record_type,
            value: key.value.clone(),
            dns_status: key.dns_status,
            publish_error: key.publish_error.clone(),
            ttl: key.ttl,
            cname_target: model::hosted_name(&key.selector, owner, hosted_zone),
            created_at: key.created_at,
            updated_at: key.updated_at,
            last_published_at: key.last_published_at,
            deleted_at: key.deleted_at,
            created_by: key.created_by.clone(),
        }
    }
}
