//! Reading an existing report mailbox over IMAP for `mailward import --imap`.
//!
//! Why here: importing a mailbox is a one-off job of a person moving to Mailward, run from the
//! command line against the local stack's data, like the file import. The IMAP protocol is
//! `mailward_mailbox::imap`'s session (read-only unless processed mail is moved); this module
//! adds the URL and the cursor that makes an import resumable.

use anyhow::{Context as _, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

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

pub use mailward_mailbox::imap::{Fetched, MAX_MESSAGE_BYTES, Mailbox};

/// Opens the mailbox the URL names with a password (the CLI resolves the server's name with
/// the system's resolver: the person running it chose the server).
pub async fn open(
    url: &ImapUrl,
    password: &str,
    extra_ca_pem: Option<&[u8]>,
    writable: bool,
) -> anyhow::Result<Mailbox> {
    use mailward_mailbox::imap::{Login, Target};
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((url.host.as_str(), url.port))
        .await
        .with_context(|| format!("looking up {}", url.host))?
        .collect();
    let target = Target {
        addrs,
        host: url.host.clone(),
        mailbox: url.mailbox.clone(),
        extra_ca_pem: extra_ca_pem.map(<[u8]>::to_vec),
    };
    let login = Login::Password {
        user: url.user.clone(),
        password: password.to_owned(),
    };
    Mailbox::open(&target, &login, writable)
        .await
        .map_err(|e| anyhow!("{e}"))
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
