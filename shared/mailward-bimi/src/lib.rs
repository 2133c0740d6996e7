//! BIMI mark certificates (VMC and CMC) for hosted BIMI: everything a mailbox provider checks
//! before showing a logo, done before Mailward hosts the certificate and the logo.
//!
//! [`validate`] takes a PEM bundle, the domain and the time to judge validity at (injected: the
//! service clock), and either refuses it with one [`Reason`] of SPEC §4.1 or answers what to
//! host ([`Validated`]). The checks, in order (the first failure decides):
//!
//! 1. a private key anywhere in the bundle: `contains_private_key` (never hosted, never read);
//! 2. no certificate, a damaged block, or an unparsable certificate: `pem_parse_failed`;
//! 3. the first certificate must be a mark certificate: the BIMI extended key usage
//!    (1.3.6.1.5.5.7.3.31), not a CA: `not_a_vmc`;
//! 4. its logotype extension (RFC 3709, 1.3.6.1.5.5.7.1.12) must carry the logo as a `data:`
//!    URI (`logotype_missing`), whose content, gunzipped when compressed, matches every hash
//!    the extension lists (`logo_hash_mismatch`) and is SVG Tiny PS ([`svg`],
//!    `svg_not_tiny_ps`);
//! 5. the chain is built by issuer name from the bundle, then completed from the trust store's
//!    intermediates (`chain_repaired`), up to a trusted root ([`TrustStore`]): a chain ending
//!    anywhere else is `chain_untrusted` (a self-signed certificate we do not trust) or
//!    `incomplete_chain`; every link's signature is verified (`chain_signature_invalid`);
//! 6. every certificate of the chain must be valid at the given time
//!    (`certificate_not_yet_valid`, `chain_expired`);
//! 7. a DNS name of the leaf must be the domain or a parent of it (`san_mismatch`).
//!
//! Warnings do not refuse: `vmc-mark-type-oid-missing` (no mark type in the subject), and the
//! logo's publishing rules ([`svg`]).

pub mod chain;
pub mod logotype;
pub mod store;
pub mod svg;

pub use store::TrustStore;

use ::time::OffsetDateTime;
use serde::Serialize;
use x509_parser::prelude::*;

/// Why a bundle is refused (SPEC §4.1 `bimi_certificate_invalid` reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    PemParseFailed,
    NotAVmc,
    LogotypeMissing,
    LogoHashMismatch,
    SvgNotTinyPs,
    IncompleteChain,
    ChainUntrusted,
    ChainExpired,
    ChainSignatureInvalid,
    CertificateNotYetValid,
    SanMismatch,
    ContainsPrivateKey,
}

impl Reason {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::PemParseFailed => "pem_parse_failed",
            Reason::NotAVmc => "not_a_vmc",
            Reason::LogotypeMissing => "logotype_missing",
            Reason::LogoHashMismatch => "logo_hash_mismatch",
            Reason::SvgNotTinyPs => "svg_not_tiny_ps",
            Reason::IncompleteChain => "incomplete_chain",
            Reason::ChainUntrusted => "chain_untrusted",
            Reason::ChainExpired => "chain_expired",
            Reason::ChainSignatureInvalid => "chain_signature_invalid",
            Reason::CertificateNotYetValid => "certificate_not_yet_valid",
            Reason::SanMismatch => "san_mismatch",
            Reason::ContainsPrivateKey => "contains_private_key",
        }
    }
}

/// A refusal: the reason and what exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {detail}", reason.as_str())]
pub struct Rejection {
    pub reason: Reason,
    pub detail: String,
}

impl Rejection {
    pub(crate) fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

/// An accepted mark certificate and what to host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The chain to host: the leaf then its intermediates (completed from the store when the
    /// bundle lacked them), as PEM; the root is not included.
    pub chain_pem: String,
    /// Certificates from the leaf to the trust anchor, both included.
    pub chain_length: usize,
    /// An intermediate came from the trust store, not the bundle.
    pub chain_repaired: bool,
    /// The trust anchor's common name (or its whole subject when it has none).
    pub trust_anchor: String,
    /// The logo (decompressed SVG) the certificate vouches for.
    pub logo_svg: Vec<u8>,
    /// The leaf's expiry.
    pub not_after: OffsetDateTime,
    /// The leaf's serial number, lower-case hex without leading zeros.
    pub serial: String,
    /// The leaf's common name, if it has one.
    pub common_name: Option<String>,
    /// The domain names of the leaf.
    pub san_dns: Vec<String>,
    /// Non-blocking findings.
    pub warnings: Vec<String>,
}

