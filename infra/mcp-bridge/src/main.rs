//! `mailward-mcp`: Mailward's MCP endpoint for clients that speak only stdio. It signs in once
//! in the browser (OAuth 2.1, PKCE S256, the loopback callback on port 8765), keeps the refresh
//! token in the user's configuration directory (0600) and renews access silently, and relays
//! newline-delimited JSON-RPC between stdin/stdout and `{base}/mcp` (Streamable HTTP,
//! stateless). Logs go to stderr: stdout carries JSON-RPC alone.
//!
//! ```text
//! cargo install --path infra/mcp-bridge
//! mailward-mcp --url https://mailward.example
//! ```

mod auth;
mod callback;

use anyhow::Context as _;
use clap::Parser;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

/// Relays an MCP client's stdio to Mailward's MCP endpoint.
#[derive(Parser, Debug)]
#[command(name = "mailward-mcp", version)]
struct Cli {
    /// The service's public base URL.
    #[arg(long, env = "MAILWARD_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The loopback port of the sign-in callback.
    #[arg(long, env = "MAILWARD_MCP_CALLBACK_PORT", default_value_t = 8765)]
    port: u16,
    /// The command that opens the sign-in page (default: the platform's opener).
    #[arg(long, env = "MAILWARD_MCP_BROWSER")]
    browser: Option<String>,
    /// Where the refresh token is kept (default: `$XDG_CONFIG_HOME/mailward` or
    /// `~/.config/mailward`).
    #[arg(long, env = "MAILWARD_MCP_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
}

fn default_config_dir() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?).join(".config"),
    };
    Ok(base.join("mailward"))
}

/// The relay's state: the session and the current access token.
struct Relay {
    session: auth::Session,
    access: Option<auth::Access>,
    endpoint: String,
    /// The revision `initialize` negotiated, sent on every later request.
    protocol: Option<String>,
}

impl Relay {
    async fn token(&mut self, renew: bool) -> anyhow::Result<String> {
        let fresh = self
            .access
            .as_ref()
            .is_some_and(|a| !renew && a.renew_at > Instant::now());
        if !fresh {
            self.access = Some(self.session.access().await?);
        }
        Ok(self.access.as_ref().expect("set above").token.clone())
    }

    async fn post(&mut self, body: &str, renew: bool) -> anyhow::Result<reqwest::Response> {
        let token = self.token(renew).await?;
        let mut request = self
            .session
            .http()
            .post(&self.endpoint)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(protocol) = &self.protocol {
            request = request.header("mcp-protocol-version", protocol);
        }
        Ok(request.send().await?)
    }

    /// Sends one message; the JSON-RPC messages to write back (none for a notification).
    async fn relay(&mut self, line: &str) -> Vec<Value> {
        let message: Value = match serde_json::from_str(line) {
            Ok(m) => m,
            Err(e) => {
                return vec![rpc_error(
                    &Value::Null,
                    -32700,
                    &format!("parse error: {e}"),
                )];
            }
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let answer = match self.post(line, false).await {
            Ok(r) if r.status() == reqwest::StatusCode::UNAUTHORIZED => self.post(line, true).await,
            other => other,
        };
        let answer = match answer {
            Ok(a) => a,
            Err(e) => return reply_if_request(&message, &id, -32000, &format!("{e:#}")),
        };
        let status = answer.status();
        let text = answer.text().await.unwrap_or_default();
        if status == reqwest::StatusCode::ACCEPTED || text.trim().is_empty() && status.is_success()
        {
            return Vec::new();
        }
        let parsed: Vec<Value> = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(items)) => items,
            Ok(value) if value.get("jsonrpc").is_some() => vec![value],
            _ => sse_messages(&text),
        };
        if parsed.is_empty() {
            let detail = format!("Mailward answered HTTP {status}: {}", text.trim());
            return reply_if_request(&message, &id, -32000, &detail);
        }
        if message["method"] == "initialize"
            && let Some(version) = parsed[0]["result"]["protocolVersion"].as_str()
        {
            self.protocol = Some(version.to_owned());
        }
        parsed
    }
}

/// The `data:` payloads of a `text/event-stream` body that are JSON-RPC messages.
fn sse_messages(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(|v| v.get("jsonrpc").is_some())
        .collect()
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// An error answer for a request; nothing for a notification (it has no id to answer).
fn reply_if_request(message: &Value, id: &Value, code: i64, text: &str) -> Vec<Value> {
    eprintln!("mailward-mcp: {text}");
    if message.get("id").is_some() {
        vec![rpc_error(id, code, text)]
    } else {
        Vec::new()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let base = cli.url.trim_end_matches('/').to_owned();
    let settings = auth::Settings {
        base: base.clone(),
        port: cli.port,
        browser: cli.browser,
        config_dir: match cli.config_dir {
            Some(dir) => dir,
            None => default_config_dir()?,
        },
    };
    let mut relay = Relay {
        session: auth::Session::new(settings)?,
        access: None,
        endpoint: format!("{base}/mcp"),
        protocol: None,
    };
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        for message in relay.relay(&line).await {
            let mut out = serde_json::to_vec(&message)?;
            out.push(b'\n');
            stdout.write_all(&out).await?;
            stdout.flush().await?;
        }
    }
    Ok(())
}
