//! DKIM key records (RFC 6376 §3.6.1, RFC 8463 for Ed25519, RFC 8301 for key strength), the TXT
//! value at `<selector>._domainkey.<domain>`.
//!
//! [`parse`] reads the tag list (folding whitespace allowed anywhere around tags and inside
//! `p=`), decodes `p=` and measures the key: for RSA the modulus length from the
//! SubjectPublicKeyInfo DER that signers publish (a bare PKCS#1 `RSAPublicKey`, which RFC 6376's
//! text literally describes, is accepted too); for Ed25519 the raw 32-byte key. Unknown tags
//! (such as the historic `g=`) are ignored as RFC 6376 §3.2 requires.
//!
//! DER is decoded with RustCrypto's `spki` and `pkcs1` crates (without default features): they
//! are small `no_std` DER readers with no big-number arithmetic, which is all a length check
//! needs; the `rsa` crate would add a bignum library and key operations we never perform.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `syntax_error` | error | a segment is not `tag=value` or has an invalid tag name (the whole record is invalid, §3.2) |
//! | `duplicate_tag` | error | a tag occurs twice (§3.2: the record is invalid); the first value is reported |
//! | `version_not_first` | error | `v=` is present but not the first tag |
//! | `invalid_version` | error | `v=` is not `DKIM1` |
//! | `missing_public_key` | error | no `p=` tag |
//! | `key_revoked` | warning | `p=` is empty: the selector is revoked, signatures made with it fail. Usually deliberate (a retired selector), so not an error by itself |
//! | `unknown_key_type` | error | `k=` is neither `rsa` nor `ed25519`: verifiers ignore the key |
//! | `invalid_base64` | error | `p=` is not base64 |
//! | `invalid_rsa_key` | error | `p=` is not an RSA SubjectPublicKeyInfo or RSAPublicKey (or is another algorithm's key) |
//! | `rsa_key_too_short` | error | RSA modulus under 1024 bits: verifiers must not accept it (RFC 8301 §3.2) |
//! | `rsa_key_weak` | warning | RSA modulus of 1024..2047 bits: accepted, but RFC 8301 says signers SHOULD use 2048 |
//! | `invalid_ed25519_key` | error | `k=ed25519` but the key is not 32 bytes (RFC 8463 publishes the raw key, not SPKI) |
//! | `sha1_only` | error | `h=` allows only `sha1`, which verifiers must reject (RFC 8301 §3.1) |
//! | `no_supported_hash` | error | `h=` names neither `sha256` nor `sha1` |
//! | `unknown_hash_algorithm` | warning | `h=` lists an algorithm other than `sha1`/`sha256` (ignored) |
//! | `not_for_email` | error | `s=` lists neither `*` nor `email` |
//! | `unknown_service_type` | warning | `s=` lists a type other than `*`/`email` (ignored) |
//! | `testing_mode` | warning | `t=y`: verifiers may treat signatures as if unsigned |
//! | `unknown_flag` | warning | `t=` lists a flag other than `y`/`s` (ignored, §3.6.1) |

use crate::tags::{self, clip};
use crate::{Problem, has_errors, problem_codes};
use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use pkcs1::der::Decode as _;
use serde::Serialize;

problem_codes! {
    /// Problem codes for DKIM key records (see the module table).
    pub enum DkimCode {
        /// A segment is not `tag=value`.
        SyntaxError = ("syntax_error", Error),
        /// A tag occurs more than once.
        DuplicateTag = ("duplicate_tag", Error),
        /// `v=` is not first.
        VersionNotFirst = ("version_not_first", Error),
        /// `v=` is not `DKIM1`.
        InvalidVersion = ("invalid_version", Error),
        /// No `p=`.
        MissingPublicKey = ("missing_public_key", Error),
        /// Empty `p=`.
        KeyRevoked = ("key_revoked", Warning),
        /// `k=` unknown.
        UnknownKeyType = ("unknown_key_type", Error),
        /// `p=` is not base64.
        InvalidBase64 = ("invalid_base64", Error),
        /// `p=` is not an RSA public key.
        InvalidRsaKey = ("invalid_rsa_key", Error),
        /// RSA under 1024 bits.
        RsaKeyTooShort = ("rsa_key_too_short", Error),
        /// RSA of 1024..2047 bits.
        RsaKeyWeak = ("rsa_key_weak", Warning),
        /// Ed25519 key not 32 bytes.
        InvalidEd25519Key = ("invalid_ed25519_key", Error),
        /// `h=sha1` only.
        Sha1Only = ("sha1_only", Error),
        /// `h=` without a known algorithm.
        NoSupportedHash = ("no_supported_hash", Error),
        /// `h=` lists an unknown algorithm.
        UnknownHashAlgorithm = ("unknown_hash_algorithm", Warning),
        /// `s=` excludes email.
        NotForEmail = ("not_for_email", Error),
        /// `s=` lists an unknown service type.
        UnknownServiceType = ("unknown_service_type", Warning),
        /// `t=y`.
        TestingMode = ("testing_mode", Warning),
        /// `t=` lists an unknown flag.
        UnknownFlag = ("unknown_flag", Warning),
    }
}

