//! Every fixture report (copied unchanged from `../shared/fixtures`, provenance in each
//! directory's SOURCES.md) reads to the facts of its `expected-summary.json`.

use mailward_reports::{Content, Limits, extract};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
}

fn expected(kind: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir(kind).join("expected-summary.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["files"].as_object().unwrap().clone()
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

#[test]
fn every_aggregate_fixture_reads_to_its_expected_facts() {
    let files = expected("dmarc-aggregate");
    assert!(files.len() >= 25, "the summary lists every fixture");
    for (file, entries) in &files {
        let bytes = std::fs::read(dir("dmarc-aggregate").join(file)).unwrap();
        let found = extract(&bytes, &Limits::default());
        let reports: Vec<_> = found
            .iter()
            .filter_map(|e| match &e.content {
                Content::Aggregate(r) => Some(r),
                _ => None,
            })
            .collect();
        let entries = entries.as_array().unwrap();
        assert_eq!(reports.len(), entries.len(), "{file}: {found:#?}");
        for (report, want) in reports.iter().zip(entries) {
            let h = &report.header;
            assert_eq!(h.org_name, opt_str(&want["org_name"]), "{file} org_name");
            assert_eq!(h.report_id, opt_str(&want["report_id"]), "{file} report_id");
            let begin = want["begin"]
                .as_str()
                .map(|s| s.trim().parse::<i64>().unwrap());
            let end = want["end"]
                .as_str()
                .map(|s| s.trim().parse::<i64>().unwrap());
            assert_eq!((h.begin, h.end), (begin, end), "{file} date range");
            assert_eq!(
                h.policy.domain,
                opt_str(&want["domain"]).map(|d| d.to_ascii_lowercase()),
                "{file} domain"
            );
            assert_eq!(
                h.policy.p,
                opt_str(&want["p"]).map(|p| p.to_ascii_lowercase()),
                "{file} p"
            );
            assert_eq!(h.version, opt_str(&want["version"]), "{file} version");
            assert_eq!(h.namespace, opt_str(&want["namespace"]), "{file} namespace");
            assert_eq!(
                report.records.len() as u64,
                want["records"].as_u64().unwrap(),
                "{file} records"
            );
            assert_eq!(
                report.messages(),
                want["messages"].as_u64().unwrap(),
                "{file} messages"
            );
            let passing: u64 = report
                .records
                .iter()
                .filter(|r| r.dmarc_pass())
                .map(|r| r.count)
                .sum();
            assert_eq!(
                passing,
                want["dmarc_pass_messages"].as_u64().unwrap(),
                "{file} DMARC pass messages"
            );
        }
    }
}

#[test]
fn every_tls_fixture_reads_to_its_expected_facts() {
    let files = expected("tls-rpt");
    assert!(files.len() >= 10);
    for (file, entries) in &files {
        let bytes = std::fs::read(dir("tls-rpt").join(file)).unwrap();
        let found = extract(&bytes, &Limits::default());
        let reports: Vec<_> = found
            .iter()
            .filter_map(|e| match &e.content {
                Content::TlsRpt(r) => Some(r),
                _ => None,
            })
            .collect();
        let entries = entries.as_array().unwrap();
        assert_eq!(reports.len(), entries.len(), "{file}: {found:#?}");
        for (report, want) in reports.iter().zip(entries) {
            assert_eq!(
                report.organization_name,
                opt_str(&want["organization_name"]),
                "{file}"
            );
            assert_eq!(
                Some(report.report_id.clone()),
                opt_str(&want["report_id"]),
                "{file}"
            );
            assert_eq!(
                Some(report.date_range.start.clone()),
                opt_str(&want["start"]),
                "{file}"
            );
            assert_eq!(
                Some(report.date_range.end.clone()),
                opt_str(&want["end"]),
                "{file}"
            );
            assert_eq!(
                report.contact_info,
                opt_str(&want["contact_info"]),
                "{file}"
            );
            assert_eq!(
                report.policies.len() as u64,
                want["policies"].as_u64().unwrap(),
                "{file}"
            );
            assert_eq!(
                report.successful(),
                want["total_successful"].as_u64().unwrap(),
                "{file}"
            );
            assert_eq!(
                report.failed(),
                want["total_failure"].as_u64().unwrap(),
                "{file}"
            );
            let details: usize = report
                .policies
                .iter()
                .map(|p| p.failure_details.len())
                .sum();
            assert_eq!(
                details as u64,
                want["failure_details"].as_u64().unwrap(),
                "{file}"
            );
            let types: Vec<&str> = report
                .policies
                .iter()
                .map(|p| p.policy.policy_type.as_str())
                .collect();
            let want_types: Vec<&str> = want["policy_types"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            assert_eq!(types, want_types, "{file} policy types");
            if let Some(result_types) = want["result_types"].as_array() {
                let mut got: Vec<&str> = report
                    .policies
                    .iter()
                    .flat_map(|p| p.failure_details.iter().map(|d| d.result_type.as_str()))
                    .collect();
                got.sort_unstable();
                got.dedup();
                let mut want_rt: Vec<&str> =
                    result_types.iter().map(|t| t.as_str().unwrap()).collect();
                want_rt.sort_unstable();
                want_rt.dedup();
                assert_eq!(got, want_rt, "{file} result types");
            }
        }
    }
}

#[test]
fn an_archive_holds_the_same_report_as_the_plain_file() {
    let plain =
        std::fs::read(dir("dmarc-aggregate").join("dmarc-report-converter/test.xml")).unwrap();
    let want = extract(&plain, &Limits::default());
    for packed in ["test.xml.gz", "test.xml.gz.gz", "test.xml.zip"] {
        let bytes = std::fs::read(
            dir("dmarc-aggregate")
                .join("dmarc-report-converter")
                .join(packed),
        )
        .unwrap();
        let got = extract(&bytes, &Limits::default());
        assert_eq!(got.len(), 1, "{packed}");
        assert_eq!(got[0].content, want[0].content, "{packed}");
    }
}

/// Google's `local_policy` override with the comment `arc=pass` (its ARC chain vouched for a
/// forwarder) counts as forwarded, from a real (anonymised) Google report: 2 of its 50 messages.
#[test]
fn googles_arc_pass_override_counts_as_forwarded() {
    let bytes =
        std::fs::read(dir("dmarc-aggregate").join("modoboa-dmarc/google-ngyn.org-arc-pass.eml"))
            .unwrap();
    let found = extract(&bytes, &Limits::default());
    let report = found
        .iter()
        .find_map(|e| match &e.content {
            Content::Aggregate(r) => Some(r),
            _ => None,
        })
        .expect("the zipped report is read from the mail");
    assert_eq!(report.header.org_name.as_deref(), Some("google.com"));
    let rows: Vec<_> = mailward_reports::fold::rows_of(report)
        .into_values()
        .flatten()
        .collect();
    let volume: u64 = rows.iter().map(|r| r.volume).sum();
    let forwarded: Vec<_> = rows.iter().filter(|r| r.forwarded > 0).collect();
    assert_eq!(volume, 50);
    assert_eq!(forwarded.len(), 1, "{rows:#?}");
    assert_eq!(forwarded[0].source_ip, "209.85.220.69");
    assert_eq!(forwarded[0].forwarded, 2);
    // The raw results are kept beside the aligned ones: the forwarder's DKIM signature verified
    // (for gappssmtp.com, not aligned), SPF found no record.
    assert_eq!(forwarded[0].dkim_pass, Some(2));
    assert_eq!(forwarded[0].spf_pass, Some(0));
    assert_eq!(forwarded[0].dmarc_pass, 0);
}
