//! DNS connections (the `list_dns_connections`, `get_dns_connection` and
//! `get_dns_connection_coverage` MCP tools of SPEC §4.10, and their REST routes).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Credentials of a new connection: an IAM user's keys, or a role Mailward assumes.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DnsCredentialsInput {
    /// Keys: the access key id (`AKIA…`, 16 to 128 letters and digits).
    #[schema(pattern = "^[A-Za-z0-9]{16,128}$")]
    pub access_key_id: Option<String>,
    /// Keys: the secret access key (1 to 256 printable characters without spaces).
    #[schema(pattern = "^[!-~]{1,256}$")]
    pub secret_access_key: Option<String>,
    /// Role: `arn:aws:iam::<account>:role/<name>` in the account that hosts the zones. Mailward
    /// assumes it with the organization's own external id (`external_id` of
    /// `GET /dns-connections`), which the role's trust policy should require; an external id is
    /// never taken from input.
    #[schema(
        pattern = "^arn:aws[!-~]*:iam::[!-~]*:role/[!-~]*$",
        min_length = 20,
        max_length = 2048
    )]
    pub role_arn: Option<String>,
}

crate::schema_type!(
    /// The credentials of `POST /dns-connections`: the keys (`access_key_id` with
    /// `secret_access_key`) or a role (`role_arn`), not both.
    pub DnsCredentials = crate::constraints::refined(
        "DnsCredentialsInput",
        utoipa::openapi::schema::OneOfBuilder::new()
            .item(
                utoipa::openapi::schema::ObjectBuilder::new()
                    .required("access_key_id")
                    .required("secret_access_key")
                    .property("access_key_id", <String as utoipa::PartialSchema>::schema())
                    .property("secret_access_key", <String as utoipa::PartialSchema>::schema())
                    .property("role_arn", utoipa::openapi::schema::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::Type::Null)),
            )
            .item(crate::constraints::carries(
                "role_arn",
                <String as utoipa::PartialSchema>::schema(),
                &["access_key_id", "secret_access_key"],
            )),
    );
    uses DnsCredentialsInput
);

/// `POST /dns-connections` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDnsConnection {
    /// `route53` (the only provider so far).
    #[schema(value_type = DnsProvider)]
    pub provider: String,
    /// A label, 1 to 100 characters without control characters (surrounding spaces are
    /// trimmed).
    #[schema(value_type = crate::constraints::Label)]
    pub name: String,
    /// Keys or a role; never answered back.
    #[schema(value_type = DnsCredentials)]
    pub credentials: DnsCredentialsInput,
}

crate::words!(
    /// A DNS host provider.
    pub DnsProvider = ["route53"]
);

/// A zone a connection's provider hosts.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DnsConnectionZone {
    /// The provider's zone id.
    pub id: String,
    /// The apex.
    pub name: String,
    /// A private zone (serves no public domain).
    pub private: bool,
}

/// A DNS connection. The credentials are stored encrypted and never shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DnsConnection {
    pub id: Uuid,
    /// `dns_connection`.
    pub object: String,
    /// `route53`.
    pub provider: String,
    pub name: String,
    /// `keys` or `role`.
    pub credential_kind: String,
    /// The last four characters of the access key id, or the role ARN.
    pub credential_hint: String,
    /// `active`, or `error` when the last read of the zones failed (`error` says why).
    pub status: String,
    pub error: Option<String>,
    /// The zones seen at the last read.
    pub zones: Vec<DnsConnectionZone>,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When the zones were last read (at creation, and by every coverage request).
    #[schema(format = DateTime)]
    pub checked_at: String,
}

/// `GET /dns-connections`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnsConnectionList {
    /// The external id Mailward sends whenever it assumes a role for this organization: require
    /// it in the trust policy of the role a connection names (`sts:ExternalId`), so no other
    /// organization can use that role through Mailward. Extension.
    pub external_id: String,
    pub data: Vec<DnsConnection>,
}

/// A domain a connection's zones serve.
#[derive(Debug, Serialize, ToSchema)]
pub struct CoveredDomain {
    pub domain_id: Uuid,
    pub domain: String,
    /// The zone serving it (the longest apex that is the domain or a parent of it).
    pub zone_id: String,
    pub zone: String,
}

/// A domain none of the connection's public zones serves.
#[derive(Debug, Serialize, ToSchema)]
pub struct UncoveredDomain {
    pub domain_id: Uuid,
    pub domain: String,
}

/// `GET /dns-connections/{id}/coverage`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DnsConnectionCoverage {
    pub connection_id: Uuid,
    /// The caller's domains (all of the organization's, or those of a group-limited member's
    /// groups) that one of the connection's public zones serves.
    pub covered: Vec<CoveredDomain>,
    /// The caller's domains it does not serve.
    pub uncovered: Vec<UncoveredDomain>,
    pub covered_count: usize,
    pub domain_count: usize,
    /// When the zones were read (now).
    #[schema(format = DateTime)]
    pub checked_at: String,
}

/// `POST /dns-connections/{id}/publish` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishDnsRecords {
    /// The domain whose planned records to publish (one of the connection's zones must serve
    /// it).
    pub domain_id: Uuid,
}

/// One record set written (or not) in the customer's zone.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PublishedRecordSet {
    pub host: String,
    /// TXT or CNAME.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The values the set holds after the write (TXT values of other kinds at the name are
    /// kept).
    pub values: Vec<String>,
    /// `published`, or `failed` (`error` says why).
    pub result: String,
    pub error: Option<String>,
}

/// `POST /dns-connections/{id}/publish` response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DnsPublishResult {
    pub connection_id: Uuid,
    pub domain_id: Uuid,
    pub domain: String,
    /// The zone written to.
    pub zone_id: String,
    pub zone: String,
    /// Every record set the records guidance asked to create or change, in its order; records
    /// already published are left alone and not listed.
    pub record_sets: Vec<PublishedRecordSet>,
}
