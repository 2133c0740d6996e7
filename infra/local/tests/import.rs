//! `mailward import`: one JSON line per report, then a summary, for files and folders.

use std::process::Command;

#[test]
fn import_prints_a_line_per_report_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/mailward-reports/tests/fixtures/dmarc-aggregate/dmarc-report-converter",
    );
    let junk = dir.path().join("unused.txt");
    std::fs::write(&junk, b"unused").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("import")
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
    assert_eq!(
        (first["records"].as_u64(), first["messages"].as_u64()),
        (Some(2), Some(7))
    );
    assert_eq!(lines[6]["status"], "refused");
    assert_eq!(lines[7]["summary"]["files"], 7);
    assert_eq!(lines[7]["summary"]["refused"], 1);
    assert_eq!(lines[7]["summary"]["unattributed"], 6);

    let missing = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("import")
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
    let empty = dir.path().join("nothing");
    std::fs::create_dir_all(&empty).unwrap();
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(&data)
            .arg("import")
            .arg(&empty)
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
