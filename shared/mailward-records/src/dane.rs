//! DANE for SMTP (RFC 7672): the TLSA records at `_25._tcp.<mx host>` (RFC 6698 §2.1), checked
//! for what an SMTP client can use, and matched against the certificates an MX presents.
//!
//! RFC 7672 §3.1.3: SMTP clients treat PKIX-TA(0) and PKIX-EE(1) records as unusable, so only
//! DANE-TA(2) and DANE-EE(3) protect mail. A host whose TLSA records are all unusable is as if
//! it had none; a host with usable records must present a certificate one of them matches, or
//! DANE clients do not deliver to it at all.
//!
//! | code | severity | meaning |
//! |---|---|---|
//! | `tlsa_pkix_usage` | warning | usage 0 or 1: unusable for SMTP (RFC 7672 §3.1.3) |
//! | `tlsa_unknown_parameter` | error | a usage, selector or matching type no RFC assigns |
//! | `tlsa_bad_digest_length` | error | a SHA-256 digest not 32 octets, or a SHA-512 digest not 64 |
//! | `tlsa_bad_full_data` | error | matching type 0 with data that is no certificate (selector 0) or SubjectPublicKeyInfo (selector 1) |

use crate::{Problem, problem_codes};
use serde::Serialize;
use sha2::{Digest as _, Sha256, Sha512};

problem_codes! {
    /// Problem codes of TLSA records (see the module table).
    pub enum TlsaCode {
        /// Usage 0 or 1.
        PkixUsage = ("tlsa_pkix_usage", Warning),
        /// Unassigned usage, selector or matching type.
        UnknownParameter = ("tlsa_unknown_parameter", Error),
        /// A digest of the wrong length.
        BadDigestLength = ("tlsa_bad_digest_length", Error),
        /// Full data that does not parse.
        BadFullData = ("tlsa_bad_full_data", Error),
    }
}

/// One TLSA record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tlsa {
    pub usage: u8,
    pub selector: u8,
    pub matching: u8,
    /// The certificate association data.
    #[serde(serialize_with = "hex")]
    pub data: Vec<u8>,
}

fn hex<S: serde::Serializer>(data: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&to_hex(data))
}

/// Lower-case hex.
pub fn to_hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

impl Tlsa {
    /// RFC 6698 presentation form: `3 1 1 <hex>`.
    pub fn presentation(&self) -> String {
        format!(
            "{} {} {} {}",
            self.usage,
            self.selector,
            self.matching,
            to_hex(&self.data)
        )
    }

    /// Everything wrong with the record for an SMTP client.
    pub fn problems(&self) -> Vec<Problem<TlsaCode>> {
        let mut out = Vec::new();
        if self.usage > 3 || self.selector > 1 || self.matching > 2 {
            out.push(Problem::new(
                TlsaCode::UnknownParameter,
                format!(
                    "\"{} {} {}\": usage must be 0-3, selector 0-1 and matching type 0-2",
                    self.usage, self.selector, self.matching
                ),
            ));
            return out;
        }
        let wanted = match self.matching {
            1 => Some(32),
            2 => Some(64),
            _ => None,
        };
        if let Some(n) = wanted
            && self.data.len() != n
        {
            out.push(Problem::new(
                TlsaCode::BadDigestLength,
                format!(
                    "matching type {} wants a {n}-octet digest, the record has {}",
                    self.matching,
                    self.data.len()
                ),
            ));
        }
        if self.matching == 0 && !full_data_parses(self.selector, &self.data) {
            out.push(Problem::new(
                TlsaCode::BadFullData,
                format!(
                    "the data is no {}",
                    if self.selector == 0 {
                        "DER certificate"
                    } else {
                        "DER SubjectPublicKeyInfo"
                    }
                ),
            ));
        }
        if self.usage < 2 {
            out.push(Problem::new(
                TlsaCode::PkixUsage,
                format!(
                    "usage {} ({}) is unusable for SMTP: publish DANE-EE (3) or DANE-TA (2)",
                    self.usage,
                    if self.usage == 0 {
                        "PKIX-TA"
                    } else {
                        "PKIX-EE"
                    }
                ),
            ));
        }
        out
    }

    /// Whether an SMTP client would use it: DANE-TA or DANE-EE, well formed.
    pub fn is_usable(&self) -> bool {
        self.problems().is_empty()
    }

    /// Whether the record matches the certificates an MX presented (DER, the end entity first).
    /// DANE-EE(3) matches the end entity alone; DANE-TA(2) matches any certificate of the chain
    /// (the trust anchor the server sends along; the path to it is not validated here).
    pub fn matches(&self, chain: &[Vec<u8>]) -> bool {
        if !self.is_usable() {
            return false;
        }
        let candidates: &[Vec<u8>] = match (self.usage, chain.split_first()) {
            (3, Some((leaf, _))) => std::slice::from_ref(leaf),
            (2, Some(_)) => chain,
            _ => return false,
        };
        candidates.iter().any(|der| {
            let Some(selected) = select(self.selector, der) else {
                return false;
            };
            match self.matching {
                0 => selected == self.data,
                1 => Sha256::digest(&selected).as_slice() == self.data,
                2 => Sha512::digest(&selected).as_slice() == self.data,
                _ => false,
            }
        })
    }
}

/// The part of a DER certificate a selector names: the whole certificate (0) or its
/// SubjectPublicKeyInfo (1).
fn select(selector: u8, der: &[u8]) -> Option<Vec<u8>> {
    match selector {
        0 => Some(der.to_vec()),
        1 => {
            let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
            Some(cert.tbs_certificate.subject_pki.raw.to_vec())
        }
        _ => None,
    }
}

fn full_data_parses(selector: u8, data: &[u8]) -> bool {
    match selector {
        0 => x509_parser::parse_x509_certificate(data).is_ok_and(|(rest, _)| rest.is_empty()),
        1 => {
            use x509_parser::prelude::FromDer as _;
            x509_parser::x509::SubjectPublicKeyInfo::from_der(data)
                .is_ok_and(|(rest, _)| rest.is_empty())
        }
        _ => false,
    }
}

/// The `3 1 1` record (DANE-EE, SubjectPublicKeyInfo, SHA-256) for a DER certificate: what the
/// records guidance proposes for a host, robust to renewals that keep the key.
pub fn recommended_for(der: &[u8]) -> Option<Tlsa> {
    Some(Tlsa {
        usage: 3,
        selector: 1,
        matching: 1,
        data: Sha256::digest(select(1, der)?).to_vec(),
    })
}

/// The owner name of an MX host's TLSA records for SMTP.
pub fn tlsa_name(mx_host: &str) -> String {
    format!("_25._tcp.{}", mx_host.trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProblemCode as _;

    #[test]
    fn unknown_parameters_stop_the_other_checks() {
        let t = Tlsa {
            usage: 9,
            selector: 1,
            matching: 1,
            data: vec![0; 3],
        };
        let codes: Vec<_> = t.problems().iter().map(|p| p.code.as_str()).collect();
        assert_eq!(codes, ["tlsa_unknown_parameter"]);
        assert!(!t.matches(&[vec![1, 2, 3]]));
    }

    #[test]
    fn pkix_usages_are_unusable_for_smtp() {
        let t = Tlsa {
            usage: 1,
            selector: 1,
            matching: 1,
            data: vec![0; 32],
        };
        assert!(!t.is_usable());
        assert_eq!(t.presentation(), format!("1 1 1 {}", "00".repeat(32)));
        assert_eq!(tlsa_name("mx.example.com."), "_25._tcp.mx.example.com");
    }
}
