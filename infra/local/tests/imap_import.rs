//! `mailward import --imap` against a real IMAP server: Dovecot, started here on loopback with
//! its own configuration and a certificate from a throwaway CA.
//!
//! `tests/run` installs Debian's `dovecot-imapd` when it can and then sets
//! `MAILWARD_REQUIRE_IMAP_SERVER=1`, so in CI a missing server fails the test; elsewhere the
//! test says it is skipped.

mod support;

use mailward_testkit::{Dovecot, DovecotAuth};
use std::path::Path;
use std::process::Command;

const USER: &str = "reports@example.test";
const PASSWORD: &str = "s3cret pass";

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
        .arg(server.ca_file())
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
    let Some(binary) = Dovecot::required() else {
        return;
    };
    let server = Dovecot::start(
        &binary,
        &DovecotAuth::Password {
            user: USER.into(),
            password: PASSWORD.into(),
        },
    );
    let data = tempfile::tempdir().unwrap();
    let org = support::organization_in(data.path());
    server.deliver(
        USER,
        "1700000001.a.test",
        &fixture("dmarc-aggregate/mail-auth/100.eml"),
    );
    server.deliver(
        USER,
        "1700000002.b.test",
        b"From: bob@example.com\r\nTo: reports@example.test\r\nSubject: hello\r\n\r\nnot a report\r\n",
    );
    server.deliver(
        USER,
        "1700000003.c.test",
        &fixture("tls-rpt/mail-auth/rpt01.eml"),
    );

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
    assert_eq!(server.count(USER, None), (3, 0));

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
        USER,
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
    let (new, cur) = server.count(USER, None);
    assert_eq!(new + cur, 1, "only the note that is not a report stays");
    let (pnew, pcur) = server.count(USER, Some("Processed"));
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
