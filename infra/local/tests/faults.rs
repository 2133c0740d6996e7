//! The `mailward` process killed with SIGKILL while report mail arrives (issue 32): 50 reports
//! delivered to its SMTP mailbox by concurrent senders that retry whatever got no `250`, as a
//! real MTA does (a lost connection, a refused connection while it is down, a 4xx). After a
//! restart on the same data directory, every report is counted exactly once: the volumes are
//! the sum of the reports, and the report count is 50.

use serde_json::json;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

mod support;

use support::{Api, Server, free_port, sign_up, wait_until_up};

const REPORTS: usize = 50;
const SENDERS: usize = 6;

fn server(data: &std::path::Path, http: u16, smtp: u16) -> Server {
    Server(
        Command::new(env!("CARGO_BIN_EXE_mailward"))
            .arg("--data-dir")
            .arg(data)
            .args(["--listen", &format!("127.0.0.1:{http}")])
            .args(["--smtp-listen", &format!("127.0.0.1:{smtp}")])
            .args(["--dns", "127.0.0.1:9"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Report `n` (0-based): yesterday, one record of `n + 1` messages from its own address.
fn report(n: usize) -> String {
    let today = time::OffsetDateTime::now_utc()
        .date()
        .midnight()
        .assume_utc()
        .unix_timestamp();
    let (begin, end) = (today - 86_400, today - 1);
    format!(
        "<?xml version=\"1.0\"?><feedback><report_metadata><org_name>Receiver</org_name>\
<email>noreply@receiver.example</email><report_id>kill-{n}</report_id><date_range><begin>{begin}</begin>\
<end>{end}</end></date_range></report_metadata><policy_published><domain>kill.example</domain><p>none</p>\
</policy_published><record><row><source_ip>192.0.2.{}</source_ip><count>{}</count><policy_evaluated>\
<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers>\
<header_from>kill.example</header_from></identifiers></record></feedback>",
        n + 1,
        n + 1
    )
}

fn message(rua: &str, n: usize) -> String {
    format!(
        "From: noreply@receiver.example\r\nTo: {rua}\r\nSubject: Report domain: kill.example \
Submitter: receiver.example Report-ID: kill-{n}\r\nMIME-Version: 1.0\r\nContent-Type: \
multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nA DMARC \
report.\r\n--b1\r\nContent-Type: text/xml\r\nContent-Disposition: attachment; \
filename=\"report.xml\"\r\n\r\n{}\r\n--b1--\r\n.\r\n",
        report(n)
    )
}

/// One SMTP transaction; the data's reply line, or why there was none.
async fn attempt(port: u16, rua: &str, message: &str) -> Result<String, String> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut reply = async || loop {
        match lines.next_line().await {
            Ok(Some(line)) if line.len() < 4 || line.as_bytes()[3] == b' ' => return Ok(line),
            Ok(Some(_)) => continue,
            Ok(None) => return Err("connection closed".to_owned()),
            Err(e) => return Err(e.to_string()),
        }
    };
    let greeting = reply().await?;
    if !greeting.starts_with("220") {
        return Ok(greeting);
    }
    for command in [
        "HELO receiver.example\r\n".to_owned(),
        "MAIL FROM:<noreply@receiver.example>\r\n".to_owned(),
        format!("RCPT TO:<{rua}>\r\n"),
        "DATA\r\n".to_owned(),
    ] {
        write
            .write_all(command.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let line = reply().await?;
        if !(line.starts_with('2') || line.starts_with('3')) {
            return Ok(line);
        }
    }
    write
        .write_all(message.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let answer = reply().await?;
    let _ = write.write_all(b"QUIT\r\n").await;
    Ok(answer)
}

/// Delivers until a `250`, retrying lost connections and temporary failures; a permanent
/// failure (5xx) would bounce the report, so it fails the test.
async fn deliver(port: u16, rua: &str, n: usize) {
    let message = message(rua, n);
    for _ in 0..600 {
        match tokio::time::timeout(Duration::from_secs(20), attempt(port, rua, &message)).await {
            Ok(Ok(line)) if line.starts_with("250") => return,
            Ok(Ok(line)) if line.starts_with('5') => panic!("report {n} bounced: {line}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("report {n} was never accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_while_reports_arrive_counts_each_report_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (http_port, smtp_port) = (free_port(), free_port());
    let mut running = server(&data, http_port, smtp_port);
    let base = format!("http://127.0.0.1:{http_port}");
    let http = reqwest::Client::new();
    wait_until_up(&http, &base).await;
    let key = sign_up(&http, &base, &data, "owner@kill.example").await;
    let api = Api {
        http: http.clone(),
        base: base.clone(),
        key,
    };
    let (status, domain) = api
        .call(
            reqwest::Method::POST,
            "/domains",
            Some(json!({"url": "kill.example"})),
        )
        .await;
    assert_eq!(status, 201, "{domain}");
    let id = domain["id"].as_str().unwrap().to_owned();
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();

    // Senders share the reports; each retries its current one until it is accepted.
    let next = Arc::new(AtomicUsize::new(0));
    let accepted = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::new();
    for _ in 0..SENDERS {
        let (next, accepted, rua) = (next.clone(), accepted.clone(), rua.clone());
        senders.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= REPORTS {
                    return;
                }
                deliver(smtp_port, &rua, n).await;
                accepted.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    // Kill the server twice while deliveries are in flight, restarting it each time.
    for threshold in [8, 25] {
        while accepted.load(Ordering::SeqCst) < threshold {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        running.0.kill().unwrap(); // SIGKILL: no shutdown code runs
        running.0.wait().unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        running = server(&data, http_port, smtp_port);
        wait_until_up(&http, &base).await;
    }
    for sender in senders {
        sender.await.unwrap();
    }
    assert_eq!(accepted.load(Ordering::SeqCst), REPORTS);

    let expected: u64 = (1..=REPORTS as u64).sum();
    let summary = api
        .get(&format!("/domains/{id}/reports/summary?period=last_7_days"))
        .await;
    assert_eq!(summary["volume"], expected, "{summary}");
    let reports = summary["reports_authenticated"].as_u64().unwrap()
        + summary["reports_unauthenticated"].as_u64().unwrap();
    assert_eq!(reports, REPORTS as u64, "{summary}");
    let senders = api
        .get(&format!(
            "/domains/{id}/reports/senders?period=last_7_days&limit=20"
        ))
        .await;
    assert_eq!(senders["sender_count"], REPORTS, "{senders}");
    assert_eq!(senders["total_volume"], expected, "{senders}");
    drop(running);
}
