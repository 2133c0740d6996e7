//! [`TestCa`]: a throwaway certificate authority for tests that run a TLS server (webhook
//! receivers, SMTP with STARTTLS, IMAP) and point the client at the CA, exactly as a customer
//! with a private CA would.

/// A self-signed CA that signs leaf certificates for loopback servers.
pub struct TestCa {
    cert: rcgen::Certificate,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

/// A leaf certificate and its key.
pub struct Leaf {
    /// The certificate.
    pub cert: rcgen::Certificate,
    /// Its private key.
    pub key: rcgen::KeyPair,
}

impl TestCa {
    /// A new CA named `common_name`.
    pub fn new(common_name: &str) -> Self {
        let key = rcgen::KeyPair::generate().expect("CA key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let cert = params.self_signed(&key).expect("CA certificate");
        Self {
            cert,
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// The CA certificate.
    pub fn cert(&self) -> &rcgen::Certificate {
        &self.cert
    }

    /// The issuer, for leaf parameters the caller shapes itself (validity, names).
    pub fn issuer(&self) -> &rcgen::Issuer<'static, rcgen::KeyPair> {
        &self.issuer
    }

    /// A leaf for `name` (subject alternative name and common name), valid now.
    pub fn leaf(&self, name: &str) -> Leaf {
        let key = rcgen::KeyPair::generate().expect("leaf key");
        let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).expect("leaf params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        Leaf { cert, key }
    }
}
