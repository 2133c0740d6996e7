//! The BIMI mark certificate (VMC/CMC) a domain's BIMI record points at (`a=`): fetched through
//! the outbound-safe client and read for its validity, so a certificate about to expire becomes
//! a task before mailbox providers stop showing the logo. Hosted BIMI fetches a
//! `certificate_url` here too, then validates the whole bundle (`mailward_bimi`).

use crate::outbound::client::check_url;
use crate::state::AppState;
use time::OffsetDateTime;

/// Largest certificate file read (a VMC chain with its embedded logo is a few tens of KiB).
pub const MAX_PEM_BYTES: usize = 256 * 1024;

/// When the first certificate of a PEM body (the leaf, by convention) expires.
pub fn leaf_not_after(pem: &[u8]) -> Result<OffsetDateTime, String> {
    let block = x509_parser::pem::Pem::iter_from_buffer(pem)
        .next()
        .ok_or("no PEM block in the file")?
        .map_err(|e| format!("not PEM: {e}"))?;
    if block.label != "CERTIFICATE" {
        return Err(format!(
            "the first PEM block is a {}, not a CERTIFICATE",
            block.label
        ));
    }
    let cert = block
        .parse_x509()
        .map_err(|e| format!("not an X.509 certificate: {e}"))?;
    OffsetDateTime::from_unix_timestamp(cert.validity().not_after.timestamp())
        .map_err(|e| format!("unreadable expiry: {e}"))
}

/// Fetches the certificate at `url` and reads its expiry.
pub async fn fetch_not_after(app: &AppState, url: &str) -> Result<OffsetDateTime, String> {
    leaf_not_after(&fetch_pem(app, url).await?)
}

/// Fetches a certificate file (at most [`MAX_PEM_BYTES`]) through the outbound-safe client:
/// public https addresses only.
pub async fn fetch_pem(app: &AppState, url: &str) -> Result<Vec<u8>, String> {
    check_url(url, app.config.outbound.allow_loopback)?;
    let client = app.outbound_client()?;
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("fetching the certificate: {e}"))?;
    if response.status().as_u16() != 200 {
        return Err(format!(
            "the certificate URL answered HTTP {}",
            response.status().as_u16()
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading the certificate: {e}"))?
    {
        if body.len() + chunk.len() > MAX_PEM_BYTES {
            return Err("the certificate file is larger than 256 KiB".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
