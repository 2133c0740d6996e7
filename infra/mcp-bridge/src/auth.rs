//! Signing in: the OAuth 2.1 authorization code flow with PKCE S256 on the fixed loopback
//! callback (RFC 8252 §7.3), the person's browser doing the sign-in; the refresh token kept in
//! the user's configuration directory, readable by its owner alone, and traded silently for
//! access tokens (rotating: each answer's refresh token replaces the stored one).

use anyhow::{Context as _, anyhow, bail};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::Digest as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where and how to sign in.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The service's public base URL (`https://mailward.example`).
    pub base: String,
    /// The loopback port of the callback (8765, as Claude-Code-style clients use).
    pub port: u16,
    /// The command that opens a URL in the person's browser (`None`: the platform's).
    pub browser: Option<String>,
    /// Where the refresh token is kept.
    pub config_dir: PathBuf,
}

/// An access token and when to stop using it.
#[derive(Debug, Clone)]
pub struct Access {
    /// The bearer token.
    pub token: String,
    /// A minute before it expires.
    pub renew_at: Instant,
}

/// What the authorization server's metadata tells a client (RFC 8414).
#[derive(Debug, Deserialize)]
struct Metadata {
    authorization_endpoint: String,
    token_endpoint: String,
    mailward_connector_client_id: String,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

/// A token endpoint answer (RFC 6749 §5.1).
#[derive(Debug, Deserialize)]
struct Tokens {
    access_token: String,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
}

/// The stored credentials of one service.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    base_url: String,
    refresh_token: String,
}

/// The file holding the refresh token for `base`: one per service.
pub fn credentials_path(config_dir: &Path, base: &str) -> PathBuf {
    let digest = sha2::Sha256::digest(base.as_bytes());
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    config_dir.join(format!("credentials-{name}.json"))
}

/// Writes `text` to `path` readable and writable by its owner alone (0600), in a directory
/// only its owner can enter (0700).
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("a directory for the credentials")?;
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let tmp = path.with_extension("tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
    }
    #[cfg(not(unix))]
    std::fs::write(path, text)?;
    Ok(())
}

/// Signs in and keeps the session: the stored refresh token first, the browser otherwise.
pub struct Session {
    settings: Settings,
    http: reqwest::Client,
    metadata: Option<Metadata>,
}

fn random_token(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::fill(&mut buffer[..]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buffer)
}

fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

impl Session {
    /// A session for `settings`.
    pub fn new(settings: Settings) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()?;
        Ok(Self {
            settings,
            http,
            metadata: None,
        })
    }

    /// The HTTP client (the relay uses it too).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    async fn metadata(&mut self) -> anyhow::Result<&Metadata> {
        if self.metadata.is_none() {
            let url = format!(
                "{}/.well-known/oauth-authorization-server",
                self.settings.base
            );
            let metadata = self
                .http
                .get(&url)
                .send()
                .await
                .with_context(|| format!("cannot reach {url}"))?
                .error_for_status()?
                .json::<Metadata>()
                .await
                .context("the authorization server's metadata")?;
            self.metadata = Some(metadata);
        }
        Ok(self.metadata.as_ref().expect("just set"))
    }

    fn stored(&self) -> Option<Stored> {
        let path = credentials_path(&self.settings.config_dir, &self.settings.base);
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str::<Stored>(&text)
            .ok()
            .filter(|s| s.base_url == self.settings.base)
    }

    fn keep(&self, tokens: &Tokens) -> anyhow::Result<Access> {
        if let Some(refresh) = &tokens.refresh_token {
            let stored = Stored {
                base_url: self.settings.base.clone(),
                refresh_token: refresh.clone(),
            };
            write_private(
                &credentials_path(&self.settings.config_dir, &self.settings.base),
                &serde_json::to_string(&stored)?,
            )?;
        }
        let lifetime = tokens.expires_in.unwrap_or(300).saturating_sub(60);
        Ok(Access {
            token: tokens.access_token.clone(),
            renew_at: Instant::now() + Duration::from_secs(lifetime),
        })
    }

    async fn token_request(&mut self, form: &[(&str, &str)]) -> anyhow::Result<Tokens> {
        let endpoint = self.metadata().await?.token_endpoint.clone();
        let answer = self.http.post(&endpoint).form(form).send().await?;
        let status = answer.status();
        let body = answer.text().await?;
        if !status.is_success() {
            bail!("the token endpoint answered {status}: {body}");
        }
        Ok(serde_json::from_str(&body)?)
    }

    /// An access token: from the stored refresh token when it still works, else by signing in
    /// in the browser.
    pub async fn access(&mut self) -> anyhow::Result<Access> {
        if let Some(stored) = self.stored() {
            let client = self.metadata().await?.mailward_connector_client_id.clone();
            let form = [
                ("grant_type", "refresh_token"),
                ("refresh_token", stored.refresh_token.as_str()),
                ("client_id", client.as_str()),
            ];
            match self.token_request(&form).await {
                Ok(tokens) => return self.keep(&tokens),
                Err(e) => eprintln!(
                    "mailward-mcp: the stored sign-in no longer works ({e}); signing in again"
                ),
            }
        }
        self.sign_in().await
    }

    /// The authorization code flow in the browser, the code caught on the loopback callback.
    async fn sign_in(&mut self) -> anyhow::Result<Access> {
        let base = self.settings.base.clone();
        let port = self.settings.port;
        let metadata = self.metadata().await?;
        let client = metadata.mailward_connector_client_id.clone();
        let mut scopes = metadata.scopes_supported.clone();
        if !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        let mut url = url::Url::parse(&metadata.authorization_endpoint)?;
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let verifier = random_token(48);
        let state = random_token(16);
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &client)
            .append_pair("redirect_uri", &redirect)
            .append_pair("code_challenge", &s256(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("scope", &scopes.join(" "))
            .append_pair("resource", &format!("{base}/mcp"));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.settings.port))
            .await
            .with_context(|| {
                format!(
                    "the callback port {} is taken; free it or pass --port",
                    self.settings.port
                )
            })?;
        eprintln!("mailward-mcp: sign in to Mailward in your browser: {url}");
        open_browser(self.settings.browser.as_deref(), url.as_str())?;
        let code = crate::callback::wait_for_code(listener, &state).await?;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect.as_str()),
            ("client_id", client.as_str()),
            ("code_verifier", verifier.as_str()),
        ];
        let tokens = self.token_request(&form).await?;
        self.keep(&tokens)
    }
}

/// Opens `url` with `command` (split on spaces, the URL appended), or the platform's opener.
fn open_browser(command: Option<&str>, url: &str) -> anyhow::Result<()> {
    let default = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let line = command.unwrap_or(default);
    let mut parts = line.split_whitespace();
    let program = parts
        .next()
        .ok_or_else(|| anyhow!("an empty browser command"))?;
    let spawned = std::process::Command::new(program)
        .args(parts)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        // The URL is on stderr already: the person can open it by hand.
        eprintln!("mailward-mcp: could not start {program:?} ({e}); open the URL above yourself");
    }
    Ok(())
}
