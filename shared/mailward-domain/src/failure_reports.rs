//! DMARC failure reports (RFC 9991, formerly RFC 6591) as Mailward keeps them: the ARF fields
//! and the original headers (never a body; local parts redacted, RFC 6590), per watched
//! domain, for a short time ([`FAILURE_REPORT_DAYS`]): they hold personal data. The reader is
//! `mailward_reports::failure`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Days a failure report is kept (then its item expires): a week on the free plan, 30 days on
/// paid plans.
pub const FAILURE_REPORT_DAYS: (i64, i64) = (7, 30);

/// One failure report, as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureReport {
    /// Whether it had an ARF `message/feedback-report` part.
    pub arf: bool,
    /// `Feedback-Type` (`auth-failure` for DMARC failure reports).
    pub feedback_type: Option<String>,
    /// `Auth-Failure`: `dmarc`, `dkim`, `spf`, `bodyhash`, `revoked`, `signature`, `adsp`.
    pub auth_failure: Option<String>,
    /// `Reported-Domain`.
    pub reported_domain: Option<String>,
    /// `Source-IP`.
    pub source_ip: Option<String>,
    /// `Arrival-Date`, as the reporter wrote it.
    pub arrival_date: Option<String>,
    /// `Original-Mail-From` (RFC 5321 MAIL FROM).
    pub original_mail_from: Option<String>,
    /// `Original-Rcpt-To`, each.
    pub original_rcpt_to: Vec<String>,
    /// `DKIM-Domain`, `DKIM-Selector`, `DKIM-Identity`.
    pub dkim_domain: Option<String>,
    pub dkim_selector: Option<String>,
    pub dkim_identity: Option<String>,
    /// `SPF-DNS`.
    pub spf_dns: Option<String>,
    /// `Delivery-Result` (`delivered`, `spam`, `policy`, `reject`, `other`, or a reporter's
    /// own word).
    pub delivery_result: Option<String>,
    /// `Identity-Alignment` (RFC 9991: `none`, `spf`, `dkim` or both).
    pub identity_alignment: Option<String>,
    /// `User-Agent` of the reporter.
    pub user_agent: Option<String>,
    /// The original message's headers (never its body), unfolded lines as sent.
    pub original_headers: Option<String>,
    /// What could not be read from it, in words.
    pub unread: Vec<String>,
}

/// One failure report of a domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFailureReport {
    pub id: Uuid,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    /// When Mailward received it.
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// Whether its mail passed DKIM aligned with its From domain.
    pub authenticated: bool,
    /// Whether the local parts of addresses were redacted.
    pub redacted: bool,
    pub report: FailureReport,
}
