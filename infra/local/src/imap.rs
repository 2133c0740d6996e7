//! Reading an existing report mailbox over IMAP for `mailward import --imap`.
//!
//! Why here: importing a mailbox is a one-off job of a person moving to Mailward, run from the
//! command line against the local stack's data, like the file import. The IMAP protocol is
//! async-imap's; this module adds the URL, the TLS connection, the cursor that makes an import
//! resumable, and the read-only discipline: the mailbox is opened with `EXAMINE` and messages
//! are fetched with `BODY.PEEK[]`, so nothing changes (not even the `\Seen` flag) unless the
//! caller asks to move processed mail.

use anyhow::{Context as _, anyhow, bail};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// Largest message fetched; a larger one is reported as refused and left in place.
pub const MAX_MESSAGE_BYTES: u32 = 64 * 1024 * 1024;

/// Where to read: `imaps://user@host[:port]/MAILBOX` (or `imap://` on loopback only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImapUrl {
    /// TLS from the first byte (`imaps`, port 993 by default).
    pub tls: bool,
    /// Server host name or address.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Login name (percent-decoded: `reports%40example.com` is `reports@example.com`).
    pub user: String,
    /// Mailbox to read (default `INBOX`).
    pub mailbox: String,
}

impl ImapUrl {
    /// Parses and checks the URL. A password in the URL is refused (it would land in shell
    /// history); plain `imap://` is accepted only for a loopback server, since the password
    /// would otherwise cross the network in clear.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let url = url::Url::parse(text).with_context(|| format!("--imap {text:?} is not a URL"))?;
        let tls = match url.scheme() {
            "imaps" => true,
            "imap" => false,
            other => bail!("--imap must be imaps://user@host/MAILBOX, not {other}://"),
        };
        if url.password().is_some() {
            bail!(
                "--imap must not carry a password: set MAILWARD_IMAP_PASSWORD or type it at the prompt"
            );
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| anyhow!("--imap names no server host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let user = percent_decode(url.username())?;
        if user.is_empty() {
            bail!("--imap names no user: imaps://user@host/MAILBOX");
        }
        let mailbox = percent_decode(url.path().trim_start_matches('/'))?;
        let mailbox = if mailbox.is_empty() {
            "INBOX".to_owned()
        } else {
            mailbox
        };
        if mailbox
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\')
        {
            bail!("--imap mailbox {mailbox:?} holds a character this import does not send");
        }
        let loopback =
            host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !tls && !loopback {
            bail!("imap:// sends the password in clear; use imaps:// for {host}");
        }
        Ok(Self {
            tls,
            port: url.port().unwrap_or(if tls { 993 } else { 143 }),
            host,
            user,
            mailbox,
        })
    }

    /// How an imported message is named in the JSON lines (RFC 5092 style, no user).
    pub fn message_name(&self, uid: u32) -> String {
        let scheme = if self.tls { "imaps" } else { "imap" };
        format!(
            "{scheme}://{}:{}/{};UID={uid}",
            self.host, self.port, self.mailbox
        )
    }
}

fn percent_decode(text: &str) -> anyhow::Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| anyhow!("--imap has a broken percent escape in {text:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| anyhow!("--imap {text:?} is not UTF-8 once decoded"))
}

/// How far an import of one mailbox got: the next run starts after `last_uid`, unless the
/// server renumbered the mailbox (a new UIDVALIDITY), when it starts over (reports already
/// imported then come back as duplicates, never twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The mailbox's UIDVALIDITY when `last_uid` was read.
    pub uid_validity: u32,
    /// The highest UID processed.
    pub last_uid: u32,
}

impl Cursor {
    /// The cursor file of a mailbox under the data directory.
    pub fn path(data_dir: &Path, url: &ImapUrl) -> PathBuf {
        use sha2::Digest as _;
        let key = format!("{}\n{}\n{}\n{}", url.host, url.port, url.user, url.mailbox);
        let digest = hex::encode(sha2::Sha256::digest(key.as_bytes()));
        data_dir
            .join("imap")
            .join(format!("{}.json", &digest[..32]))
    }

