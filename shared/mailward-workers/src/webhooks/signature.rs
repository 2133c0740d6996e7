//! `Mailward-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (SPEC §6.3).

use mailward_domain::secrets::{constant_time_eq, hmac_sha256_hex};

/// The header carrying the signature (SPEC.md's neutral `Service-Signature`).
pub const SIGNATURE_HEADER: &str = "mailward-signature";

/// The header value for a body signed at `timestamp` with `secret`.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut message = format!("{timestamp}.").into_bytes();
    message.extend_from_slice(body);
    format!(
        "t={timestamp},v1={}",
        hmac_sha256_hex(secret.as_bytes(), &message)
    )
}

/// Why a signature did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The header is not `t=...,v1=...`.
    #[error("malformed signature header")]
    Malformed,
    /// The timestamp is outside the tolerance.
    #[error("timestamp outside the tolerance")]
    Stale,
    /// No `v1` value matches.
    #[error("signature mismatch")]
    Mismatch,
}

/// The reference verifier: parses the header, rejects timestamps more than `tolerance_secs` from
/// `now`, and compares in constant time after checking equal length. Receivers can port it.
pub fn verify(
    secret: &str,
    header: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    let mut timestamp = None;
    let mut candidates = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", v)) => candidates.push(v.to_owned()),
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or(VerifyError::Malformed)?;
    if candidates.is_empty() {
        return Err(VerifyError::Malformed);
    }
    if (now - timestamp).abs() > tolerance_secs {
        return Err(VerifyError::Stale);
    }
    let expected = sign(secret, timestamp, body);
    let expected = expected
        .rsplit_once("v1=")
        .map(|(_, v)| v)
        .unwrap_or_default();
    if candidates
        .iter()
        .any(|c| constant_time_eq(c.as_bytes(), expected.as_bytes()))
    {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_and_reject_tampering_and_staleness() {
        let header = sign("whsec_test", 1_700_000_000, br#"{"id":"evt_1"}"#);
        assert!(header.starts_with("t=1700000000,v1="));
        assert_eq!(
            verify(
                "whsec_test",
                &header,
                br#"{"id":"evt_1"}"#,
                1_700_000_100,
                300
            ),
            Ok(())
        );
        assert_eq!(
            verify(
                "whsec_test",
                &header,
                br#"{"id":"evt_2"}"#,
                1_700_000_100,
                300
            ),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(
                "whsec_other",
                &header,
                br#"{"id":"evt_1"}"#,
                1_700_000_100,
                300
            ),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(
                "whsec_test",
                &header,
                br#"{"id":"evt_1"}"#,
                1_700_000_301,
                300
            ),
            Err(VerifyError::Stale)
        );
        assert_eq!(
            verify("whsec_test", "nonsense", b"", 0, 300),
            Err(VerifyError::Malformed)
        );
    }
}
