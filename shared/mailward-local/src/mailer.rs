//! [`Mailer`] that writes `.eml` files to a directory (the local stack's outbox).

use async_trait::async_trait;
use mailward_domain::Clock;
use mailward_domain::mailer::{MailError, Mailer, OutboundEmail};
use std::path::PathBuf;
use std::sync::Arc;
use time::format_description::well_known::Rfc2822;

/// Writes each message as `<outbox>/<unix-ms>-<sequence>-<id>.eml` and logs one line naming the file
/// (never the content: signup codes are secrets).
#[derive(Debug, Clone)]
pub struct FileMailer {
    outbox: PathBuf,
    from: String,
    clock: Arc<dyn Clock>,
}

impl FileMailer {
    /// A mailer writing into `outbox` (created on first send), sending as `from`.
    pub fn new(outbox: PathBuf, from: String, clock: Arc<dyn Clock>) -> Self {
        Self {
            outbox,
            from,
            clock,
        }
    }

    /// The directory messages are written to.
    pub fn outbox(&self) -> &std::path::Path {
        &self.outbox
    }
}

static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Line ends as CRLF.
fn crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Base64 in lines of 76 characters (RFC 2045).
fn base64_lines(bytes: &[u8]) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    encoded
        .as_bytes()
        .chunks(76)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("\r\n")
}

/// Removes CR and LF so a value cannot inject headers.
fn header_value(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

/// `email` as an RFC 5322 message from `from` (CRLF line ends; plain text, or
/// `multipart/alternative` with base64 text and HTML parts when there is HTML): the local
/// outbox's file content, also how tests show mail captured from SES.
pub fn render_eml(from: &str, email: &OutboundEmail, date: &str, message_id: &str) -> String {
    let text = crlf(&email.text);
    let mut headers = format!(
        "From: {}\r\nTo: {}\r\nSubject: {}\r\nDate: {}\r\nMessage-ID: <{}>\r\nMIME-Version: 1.0\r\n",
        header_value(from),
        header_value(&email.to),
        header_value(&email.subject),
        header_value(date),
        header_value(message_id),
    );
    if let Some(url) = &email.unsubscribe_url {
        // RFC 8058 one-click unsubscribe.
        headers.push_str(&format!(
            "List-Unsubscribe: <{}>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n",
            header_value(url)
        ));
    }
    let body = match &email.html {
        None => format!(
            "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n{text}\r\n"
        ),
        Some(html) => {
            // Base64 parts: no line-length limit to mind whatever the content.
            let boundary = format!("mailward-{}", uuid::Uuid::new_v4().simple());
            format!(
                "Content-Type: multipart/alternative; boundary=\"{boundary}\"\r\n\r\n\
                 --{boundary}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n\
                 --{boundary}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n\
                 --{boundary}--\r\n",
                base64_lines(text.as_bytes()),
                base64_lines(crlf(html).as_bytes()),
            )
        }
    };
    if email.attachments.is_empty() {
        return format!("{headers}{body}");
    }
    // Attachments: the message in a multipart/mixed, each file a base64 part.
    let boundary = format!("mailward-mixed-{}", uuid::Uuid::new_v4().simple());
    let mut out = format!(
        "{headers}Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n--{boundary}\r\n{body}"
    );
    for file in &email.attachments {
        let name = header_value(&file.file_name).replace('"', "");
        out.push_str(&format!(
            "--{boundary}\r\nContent-Type: {}; name=\"{name}\"\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
            header_value(&file.content_type),
            base64_lines(&file.data),
        ));
    }
    out.push_str(&format!("--{boundary}--\r\n"));
    out
}

#[async_trait]
impl Mailer for FileMailer {
    async fn send(&self, email: OutboundEmail) -> Result<(), MailError> {
        let now = self.clock.now();
        let id = uuid::Uuid::new_v4();
        let date = now.format(&Rfc2822).unwrap_or_default();
        let message = render_eml(&self.from, &email, &date, &format!("{id}@mailward.local"));
        // The sequence keeps names in sending order even when the clock stands still.
        let seq = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.outbox.join(format!(
            "{}-{seq:08}-{}.eml",
            now.unix_timestamp_nanos() / 1_000_000,
            id
        ));
        tokio::fs::create_dir_all(&self.outbox).await.map_err(|e| {
            MailError(format!(
                "cannot create outbox {}: {e}",
                self.outbox.display()
            ))
        })?;
        tokio::fs::write(&path, message)
            .await
            .map_err(|e| MailError(format!("cannot write {}: {e}", path.display())))?;
        tracing::info!(mail.path = %path.display(), "email written to the local outbox");
        Ok(())
    }
}
