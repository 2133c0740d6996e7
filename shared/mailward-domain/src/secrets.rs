//! Secret material: generation, hashing and constant-time comparison.
//!
//! API keys and signup codes are stored only as keyed hashes; what a client presents is hashed
//! again and looked up. Comparisons of secret values use constant time.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::Rng as _;
use sha2::{Digest, Sha256};

/// Prefix of every Mailward API key, so leaked keys are recognisable by secret scanners.
pub const API_KEY_PREFIX: &str = "mw_";

/// The last four characters of a secret, shown to tell secrets apart (API keys, webhook
/// secrets, DNS-connection access keys).
pub fn last_four(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

/// Hex SHA-256 of a value. Used for API-key lookup items (the key has 192 bits of entropy, so an
/// unkeyed hash is as good as a keyed one and lets any instance look a key up).
pub fn sha256_hex(value: &[u8]) -> String {
    hex::encode(Sha256::digest(value))
}

/// Raw SHA-256 of a value (PKCE's S256 transform, RFC 7636).
pub fn sha256_bytes(value: &[u8]) -> [u8; 32] {
    Sha256::digest(value).into()
}

/// A random opaque token: `prefix` plus 32 random bytes in base64url-safe hex. Used for OAuth
/// authorization codes and refresh tokens, stored only as their SHA-256.
pub fn new_opaque_token(prefix: &str) -> String {
    format!("{prefix}{}", hex::encode(random_bytes(32)))
}

/// Hex HMAC-SHA256 of `message` under `key`.
pub fn hmac_sha256_hex(key: &[u8], message: &[u8]) -> String {
    hex::encode(hmac_sha256(key, message))
}

/// Raw HMAC-SHA256 of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Constant-time equality of two byte strings (length is not secret).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// `n` random bytes from the operating system's generator.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    rand::rng().fill(bytes.as_mut_slice());
    bytes
}

/// A new API key: prefix plus 24 random bytes, base64url without padding.
pub fn new_api_key() -> String {
    format!(
        "{API_KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes(24))
    )
}

/// A new six-digit signup code, uniformly distributed.
pub fn new_signup_code() -> String {
    format!("{:06}", rand::rng().random_range(0..1_000_000u32))
}

/// A new single-use invitation token (`mwinv_` + 32 random bytes base64url).
pub fn new_invitation_token() -> String {
    format!(
        "mwinv_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes(32))
    )
}

/// A new webhook signing secret (`whsec_` + 32 random bytes base64url).
pub fn new_webhook_secret() -> String {
    format!(
        "whsec_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes(32))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_are_prefixed_and_distinct() {
        let a = new_api_key();
        let b = new_api_key();
        assert!(a.starts_with(API_KEY_PREFIX));
        assert_eq!(a.len(), API_KEY_PREFIX.len() + 32);
        assert_ne!(a, b);
    }

    #[test]
    fn signup_codes_are_six_digits() {
        for _ in 0..200 {
            let code = new_signup_code();
            assert_eq!(code.len(), 6);
            assert!(code.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn constant_time_eq_checks_length_and_content() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn hmac_matches_rfc4231_case_2() {
        assert_eq!(
            hmac_sha256_hex(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
