//! Chain building: from the leaf, issuer by issuer (matched by the raw distinguished name and
//! proven by the signature), first among the trust store's roots, then the bundle's
//! certificates, then the store's known intermediates (a repair), until a trusted root.

use crate::store::TrustStore;
use crate::{Reason, Rejection, common_name, parse};
use ::time::OffsetDateTime;
use base64::Engine as _;
use x509_parser::prelude::*;

/// Longest chain followed.
const MAX_DEPTH: usize = 8;

/// A built chain.
#[derive(Debug, Clone)]
pub struct Path {
    /// The leaf, then each intermediate (DER); the anchor is apart.
    pub certs: Vec<Vec<u8>>,
    /// The trusted root (DER).
    pub anchor: Vec<u8>,
    /// Its name.
    pub anchor_name: String,
    /// An intermediate came from the store.
    pub repaired: bool,
}

impl Path {
    /// Certificates from the leaf to the anchor, both included.
    pub fn length(&self) -> usize {
        self.certs.len() + 1
    }

    /// The hosted chain: the leaf and intermediates as PEM (64-column base64).
    pub fn hosted_pem(&self) -> String {
        let mut out = String::new();
        for der in &self.certs {
            out.push_str("-----BEGIN CERTIFICATE-----\n");
            let b64 = base64::engine::general_purpose::STANDARD.encode(der);
            for line in b64.as_bytes().chunks(64) {
                out.push_str(&String::from_utf8_lossy(line));
                out.push('\n');
            }
            out.push_str("-----END CERTIFICATE-----\n");
        }
        out
    }
}

/// Where an issuer was found.
enum Found {
    Anchor(Vec<u8>),
    Bundle(Vec<u8>),
    Store(Vec<u8>),
}

/// The first candidate named as `cert`'s issuer whose key verifies its signature; `Err(true)`
/// when some candidate had the name but none the key.
fn issuer_among<'a>(
    cert: &X509Certificate<'_>,
    candidates: impl Iterator<Item = &'a Vec<u8>>,
    used: &[Vec<u8>],
) -> Result<Option<Vec<u8>>, bool> {
    let mut named = false;
    for der in candidates {
        if used.contains(der) {
            continue;
        }
        let Ok((_, candidate)) = X509Certificate::from_der(der) else {
            continue;
        };
        if candidate.subject().as_raw() != cert.issuer().as_raw() {
            continue;
        }
        named = true;
        if cert.verify_signature(Some(candidate.public_key())).is_ok() {
            return Ok(Some(der.clone()));
        }
    }
    if named { Err(true) } else { Ok(None) }
}

/// Builds the chain of `parsed[0]` (the leaf) from the bundle and the store.
pub fn build(
    parsed: &[X509Certificate<'_>],
    ders: &[Vec<u8>],
    store: &TrustStore,
) -> Result<Path, Rejection> {
    let bundle: Vec<Vec<u8>> = ders
        .iter()
        .zip(parsed)
        .skip(1)
        .filter(|(_, c)| c.is_ca())
        .map(|(d, _)| d.clone())
        .collect();
    let mut certs = vec![ders[0].clone()];
    let mut repaired = false;
    for _ in 0..MAX_DEPTH {
        let mut bad_signature = false;
        let last = certs.last().expect("the leaf at least").clone();
        let current = parse(&last)?;
        let mut found = None;
        for (source, list) in [(0, &store.roots), (1, &bundle), (2, &store.intermediates)] {
            match issuer_among(&current, list.iter(), &certs) {
                Ok(Some(der)) => {
                    found = Some(match source {
                        0 => Found::Anchor(der),
                        1 => Found::Bundle(der),
                        _ => Found::Store(der),
                    });
                    break;
                }
                Ok(None) => {}
                Err(_) => bad_signature = true,
            }
        }
        match found {
            Some(Found::Anchor(anchor)) => {
                let root = parse(&anchor)?;
                let anchor_name =
                    common_name(root.subject()).unwrap_or_else(|| root.subject().to_string());
                return Ok(Path {
                    certs,
                    anchor,
                    anchor_name,
                    repaired,
                });
            }
            Some(Found::Bundle(der)) => certs.push(der),
            Some(Found::Store(der)) => {
                repaired = true;
                certs.push(der);
            }
            None if bad_signature => {
                return Err(Rejection::new(
                    Reason::ChainSignatureInvalid,
                    format!(
                        "the signature of \"{}\" does not verify with its issuer's key",
                        current.subject()
                    ),
                ));
            }
            None if current.issuer().as_raw() == current.subject().as_raw() => {
                return Err(Rejection::new(
                    Reason::ChainUntrusted,
                    format!(
                        "the chain ends at \"{}\", a root that is not a mark-verifying authority",
                        current.subject()
                    ),
                ));
            }
            None => {
                return Err(Rejection::new(
                    Reason::IncompleteChain,
                    format!(
                        "the issuer of \"{}\" (\"{}\") is neither in the file nor a known mark-certificate authority",
                        current.subject(),
                        current.issuer()
                    ),
                ));
            }
        }
    }
    Err(Rejection::new(
        Reason::IncompleteChain,
        format!("no trusted root within {MAX_DEPTH} certificates"),
    ))
}

/// Every certificate of the chain, anchor included, must be valid at `at`.
pub fn check_times(path: &Path, at: OffsetDateTime) -> Result<(), Rejection> {
    let at = at.unix_timestamp();
    for der in path.certs.iter().chain(std::iter::once(&path.anchor)) {
        let cert = parse(der)?;
        let validity = cert.validity();
        if at < validity.not_before.timestamp() {
            return Err(Rejection::new(
                Reason::CertificateNotYetValid,
                format!(
                    "\"{}\" is valid only from {}",
                    cert.subject(),
                    validity.not_before
                ),
            ));
        }
        if at > validity.not_after.timestamp() {
            return Err(Rejection::new(
                Reason::ChainExpired,
                format!("\"{}\" expired on {}", cert.subject(), validity.not_after),
            ));
        }
    }
    Ok(())
}
