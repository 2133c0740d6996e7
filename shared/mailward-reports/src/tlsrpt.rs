//! SMTP TLS reports (RFC 8460 §4): JSON, read with serde. Most failure-detail fields are
//! optional in practice (Microsoft omits `sending-mta-ip`; some reports carry only the result
//! type and the count), so only what identifies the report is required.

use serde::{Deserialize, Serialize};

/// The reporting window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DateRange {
    #[serde(rename = "start-datetime")]
    pub start: String,
    #[serde(rename = "end-datetime")]
    pub end: String,
}

/// A policy's session counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    #[serde(rename = "total-successful-session-count", default)]
    pub successful: u64,
    #[serde(rename = "total-failure-session-count", default)]
    pub failed: u64,
}

/// The policy a result is for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `tlsa`, `sts` or `no-policy-found` (others are kept as written).
    #[serde(rename = "policy-type", default)]
    pub policy_type: String,
    #[serde(rename = "policy-string", default)]
    pub policy_string: Vec<String>,
    #[serde(rename = "policy-domain", default)]
    pub policy_domain: Option<String>,
    #[serde(rename = "mx-host", default)]
    pub mx_host: Vec<String>,
}

/// One kind of failure and how often it happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureDetail {
    /// RFC 8460 §4.3 result type (`starttls-not-supported`, `certificate-host-mismatch`,
    /// `certificate-expired`, `certificate-not-trusted`, `validation-failure`,
    /// `tlsa-invalid`, `dnssec-invalid`, `dane-required`, `sts-policy-fetch-error`,
    /// `sts-policy-invalid`, `sts-webpki-invalid`), or another word as written.
    #[serde(rename = "result-type", default)]
    pub result_type: String,
    #[serde(rename = "sending-mta-ip", default)]
    pub sending_mta_ip: Option<String>,
    #[serde(rename = "receiving-mx-hostname", default)]
    pub receiving_mx_hostname: Option<String>,
    #[serde(rename = "receiving-mx-helo", default)]
    pub receiving_mx_helo: Option<String>,
    #[serde(rename = "receiving-ip", default)]
    pub receiving_ip: Option<String>,
    #[serde(rename = "failed-session-count", default)]
    pub failed_session_count: u64,
    #[serde(rename = "additional-information", default)]
    pub additional_information: Option<String>,
    #[serde(rename = "failure-reason-code", default)]
    pub failure_reason_code: Option<String>,
}

/// One policy's results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyResult {
    #[serde(default)]
    pub policy: Policy,
    #[serde(default)]
    pub summary: Summary,
    #[serde(rename = "failure-details", default)]
    pub failure_details: Vec<FailureDetail>,
}

/// A TLS-RPT report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsReport {
    #[serde(rename = "organization-name", default)]
    pub organization_name: Option<String>,
    #[serde(rename = "date-range")]
    pub date_range: DateRange,
    #[serde(rename = "contact-info", default)]
    pub contact_info: Option<String>,
    #[serde(rename = "report-id")]
    pub report_id: String,
    #[serde(default)]
    pub policies: Vec<PolicyResult>,
}

impl TlsReport {
    /// Successful sessions over every policy.
    pub fn successful(&self) -> u64 {
        self.policies.iter().map(|p| p.summary.successful).sum()
    }

    /// Failed sessions over every policy.
    pub fn failed(&self) -> u64 {
        self.policies.iter().map(|p| p.summary.failed).sum()
    }
}

/// Why a JSON document is not a usable TLS report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a TLS-RPT report: {0}")]
pub struct TlsReportError(pub String);

/// Reads a report.
pub fn parse(bytes: &[u8]) -> Result<TlsReport, TlsReportError> {
    serde_json::from_slice(bytes).map_err(|e| TlsReportError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_failure_fields_may_be_missing() {
        let json = br#"{"organization-name":"M","date-range":{"start-datetime":"2025-06-14T00:00:00Z","end-datetime":"2025-06-14T23:59:59Z"},
          "contact-info":null,"report-id":"1",
          "policies":[{"policy":{"policy-type":"sts","policy-domain":"x.example"},
            "summary":{"total-successful-session-count":0,"total-failure-session-count":3},
            "failure-details":[{"result-type":"sts-policy-fetch-error","failed-session-count":3}]}]}"#;
        let report = parse(json).unwrap();
        assert_eq!((report.successful(), report.failed()), (0, 3));
        assert_eq!(report.policies[0].failure_details[0].sending_mta_ip, None);
        assert!(parse(b"{}").is_err());
        assert!(parse(b"unused").is_err());
    }
}
