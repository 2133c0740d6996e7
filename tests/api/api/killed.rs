//! The stack's process killed with SIGKILL while webhook deliveries are in flight to a receiver
//! (issue 32): after a restart on the same data directory, every event reaches the receiver at
//! least once. The process is `tests/api/bin/stack.rs` (the local stack: the embedded adapters,
//! or in the AWS pass one DynamoDB table and SQS queues in moto, which both processes use):
//! SIGKILL leaves no shutdown code to run, which an in-process stack cannot show.

use mailward_api_tests::VERSION;
use mailward_api_tests::receiver::{Receiver, Reply};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const EVENTS: usize = 8;

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// In the AWS pass, a DynamoDB table in moto and the prefix of the process's SQS queues
/// (`STACK_DYNAMO_TABLE`, `STACK_SQS_PREFIX`); none otherwise.
async fn aws_env() -> Vec<(&'static str, String)> {
    if !mailward_api_tests::backend_is_aws() {
        return Vec::new();
    }
    let endpoint = std::env::var("MOTO_ENDPOINT").expect("MOTO_ENDPOINT");
    let config = mailward_aws::emulator_config(&endpoint).await;
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    let table = format!("mailward-killed-{suffix}");
    mailward_aws::create_table(&aws_sdk_dynamodb::Client::new(&config), &table)
        .await
        .expect("create the table on moto");
    vec![
        ("STACK_DYNAMO_TABLE", table),
        ("STACK_SQS_PREFIX", suffix[..12].to_owned()),
    ]
}

fn start(data: &Path, port: u16, ca: &Path, env: &[(&str, String)]) -> Process {
    Process(
        Command::new(env!("CARGO_BIN_EXE_stack"))
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .arg(data)
            .arg(format!("127.0.0.1:{port}"))
            .arg(ca)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

async fn wait_up(http: &reqwest::Client, base: &str) {
    for _ in 0..300 {
        if http
            .get(format!("{base}/health-check"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the stack did not start");
}

/// Signs up through the outbox of `data`: (organization id, API key).
async fn sign_up(http: &reqwest::Client, base: &str, data: &Path) -> (String, String) {
    let email = "killed@killed.example";
    let started: Value = http
        .post(format!("{base}/signup"))
        .json(&json!({"email": email, "organization_name": "Killed"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mail = std::fs::read_dir(data.join("outbox"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .find(|m| m.contains(email))
        .expect("the signup mail");
    let at = mail.find("code is ").unwrap() + "code is ".len();
    let verified: Value = http
        .post(format!("{base}/signup/verify"))
        .json(&json!({"signup_id": started["signup_id"], "code": &mail[at..at + 6]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    (
        text(&verified["organization"]["id"]),
        text(&verified["api_key"]["key"]),
    )
}

/// The organization names the receiver has seen in `organization.updated` events, in the
/// requests after the first `skip`.
fn names_seen(receiver: &Receiver, skip: usize) -> std::collections::BTreeSet<String> {
    receiver
        .requests()
        .iter()
        .skip(skip)
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .filter(|e| e["type"] == "organization.updated")
        .filter_map(|e| e["data"]["object"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn sigkill_with_webhook_deliveries_in_flight_delivers_every_event_after_restart() {
    let certs = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(certs.path()).await;
    let env = aws_env().await;
    // The first deliveries are held unanswered: every one is in flight at the kill.
    receiver.script((0..EVENTS).map(|_| Reply::Hang(Duration::from_secs(30))));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let process = start(&data, port, &receiver.ca_path, &env);
    wait_up(&http, &base).await;
    let (org, key) = sign_up(&http, &base, &data).await;
    let call = |method: reqwest::Method, path: &str| {
        http.request(method, format!("{base}{path}"))
            .basic_auth(&key, Some(""))
            .header("Mailward-Version", VERSION)
    };
    let res = call(reqwest::Method::POST, "/webhook-endpoints")
        .json(&json!({"url": receiver.url("/hook"), "enabled_events": ["organization.updated"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let mut expected = std::collections::BTreeSet::new();
    for n in 0..EVENTS {
        let name = format!("Renamed {n}");
        let res = call(reqwest::Method::POST, &format!("/organizations/{org}"))
            .json(&json!({ "name": name }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        expected.insert(name);
    }
    // Killed once every delivery is in flight, none answered.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while names_seen(&receiver, 0) != expected && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(names_seen(&receiver, 0), expected, "every delivery started");
    drop(process); // SIGKILL: no attempt is recorded, no message acknowledged
    let cut_off = receiver.requests().len();
    let _process = start(&data, port, &receiver.ca_path, &env);
    wait_up(&http, &base).await;
    // Each delivery cut off by the kill comes back when its message's visibility lapses
    // (60 s) and is answered this time.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(150);
    while names_seen(&receiver, cut_off) != expected && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        names_seen(&receiver, cut_off),
        expected,
        "every event was delivered again after the restart"
    );
}
