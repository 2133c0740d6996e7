//! Encryption at rest for secrets Mailward must be able to read back (webhook signing secrets):
//! AES-256-GCM under a key derived from the server secret, random 96-bit nonce per value.
//! Stored as `v1:<hex nonce>:<hex ciphertext>`.

use aes_gcm::aead::Aead as _;
use aes_gcm::{Aes256Gcm, KeyInit as _, Nonce};
use mailward_domain::secrets::{hmac_sha256, random_bytes};

fn cipher(server_secret: &[u8]) -> Aes256Gcm {
    // A purpose-specific key, so the JWT and code-hash keys are never the encryption key.
    let key = hmac_sha256(server_secret, b"mailward/secret-box/v1");
    Aes256Gcm::new(&key.into())
}

/// Encrypts a secret for storage.
pub fn seal(server_secret: &[u8], plaintext: &str) -> Result<String, String> {
    let nonce = random_bytes(12);
    let ciphertext = cipher(server_secret)
        .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
        .map_err(|_| "encryption failed".to_owned())?;
    Ok(format!(
        "v1:{}:{}",
        hex::encode(nonce),
        hex::encode(ciphertext)
    ))
}

/// Decrypts a stored secret. Fails on tampering or a different server secret.
pub fn open(server_secret: &[u8], sealed: &str) -> Result<String, String> {
    let mut parts = sealed.splitn(3, ':');
    let (Some("v1"), Some(nonce), Some(ciphertext)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err("unknown sealed-secret format".into());
    };
    let nonce = hex::decode(nonce).map_err(|_| "bad nonce".to_owned())?;
    let ciphertext = hex::decode(ciphertext).map_err(|_| "bad ciphertext".to_owned())?;
    if nonce.len() != 12 {
        return Err("bad nonce length".into());
    }
    let plaintext = cipher(server_secret)
        .decrypt(Nonce::from_slice(&nonce), ciphertext.as_slice())
        .map_err(|_| "decryption failed (tampered, or another server secret)".to_owned())?;
    String::from_utf8(plaintext).map_err(|_| "secret is not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_detects_tampering() {
        let key = b"0123456789abcdef0123456789abcdef";
        let sealed = seal(key, "whsec_abc").unwrap();
        assert!(!sealed.contains("whsec_abc"));
        assert_eq!(open(key, &sealed).unwrap(), "whsec_abc");
        assert_ne!(
            seal(key, "whsec_abc").unwrap(),
            sealed,
            "fresh nonce each time"
        );
        assert!(open(b"another-key-another-key-another-k", &sealed).is_err());
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('0') { '1' } else { '0' });
        assert!(open(key, &tampered).is_err());
        assert!(open(key, "garbage").is_err());
    }
}
