//! A real IMAP server for tests: Debian's Dovecot, started on loopback with its own
//! configuration (implicit TLS with a certificate from a [`TestCa`], maildir storage under a
//! temporary directory) and one of two sign-ins: a password file, or the `oauth2` passdb
//! (SASL XOAUTH2 and OAUTHBEARER) that checks each bearer token at an OpenID provider's
//! userinfo endpoint (`introspection_mode = auth`) and takes the account from its `email`.
//!
//! `tests/run` installs `dovecot-imapd` when it can and then sets
//! `MAILWARD_REQUIRE_IMAP_SERVER=1`; [`Dovecot::binary`] says whether a test can run.

use crate::TestCa;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// How the server signs people in.
pub enum DovecotAuth {
    /// A password file with one account.
    Password {
        /// The account.
        user: String,
        /// Its password.
        password: String,
    },
    /// Bearer tokens, checked at `userinfo_url` (HTTPS, trusting `ca_pem`).
    OAuth2 {
        /// The provider's userinfo endpoint.
        userinfo_url: String,
        /// The CA that signed the provider's certificate.
        ca_pem: String,
    },
}

/// A running Dovecot, stopped on drop.
pub struct Dovecot {
    child: Child,
    dir: tempfile::TempDir,
    /// The `imaps` port on 127.0.0.1 (its certificate names `localhost`).
    pub port: u16,
    owner: Option<(u32, u32)>,
    /// The CA of the server's certificate, PEM.
    pub ca_pem: String,
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        // SIGTERM lets the master stop its login and mail processes too.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn id_of(flag: &str, name: &str) -> u32 {
    let out = Command::new("id").arg(flag).arg(name).output().unwrap();
    assert!(out.status.success(), "no system user {name}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The accounts Dovecot's processes run as.
struct Accounts {
    internal: String,
    login: String,
    /// Who must own the mail files (as root), if anyone.
    owner: Option<(u32, u32)>,
    /// The uid and gid of the mail processes.
    ids: (u32, u32),
}

/// As root, Dovecot's own accounts (the package creates them); otherwise the current user
/// runs everything.
fn accounts() -> Accounts {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if is_root {
        let owner = (id_of("-u", "dovecot"), id_of("-g", "dovecot"));
        Accounts {
            internal: "dovecot".into(),
            login: "dovenull".into(),
            owner: Some(owner),
            ids: owner,
        }
    } else {
        let me = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned();
        let ids = (id_of("-u", &me), id_of("-g", &me));
        Accounts {
            internal: me.clone(),
            login: me,
            owner: None,
            ids,
        }
    }
}

impl Dovecot {
    /// The installed server, if any.
    pub fn binary() -> Option<PathBuf> {
        ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
    }

    /// The installed server, or `None` after saying the test is skipped; panics when
    /// `MAILWARD_REQUIRE_IMAP_SERVER` is set and there is none.
    pub fn required() -> Option<PathBuf> {
        let found = Self::binary();
        if found.is_none() {
            assert!(
                std::env::var("MAILWARD_REQUIRE_IMAP_SERVER").is_err(),
                "MAILWARD_REQUIRE_IMAP_SERVER is set but dovecot is not installed"
            );
            eprintln!("SKIP: dovecot is not installed (Debian package dovecot-imapd)");
        }
        found
    }

    /// Starts the server with `auth`.
    pub fn start(binary: &Path, auth: &DovecotAuth) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Dovecot's unprivileged processes must reach the files.
        std::fs::set_permissions(root, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        for sub in ["run", "state", "mail", "home"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let ca = TestCa::new("IMAP Test CA");
        let leaf = ca.leaf("localhost");
        std::fs::write(root.join("cert.pem"), leaf.cert.pem()).unwrap();
        std::fs::write(root.join("key.pem"), leaf.key.serialize_pem()).unwrap();
        let Accounts {
            internal,
            login,
            owner,
            ids: (uid, gid),
        } = accounts();
        let port = free_port();
        let r = root.display();
        let passdb = match auth {
            DovecotAuth::Password { user, password } => {
                std::fs::write(
                    root.join("passwd"),
                    format!("{user}:{{PLAIN}}{password}::::::\n"),
                )
                .unwrap();
                format!(
                    "auth_mechanisms = plain login\npassdb {{\n  driver = passwd-file\n  \
                     args = scheme=PLAIN username_format=%u {r}/passwd\n}}\n"
                )
            }
            DovecotAuth::OAuth2 {
                userinfo_url,
                ca_pem,
            } => {
                std::fs::write(root.join("idp-ca.pem"), ca_pem).unwrap();
                std::fs::write(
                    root.join("oauth2.conf"),
                    format!(
                        "introspection_mode = auth\nintrospection_url = {userinfo_url}\n\
                         username_attribute = email\ntls_ca_cert_file = {r}/idp-ca.pem\n"
                    ),
                )
                .unwrap();
                format!(
                    "auth_mechanisms = xoauth2 oauthbearer\npassdb {{\n  driver = oauth2\n  \
                     mechanisms = xoauth2 oauthbearer\n  args = {r}/oauth2.conf\n}}\n"
                )
            }
        };
        let config = format!(
            "base_dir = {r}/run\nstate_dir = {r}/state\nlog_path = {r}/dovecot.log\n\
             protocols = imap\nlisten = 127.0.0.1\nssl = required\n\
             ssl_cert = <{r}/cert.pem\nssl_key = <{r}/key.pem\n\
             mail_location = maildir:{r}/mail/%u\n{passdb}\
             userdb {{\n  driver = static\n  args = uid={uid} gid={gid} home={r}/home/%u\n}}\n\
             default_internal_user = {internal}\ndefault_internal_group = {internal}\n\
             default_login_user = {login}\nfirst_valid_uid = 0\n\
             service imap-login {{\n  chroot =\n  inet_listener imap {{\n    port = 0\n  }}\n  \
             inet_listener imaps {{\n    port = {port}\n    ssl = yes\n  }}\n}}\n\
             service anvil {{\n  chroot =\n}}\n"
        );
        std::fs::write(root.join("dovecot.conf"), config).unwrap();
        if let Some((uid, gid)) = owner {
            for sub in ["mail", "home"] {
                std::os::unix::fs::chown(root.join(sub), Some(uid), Some(gid)).unwrap();
            }
        }
        let child = Command::new(binary)
            .arg("-F")
            .arg("-c")
            .arg(root.join("dovecot.conf"))
            .spawn()
            .unwrap();
        let server = Self {
            child,
            dir,
            port,
            owner,
            ca_pem: ca.cert().pem(),
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "dovecot did not listen: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("dovecot.log")).unwrap_or_default()
    }

    /// The directory of the server's files (its `ca.pem` is written there by [`Self::ca_file`]).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes the CA to a file and answers its path.
    pub fn ca_file(&self) -> PathBuf {
        let path = self.dir.path().join("ca.pem");
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }

    fn maildir(&self, user: &str, folder: Option<&str>) -> PathBuf {
        let base = self.dir.path().join("mail").join(user);
        match folder {
            None => base,
            Some(f) => base.join(format!(".{f}")),
        }
    }

    /// Delivers a message to `user`'s inbox the way an MTA does: a file in the maildir's
    /// `new/`.
    pub fn deliver(&self, user: &str, name: &str, bytes: &[u8]) {
        let base = self.maildir(user, None);
        for sub in ["", "new", "cur", "tmp"] {
            let d = base.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            self.own(&d);
        }
        let path = base.join("new").join(name);
        std::fs::write(&path, bytes).unwrap();
        self.own(&path);
    }

    fn own(&self, path: &Path) {
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
        }
    }

    /// Messages in a folder of `user`: (unread in `new/`, seen or moved into `cur/`).
    pub fn count(&self, user: &str, folder: Option<&str>) -> (usize, usize) {
        let n = |sub: &str| {
            std::fs::read_dir(self.maildir(user, folder).join(sub))
                .map(|d| d.count())
                .unwrap_or(0)
        };
        (n("new"), n("cur"))
    }
}
