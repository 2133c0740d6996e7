//! An IMAP session on one mailbox, over TLS from the first byte (`imaps`, RFC 8314).
//!
//! The read-only discipline: the mailbox is opened with `EXAMINE` and messages are fetched with
//! `BODY.PEEK[]`, so nothing changes (not even the `\Seen` flag) unless the caller asks to
//! move processed mail, which needs `SELECT` and RFC 6851 `UID MOVE`.

use crate::sasl::{Mechanism, TokenLogin};
use anyhow::{Context as _, anyhow, bail};
use futures::TryStreamExt as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Largest message fetched; a larger one is reported as too large and left in place.
pub const MAX_MESSAGE_BYTES: u32 = 64 * 1024 * 1024;

/// How long connecting and the TLS handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where to connect: the server's vetted addresses, its name (for TLS), the mailbox.
#[derive(Debug, Clone)]
pub struct Target {
    /// Addresses to try in order (the caller resolved and vetted them).
    pub addrs: Vec<SocketAddr>,
    /// The server's name, checked against its certificate.
    pub host: String,
    /// The mailbox to read.
    pub mailbox: String,
    /// Trusted roots beside the system's (a private CA, a test server), PEM.
    pub extra_ca_pem: Option<Vec<u8>>,
}

/// How to log in.
#[derive(Debug, Clone)]
pub enum Login {
    /// `LOGIN` with a password.
    Password {
        /// The account.
        user: String,
        /// Its password.
        password: String,
    },
    /// `AUTHENTICATE` with an OAuth 2.0 access token.
    Token {
        /// The account.
        user: String,
        /// A current access token.
        token: String,
        /// XOAUTH2 or OAUTHBEARER.
        mechanism: Mechanism,
    },
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The server refused the credentials (the person must fix them).
    #[error("{0}")]
    Refused(String),
    /// Anything else (network, TLS, protocol): worth trying again later.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

trait Stream: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug> Stream for T {}

type Session = async_imap::Session<Box<dyn Stream>>;

/// One message to import, or why it is not fetched.
#[derive(Debug)]
pub enum Fetched {
    /// The raw message.
    Message(Vec<u8>),
    /// Larger than [`MAX_MESSAGE_BYTES`].
    TooLarge(u32),
}

/// A logged-in session on one mailbox.
pub struct Mailbox {
    session: Session,
    uid_validity: u32,
}

impl Mailbox {
    /// Connects over TLS, logs in and opens the mailbox: read-only (`EXAMINE`) unless
    /// `writable` (needed to move messages).
    pub async fn open(target: &Target, login: &Login, writable: bool) -> Result<Self, OpenError> {
        let stream = connect(target).await.map_err(OpenError::Failed)?;
        let mut client = async_imap::Client::new(stream);
        client
            .read_response()
            .await
            .context("reading the IMAP greeting")
            .map_err(OpenError::Failed)?
            .ok_or_else(|| {
                OpenError::Failed(anyhow!(
                    "the IMAP server closed the connection before greeting"
                ))
            })?;
        let mut session = match login {
            Login::Password { user, password } => client
                .login(user, password)
                .await
                .map_err(|(e, _)| refused_or_failed(user, e, None))?,
            Login::Token {
                user,
                token,
                mechanism,
            } => {
                let port = target.addrs.first().map_or(993, SocketAddr::port);
                let mut auth = TokenLogin::new(*mechanism, user, token, &target.host, port);
                match client.authenticate(mechanism.name(), &mut auth).await {
                    Ok(session) => session,
                    Err((e, _)) => return Err(refused_or_failed(user, e, auth.error.take())),
                }
            }
        };
        let opened = if writable {
            session.select(&target.mailbox).await
        } else {
            session.examine(&target.mailbox).await
        }
        .with_context(|| format!("opening the mailbox {:?}", target.mailbox))
        .map_err(OpenError::Failed)?;
        Ok(Self {
            uid_validity: opened.uid_validity.unwrap_or(0),
            session,
        })
    }

    /// The mailbox's UIDVALIDITY.
    pub fn uid_validity(&self) -> u32 {
        self.uid_validity
    }

    /// UIDs above `last`, ascending.
    pub async fn uids_after(&mut self, last: u32) -> anyhow::Result<Vec<u32>> {
        let start = last.saturating_add(1);
        // `n:*` always includes the highest UID, even below n: filter.
        let mut uids: Vec<u32> = self
            .session
            .uid_search(format!("UID {start}:*"))
            .await
            .context("searching the mailbox")?
            .into_iter()
            .filter(|&u| u > last)
            .collect();
        uids.sort_unstable();
        self.drain();
        Ok(uids)
    }