/// The key algorithm named by `k=` (default `rsa`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyType {
    /// `k=rsa` or no `k=`.
    Rsa,
    /// `k=ed25519` (RFC 8463).
    Ed25519,
    /// Anything else, as written.
    Unknown(String),
}

/// How an RSA key was encoded in `p=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RsaKeyFormat {
    /// X.509 SubjectPublicKeyInfo (what `openssl rsa -pubout` and nearly every signer publish).
    Spki,
    /// A bare PKCS#1 RSAPublicKey.
    Pkcs1,
}

/// What `p=` turned out to hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PublicKey {
    /// No `p=` tag.
    Missing,
    /// Empty `p=`: the key is revoked.
    Revoked,
    /// An RSA key with its modulus length.
    Rsa {
        /// Modulus length in bits.
        bits: u32,
        /// Encoding found in `p=`.
        format: RsaKeyFormat,
    },
    /// A 32-byte Ed25519 key.
    Ed25519,
    /// `p=` could not be decoded as a key of the declared type.
    Invalid,
    /// `k=` names an unknown type, so the key was not examined.
    UnsupportedType,
}

/// A parsed DKIM key record: the tags an audit shows plus the problems found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DkimKeyRecord {
    /// `v=` as written, when present.
    pub version: Option<String>,
    /// `k=` (default `rsa`).
    pub key_type: KeyType,
    /// `h=` entries, when present (absent means any algorithm).
    pub hash_algorithms: Option<Vec<String>>,
    /// `s=` entries (default `*`).
    pub service_types: Vec<String>,
    /// `t=` entries.
    pub flags: Vec<String>,
    /// `n=` notes, when present.
    pub notes: Option<String>,
    /// The decoded key.
    pub public_key: PublicKey,
    /// Everything found wrong or weak.
    pub problems: Vec<Problem<DkimCode>>,
}

impl DkimKeyRecord {
    /// True when verifiers can use the key: no error and a real (not revoked) key. Why: the audit
    /// needs one yes/no per selector besides the codes.
    pub fn is_usable(&self) -> bool {
        !has_errors(&self.problems)
            && matches!(self.public_key, PublicKey::Rsa { .. } | PublicKey::Ed25519)
    }

    /// True when `t=y` is set (the domain says it is testing DKIM).
    pub fn is_testing(&self) -> bool {
        self.flags.iter().any(|f| f.eq_ignore_ascii_case("y"))
    }

    /// Key strength in bits (RSA modulus, or 256 for Ed25519), for display and scoring.
    pub fn key_bits(&self) -> Option<u32> {
        match self.public_key {
            PublicKey::Rsa { bits, .. } => Some(bits),
            PublicKey::Ed25519 => Some(256),
            _ => None,
        }
    }
}

