//! `mailward import --imap` against a real IMAP server: Dovecot, started here on loopback with
//! its own configuration and a certificate from a throwaway CA.
//!
//! `tests/run` installs Debian's `dovecot-imapd` when it can and then sets
//! `MAILWARD_REQUIRE_IMAP_SERVER=1`, so in CI a missing server fails the test; elsewhere the
//! test says it is skipped.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const USER: &str = "reports@example.test";
const PASSWORD: &str = "s3cret pass";

struct Dovecot {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    owner: Option<(u32, u32)>,
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

fn dovecot_binary() -> Option<PathBuf> {
    ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
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

impl Dovecot {
    fn start(binary: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Dovecot's unprivileged processes must reach the files.
        std::fs::set_permissions(root, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        for sub in ["run", "state", "mail", "home"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let (ca_pem, cert_pem, key_pem) = certificates();
        std::fs::write(root.join("ca.pem"), ca_pem).unwrap();
        std::fs::write(root.join("cert.pem"), cert_pem).unwrap();
        std::fs::write(root.join("key.pem"), key_pem).unwrap();
        std::fs::write(
            root.join("passwd"),
            format!("{USER}:{{PLAIN}}{PASSWORD}::::::\n"),
        )
        .unwrap();
        // As root, Dovecot's own accounts run the login and mail processes (the package creates
        // them); as anyone else, that user runs everything.
        let is_root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        let (internal, login, owner) = if is_root {
            let uid = id_of("-u", "dovecot");
            let gid = id_of("-g", "dovecot");
            (
                "dovecot".to_owned(),
                "dovenull".to_owned(),
                Some((uid, gid)),
            )
        } else {
            let me = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
                .unwrap()
                .trim()
                .to_owned();
            (me.clone(), me, None)
        };
        let (uid, gid) = owner.unwrap_or_else(|| (id_of("-u", &internal), id_of("-g", &internal)));
        let port = free_port();
        let r = root.display();
        let config = format!(
            "base_dir = {r}/run\nstate_dir = {r}/state\nlog_path = {r}/dovecot.log\n\
             protocols = imap\nlisten = 127.0.0.1\nssl = required\n\
             ssl_cert = <{r}/cert.pem\nssl_key = <{r}/key.pem\n\
             mail_location = maildir:{r}/mail/%u\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u {r}/passwd\n}}\n\
             userdb {{\n  driver = static\n  args = uid={uid} gid={gid} home={r}/home/%u\n}}\n\
             default_internal_user = {internal}\ndefault_internal_group = {internal}\n\
             default_login_user = {login}\nfirst_valid_uid = 0\n\
             auth_mechanisms = plain login\n\
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
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "dovecot did not listen: {}",
                std::fs::read_to_string(server.dir.path().join("dovecot.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn maildir(&self, folder: Option<&str>) -> PathBuf {
        let base = self.dir.path().join("mail").join(USER);
        match folder {
            None => base,
            Some(f) => base.join(format!(".{f}")),
        }
    }

    /// Delivers a message the way an MTA does: a file in the maildir's `new/`.
    fn deliver(&self, name: &str, bytes: &[u8]) {
        let base = self.maildir(None);
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

    /// Messages in a folder: (unread in `new/`, seen or moved into `cur/`).
    fn count(&self, folder: Option<&str>) -> (usize, usize) {
        let n = |sub: &str| {
            std::fs::read_dir(self.maildir(folder).join(sub))
                .map(|d| d.count())
                .unwrap_or(0)
        };
        (n("new"), n("cur"))
    }
}

fn certificates() -> (String, String, String) {
    let ca = mailward_testkit::TestCa::new("IMAP Test CA");
    let leaf = ca.leaf("localhost");
    (ca.cert().pem(), leaf.cert.pem(), leaf.key.serialize_pem())
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/mailward-reports/tests/fixtures")
            .join(path),
    )
    .unwrap()
}

struct Run {
    lines: Vec<serde_json::Value>,
    stderr: String,
    ok: bool,
}

/// `mailward import --imap` for the organization `org` of the data directory `data`.
fn import(server: &Dovecot, (data, org): (&Path, &str), password: &str, extra: &[&str]) -> Run {
    let url = format!(
        "imaps://reports%40example.test@localhost:{}/INBOX",
        server.port
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(data)
        .args(["import", "--org", org])
        .arg("--imap")
        .arg(&url)
        .arg("--imap-ca")
        .arg(server.dir.path().join("ca.pem"))
        .args(extra)
        .env("MAILWARD_IMAP_PASSWORD", password)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    Run {
        lines: String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ok: out.status.success(),
    }
}

#[test]
fn a_mailbox_is_imported_resumably_and_left_unchanged() {
    let Some(binary) = dovecot_binary() else {
        assert!(
            std::env::var("MAILWARD_REQUIRE_IMAP_SERVER").is_err(),
            "MAILWARD_REQUIRE_IMAP_SERVER is set but dovecot is not installed"
        );
        eprintln!("SKIP: dovecot is not installed (Debian package dovecot-imapd)");
        return;
    };
    let server = Dovecot::start(&binary);
    let data = tempfile::tempdir().unwrap();
    let org = support::organization_in(data.path());
    server.deliver(
        "1700000001.a.test",
        &fixture("dmarc-aggregate/mail-auth/100.eml"),
    );
    server.deliver(
        "1700000002.b.test",
        b"From: bob@example.com\r\nTo: reports@example.test\r\nSubject: hello\r\n\r\nnot a report\r\n",
    );
    server.deliver("1700000003.c.test", &fixture("tls-rpt/mail-auth/rpt01.eml"));

    // A wrong password is refused clearly, and nothing is read.
    let refused = import(&server, (data.path(), &org), "wrong", &[]);
    assert!(!refused.ok);
    assert!(refused.stderr.contains("login"), "{}", refused.stderr);

    let first = import(&server, (data.path(), &org), PASSWORD, &[]);
    assert!(first.ok, "{}", first.stderr);
    assert_eq!(first.lines.len(), 4, "{:?}", first.lines);
    let name = |uid: u32| format!("imaps://localhost:{}/INBOX;UID={uid}", server.port);
    assert_eq!(first.lines[0]["file"], name(1));
    assert_eq!(first.lines[0]["kind"], "dmarc");
    assert_eq!(first.lines[0]["report_id"], "5264580628977113351");
    assert_eq!(first.lines[0]["begin"], "2022-11-27T00:00:00Z");
    assert_eq!(first.lines[1]["file"], name(2));
    assert_eq!(first.lines[1]["status"], "refused");
    assert_eq!(first.lines[1]["reason"], "the email carries no report");
    assert_eq!(first.lines[2]["kind"], "tlsrpt");
    assert_eq!(
        first.lines[3]["summary"],
        serde_json::json!({"messages": 3, "imported": 0, "duplicate": 0, "unattributed": 2, "refused": 1})
    );
    // Read-only: every message is still unread where it was delivered.
    assert_eq!(server.count(None), (3, 0));

    // Resumable: a second run reads only what arrived since.
    let again = import(&server, (data.path(), &org), PASSWORD, &[]);
    assert!(again.ok, "{}", again.stderr);
    assert_eq!(
        again.lines,
        vec![
            serde_json::json!({"summary": {"messages": 0, "imported": 0, "duplicate": 0, "unattributed": 0, "refused": 0}})
        ]
    );
    server.deliver(
        "1700000004.d.test",
        &fixture("dmarc-aggregate/mail-auth/101.eml"),
    );
    let newer = import(&server, (data.path(), &org), PASSWORD, &[]);
    assert!(newer.ok, "{}", newer.stderr);
    assert_eq!(newer.lines.len(), 2, "{:?}", newer.lines);
    assert_eq!(newer.lines[0]["file"], name(4));
    assert_eq!(
        newer.lines[0]["report_id"],
        "stalw.art.1667948400.1668034800"
    );

    // With a fresh cursor and --imap-move-to, the reports move and other mail stays.
    let fresh = tempfile::tempdir().unwrap();
    let fresh_org = support::organization_in(fresh.path());
    let moved = import(
        &server,
        (fresh.path(), &fresh_org),
        PASSWORD,
        &["--imap-move-to", "Processed"],
    );
    assert!(moved.ok, "{}", moved.stderr);
    assert_eq!(moved.lines.len(), 5, "{:?}", moved.lines);
    let (new, cur) = server.count(None);
    assert_eq!(new + cur, 1, "only the note that is not a report stays");
    let (pnew, pcur) = server.count(Some("Processed"));
    assert_eq!(pnew + pcur, 3, "the three reports moved");
}

#[test]
fn bad_imap_urls_are_refused_before_connecting() {
    let data = tempfile::tempdir().unwrap();
    for (url, expected) in [
        ("imap://me@mail.example.com/INBOX", "in clear"),
        ("imaps://me:pw@mail.example.com/INBOX", "password"),
        ("imaps://mail.example.com/INBOX", "no user"),
        ("pop3://me@mail.example.com/", "imaps://"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(data.path())
            .args(["import", "--org", "7d0f6f3e-6c8f-4b43-9a58-8f1d2a6c1e00"])
            .arg("--imap")
            .arg(url)
            .env("MAILWARD_IMAP_PASSWORD", "x")
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{url}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{url}: {stderr}");
    }
}
