//! The mark-certificate trust store: the roots of the mark-verifying authorities (mvarcs and
//! the postalsys/vmc root store, in `trust-anchors/`), not the browser roots, plus the issuing
//! CAs those files carry, which complete a bundle that lacks its intermediate.

use std::sync::OnceLock;
use x509_parser::prelude::*;

/// Roots and known intermediates, as DER.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    /// Self-signed certificates: chains end here.
    pub(crate) roots: Vec<Vec<u8>>,
    /// Issuing CAs that may complete a chain.
    pub(crate) intermediates: Vec<Vec<u8>>,
}

const BUILTIN: &[&[u8]] = &[
    include_bytes!("../trust-anchors/mvarcs/cacert.pem"),
    include_bytes!("../trust-anchors/postalsys-vmc-root-store/SSL.com-VMC-Root-2024-ECC.pem"),
    include_bytes!("../trust-anchors/postalsys-vmc-root-store/SSL.com-VMC-Root-2024-RSA.pem"),
    include_bytes!("../trust-anchors/postalsys-vmc-root-store/digicert.pem"),
    include_bytes!("../trust-anchors/postalsys-vmc-root-store/entrust_vmc_specific.pem"),
    include_bytes!("../trust-anchors/postalsys-vmc-root-store/gsverifiedmarkrootr42.pem"),
];

impl TrustStore {
    /// The store Mailward trusts.
    pub fn builtin() -> &'static TrustStore {
        static STORE: OnceLock<TrustStore> = OnceLock::new();
        STORE.get_or_init(|| TrustStore::from_pem(BUILTIN))
    }

    /// A store from PEM files: self-signed certificates become roots, the others known
    /// intermediates; duplicates and unreadable blocks are skipped.
    pub fn from_pem(files: &[&[u8]]) -> TrustStore {
        let mut store = TrustStore::default();
        for file in files {
            for block in x509_parser::pem::Pem::iter_from_buffer(file).flatten() {
                if block.label != "CERTIFICATE" {
                    continue;
                }
                let Ok((_, cert)) = X509Certificate::from_der(&block.contents) else {
                    continue;
                };
                let self_signed = cert.issuer().as_raw() == cert.subject().as_raw();
                let list = if self_signed {
                    &mut store.roots
                } else {
                    &mut store.intermediates
                };
                if !list.contains(&block.contents) {
                    list.push(block.contents);
                }
            }
        }
        store
    }

    /// How many roots it trusts.
    pub fn root_count(&self) -> usize {
        self.roots.len()
    }
}
