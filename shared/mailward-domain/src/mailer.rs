//! The mailer port: outbound email (signup codes, later invitations).
//!
//! Adapters: SES on AWS; locally an `.eml` file per message in the data directory's outbox plus
//! one log line, so a person running the stack can read their signup code.

use async_trait::async_trait;

/// A message to one recipient: plain text, optionally with an HTML alternative and a one-click
/// unsubscribe link (RFC 8058) for notification mail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutboundEmail {
    /// Recipient address.
    pub to: String,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub text: String,
    /// HTML alternative of the same content.
    pub html: Option<String>,
    /// One-click unsubscribe URL (`List-Unsubscribe` with `List-Unsubscribe-Post`).
    pub unsubscribe_url: Option<String>,
    /// Files attached (a scheduled report's PDF).
    pub attachments: Vec<Attachment>,
}

/// A file attached to a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attachment {
    /// Its name, e.g. `report.pdf`.
    pub file_name: String,
    /// Its media type, e.g. `application/pdf`.
    pub content_type: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// Mail sending failures.
#[derive(Debug, thiserror::Error)]
#[error("mail not sent: {0}")]
pub struct MailError(pub String);

/// The mailer port.
#[async_trait]
pub trait Mailer: Send + Sync {
    /// Sends one message.
    async fn send(&self, email: OutboundEmail) -> Result<(), MailError>;
}