    /// Fetches these messages without marking them seen, with each one's UID.
    pub async fn fetch(&mut self, uids: &[u32]) -> anyhow::Result<Vec<(u32, Fetched)>> {
        let set = uid_set(uids);
        let sizes: Vec<(u32, u32)> = self
            .session
            .uid_fetch(&set, "(UID RFC822.SIZE)")
            .await
            .context("fetching message sizes")?
            .try_collect::<Vec<_>>()
            .await
            .context("fetching message sizes")?
            .iter()
            .filter_map(|f| Some((f.uid?, f.size.unwrap_or(0))))
            .collect();
        let small: Vec<u32> = sizes
            .iter()
            .filter(|(_, size)| *size <= MAX_MESSAGE_BYTES)
            .map(|(uid, _)| *uid)
            .collect();
        let mut out: Vec<(u32, Fetched)> = sizes
            .iter()
            .filter(|(_, size)| *size > MAX_MESSAGE_BYTES)
            .map(|&(uid, size)| (uid, Fetched::TooLarge(size)))
            .collect();
        if !small.is_empty() {
            let fetches: Vec<_> = self
                .session
                .uid_fetch(uid_set(&small), "(UID BODY.PEEK[])")
                .await
                .context("fetching messages")?
                .try_collect()
                .await
                .context("fetching messages")?;
            for f in &fetches {
                if let (Some(uid), Some(body)) = (f.uid, f.body()) {
                    out.push((uid, Fetched::Message(body.to_vec())));
                }
            }
        }
        out.sort_by_key(|(uid, _)| *uid);
        self.drain();
        Ok(out)
    }

    /// Creates `folder` when it does not exist yet (an existing one is left as it is).
    pub async fn ensure_folder(&mut self, folder: &str) -> anyhow::Result<()> {
        if !is_mailbox_name(folder) {
            bail!("the folder {folder:?} holds a character this client does not send");
        }
        // NO [ALREADYEXISTS] is the common answer; any real problem shows at the first move.
        let _ = self.session.create(folder).await;
        self.drain();
        Ok(())
    }

    /// Moves these messages to `folder` (RFC 6851 `UID MOVE`).
    pub async fn move_to(&mut self, uids: &[u32], folder: &str) -> anyhow::Result<()> {
        if uids.is_empty() {
            return Ok(());
        }
        self.session
            .uid_mv(uid_set(uids), folder)
            .await
            .with_context(|| format!("moving processed messages to {folder:?}"))?;
        self.drain();
        Ok(())
    }

    /// Logs out (best effort: the caller's work is already saved).
    pub async fn logout(mut self) {
        let _ = self.session.logout().await;
    }

    /// Drops unsolicited responses (EXISTS, FETCH flags) the server sent meanwhile.
    fn drain(&mut self) {
        while self.session.unsolicited_responses.try_recv().is_ok() {}
    }
}

/// Whether a mailbox name can be sent as this client quotes it.
pub fn is_mailbox_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= 200
        && !name
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\')
}

/// A `NO` to the login is the credentials' fault; anything else may pass.
fn refused_or_failed(user: &str, e: async_imap::error::Error, detail: Option<String>) -> OpenError {
    match e {
        async_imap::error::Error::No(why) => {
            let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
            OpenError::Refused(format!(
                "the IMAP server refused the login of {user}: {why}{detail}"
            ))
        }
        other => OpenError::Failed(anyhow!("logging in as {user}: {other}")),
    }
}

/// `1,3,5` as a UID set (the caller passes a bounded batch).
fn uid_set(uids: &[u32]) -> String {
    uids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

async fn connect(target: &Target) -> anyhow::Result<Box<dyn Stream>> {
    let mut last = anyhow!("no address to connect to for {}", target.host);
    for addr in &target.addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(tcp)) => {
                let tls = tokio::time::timeout(
                    CONNECT_TIMEOUT,
                    tls(tcp, &target.host, target.extra_ca_pem.as_deref()),
                )
                .await
                .map_err(|_| anyhow!("TLS with {} timed out", target.host))??;
                return Ok(Box::new(tls));
            }
            Ok(Err(e)) => last = anyhow!("connecting to {} ({addr}): {e}", target.host),
            Err(_) => last = anyhow!("connecting to {} ({addr}) timed out", target.host),
        }
    }
    Err(last)
}

async fn tls(
    tcp: tokio::net::TcpStream,
    host: &str,
    extra_ca_pem: Option<&[u8]>,
) -> anyhow::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(pem) = extra_ca_pem {
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pem) {
            roots
                .add(cert.context("reading the extra CA")?)
                .context("adding the extra CA")?;
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| anyhow!("{host} is not a TLS server name: {e}"))?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .with_context(|| format!("TLS with {host}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_sets_and_names() {
        assert_eq!(uid_set(&[1, 3, 5]), "1,3,5");
        assert!(is_mailbox_name("Reports/DMARC"));
        assert!(!is_mailbox_name("a\"b"));
        assert!(!is_mailbox_name(""));
        assert!(!is_mailbox_name("a\r\nb"));
    }
}
