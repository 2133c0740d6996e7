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