/// Parses and checks one DKIM key record (the TXT strings already concatenated). Never panics.
pub fn parse(record: &str) -> DkimKeyRecord {
    let list = tags::parse(record);
    let mut problems: Vec<Problem<DkimCode>> = list
        .issues
        .iter()
        .map(|i| Problem::new(DkimCode::SyntaxError, i.message()))
        .collect();
    for d in list.duplicates(false) {
        problems.push(Problem::new(
            DkimCode::DuplicateTag,
            format!("tag \"{}\" occurs more than once", clip(&d)),
        ));
    }

    let version = list.get("v").map(|t| t.value.clone());
    if let Some(v) = &version {
        if list.tags.first().is_some_and(|t| t.name != "v") {
            problems.push(Problem::new(
                DkimCode::VersionNotFirst,
                "v= must be the first tag",
            ));
        }
        if v != "DKIM1" {
            problems.push(Problem::new(
                DkimCode::InvalidVersion,
                format!("v={} is not DKIM1", clip(v)),
            ));
        }
    }

    let key_type = match list.get("k").map(|t| t.value.as_str()) {
        None => KeyType::Rsa,
        Some(k) if k.eq_ignore_ascii_case("rsa") => KeyType::Rsa,
        Some(k) if k.eq_ignore_ascii_case("ed25519") => KeyType::Ed25519,
        Some(k) => {
            problems.push(Problem::new(
                DkimCode::UnknownKeyType,
                format!("k={} is not a known key type (rsa, ed25519)", clip(k)),
            ));
            KeyType::Unknown(k.to_string())
        }
    };

    let hash_algorithms = list.get("h").map(|t| split_colon(&t.value));
    if let Some(hashes) = &hash_algorithms {
        check_hashes(hashes, &mut problems);
    }

    let service_types = list
        .get("s")
        .map(|t| split_colon(&t.value))
        .unwrap_or_else(|| vec!["*".to_string()]);
    check_services(&service_types, &mut problems);

    let flags = list
        .get("t")
        .map(|t| split_colon(&t.value))
        .unwrap_or_default();
    for f in &flags {
        if f.eq_ignore_ascii_case("y") {
            problems.push(Problem::new(
                DkimCode::TestingMode,
                "t=y: the domain is testing DKIM; verifiers may ignore failures or signatures",
            ));
        } else if !f.eq_ignore_ascii_case("s") {
            problems.push(Problem::new(
                DkimCode::UnknownFlag,
                format!("t= flag \"{}\" is unknown and ignored", clip(f)),
            ));
        }
    }

    let public_key = match list.get("p") {
        None => {
            problems.push(Problem::new(
                DkimCode::MissingPublicKey,
                "the record has no p= tag",
            ));
            PublicKey::Missing
        }
        Some(p) => decode_key(&p.value, &key_type, &mut problems),
    };

    DkimKeyRecord {
        version,
        key_type,
        hash_algorithms,
        service_types,
        flags,
        notes: list.get("n").map(|t| t.value.clone()),
        public_key,
        problems,
    }
}