/// The BIMI extended key usage.
const BIMI_EKU: &str = "1.3.6.1.5.5.7.3.31";
/// The mark type attribute of the subject (`Registered Mark`, `Prior Use Mark`, …).
const MARK_TYPE: &str = "1.3.6.1.4.1.53087.1.13";

/// Reads every PEM block: the certificates' DER, refusing keys and damage.
fn certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, Rejection> {
    let mut out = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let block = block.map_err(|e| {
            Rejection::new(Reason::PemParseFailed, format!("damaged PEM block: {e}"))
        })?;
        if block.label.contains("PRIVATE KEY") {
            return Err(Rejection::new(
                Reason::ContainsPrivateKey,
                "the file contains a private key: never send it anywhere; revoke it if it left your systems",
            ));
        }
        if block.label == "CERTIFICATE" {
            out.push(block.contents);
        }
    }
    if out.is_empty() {
        return Err(Rejection::new(
            Reason::PemParseFailed,
            "no CERTIFICATE block in the file",
        ));
    }
    Ok(out)
}

/// Parses one certificate.
pub(crate) fn parse(der: &[u8]) -> Result<X509Certificate<'_>, Rejection> {
    X509Certificate::from_der(der).map(|(_, c)| c).map_err(|e| {
        Rejection::new(
            Reason::PemParseFailed,
            format!("not an X.509 certificate: {e}"),
        )
    })
}

/// The common name of a name, if any.
pub(crate) fn common_name(name: &X509Name<'_>) -> Option<String> {
    name.iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .map(str::to_owned)
}

fn dns_names(cert: &X509Certificate<'_>) -> Vec<String> {
    cert.subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    GeneralName::DNSName(d) => Some(d.trim_end_matches('.').to_ascii_lowercase()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Checks a PEM bundle for `domain` at `at` (see the crate docs for the order of checks).
pub fn validate(
    pem: &[u8],
    domain: &str,
    at: OffsetDateTime,
    store: &TrustStore,
) -> Result<Validated, Rejection> {
    let ders = certificates(pem)?;
    let parsed: Vec<X509Certificate<'_>> =
        ders.iter().map(|d| parse(d)).collect::<Result<_, _>>()?;
    let leaf = &parsed[0];
    let is_mark = leaf
        .extended_key_usage()
        .ok()
        .flatten()
        .is_some_and(|eku| eku.value.other.iter().any(|o| o.to_id_string() == BIMI_EKU));
    if !is_mark || leaf.is_ca() {
        return Err(Rejection::new(
            Reason::NotAVmc,
            "the first certificate is not a mark certificate (no BIMI extended key usage 1.3.6.1.5.5.7.3.31, or a CA)",
        ));
    }
    let logo = logotype::logo(leaf)?;
    let mut warnings =
        svg::check(&logo).map_err(|why| Rejection::new(Reason::SvgNotTinyPs, why))?;
    let path = chain::build(&parsed, &ders, store)?;
    chain::check_times(&path, at)?;
    let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
    let names = dns_names(leaf);
    let san_ok = names
        .iter()
        .any(|n| domain == *n || domain.ends_with(&format!(".{n}")));
    if !san_ok {
        return Err(Rejection::new(
            Reason::SanMismatch,
            format!(
                "the certificate is for {} , not {domain}",
                if names.is_empty() {
                    "no domain name".to_owned()
                } else {
                    names.join(", ")
                }
            ),
        ));
    }
    let has_mark_type = leaf
        .subject()
        .iter_attributes()
        .any(|a| a.attr_type().to_id_string() == MARK_TYPE);
    if !has_mark_type {
        warnings.insert(0, "vmc-mark-type-oid-missing".to_owned());
    }
    let serial: String = leaf
        .raw_serial()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let serial = serial.trim_start_matches('0').to_owned();
    Ok(Validated {
        chain_pem: path.hosted_pem(),
        chain_length: path.length(),
        chain_repaired: path.repaired,
        trust_anchor: path.anchor_name.clone(),
        logo_svg: logo,
        not_after: OffsetDateTime::from_unix_timestamp(leaf.validity().not_after.timestamp())
            .unwrap_or(OffsetDateTime::UNIX_EPOCH),
        serial: if serial.is_empty() {
            "0".into()
        } else {
            serial
        },
        common_name: common_name(leaf.subject()),
        san_dns: names,
        warnings,
    })
}
