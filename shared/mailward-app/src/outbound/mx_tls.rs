//! The TLS certificates of a domain's MX hosts, as senders see them: connect on the SMTP port,
//! ask for STARTTLS and verify the certificate for the host's name against the system's roots.
//! A certificate that is invalid (expired, for another name, untrusted) or expires within
//! thirty days becomes a task. The exchange is the few lines SMTP needs for this (banner, EHLO,
//! STARTTLS), every read bounded in size and time.
//!
//! A host with usable DANE TLSA records (RFC 7672) is judged by them instead: DANE senders
//! deliver to it only when one matches the certificates it presents, whatever the public roots
//! say, so a mismatch is the problem and a match is none.
//!
//! Runs only where outbound port 25 is open (`mx_tls_probe` setting): AWS Lambda, for one,
//! blocks it, so the probe needs a runner that may reach port 25.

use crate::outbound::client::ip_allowed;
use crate::state::AppState;
use mailward_domain::dns::{RecordData, RecordType};
use mailward_records::dane::Tlsa;
use mailward_tasks::problems::MxCertificateFinding;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

/// Time one host's probe may take in all.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
/// Most MX hosts probed per domain (the most preferred first).
pub const MAX_HOSTS: usize = 3;
/// Longest reply line read.
const MAX_LINE: usize = 1024;
/// Most lines in one reply.
const MAX_REPLY_LINES: usize = 64;

/// What a probe could not do at all (the host is then not judged).
#[derive(Debug)]
pub struct Unreachable(pub String);

async fn reply<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<(u16, Vec<String>), String> {
    let mut lines = Vec::new();
    loop {
        let mut line = Vec::new();
        let read = reader
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("reading the SMTP reply: {e}"))?;
        if read == 0 {
            return Err("the server closed the connection".into());
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        let code: u16 = text
            .get(..3)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("not an SMTP reply: {text:?}"))?;
        let last = text.as_bytes().get(3) != Some(&b'-');
        lines.push(text.get(4..).unwrap_or("").to_owned());
        if last {
            return Ok((code, lines));
        }
        if lines.len() >= MAX_REPLY_LINES {
            return Err("the SMTP reply is too long".into());
        }
    }
}

fn roots(extra_ca_pem: Option<&[u8]>) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(pem) = extra_ca_pem {
        for block in x509_parser::pem::Pem::iter_from_buffer(pem).flatten() {
            let _ = roots.add(rustls::pki_types::CertificateDer::from(block.contents));
        }
    }
    roots
}

/// The public-roots verifier, keeping the certificates the server presented (end entity first)
/// before it judges them, so DANE can match them even when the roots refuse them.
#[derive(Debug)]
struct Recorder {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    chain: Mutex<Vec<Vec<u8>>>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Ok(mut chain) = self.chain.lock() {
            *chain = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.as_ref().to_vec())
                .collect();
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The certificate problem a failed handshake shows, for a person.
fn describe(e: &std::io::Error) -> Option<String> {
    let inner = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    let rustls::Error::InvalidCertificate(cert) = inner else {
        return None;
    };
    Some(match cert {
        rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. } => {
            "expired".to_owned()
        }
        rustls::CertificateError::NotValidForName
        | rustls::CertificateError::NotValidForNameContext { .. } => {
            "not valid for that name".to_owned()
        }
        rustls::CertificateError::UnknownIssuer => "not issued by a trusted authority".to_owned(),
        rustls::CertificateError::NotValidYet
        | rustls::CertificateError::NotValidYetContext { .. } => "not valid yet".to_owned(),
        rustls::CertificateError::Revoked => "revoked".to_owned(),
        other => format!("invalid ({other:?})"),
    })
}

/// The first address of `host` that outbound connections may reach.
async fn public_address(app: &AppState, host: &str) -> Result<std::net::IpAddr, Unreachable> {
    let mut addrs = Vec::new();
    for record_type in [RecordType::A, RecordType::Aaaa] {
        if let Ok(answer) = app.resolver.lookup(host, record_type).await {
            addrs.extend(answer.records.iter().filter_map(RecordData::ip));
        }
    }
    let allow_loopback = app.config.outbound.allow_loopback;
    addrs
        .into_iter()
        .find(|ip| ip_allowed(*ip, allow_loopback))
        .ok_or_else(|| Unreachable(format!("{host} has no public address")))
}

