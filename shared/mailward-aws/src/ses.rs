//! [`Mailer`] over Amazon SES (API v2).

use async_trait::async_trait;
use aws_sdk_sesv2::error::DisplayErrorContext;
use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, Message};
use mailward_domain::mailer::{MailError, Mailer, OutboundEmail};

/// Sends Mailward's plain-text mail (signup codes, invitations) through SES from one verified
/// sender address.
#[derive(Debug, Clone)]
pub struct SesMailer {
    client: aws_sdk_sesv2::Client,
    from: String,
}

impl SesMailer {
    /// A mailer sending as `from`, which must be a verified SES identity (or belong to a
    /// verified domain) in the client's region.
    pub fn new(client: aws_sdk_sesv2::Client, from: String) -> Self {
        Self { client, from }
    }
}

fn utf8(text: String) -> Result<Content, MailError> {
    Content::builder()
        .data(text)
        .charset("UTF-8")
        .build()
        .map_err(|e| MailError(e.to_string()))
}

#[async_trait]
impl Mailer for SesMailer {
    async fn send(&self, email: OutboundEmail) -> Result<(), MailError> {
        let mut body = Body::builder().text(utf8(email.text)?);
        if let Some(html) = email.html {
            body = body.html(utf8(html)?);
        }
        let mut message = Message::builder()
            .subject(utf8(email.subject)?)
            .body(body.build());
        if let Some(url) = email.unsubscribe_url {
            // RFC 8058 one-click unsubscribe: both headers, the URL in angle brackets.
            for (name, value) in [
                ("List-Unsubscribe", format!("<{url}>")),
                (
                    "List-Unsubscribe-Post",
                    "List-Unsubscribe=One-Click".to_owned(),
                ),
            ] {
                message = message.headers(
                    aws_sdk_sesv2::types::MessageHeader::builder()
                        .name(name)
                        .value(value)
                        .build()
                        .map_err(|e| MailError(format!("SES header {name}: {e}")))?,
                );
            }
        }
        for file in email.attachments {
            message = message.attachments(
                aws_sdk_sesv2::types::Attachment::builder()
                    .file_name(file.file_name)
                    .content_type(file.content_type)
                    .content_disposition(
                        aws_sdk_sesv2::types::AttachmentContentDisposition::Attachment,
                    )
                    .raw_content(aws_sdk_sesv2::primitives::Blob::new(file.data))
                    .build()
                    .map_err(|e| MailError(format!("SES attachment: {e}")))?,
            );
        }
        let message = message.build();
        self.client
            .send_email()
            .from_email_address(&self.from)
            .destination(Destination::builder().to_addresses(email.to).build())
            .content(EmailContent::builder().simple(message).build())
            .send()
            .await
            .map_err(|e| MailError(format!("SES SendEmail: {}", DisplayErrorContext(&e))))?;
        Ok(())
    }
}
