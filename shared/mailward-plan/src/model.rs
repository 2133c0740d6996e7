//! The plan's data: what the caller knows about a domain ([`PlanContext`]), the records it
//! should publish ([`ExpectedRecord`]), how each compares with live DNS ([`RecordState`]) and
//! the advice that goes with them ([`Warning`]).
//!
//! Serialized shapes are snake_case and follow SPEC §2.5: a [`RecordState`] serializes as one
//! flat DnsRecord object (`purpose`, `type`, `host`, `relative_host`, `value`, `ttl`,
//! `required`, `action`, `status`, `already_published`) plus `live_values`.

use mailward_domain::domain::{BimiOptions, DmarcOptions, SpfOptions};
use mailward_records::mta_sts::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

pub use mailward_domain::purpose::Purpose;

/// A DNS record type as the records endpoint names it (SPEC §2.5 `type`). `Ns` is part of the
/// wire enum (sub-zone delegations) but no plan emits it today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum RecordKind {
    /// A TXT record (value is the joined character-strings).
    Txt,
    /// A CNAME record (value is the target, lower-case, no trailing dot).
    Cname,
    /// An NS record (reserved; never emitted).
    Ns,
}

/// The MTA-STS part of a plan: the hosted policy Mailward serves at `mta-sts.<domain>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MtaStsPlan {
    /// `enforce`, `testing` or `none`.
    pub mode: Mode,
    /// `max_age` in seconds (86400..=31557600, SPEC §8.2).
    pub max_age: u64,
    /// MX host patterns the policy lists.
    pub mx_hosts: Vec<String>,
    /// Where Mailward serves the `_mta-sts` TXT (hosted MTA-STS): the record is planned as a
    /// CNAME to it, so the policy id follows every edit without the customer. `None` plans
    /// the TXT itself.
    pub txt_target: Option<String>,
    /// The certificate authority's validation records of the policy host's certificate
    /// (`(name, CNAME target)`; ACM on AWS), planned with the policy host: they stay
    /// published for renewals. Empty where none is needed.
    pub certificate_validation: Vec<(String, String)>,
}

/// One DKIM key the domain should publish (a DkimKey of SPEC §4.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DkimPlan {
    /// The selector (`<selector>._domainkey.<domain>`).
    pub selector: String,
    /// TXT (the key record itself) or CNAME (to the sender's key host). NS is refused.
    pub record_type: RecordKind,
    /// The TXT value or the CNAME target.
    pub value: String,
}

/// Everything the planner needs to know about one domain. Built by the caller from the stored
/// Domain, the service configuration and (for SPF) one live lookup: the planner itself does no
/// storage and, apart from [`crate::compare`] and [`crate::verify`], no I/O.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanContext {
    /// The normalised domain name (no trailing dot).
    pub domain: String,
    /// `dmarc_options` (SPEC §2.1).
    pub dmarc: DmarcOptions,
    /// `spf_options` (SPEC §2.1).
    pub spf: SpfOptions,
    /// `bimi_options` (SPEC §2.1).
    pub bimi: BimiOptions,
    /// `target_spf`: when set, the SPF record to publish, verbatim.
    pub target_spf: Option<String>,
    /// With hosted SPF, the record the customer publishes (an `include:` of the chain Mailward
    /// serves): planned verbatim, in place of the rules below.
    pub hosted_spf_record: Option<String>,
    /// The live `v=spf1` record at the apex, if any (see [`crate::fetch_live_spf`]). Merged with
    /// `known_sender_includes` when `target_spf` is not set.
    pub live_spf: Option<String>,
    /// Mailward's aggregate-report address for this domain; always the first `rua` address.
    pub monitoring_email: String,
    /// Mailward's report host: addresses on it need no external authorization record.
    pub report_domain: String,
    /// The zone where Mailward hosts delegated records (e.g. `hosted.mailward.example`).
    pub hosted_zone: String,
    /// The owner part of the names Mailward serves for this domain
    /// (`mailward_domain::hosted_zone::owner_name`: `<id label>.<domain>`).
    pub hosted_owner: String,
    /// Publish DMARC as `_dmarc.<domain>` CNAME `<hosted_owner>._dmarc.<hosted_zone>` instead
    /// of TXT.
    pub dmarc_delegated: bool,
    /// Hosted BIMI: `default._bimi.<domain>` is a CNAME to `<domain>.bimi.<hosted_zone>`,
    /// where Mailward serves the record for the certificate and logo it hosts.
    pub bimi_delegated: bool,
    /// The hosted MTA-STS policy, when MTA-STS is enabled.
    pub mta_sts: Option<MtaStsPlan>,
    /// TLS-RPT report destination (`mailto:` or `https:`; a bare address means mailto).
    pub tls_rpt_rua: Option<String>,
    /// An HTTPS destination offered beside `tls_rpt_rua` (RFC 8460 §3): a record naming both
    /// verifies as well as the one planned.
    pub tls_rpt_https: Option<String>,
    /// DKIM keys to publish.
    pub dkim: Vec<DkimPlan>,
    /// `include:` targets of the domain's confirmed senders (with or without `include:`).
    pub known_sender_includes: Vec<String>,
    /// The domain sends no mail (`is_parked`): the plan locks it down (SPF `v=spf1 -all` unless
    /// `target_spf` says otherwise, DMARC `p=reject` with `sp=reject` in full, no DKIM keys).
    pub parked: bool,
    /// Purposes that were verified before (stored by the caller): a purpose in this set whose
    /// record is no longer published is `drifted` instead of `pending`/`verifying`.
    pub previously_verified: BTreeSet<Purpose>,
}

