//! Reports end to end, through what a user runs: `mailward` serving with its SMTP mailbox,
//! `mailward import` on the same data directory while it serves, and the HTTP API. A fixture's
//! report (dmarc-report-converter/test.xml, domain test.net) is re-dated into the window: once
//! for yesterday through the import, once eight days ago through SMTP (the previous period).
//! Then the summary, its delta, the senders, the enforcement impact and the sender tasks are
//! read over HTTP, and confirming the sender closes its task.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

mod support;

use support::{Api, Server, free_port, sign_up_with_org, wait_until_up};

fn fixture() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/mailward-reports/tests/fixtures/dmarc-aggregate/dmarc-report-converter/test.xml",
    ))
    .unwrap()
}

/// The fixture with a new report id and its one-day range moved `days_ago` days back.
fn redated(id: &str, days_ago: i64) -> String {
    let today = time::OffsetDateTime::now_utc()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let begin = today - days_ago * 86_400;
    let xml = fixture();
    assert!(
        xml.contains("<begin>1524182400</begin>"),
        "the fixture changed"
    );
    xml.replace(
        "<report_id>1.id.0</report_id>",
        &format!("<report_id>{id}</report_id>"),
    )
    .replace(
        "<begin>1524182400</begin>",
        &format!("<begin>{begin}</begin>"),
    )
    .replace(
        "<end>1524268799 </end>",
        &format!("<end>{}</end>", begin + 86_399),
    )
}

/// Delivers `message` to `rcpt` over SMTP; the reply code of the data.
async fn deliver(port: u16, rcpt: &str, message: &str) -> String {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut reply = async || loop {
        let line = lines.next_line().await.unwrap().unwrap_or_default();
        if line.len() < 4 || line.as_bytes()[3] == b' ' {
            return line;
        }
    };
    reply().await;
    for command in [
        "HELO receiver.example\r\n".to_owned(),
        "MAIL FROM:<noreply@receiver.example>\r\n".to_owned(),
        format!("RCPT TO:<{rcpt}>\r\n"),
        "DATA\r\n".to_owned(),
    ] {
        write.write_all(command.as_bytes()).await.unwrap();
        reply().await;
    }
    write.write_all(message.as_bytes()).await.unwrap();
    let answer = reply().await;
    write.write_all(b"QUIT\r\n").await.unwrap();
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fixture_domain_through_import_smtp_and_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (http_port, smtp_port) = (free_port(), free_port());
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen", &format!("127.0.0.1:{http_port}")])
            .args(["--smtp-listen", &format!("127.0.0.1:{smtp_port}")])
            // No DNS server answers: reverse DNS and audits fail fast, as offline.
            .args(["--dns", "127.0.0.1:9"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{http_port}");
    let http = reqwest::Client::new();
    wait_until_up(&http, &base).await;
    let (key, org) = sign_up_with_org(&http, &base, &data, "owner@test.net").await;
    let api = Api { http, base, key };
    let (status, domain) = api
        .call(
            reqwest::Method::POST,
            "/domains",
            Some(json!({"url": "test.net"})),
        )
        .await;
    assert_eq!(status, 201, "{domain}");
    let id = domain["id"].as_str().unwrap().to_owned();
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();

    // Yesterday's report through `mailward import`, while the server runs.
    let file = dir.path().join("yesterday.xml");
    std::fs::write(&file, redated("e2e-import", 1)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mailward"))
        .arg("--data-dir")
        .arg(&data)
        .arg("import")
        .args(["--org", &org])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["status"], "imported", "{first}");
    assert_eq!(first["policy_domain"], "test.net");

    // The same report eight days ago through the SMTP mailbox: the previous period.
    let message = format!(
        "From: noreply@receiver.example\r\nTo: {rua}\r\nSubject: Report domain: test.net\r\n\
MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
Content-Type: text/plain\r\n\r\nA DMARC report.\r\n--b1\r\nContent-Type: text/xml\r\n\
Content-Disposition: attachment; filename=\"report.xml\"\r\n\r\n{}\r\n--b1--\r\n.\r\n",
        redated("e2e-smtp", 8).replace('\n', "\r\n")
    );
    let answer = deliver(smtp_port, &rua, &message).await;
    assert!(answer.starts_with("250"), "{answer}");

    // Senders are identified in the background a few seconds after each import.
    let mut sources = Value::Null;
    for _ in 0..300 {
        sources = api.get(&format!("/domains/{id}/sources")).await;
        let ready = sources.as_array().is_some_and(|list| {
            list.len() == 2 && list.iter().all(|s| s["last_seen_at"].is_string())
        }) && sources
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                s["totals"]["compliant"].as_u64().unwrap()
                    + s["totals"]["unknown"].as_u64().unwrap()
            })
            .sum::<u64>()
            == 14;
        if ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let list = sources.as_array().expect("senders");
    assert_eq!(list.len(), 2, "{sources}");
    let signer = list
        .iter()
        .find(|s| s["sending_domain"] == "test2.net")
        .expect("the sender signing as test2.net");
    assert_eq!(signer["totals"]["compliant"], 10, "{signer}");
    assert_eq!(signer["confirmation_status"], "requires_confirmation");

    let summary = api.get(&format!("/domains/{id}/reports/summary")).await;
    assert_eq!(summary["volume"], 7, "{summary}");
    assert_eq!(summary["previous_period"]["volume"], 7);
    assert_eq!(summary["delta"]["volume"], 0);
    assert_eq!(summary["dmarc_pass_pct"], 71.43);
    assert_eq!(summary["totals"]["compliant"], 5);
    let senders = api.get(&format!("/domains/{id}/reports/senders")).await;
    assert_eq!(senders["sender_count"], 2);
    assert_eq!(senders["senders"][0]["source_ip"], "192.168.1.1");
    let impact = api
        .get(&format!(
            "/domains/{id}/reports/enforcement-impact?policy=reject"
        ))
        .await;
    assert_eq!(impact["legitimate_affected"], 0, "{impact}");
    assert_eq!(impact["unknown_affected"], 4);
    assert_eq!(impact["safe"], true);

    // The plausible new sender asks for confirmation (the sender tasks follow the senders
    // within the same background job); confirming it closes the task.
    let mut confirm = Value::Null;
    for _ in 0..300 {
        let tasks = api.get(&format!("/tasks?domain_id={id}")).await;
        if let Some(found) = tasks["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "confirm_source")
        {
            confirm = found.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(confirm.is_object(), "a confirm_source task");
    assert_eq!(confirm["sending_domain"], "test2.net");
    let (status, done) = api
        .call(
            reqwest::Method::POST,
            &format!("/tasks/{}", confirm["id"].as_str().unwrap()),
            Some(json!({"confirm_source": true})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "done");
    let tasks = api.get(&format!("/tasks?domain_id={id}")).await;
    assert!(
        tasks["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] != "confirm_source"),
        "{tasks}"
    );
    let sources = api.get(&format!("/domains/{id}/sources")).await;
    let signer = sources
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sending_domain"] == "test2.net")
        .unwrap();
    assert_eq!(signer["confirmation_status"], "confirmed");
}
