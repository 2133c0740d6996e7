//! TLS reports delivered over HTTPS (RFC 8460 §3: `rua=https://…`), an extension beyond SPEC.
//!
//! The path token is the domain's id, as in its report address `rua+<domain id>@<report
//! domain>`: it sits in public DNS, so it is an address, not a credential. An upload is
//! checked here (content type, a readable TLS report and nothing else), kept in object storage
//! and imported by the workers exactly as mail to that address would be, attributed by the
//! address and never authenticated (nothing signs an upload), so that a forged report id
//! cannot displace an authenticated report.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::tls_reports::TlsUploadAccepted;
use mailward_reports::{Content, Limits};
use uuid::Uuid;

/// `application/tlsrpt+json` and `application/tlsrpt+gzip` (RFC 8460 §6.4, §6.5).
pub const CONTENT_TYPES: [&str; 2] = ["application/tlsrpt+json", "application/tlsrpt+gzip"];

/// Largest upload accepted (gzip or JSON as sent); decompression is bounded by [`Limits`].
pub const MAX_UPLOAD_BYTES: usize = 1024 * 1024;

/// The domain a path token names: its id, with or without hyphens.
pub fn token_domain(token: &str) -> Option<Uuid> {
    (token.len() == 32 || token.len() == 36)
        .then(|| Uuid::try_parse(token).ok())
        .flatten()
}

/// Checks one upload and queues its import.
pub async fn accept_tls(
    app: &AppState,
    token: &str,
    content_type: Option<&str>,
    bytes: bytes::Bytes,
) -> Result<TlsUploadAccepted, ServiceError> {
    let domain = token_domain(token).ok_or_else(|| ServiceError::not_found("report address"))?;
    // The HTTP layer checked the content type (one of CONTENT_TYPES) and the size.
    let kind = content_type.unwrap_or(CONTENT_TYPES[0]);
    let mut report_ids = Vec::new();
    for part in mailward_reports::extract(&bytes, &Limits::default()) {
        match part.content {
            Content::TlsRpt(report) => report_ids.push(report.report_id.clone()),
            Content::Refused(why) => {
                return Err(ServiceError::invalid(
                    "body",
                    format!("not a TLS report: {why}"),
                ));
            }
            Content::Aggregate(_) | Content::Failure => {
                return Err(ServiceError::invalid(
                    "body",
                    "this address takes TLS reports only (DMARC reports go by mail)",
                ));
            }
        }
    }
    if report_ids.is_empty() {
        return Err(ServiceError::invalid("body", "no TLS report in the body"));
    }
    let objects = app
        .objects
        .as_ref()
        .ok_or_else(|| ServiceError::unavailable("no object store is configured"))?;
    let suffix = if kind.ends_with("gzip") {
        "json.gz"
    } else {
        "json"
    };
    let key = format!(
        "uploads/tlsrpt/{}/{}.{suffix}",
        app.clock.now().date(),
        Uuid::new_v4()
    );
    objects
        .put(&key, bytes, kind)
        .await
        .map_err(ServiceError::unavailable)?;
    let job = mailward_app::jobs::IngestUpload {
        object_key: key,
        recipient: format!("rua+{}@{}", domain.simple(), app.config.report_domain),
    };
    crate::job::enqueue(app, &job, 0).await?;
    Ok(TlsUploadAccepted {
        status: "accepted".into(),
        report_ids,
    })
}