/// Splits a colon-separated list, dropping whitespace and empty entries.
fn split_colon(value: &str) -> Vec<String> {
    value
        .split(':')
        .map(|s| s.trim_matches(tags::is_fws))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `h=` rules: sha256 must be allowed (RFC 8301 forbids relying on sha1).
fn check_hashes(hashes: &[String], problems: &mut Vec<Problem<DkimCode>>) {
    let has = |name: &str| hashes.iter().any(|h| h.eq_ignore_ascii_case(name));
    for h in hashes {
        if !h.eq_ignore_ascii_case("sha1") && !h.eq_ignore_ascii_case("sha256") {
            problems.push(Problem::new(
                DkimCode::UnknownHashAlgorithm,
                format!("h= algorithm \"{}\" is unknown and ignored", clip(h)),
            ));
        }
    }
    if !has("sha256") {
        if has("sha1") {
            problems.push(Problem::new(
                DkimCode::Sha1Only,
                "h= allows only sha1, which verifiers must reject (RFC 8301)",
            ));
        } else {
            problems.push(Problem::new(
                DkimCode::NoSupportedHash,
                "h= names no supported hash algorithm (sha256)",
            ));
        }
    }
}

/// `s=` rules: the key must be usable for email.
fn check_services(services: &[String], problems: &mut Vec<Problem<DkimCode>>) {
    let mut for_email = false;
    for s in services {
        if s == "*" || s.eq_ignore_ascii_case("email") {
            for_email = true;
        } else {
            problems.push(Problem::new(
                DkimCode::UnknownServiceType,
                format!("s= service type \"{}\" is unknown and ignored", clip(s)),
            ));
        }
    }
    if !for_email {
        problems.push(Problem::new(
            DkimCode::NotForEmail,
            "s= does not include email or *: the key cannot verify mail",
        ));
    }
}

/// Base64 with or without padding; `p=` may carry folding whitespace anywhere.
const LENIENT_B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo, to explain a common mistake.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Decodes `p=` and checks the key against the declared type.
fn decode_key(value: &str, key_type: &KeyType, problems: &mut Vec<Problem<DkimCode>>) -> PublicKey {
    let compact: String = value.chars().filter(|c| !tags::is_fws(*c)).collect();
    if compact.is_empty() {
        problems.push(Problem::new(
            DkimCode::KeyRevoked,
            "p= is empty: this selector's key is revoked",
        ));
        return PublicKey::Revoked;
    }
    let bytes = match LENIENT_B64.decode(compact.as_bytes()) {
        Ok(b) => b,
        Err(e) => {
            problems.push(Problem::new(
                DkimCode::InvalidBase64,
                format!("p= is not valid base64: {e}"),
            ));
            return PublicKey::Invalid;
        }
    };
    match key_type {
        KeyType::Unknown(_) => PublicKey::UnsupportedType,
        KeyType::Ed25519 => {
            if bytes.len() == 32 {
                PublicKey::Ed25519
            } else {
                let hint = if bytes.len() == 44 && bytes.starts_with(&ED25519_SPKI_PREFIX) {
                    " (it is a SubjectPublicKeyInfo; RFC 8463 publishes the raw 32-byte key)"
                } else {
                    ""
                };
                problems.push(Problem::new(
                    DkimCode::InvalidEd25519Key,
                    format!("Ed25519 key is {} bytes, not 32{hint}", bytes.len()),
                ));
                PublicKey::Invalid
            }
        }
        KeyType::Rsa => match rsa_modulus_bits(&bytes) {
            Ok((bits, format)) => {
                if bits < 1024 {
                    problems.push(Problem::new(
                        DkimCode::RsaKeyTooShort,
                        format!("RSA key is {bits} bits; verifiers reject keys under 1024 bits (RFC 8301)"),
                    ));
                } else if bits < 2048 {
                    problems.push(Problem::new(
                        DkimCode::RsaKeyWeak,
                        format!("RSA key is {bits} bits; 2048 bits is recommended (RFC 8301)"),
                    ));
                }
                PublicKey::Rsa { bits, format }
            }
            Err(msg) => {
                problems.push(Problem::new(DkimCode::InvalidRsaKey, msg));
                PublicKey::Invalid
            }
        },
    }
}

/// The modulus length of an RSA public key in SubjectPublicKeyInfo or bare PKCS#1 DER.
fn rsa_modulus_bits(der: &[u8]) -> Result<(u32, RsaKeyFormat), String> {
    match spki::SubjectPublicKeyInfoRef::from_der(der) {
        Ok(info) => {
            if info.algorithm.oid != pkcs1::ALGORITHM_OID {
                return Err(format!(
                    "p= holds a {} key, not rsaEncryption",
                    info.algorithm.oid
                ));
            }
            let Some(inner) = info.subject_public_key.as_bytes() else {
                return Err("p= key bit string is not whole octets".to_string());
            };
            let key = pkcs1::RsaPublicKeyRef::from_der(inner)
                .map_err(|e| format!("p= RSA key does not parse: {e}"))?;
            Ok((bit_length(key.modulus.as_bytes()), RsaKeyFormat::Spki))
        }
        Err(spki_err) => match pkcs1::RsaPublicKeyRef::from_der(der) {
            Ok(key) => Ok((bit_length(key.modulus.as_bytes()), RsaKeyFormat::Pkcs1)),
            Err(_) => Err(format!(
                "p= is not an RSA SubjectPublicKeyInfo or RSAPublicKey: {spki_err}"
            )),
        },
    }
}

/// Bit length of a big-endian unsigned integer.
fn bit_length(bytes: &[u8]) -> u32 {
    let mut iter = bytes.iter().skip_while(|b| **b == 0);
    let Some(first) = iter.next() else { return 0 };
    let rest = u32::try_from(iter.count()).unwrap_or(u32::MAX / 8);
    rest.saturating_mul(8)
        .saturating_add(8 - first.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_lengths() {
        assert_eq!(bit_length(&[]), 0);
        assert_eq!(bit_length(&[0, 0]), 0);
        assert_eq!(bit_length(&[1]), 1);
        assert_eq!(bit_length(&[0, 0x80, 0]), 16);
        assert_eq!(bit_length(&[0x7f, 0xff]), 15);
    }

    #[test]
    fn split_colon_trims() {
        assert_eq!(split_colon(" sha1 : sha256 ::"), vec!["sha1", "sha256"]);
    }
}
