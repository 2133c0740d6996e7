//! An SMTP server on loopback that offers STARTTLS with a certificate the test chooses (valid,
//! expired, for another name), signed by its own test CA: the MX side of the certificate probe.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// A running server.
pub struct SmtpTlsServer {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// The CA certificate (PEM file) that signs its certificates.
    pub ca_path: PathBuf,
    ca: Arc<mailward_testkit::TestCa>,
    config: Arc<Mutex<(Arc<rustls::ServerConfig>, Vec<u8>)>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SmtpTlsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A server configuration presenting a certificate for `name` expiring at `not_after`, signed
/// by `issuer` (self-signed without one), with the certificate's DER.
fn server_config(
    issuer: Option<&rcgen::Issuer<'static, rcgen::KeyPair>>,
    name: &str,
    not_after: time::OffsetDateTime,
) -> (Arc<rustls::ServerConfig>, Vec<u8>) {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).expect("params");
    params.not_before = time::OffsetDateTime::now_utc() - time::Duration::days(400);
    params.not_after = not_after;
    let cert = match issuer {
        Some(issuer) => params.signed_by(&key, issuer).expect("leaf"),
        None => params.self_signed(&key).expect("self-signed"),
    };
    let der = cert.der().to_vec();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("config"),
    );
    (config, der)
}

impl SmtpTlsServer {
    /// Starts a server whose certificate names `name` and expires at `not_after`.
    pub async fn start(dir: &std::path::Path, name: &str, not_after: time::OffsetDateTime) -> Self {
        let ca = Arc::new(mailward_testkit::TestCa::new("Mailward SMTP Test CA"));
        let ca_path = dir.join(format!("smtp-ca-{}.pem", uuid::Uuid::new_v4()));
        std::fs::write(&ca_path, ca.cert().pem()).expect("write ca");
        let config = Arc::new(Mutex::new(server_config(
            Some(ca.issuer()),
            name,
            not_after,
        )));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shared = Arc::clone(&config);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let config = shared.lock().expect("config").0.clone();
                tokio::spawn(async move {
                    let _ = session(tcp, config).await;
                });
            }
        });
        Self {
            addr,
            ca_path,
            ca,
            config,
            task,
        }
    }

    /// Serves a new certificate for `name` expiring at `not_after` from the next connection.
    pub fn set_certificate(&self, name: &str, not_after: time::OffsetDateTime) {
        *self.config.lock().expect("config") =
            server_config(Some(self.ca.issuer()), name, not_after);
    }

    /// Serves a self-signed certificate for `name` (no authority vouches for it: only DANE can)
    /// from the next connection.
    pub fn set_self_signed(&self, name: &str, not_after: time::OffsetDateTime) {
        *self.config.lock().expect("config") = server_config(None, name, not_after);
    }

    /// The DER of the certificate served now.
    pub fn certificate_der(&self) -> Vec<u8> {
        self.config.lock().expect("config").1.clone()
    }
}

async fn session(
    mut tcp: tokio::net::TcpStream,
    config: Arc<rustls::ServerConfig>,
) -> std::io::Result<()> {
    {
        let (read, mut write) = tcp.split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"220 mx.test ESMTP\r\n").await?;
        while let Some(line) = lines.next_line().await? {
            let verb = line
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            match verb.as_str() {
                "EHLO" => {
                    write
                        .write_all(b"250-mx.test\r\n250-PIPELINING\r\n250 STARTTLS\r\n")
                        .await?
                }
                "STARTTLS" => {
                    write.write_all(b"220 go ahead\r\n").await?;
                    break;
                }
                _ => write.write_all(b"502 not here\r\n").await?,
            }
        }
    }
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let mut tls = acceptor.accept(tcp).await?;
    tls.write_all(b"220 ready\r\n").await?;
    Ok(())
}
