//! Helpers shared by the tests that run the `mailward` binary as a user does: the server process,
//! a free port, signing up through the outbox, and API calls with the key.

#![allow(dead_code)] // each test binary uses its own part

use serde_json::{Value, json};
use std::path::Path;
use std::process::Child;
use std::time::Duration;

/// The API version every call sends.
pub const VERSION: &str = "2025-04-30";

/// A child process (the server), killed when the test ends (pass or fail).
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback TCP port free right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `GET {base}/health-check` answers 200 (30 s at most).
pub async fn wait_until_up(http: &reqwest::Client, base: &str) {
    for _ in 0..300 {
        if http
            .get(format!("{base}/health-check"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not start");
}

/// The API, called with one organization's key.
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub key: String,
}

impl Api {
    /// One call: the status and the JSON body (`null` when there is none).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .basic_auth(&self.key, Some(""))
            .header("Mailward-Version", VERSION);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// A GET that must answer 200.
    pub async fn get(&self, path: &str) -> Value {
        let (status, body) = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }
}

/// Signs up through the API, reading the code from the local outbox; the new API key.
pub async fn sign_up(http: &reqwest::Client, base: &str, data: &Path, email: &str) -> String {
    sign_up_with_org(http, base, data, email).await.0
}

/// [`sign_up`], with the new organization's id: (API key, organization id).
pub async fn sign_up_with_org(
    http: &reqwest::Client,
    base: &str,
    data: &Path,
    email: &str,
) -> (String, String) {
    let res = http
        .post(format!("{base}/signup"))
        .json(&json!({"email": email, "organization_name": "End to end"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.unwrap()["signup_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mail = std::fs::read_dir(data.join("outbox"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .find(|m| m.contains(email))
        .expect("the signup code mail");
    let at = mail.find("code is ").unwrap() + "code is ".len();
    let res = http
        .post(format!("{base}/signup/verify"))
        .json(&json!({"signup_id": id, "code": &mail[at..at + 6]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body = res.json::<Value>().await.unwrap();
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    (
        text(&body["api_key"]["key"]),
        text(&body["organization"]["id"]),
    )
}

/// An organization signed up in the data directory `data` (a server run for the purpose, then
/// stopped), for commands that act for one (`mailward import --org`): its id.
pub fn organization_in(data: &Path) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let port = free_port();
        let _server = Server(
            std::process::Command::new(env!("CARGO_BIN_EXE_mailward"))
                .arg("--data-dir")
                .arg(data)
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(["--dns", "127.0.0.1:9"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        let (base, http) = (format!("http://127.0.0.1:{port}"), reqwest::Client::new());
        wait_until_up(&http, &base).await;
        sign_up_with_org(&http, &base, data, "owner@import.example")
            .await
            .1
    })
}