/// A record the domain should publish (or, inside a delete [`RecordState`], one it should
/// remove).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(
        description = "A record the domain should publish (or, inside a delete entry, one it should remove)."
    )
)]
pub struct ExpectedRecord {
    /// What the record is for.
    pub purpose: Purpose,
    /// TXT, CNAME (or NS), serialized as `type` (SPEC §2.5).
    #[serde(rename = "type")]
    pub record_type: RecordKind,
    /// Fully qualified name, lower-case, no trailing dot.
    pub host: String,
    /// The name relative to the domain; `@` for the apex.
    pub relative_host: String,
    /// The exact value to publish (TXT: the whole text; CNAME: the target).
    pub value: String,
    /// Recommended TTL in seconds (3600, `RECOMMENDED_TTL`).
    pub ttl: u32,
    /// False for records that only improve an enabled feature (MTA-STS, TLS-RPT, BIMI).
    pub required: bool,
    /// Other values that count as published too (an extension): for TLS-RPT, the same record
    /// with Mailward's HTTPS report address beside the `mailto:` one. Absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    /// Copied from [`PlanContext::previously_verified`]: lets [`crate::compare`] tell `drifted`
    /// from `pending` without another input. Not part of the wire shape.
    #[serde(skip)]
    pub previously_verified: bool,
}

/// What the user must do with a record (SPEC §2.5 `action`). When `already_published` is true
/// nothing is needed and the action is the nominal `create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RecordAction))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Add the record (nothing of its kind is there), or nothing to do when published.
    Create,
    /// Change the existing record of the same kind at that host to this value.
    Replace,
    /// Remove this live record: it conflicts with the plan.
    Delete,
}

/// Where a record stands (SPEC §2.5 `status`, §3 state set). Rules in [`crate::compare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(
        as = RecordStatus,
        description = "Where a record stands (SPEC §2.5 `status`, §3 state set)."
    )
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing of this kind seen at the host, and never verified.
    Pending,
    /// Something is there but does not match yet (an old value, a TXT where a CNAME is
    /// expected, a second record), or the lookup failed for a record verified before.
    Verifying,
    /// Live DNS serves exactly this value, alone.
    Verified,
    /// Verified before (per [`PlanContext::previously_verified`]) and not published now.
    Drifted,
}

/// One record of the records endpoint: the expected record with its comparison to live DNS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecordState {
    /// The record (flattened: purpose, type, host, relative_host, value, ttl, required).
    #[serde(flatten)]
    pub record: ExpectedRecord,
    /// What to do.
    pub action: Action,
    /// Where it stands.
    pub status: Status,
    /// True when live DNS serves exactly this value; null when the lookup could not complete
    /// (then `action` is a static best-effort hint). For a delete entry: false while the
    /// unwanted record is still there.
    pub already_published: Option<bool>,
    /// The live values of the same kind at the host (TXT texts or the CNAME target).
    pub live_values: Vec<String>,
    /// For the SPF record: DNS lookups the planned record costs, counted through its whole
    /// include tree (RFC 7208 §4.6.4). Feeds the `spf_lookup_limit` warning; not on the wire.
    #[serde(skip)]
    pub spf_lookup_count: Option<u32>,
}

/// Advice to read before publishing (SPEC §4.1 `warnings`): a stable snake_case code and a
/// message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RecordsWarning))]
pub struct Warning {
    /// Stable code (see the crate docs for the list).
    pub code: String,
    /// Explanation; may change between versions.
    pub message: String,
}

impl Warning {
    /// A warning with a stable code and a message for a person (callers add their own, e.g.
    /// about the domain itself).
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Warning {
            code: code.to_string(),
            message: message.into(),
        }
    }
}
