//! The DNS tools and the audit (SPEC §2.11, §2.12, §4.8): request bodies, parameters and
//! answers.

use crate::constraints::HostName;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /tools/dns-lookup` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DnsLookupRequest {
    /// The name to look up, e.g. `example.com` or `_dmarc.example.com`.
    #[schema(value_type = HostName)]
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
    #[param(value_type = HostName, inline)]
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
    #[param(value_type = HostName, inline)]
    pub domain: String,
    /// Captures a lead and is echoed in `summary.email`.
    #[param(format = Email)]
    pub email: Option<String>,
    /// Save the result for `GET /tools/activation-scan` (24 hours).
    #[serde(default)]
    pub store_scan: bool,
    /// Bypass the ten-minute cache and the resolver's cache (callers with credentials only;
    /// an anonymous call is served from the cache).
    #[serde(default)]
    pub refresh: bool,
}

/// Query naming a domain.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScanParams {
    /// The audited domain.
    #[param(value_type = HostName, inline)]
    pub domain: String,
}

/// `POST /tools/header-analyze` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderAnalyzeRequest {
    /// The message's headers as received (10 to 100,000 characters, starting with a
    /// `Name: value` line), optionally followed by a blank line and the body (then body hashes
    /// are checked too).
    #[schema(
        pattern = r"^[\r\n \t]*[!-9;-~]+:[\s\S]*$",
        min_length = 10,
        max_length = 100000
    )]
    pub headers: String,
    /// Re-verify live (DKIM and ARC signatures against DNS keys, SPF of the connecting IP,
    /// DMARC alignment). Default true.
    #[serde(default)]
    pub include_dns_validation: Option<bool>,
}

/// The verdicts the trusted Authentication-Results state (`unknown` when none says).
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct HeaderVerdicts {
    /// SPF.
    pub spf: String,
    /// DKIM (`pass` when any signature passed).
    pub dkim: String,
    /// DMARC.
    pub dmarc: String,
    /// ARC.
    pub arc: String,
    /// The authentication service they come from (the final receiver), if any wrote one.
    pub trusted_authserv_id: Option<String>,
}

/// Identifier alignment with the From domain, as the headers show it.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct HeaderAlignment {
    /// The From domain.
    pub from_domain: Option<String>,
    /// The envelope sender's domain (Return-Path, or `smtp.mailfrom` of the trusted results).
    pub mail_from_domain: Option<String>,
    /// The DKIM signing domains (`d=`).
    pub dkim_domains: Vec<String>,
    /// Whether the envelope domain equals the From domain (strict alignment).
    pub spf_strict: Option<bool>,
    /// Whether some signing domain equals the From domain (strict alignment).
    pub dkim_strict: bool,
}

/// One DKIM or ARC signature re-verified against its DNS key.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SignatureCheck {
    /// `d=`.
    pub domain: String,
    /// `s=`.
    pub selector: String,
    /// `a=`.
    pub algorithm: String,
    /// `c=` (header/body).
    pub canonicalization: String,
    /// `l=`, when the body hash covers only part of the body.
    pub body_length: Option<u64>,
    /// pass, fail, neutral, none, temperror or permerror.
    pub result: String,
    /// Why, when it did not pass (e.g. body hash mismatch, key not found, expired).
    pub detail: Option<String>,
    /// Whether `d=` aligns with the From domain (relaxed: same organizational domain).
    pub aligned: Option<bool>,
}

/// The ARC chain, re-validated (RFC 8617).
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ArcCheck {
    /// Chain validation: pass, fail or none.
    pub result: String,
    /// ARC sets found.
    pub sets: u32,
    /// The `cv=` of the newest seal.
    pub latest_cv: Option<String>,
    /// Why, when it did not pass.
    pub detail: Option<String>,
}

/// SPF evaluated for the connecting IP of the first trusted hop.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SpfCheck {
    /// The connecting address the final receiver saw.
    pub ip: Option<String>,
    /// The Received hop it comes from (see `receivedHops`).
    pub hop: Option<u32>,
    /// The domain checked (envelope sender's, or the HELO name's).
    pub domain: Option<String>,
    /// pass, fail, softfail, neutral, none, temperror, permerror; `unknown` without an IP or domain.
    pub result: String,
    /// Whether that domain aligns with the From domain.
    pub aligned: Option<bool>,
}

/// DMARC computed from the live checks (RFC 9989).
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct DmarcCheck {
    /// The From domain.
    pub domain: Option<String>,
    /// The record that applies.
    pub record: Option<String>,
    /// Where it was found.
    pub policy_domain: Option<String>,
    /// The requested policy: none, quarantine or reject.
    pub policy: Option<String>,
    /// pass (an aligned SPF or DKIM pass), fail, none (no policy), temperror.
    pub result: String,
    /// Whether an aligned SPF pass was found.
    pub spf_aligned: bool,
    /// Whether an aligned DKIM pass was found.
    pub dkim_aligned: bool,
}

/// The live re-verification.
#[derive(Debug, Serialize, Deserialize, ToSchema, Clone)]
#[serde(rename_all = "camelCase")]
pub struct DnsValidation {
    /// Every DKIM signature.
    pub dkim: Vec<SignatureCheck>,
    /// The ARC chain.
    pub arc: ArcCheck,
    /// SPF.
    pub spf: SpfCheck,
    /// DMARC.
    pub dmarc: DmarcCheck,
}

/// `POST /tools/header-analyze` response (camelCase, like the audit).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeaderAnalysis {
    /// What the headers say: From, Return-Path, subject, `receivedHops` (travel order, delay per
    /// hop in milliseconds, clock skew shown, never a negative delay), every
    /// `authenticationResults` header with `trusted` and `trustReason`, `dkimSignatures`,
    /// `arcSets`.
    #[serde(flatten)]
    pub message: mailward_headers::Parsed,
    /// The verdicts of the trusted Authentication-Results.
    pub verdicts: HeaderVerdicts,
    /// Alignment as the headers show it.
    pub alignment: HeaderAlignment,
    /// The live re-verification; null when `include_dns_validation` was false.
    pub dns_validation: Option<DnsValidation>,
    /// What the headers show of the mailbox providers' sender requirements (an extension).
    pub sender_checks: HeaderSenderChecks,
}

/// A sender-requirement check on one message's headers.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct HeaderCheckView {
    /// pass, fail or unknown.
    pub status: String,
    pub detail: String,
}

/// The sender-requirement checks of a message (an extension beyond SPEC §4.8). When the From
/// domain is one of the organization's domains, the verdicts (never the headers) are kept 30
/// days as the evidence of `GET /domains/{id}/sender-requirements`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HeaderSenderChecks {
    /// RFC 8058: an https List-Unsubscribe URI, `List-Unsubscribe-Post: List-Unsubscribe=One-Click`,
    /// and both fields in the `h=` of a DKIM signature that verifies.
    pub one_click_unsubscribe: HeaderCheckView,
    /// Whether the receiver accepted the message over TLS (its Received field: `with ESMTPS`
    /// or a TLS version).
    pub tls: HeaderCheckView,
    /// The organization's domain the verdicts were kept for; null when the From domain is not
    /// one of its domains (or the caller cannot see it).
    pub kept_for_domain_id: Option<uuid::Uuid>,
}
