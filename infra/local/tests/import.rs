//! `mailward import`: one JSON line per report, then a summary, for files and folders, for the
//! organization named with `--org` only.

mod support;

use std::process::{Command, Stdio};
use support::{Api, Server, free_port, sign_up_with_org, wait_until_up};

#[tokio::test(flavor = "multi_thread")]
async fn import_prints_a_line_per_report_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--dns", "127.0.0.1:9"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (base, http) = (format!("http://127.0.0.1:{port}"), reqwest::Client::new());
    wait_until_up(&http, &base).await;
    let (_, org) = sign_up_with_org(&http, &base, &data, "owner@import.example").await;
    let (other_key, _) = sign_up_with_org(&http, &base, &data, "owner@other.example").await;
    // Another organization watches test.net, the policy domain of the first fixture; the
    // importing one watches nothing, so nothing is imported for anyone.
    let other = Api {
        http,
        base,
        key: other_key,
    };
    let (status, body) = other
        .call(
            reqwest::Method::POST,
            "/domains",
            Some(serde_json::json!({"url": "test.net"})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    drop(server);
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/mailward-reports/tests/fixtures/dmarc-aggregate/dmarc-report-converter",
    );
    let junk = dir.path().join("unused.txt");
    std::fs::write(&junk, b"unused").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(&data)
        .args(["import", "--org", &org])
        .arg(&fixtures)
        .arg(&junk)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8, "six reports, the junk file, the summary");
    let first = &lines[0];
    assert!(first["file"].as_str().unwrap().ends_with("test.xml"));
    assert_eq!(first["kind"], "dmarc");
    assert_eq!(first["status"], "unattributed");
    assert_eq!(first["report_id"], "1.id.0");
    assert_eq!(first["begin"], "2018-04-20T00:00:00Z");
    assert_eq!(first["authenticated"], false, "a file is not mail");
    assert_eq!(
        (first["records"].as_u64(), first["messages"].as_u64()),
        (Some(2), Some(7))
    );
    assert_eq!(lines[6]["status"], "refused");
    assert_eq!(lines[7]["summary"]["files"], 7);
    assert_eq!(lines[7]["summary"]["refused"], 1);
    assert_eq!(lines[7]["summary"]["unattributed"], 6);

    // Without --org, or naming no organization: refused before anything is read.
    for args in [
        vec!["import"],
        vec!["import", "--org", "7d0f6f3e-6c8f-4b43-9a58-8f1d2a6c1e00"],
    ] {
        let refused = Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(&data)
            .args(&args)
            .arg(&fixtures)
            .output()
            .unwrap();
        assert!(!refused.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("--org"),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }
    let missing = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(&data)
        .args(["import", "--org", &org])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
}

/// Tenant trust, finding 9: the local stack's secret files are its owner's alone: the secret
/// key and the database (with its WAL) are created 0600, and a key file left readable by an
/// older version is narrowed to 0600 at the next start.
#[cfg(unix)]
#[test]
fn local_secret_files_are_created_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(&data)
            .arg("sweep")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let mode = |name: &str| {
        std::fs::metadata(data.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    run();
    assert_eq!(mode("secret.key"), 0o600);
    assert_eq!(mode("mailward.db"), 0o600);
    for name in ["mailward.db-wal", "mailward.db-shm"] {
        if data.join(name).exists() {
            assert_eq!(mode(name), 0o600, "{name}");
        }
    }
    std::fs::set_permissions(
        data.join("secret.key"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    run();
    assert_eq!(mode("secret.key"), 0o600, "narrowed at the next start");
}
