//! `Stripe-Signature` (Stripe's webhook signing scheme): `t=<unix seconds>,v1=<hex>` where each
//! `v1` is HMAC-SHA256 of `"<t>.<raw body>"` under the endpoint's secret. During a secret
//! rotation Stripe sends several `v1` values; one matching is enough. Other schemes (`v0`) are
//! ignored.

use mailward_domain::secrets::{constant_time_eq, hmac_sha256_hex};

/// How far a signature's timestamp may be from now (Stripe's libraries' default).
pub const TOLERANCE_SECS: i64 = 300;

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// No header, or no `t=`/`v1=` in it.
    #[error("the Stripe-Signature header is missing or has no t= and v1= values")]
    Malformed,
    /// The timestamp is more than [`TOLERANCE_SECS`] from now (a replay, or a skewed clock).
    #[error("the Stripe-Signature timestamp is outside the {TOLERANCE_SECS} s tolerance")]
    Stale,
    /// No `v1` matches the body under the secret.
    #[error("no Stripe-Signature v1 value matches the payload")]
    Mismatch,
}

/// The header value signing `payload` at `t` with `secret`.
pub fn sign(payload: &[u8], secret: &str, t: i64) -> String {
    format!("t={t},v1={}", digest(payload, secret, t))
}

fn digest(payload: &[u8], secret: &str, t: i64) -> String {
    let mut message = format!("{t}.").into_bytes();
    message.extend_from_slice(payload);
    hmac_sha256_hex(secret.as_bytes(), &message)
}

/// Checks `header` for `payload` against `secret` at `now` (unix seconds).
pub fn verify(payload: &[u8], header: &str, secret: &str, now: i64) -> Result<(), SignatureError> {
    let mut t: Option<i64> = None;
    let mut candidates = Vec::new();
    for part in header.split(',') {
        let Some((key, value)) = part.trim().split_once('=') else {
            continue;
        };
        match key {
            "t" => t = value.parse().ok(),
            "v1" => candidates.push(value),
            _ => {}
        }
    }
    let (Some(t), false) = (t, candidates.is_empty()) else {
        return Err(SignatureError::Malformed);
    };
    let expected = digest(payload, secret, t);
    if !candidates
        .iter()
        .any(|c| constant_time_eq(c.as_bytes(), expected.as_bytes()))
    {
        return Err(SignatureError::Mismatch);
    }
    if (now - t).abs() > TOLERANCE_SECS {
        return Err(SignatureError::Stale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_verifies_with_rotation_and_tolerance() {
        let body = br#"{"id":"evt_1"}"#;
        let header = sign(body, "whsec_a", 1_000);
        assert_eq!(verify(body, &header, "whsec_a", 1_100), Ok(()));
        assert_eq!(
            verify(body, &header, "whsec_b", 1_100),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(b"{}", &header, "whsec_a", 1_100),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(body, &header, "whsec_a", 1_301),
            Err(SignatureError::Stale)
        );
        assert_eq!(
            verify(body, "v1=abc", "whsec_a", 1_000),
            Err(SignatureError::Malformed)
        );
        // Rotation: an old secret's value beside the new one's.
        let old = sign(body, "whsec_old", 1_000);
        let both = format!("{header},v1={},v0=zz", &old[old.find("v1=").unwrap() + 3..]);
        assert_eq!(verify(body, &both, "whsec_old", 1_000), Ok(()));
        assert_eq!(verify(body, &both, "whsec_a", 1_000), Ok(()));
    }
}
