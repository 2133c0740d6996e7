//! Stored SMTP TLS reports (RFC 8460) of a domain: what each reporter saw of the sessions to
//! the domain's MX hosts, with the failure details (SPEC §4.4 TLS-RPT rows; field names there
//! are not shown and are chosen here).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Failure details kept per policy: the most frequent first (a report may list thousands of
/// sending addresses, and an item must stay well under the store's item limit).
pub const MAX_FAILURE_DETAILS: usize = 100;

/// Namespace of TLS report ids: UUID v5 of `<domain id>/<identity key>`.
pub const TLS_REPORT_NAMESPACE: Uuid = Uuid::from_u128(0x1d3b_86a0_55c2_4b7e_a1f9_0c6e_2d48_7f13);

/// The result types of RFC 8460 §4.3, in its order.
pub const RESULT_TYPES: [&str; 11] = [
    "starttls-not-supported",
    "certificate-host-mismatch",
    "certificate-expired",
    "certificate-not-trusted",
    "validation-failure",
    "tlsa-invalid",
    "dnssec-invalid",
    "dane-required",
    "sts-policy-fetch-error",
    "sts-policy-invalid",
    "sts-webpki-invalid",
];

/// One failure detail (RFC 8460 §4.4 `failure-details`, in snake_case).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TlsFailure {
    pub result_type: String,
    pub sending_mta_ip: Option<String>,
    pub receiving_mx_hostname: Option<String>,
    pub receiving_mx_helo: Option<String>,
    pub receiving_ip: Option<String>,
    pub failed_session_count: u64,
    pub additional_information: Option<String>,
    pub failure_reason_code: Option<String>,
}

/// One policy's results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TlsPolicyResult {
    /// sts, tlsa or no-policy-found.
    pub policy_type: String,
    pub policy_string: Vec<String>,
    pub policy_domain: Option<String>,
    pub mx_host: Vec<String>,
    pub total_successful: u64,
    pub total_failure: u64,
    /// At most [`MAX_FAILURE_DETAILS`], most failed sessions first.
    pub failure_details: Vec<TlsFailure>,
    /// Whether details were left out.
    pub failure_details_truncated: bool,
}

/// A TLS report imported for one organization's domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTlsReport {
    pub id: Uuid,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    /// The report identity key (see `reports::ReportIdentity::key`).
    pub key: String,
    pub organization_name: String,
    pub report_id: String,
    pub contact_info: Option<String>,
    /// Unix seconds.
    pub begin: i64,
    pub end: i64,
    pub total_successful: u64,
    pub total_failure: u64,
    pub policies: Vec<TlsPolicyResult>,
    #[serde(with = "time::serde::rfc3339")]
    pub imported_at: OffsetDateTime,
    /// See `reports::StoredReport::authenticated`.
    #[serde(default)]
    pub authenticated: bool,
}

impl StoredTlsReport {
    /// The id of a report of a domain.
    pub fn id_for(domain_id: Uuid, key: &str) -> Uuid {
        Uuid::new_v5(
            &TLS_REPORT_NAMESPACE,
            format!("{domain_id}/{key}").as_bytes(),
        )
    }
}

/// Keeps the most frequent details (by failed sessions, then type) up to the cap.
pub fn cap_details(mut details: Vec<TlsFailure>) -> (Vec<TlsFailure>, bool) {
    details.sort_by(|a, b| {
        b.failed_session_count
            .cmp(&a.failed_session_count)
            .then(a.result_type.cmp(&b.result_type))
    });
    let truncated = details.len() > MAX_FAILURE_DETAILS;
    details.truncate(MAX_FAILURE_DETAILS);
    (details, truncated)
}
