//! The DNS tools and the audit (SPEC §2.11, §2.12, §4.8): request bodies, parameters and
//! answers.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /tools/dns-lookup` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DnsLookupRequest {
    /// The name to look up, e.g. `example.com` or `_dmarc.example.com`.
    #[schema(
        pattern = r"^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$",
        max_length = 253
    )]
    pub host: String,
}

/// An MX answer.
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct MxAnswer {
    /// Lower preference is tried first.
    pub preference: u16,
    /// The mail exchanger host.
    pub exchange: String,
}

/// Records found, by type; a type with no answer is absent.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[allow(non_snake_case)]
pub struct DnsRecordsByType {
    /// TXT values, each with its strings concatenated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub TXT: Option<Vec<String>>,
    /// MX records with their preference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub MX: Option<Vec<MxAnswer>>,
    /// Name servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub NS: Option<Vec<String>>,
    /// IPv4 addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub A: Option<Vec<String>>,
    /// The canonical name this host is an alias of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub CNAME: Option<Vec<String>>,
}

/// `POST /tools/dns-lookup` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DnsLookupResult {
    /// The normalised host.
    pub host: String,
    /// Answers by type.
    pub records: DnsRecordsByType,
}

/// Query parameters naming a domain.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DomainParam {
    /// The domain, e.g. `example.com`.
    #[param(
        pattern = r"^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$",
        max_length = 253
    )]
    pub domain: String,
}

/// SPEC §2.11: a provider id from NS patterns, or null.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DetectedDnsProvider {
    /// Lowercase provider id (an open set: treat an unfamiliar id like null); null when unknown.
    pub id: Option<String>,
    /// The domain's name servers; empty when the lookup failed.
    pub nameservers: Vec<String>,
}

/// `GET /tools/validate-include` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncludeValidation {
    /// Whether `include:<domain>` is safe to add.
    pub valid: bool,
    /// DNS lookups the include costs, itself included (only when valid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookups: Option<u32>,
    /// Why it is not (only when invalid): an SPF problem code such as `no_spf_record`,
    /// `multiple_spf_records`, `syntax_error`, `lookup_limit_exceeded`,
    /// `void_lookup_limit_exceeded`, `include_loop`, `permissive_all` or `dns_temporary_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The provider a domain's mail is hosted by.
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct MailboxProvider {
    /// Catalogue source id.
    pub id: uuid::Uuid,
    /// Catalogue slug, e.g. `google-workspace`.
    pub external_id: String,
    /// Display name.
    pub name: String,
}

/// `GET /tools/mailbox-provider` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MailboxProviderResult {
    /// The normalised domain.
    pub domain: String,
    /// The mailbox provider, or null.
    pub provider: Option<MailboxProvider>,
    /// Why `provider` is null: `no_mx`, `unknown_mx`, `security_gateway` or `dns_lookup_failed`;
    /// null when a provider was found.
    pub reason: Option<String>,
    /// The MX hosts, lowest preference first.
    pub mx: Vec<String>,
}

/// `GET /tools/audit` parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditParams {
    /// The domain to audit.
    pub domain: String,
    /// Captures a lead and is echoed in `summary.email`.
    pub email: Option<String>,
    /// Save the result for `GET /tools/activation-scan` (24 hours).
    #[serde(default)]
    pub store_scan: bool,
    /// Bypass the ten-minute cache and the resolver's cache.
    #[serde(default)]
    pub refresh: bool,
}

/// Query naming a domain.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanParams {
    /// The audited domain.
    pub domain: String,
}