    /// The saved cursor, or the start when there is none.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("reading the IMAP cursor {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Saves the cursor (written beside, then renamed: a crash leaves the old one).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec(self)?)
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
    }
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
    /// Connects, logs in and opens the mailbox: read-only (`EXAMINE`) unless `writable` (needed
    /// to move messages). `extra_ca_pem` adds trusted roots (a private CA, a test server).
    pub async fn open(
        url: &ImapUrl,
        password: &str,
        extra_ca_pem: Option<&[u8]>,
        writable: bool,
    ) -> anyhow::Result<Self> {
        let tcp = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            tokio::net::TcpStream::connect((url.host.as_str(), url.port)),
        )
        .await
        .map_err(|_| anyhow!("connecting to {}:{} timed out", url.host, url.port))?
        .with_context(|| format!("connecting to {}:{}", url.host, url.port))?;
        let stream: Box<dyn Stream> = if url.tls {
            Box::new(tls(tcp, &url.host, extra_ca_pem).await?)
        } else {
            Box::new(tcp)
        };
        let mut client = async_imap::Client::new(stream);
        client
            .read_response()
            .await
            .context("reading the IMAP greeting")?
            .ok_or_else(|| anyhow!("the IMAP server closed the connection before greeting"))?;
        let mut session = client
            .login(&url.user, password)
            .await
            .map_err(|(e, _)| anyhow!("IMAP login as {} refused: {e}", url.user))?;
        let opened = if writable {
            session.select(&url.mailbox).await
        } else {
            session.examine(&url.mailbox).await
        }
        .with_context(|| format!("opening the mailbox {:?}", url.mailbox))?;
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
        if folder
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\')
        {
            bail!("--imap-move-to {folder:?} holds a character this import does not send");
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

    /// Logs out (best effort: the import's work is already saved).
    pub async fn logout(mut self) {
        let _ = self.session.logout().await;
    }

    /// Drops unsolicited responses (EXISTS, FETCH flags) the server sent meanwhile.
    fn drain(&mut self) {
        while self.session.unsolicited_responses.try_recv().is_ok() {}
    }
}

/// `1,3,5` as a UID set (the caller passes a bounded batch).
fn uid_set(uids: &[u32]) -> String {
    uids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
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
                .add(cert.context("reading --imap-ca")?)
                .context("adding --imap-ca")?;
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
    fn urls_are_parsed_and_checked() {
        let u = ImapUrl::parse("imaps://reports%40example.com@mail.example.com/Reports%2FDMARC")
            .unwrap();
        assert_eq!(
            u,
            ImapUrl {
                tls: true,
                host: "mail.example.com".into(),
                port: 993,
                user: "reports@example.com".into(),
                mailbox: "Reports/DMARC".into(),
            }
        );
        assert_eq!(
            u.message_name(7),
            "imaps://mail.example.com:993/Reports/DMARC;UID=7"
        );
        let local = ImapUrl::parse("imap://me@127.0.0.1:1143").unwrap();
        assert_eq!(
            (local.tls, local.port, local.mailbox.as_str()),
            (false, 1143, "INBOX")
        );
        for bad in [
            "imap://me@mail.example.com/INBOX",
            "imaps://me:secret@mail.example.com/INBOX",
            "imaps://mail.example.com/INBOX",
            "https://me@mail.example.com/",
            "imaps://me@mail.example.com/a%ZZ",
            "imaps://me@mail.example.com/a%22b",
            "not a url",
        ] {
            assert!(ImapUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cursors_round_trip_per_mailbox() {
        let dir = tempfile::tempdir().unwrap();
        let a = ImapUrl::parse("imaps://me@h.example/INBOX").unwrap();
        let b = ImapUrl::parse("imaps://me@h.example/Other").unwrap();
        let (pa, pb) = (Cursor::path(dir.path(), &a), Cursor::path(dir.path(), &b));
        assert_ne!(pa, pb);
        assert_eq!(Cursor::load(&pa).unwrap(), Cursor::default());
        let c = Cursor {
            uid_validity: 9,
            last_uid: 41,
        };
        c.save(&pa).unwrap();
        assert_eq!(Cursor::load(&pa).unwrap(), c);
        assert_eq!(Cursor::load(&pb).unwrap(), Cursor::default());
    }
}