/// Banner, EHLO and STARTTLS on `tcp`: `Ok(true)` when the server is ready for the handshake,
/// `Ok(false)` when it offers no STARTTLS.
async fn starttls(app: &AppState, host: &str, tcp: &mut TcpStream) -> Result<bool, Unreachable> {
    let unreachable = |why: String| Unreachable(why);
    let (read, mut write) = tcp.split();
    let mut reader = BufReader::new(read);
    let (code, _) = reply(&mut reader).await.map_err(unreachable)?;
    if code != 220 {
        return Err(unreachable(format!("{host} greeted with {code}")));
    }
    let ehlo = format!("EHLO probe.{}\r\n", app.config.hosted_zone);
    write
        .write_all(ehlo.as_bytes())
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let (code, lines) = reply(&mut reader).await.map_err(unreachable)?;
    if code != 250 {
        return Err(unreachable(format!("{host} answered EHLO with {code}")));
    }
    if !lines
        .iter()
        .any(|l| l.trim().eq_ignore_ascii_case("STARTTLS"))
    {
        return Ok(false);
    }
    write
        .write_all(b"STARTTLS\r\n")
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let (code, _) = reply(&mut reader).await.map_err(unreachable)?;
    if code != 220 {
        return Err(unreachable(format!("{host} refused STARTTLS with {code}")));
    }
    Ok(true)
}

/// Probes one MX host on `port`: `Ok(Some(problem))` for a certificate problem, `Ok(None)` for a
/// good certificate (or no STARTTLS offered: not a certificate matter), `Err` when the host could
/// not be probed. With usable `tlsa` records, the certificates are judged by them alone.
pub async fn probe_host(
    app: &AppState,
    host: &str,
    port: u16,
    (now, tlsa): (OffsetDateTime, &[Tlsa]),
) -> Result<Option<String>, Unreachable> {
    let unreachable = |why: String| Unreachable(why);
    let ip = public_address(app, host).await?;
    let mut tcp = TcpStream::connect((ip, port))
        .await
        .map_err(|e| unreachable(format!("connecting to {host}:{port}: {e}")))?;
    if !starttls(app, host, &mut tcp).await? {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let roots = Arc::new(roots(app.config.outbound.extra_ca_pem.as_deref()));
    let recorder = Arc::new(Recorder {
        inner: rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| unreachable(e.to_string()))?,
        chain: Mutex::new(Vec::new()),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| unreachable(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(recorder.clone())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| unreachable(format!("{host} is not a TLS server name: {e}")))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let outcome = connector.connect(name, tcp).await;
    if !tlsa.is_empty() {
        let chain = recorder.chain.lock().map(|c| c.clone()).unwrap_or_default();
        if chain.is_empty() {
            return Err(unreachable(format!(
                "TLS with {host}: no certificate presented"
            )));
        }
        return Ok((!tlsa.iter().any(|t| t.matches(&chain))).then(|| {
            format!(
                "its certificate matches none of its TLSA records ({}): DANE senders will not deliver to it",
                mailward_records::dane::tlsa_name(host)
            )
        }));
    }
    match outcome {
        Ok(tls) => {
            let expiring = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|leaf| x509_parser::parse_x509_certificate(leaf).ok())
                .and_then(|(_, cert)| {
                    OffsetDateTime::from_unix_timestamp(cert.validity().not_after.timestamp()).ok()
                })
                .filter(|not_after| {
                    *not_after - now
                        < time::Duration::days(mailward_tasks::problems::CERTIFICATE_WARNING_DAYS)
                });
            Ok(expiring.map(|at| format!("expiring on {}", at.date())))
        }
        Err(e) => match describe(&e) {
            Some(problem) => Ok(Some(problem)),
            None => Err(unreachable(format!("TLS with {host}: {e}"))),
        },
    }
}

/// Probes the domain's most preferred MX hosts, each against its usable TLSA records in `dane`
/// (by host name); `None` when no host could be probed.
pub async fn probe_domain(
    app: &AppState,
    hosts: &[String],
    (now, dane): (OffsetDateTime, &HashMap<String, Vec<Tlsa>>),
) -> Option<Vec<MxCertificateFinding>> {
    let port = app.config.mx_tls_port;
    let probes = hosts.iter().take(MAX_HOSTS).map(|host| async move {
        let tlsa = dane.get(host).map_or(&[][..], Vec::as_slice);
        let probe = probe_host(app, host, port, (now, tlsa));
        let result = tokio::time::timeout(PROBE_TIMEOUT, probe).await;
        (host, result)
    });
    let mut findings = Vec::new();
    let mut probed = 0;
    for (host, result) in futures::future::join_all(probes).await {
        match result {
            Ok(Ok(problem)) => {
                probed += 1;
                if let Some(problem) = problem {
                    findings.push(MxCertificateFinding {
                        host: host.clone(),
                        problem,
                    });
                }
            }
            Ok(Err(Unreachable(why))) => {
                tracing::debug!(mx.host = %host, %why, "MX certificate probe could not run");
            }
            Err(_) => tracing::debug!(mx.host = %host, "MX certificate probe timed out"),
        }
    }
    (probed > 0).then_some(findings)
}
