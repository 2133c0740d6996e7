//! Hosted MTA-STS (SPEC §4.4 `mta-sts` rows).

use mailward_domain::mta_sts::StsMode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /domains/{id}/mta-sts` body (optional) and `PUT` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MtaStsRequest {
    /// testing, enforce or none. POST: default testing; PUT: unchanged when absent.
    pub mode: Option<StsMode>,
    /// Seconds senders cache the policy: 86400 to 31557600. POST: default 86400; PUT:
    /// unchanged when absent.
    #[schema(minimum = 86400, maximum = 31557600, example = 86400)]
    pub max_age: Option<u64>,
}

/// A record the domain publishes for hosted MTA-STS.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MtaStsRecord {
    /// `_mta-sts.<domain>`, `mta-sts.<domain>`, or the certificate's validation name.
    pub host: String,
    /// CNAME.
    #[serde(rename = "type")]
    pub record_type: String,
    /// The target (in Mailward's zone, or the certificate authority's validation name).
    pub value: String,
}

/// The certificate of the policy host and the HTTPS front presenting it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MtaStsCertificate {
    /// pending_validation (waiting for the validation CNAME), deploying (issued, the front is
    /// being deployed), active (served over HTTPS), failed (see `error`; `POST
    /// /domains/{id}/mta-sts/retry` starts over), or not_required (the local stack serves the
    /// policy itself over HTTP by `Host`).
    #[schema(example = "pending_validation")]
    pub status: String,
    /// The host the certificate is for, `mta-sts.<domain>`.
    pub host: String,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was requested; the verification window counts from here.
    #[schema(format = DateTime)]
    pub requested_at: String,
    /// Its expiry, once issued (renewed by the provider while the validation CNAME stays).
    #[schema(format = DateTime)]
    pub not_after: Option<String>,
}

/// The MTA-STS state of a domain (every MTA-STS route answers it; also `data.object` of the
/// `mta_sts.*` events).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MtaStsState {
    /// `mta_sts`.
    pub object: String,
    /// The domain.
    pub domain_id: Uuid,
    /// Its name.
    pub domain: String,
    /// Hosting is on (`is_mta_sts_managed`).
    pub enabled: bool,
    /// testing, enforce or none. After DELETE the policy is served as none (RFC 8461 §8.3)
    /// until `retiring_until`; `none` with no policy when never enabled.
    pub mode: String,
    /// `max_age` of the policy, when there is one.
    pub max_age: Option<u64>,
    /// The `mx:` patterns: the domain's live MX hosts, kept current by the monitoring sweep.
    pub mx: Vec<String>,
    /// The policy `id` in the `_mta-sts` TXT Mailward serves; new on every change.
    pub policy_id: Option<String>,
    /// The policy file served (CRLF lines), when there is one.
    pub policy: Option<String>,
    /// Where senders fetch it.
    pub policy_url: String,
    /// The records to publish while hosting is on: the two CNAMEs, and on AWS the
    /// certificate's validation CNAME (kept published: renewals validate against it again).
    pub records: Vec<MtaStsRecord>,
    /// The certificate and HTTPS front serving `mta-sts.<domain>`; null until requested.
    pub certificate: Option<MtaStsCertificate>,
    /// `managed_dns_status.mta_sts`: syncing until live DNS shows both CNAMEs, then ready;
    /// error with `error_reason` (drift, setup_timeout, publish_failed).
    pub status: String,
    /// `mta_sts_error_reason`.
    pub error_reason: Option<String>,
    /// After DELETE: when the `none` policy stops being served (the old `max_age` later).
    #[schema(format = DateTime)]
    pub retiring_until: Option<String>,
    /// When the policy last changed.
    #[schema(format = DateTime)]
    pub updated_at: Option<String>,
}
