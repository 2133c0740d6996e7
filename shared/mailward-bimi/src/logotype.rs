//! The logotype extension (RFC 3709, 1.3.6.1.5.5.7.1.12) of a mark certificate: the logo as a
//! `data:image/svg+xml;base64,` URI (usually gzipped, so it is gunzipped before hashing) and
//! the hashes it must match.

use crate::{Reason, Rejection};
use base64::Engine as _;
use std::borrow::Cow;
use std::io::Read as _;
use x509_parser::asn1_rs::{Any, Class, FromDer, Oid, Tag};
use x509_parser::prelude::*;

/// The logotype extension.
const LOGOTYPE: &str = "1.3.6.1.5.5.7.1.12";
/// Largest logo accepted once decompressed.
pub const MAX_LOGO_BYTES: u64 = 1024 * 1024;
/// Deepest nesting walked.
const MAX_DEPTH: u8 = 16;

/// What the extension carries.
#[derive(Debug, Default)]
struct Found {
    uris: Vec<String>,
    /// `(hash algorithm OID, value)`.
    hashes: Vec<(String, Vec<u8>)>,
}

/// `SEQUENCE { AlgorithmIdentifier, OCTET STRING }`: a HashAlgAndValue.
fn hash_pair(data: &[u8]) -> Option<(String, Vec<u8>)> {
    let (rest, alg) = Any::from_der(data).ok()?;
    if alg.tag() != Tag::Sequence {
        return None;
    }
    let (_, oid) = Any::from_der(alg.data).ok()?;
    if oid.tag() != Tag::Oid {
        return None;
    }
    let (rest, value) = Any::from_der(rest).ok()?;
    if value.tag() != Tag::OctetString || !rest.is_empty() {
        return None;
    }
    Some((
        Oid::new(Cow::Borrowed(oid.data)).to_id_string(),
        value.data.to_vec(),
    ))
}

/// Walks DER elements, descending into every constructed one (the extension nests its logo
/// details under explicit and implicit context tags).
fn walk(mut input: &[u8], depth: u8, found: &mut Found) {
    while !input.is_empty() && depth < MAX_DEPTH {
        let Ok((rest, any)) = Any::from_der(input) else {
            return;
        };
        input = rest;
        if any.header.is_constructed() {
            if any.class() == Class::Universal
                && any.tag() == Tag::Sequence
                && let Some(pair) = hash_pair(any.data)
            {
                found.hashes.push(pair);
                continue;
            }
            walk(any.data, depth + 1, found);
        } else if any.class() == Class::Universal
            && any.tag() == Tag::Ia5String
            && let Ok(text) = std::str::from_utf8(any.data)
            && text
                .get(..5)
                .is_some_and(|p| p.eq_ignore_ascii_case("data:"))
        {
            found.uris.push(text.to_owned());
        }
    }
}

/// The digest of `data` under a hash algorithm OID, when supported.
fn digest(oid: &str, data: &[u8]) -> Option<Vec<u8>> {
    use aws_lc_rs::digest;
    let alg = match oid {
        "1.3.14.3.2.26" => &digest::SHA1_FOR_LEGACY_USE_ONLY,
        "2.16.840.1.101.3.4.2.1" => &digest::SHA256,
        "2.16.840.1.101.3.4.2.2" => &digest::SHA384,
        "2.16.840.1.101.3.4.2.3" => &digest::SHA512,
        _ => return None,
    };
    Some(digest::digest(alg, data).as_ref().to_vec())
}

/// The content of a `data:image/svg+xml;base64,` URI, gunzipped when compressed.
fn decode(uri: &str) -> Result<Vec<u8>, String> {
    let (meta, payload) = uri.split_once(',').ok_or("the logo URI has no data")?;
    let meta = meta.to_ascii_lowercase();
    if !meta.starts_with("data:image/svg+xml") || !meta.ends_with(";base64") {
        return Err(format!("the logo URI is {meta}, not base64 SVG"));
    }
    let compact: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| format!("the logo is not valid base64: {e}"))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_slice())
            .take(MAX_LOGO_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("the logo does not gunzip: {e}"))?;
        if out.len() as u64 > MAX_LOGO_BYTES {
            return Err("the logo is larger than 1 MiB decompressed".into());
        }
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// The logo the leaf vouches for, its hashes checked.
pub fn logo(leaf: &X509Certificate<'_>) -> Result<Vec<u8>, Rejection> {
    let missing = |why: &str| Rejection::new(Reason::LogotypeMissing, why.to_owned());
    let ext = leaf
        .extensions()
        .iter()
        .find(|e| e.oid.to_id_string() == LOGOTYPE)
        .ok_or_else(|| missing("the certificate has no logotype extension (RFC 3709)"))?;
    let mut found = Found::default();
    walk(ext.value, 0, &mut found);
    let uri = found
        .uris
        .iter()
        .find(|u| u.to_ascii_lowercase().starts_with("data:image/svg+xml"))
        .ok_or_else(|| missing("the logotype extension carries no embedded SVG logo"))?;
    let logo = decode(uri).map_err(|why| missing(&why))?;
    let mut checked = 0;
    for (oid, expected) in &found.hashes {
        if let Some(actual) = digest(oid, &logo) {
            if &actual != expected {
                return Err(Rejection::new(
                    Reason::LogoHashMismatch,
                    format!("the embedded logo does not match its {oid} hash"),
                ));
            }
            checked += 1;
        }
    }
    if checked == 0 {
        return Err(Rejection::new(
            Reason::LogoHashMismatch,
            "the logotype extension lists no SHA-1/SHA-2 hash of the logo",
        ));
    }
    Ok(logo)
}
