//! The OAuth 2.1 authorization server of the MCP endpoints (SPEC §5 rules 6-10): people sign in
//! with an emailed one-time code ([`signin`]), pick an organization and consent; the one public
//! connector client trades the code with PKCE S256 for a short-lived ES256 access token
//! ([`signing`]) and a rotating refresh token ([`flow`]); people list and revoke their
//! connections ([`connections`]); the MCP endpoints verify the access token into a [`Caller`]
//! ([`access`]).
//!
//! [`Caller`]: mailward_app::caller::Caller

pub mod access;
pub mod connections;
pub mod flow;
pub mod session;
pub mod signin;
pub mod signing;

use mailward_app::state::AppState;

/// Every scope the authorization server knows (SPEC §5 rule 13). Reads follow the member's role
/// within these; `sources:update` is needed to change senders; `offline_access` asks for a
/// refresh token.
pub const SCOPES: [&str; 6] = [
    "domains:read",
    "groups:read",
    "tasks:read",
    "dmarc_reports:read",
    "sources:update",
    "offline_access",
];

/// The four read scopes the directory endpoint needs from a token without an organization.
pub const DIRECTORY_SCOPES: [&str; 4] = [
    "domains:read",
    "groups:read",
    "tasks:read",
    "dmarc_reports:read",
];

/// Access tokens live 15 minutes: short enough that a revoked membership or connection is also
/// refused by expiry, long enough for an agent's burst of calls.
pub const ACCESS_TOKEN_TTL_SECS: i64 = 900;

/// Authorization codes live 5 minutes.
pub const CODE_TTL_SECS: i64 = 300;

/// The fixed callback port of Claude-Code-style clients (SPEC §5 rule 7).
pub const FIXED_CALLBACK_PORT: u16 = 8765;

/// The URLs of one deployment, from the public base URL the request came in on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Urls {
    /// `{base_url}`.
    pub base: String,
    /// `{auth_url}`: the issuer.
    pub issuer: String,
    /// `{mcp_url}` = `{base_url}/mcp`.
    pub mcp: String,
}

impl Urls {
    /// The URLs for a request whose public base URL is `base`.
    pub fn new(app: &AppState, base: &str) -> Self {
        let base = base.trim_end_matches('/').to_owned();
        Self {
            issuer: app.config.auth_url.clone().unwrap_or_else(|| base.clone()),
            mcp: format!("{base}/mcp"),
            base,
        }
    }

    /// `{mcp_url}/directory`.
    pub fn directory(&self) -> String {
        format!("{}/directory", self.mcp)
    }

    /// `{mcp_url}/public`.
    pub fn public(&self) -> String {
        format!("{}/public", self.mcp)
    }

    /// The resources a token may be issued for.
    pub fn resources(&self) -> [String; 2] {
        [self.mcp.clone(), self.directory()]
    }
}

/// A refusal at the token or revocation endpoint, in RFC 6749 §5.2 terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}: {description}")]
pub struct OAuthError {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
    /// `invalid_scope`, `unauthorized_client`, `access_denied`, `server_error`.
    pub error: &'static str,
    /// For a person.
    pub description: String,
}

impl OAuthError {
    /// A refusal.
    pub fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            error,
            description: description.into(),
        }
    }
}

impl From<mailward_domain::store::StoreError> for OAuthError {
    fn from(e: mailward_domain::store::StoreError) -> Self {
        tracing::error!(error = %e, "OAuth store failure");
        Self::new(
            "server_error",
            "the service could not complete the request; retry",
        )
    }
}

/// Parses a space-separated scope list: unknown scopes are refused; none asked means every
/// scope but `offline_access`, which a client asks for explicitly.
pub fn parse_scopes(raw: Option<&str>) -> Result<Vec<String>, OAuthError> {
    let asked: Vec<&str> = raw
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .collect();
    if asked.is_empty() {
        return Ok(SCOPES[..5].iter().map(|s| (*s).to_owned()).collect());
    }
    let mut scopes = Vec::new();
    for scope in asked {
        if !SCOPES.contains(&scope) {
            return Err(OAuthError::new(
                "invalid_scope",
                format!(
                    "unknown scope {scope:?}; the scopes are {}",
                    SCOPES.join(" ")
                ),
            ));
        }
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    Ok(scopes)
}

/// Whether `uri` is a redirect URI the connector client may use: a loopback callback on any
/// port (RFC 8252 §7.3: `http://127.0.0.1`, `http://[::1]` or `http://localhost`), which covers
/// the fixed port 8765. Nothing else: no open redirect through `redirect_uri`.
pub fn redirect_allowed(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return false;
    };
    if url.scheme() != "http" || url.fragment().is_some() || !url.username().is_empty() {
        return false;
    }
    if url.password().is_some() {
        return false;
    }
    matches!(
        url.host(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback()
    ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        || matches!(url.host(), Some(url::Host::Domain("localhost")))
}

/// The S256 transform of a PKCE verifier (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    use base64::Engine as _;
    let digest = mailward_domain::secrets::sha256_bytes(verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_callbacks_are_allowed() {
        for ok in [
            "http://127.0.0.1:8765/callback",
            "http://localhost:33418/cb",
            "http://[::1]:9000/",
            "http://127.0.0.1/callback?x=1",
        ] {
            assert!(redirect_allowed(ok), "{ok}");
        }
        for bad in [
            "https://evil.example/cb",
            "http://127.0.0.1.evil.example/cb",
            "http://localhost.evil.example:8765/",
            "http://user@127.0.0.1:8765/",
            "http://127.0.0.1:8765/cb#frag",
            "javascript:alert(1)",
            "//127.0.0.1:8765/",
            "",
        ] {
            assert!(!redirect_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn scopes_are_checked() {
        assert_eq!(parse_scopes(None).unwrap().len(), 5);
        assert_eq!(
            parse_scopes(Some("domains:read offline_access domains:read")).unwrap(),
            vec!["domains:read", "offline_access"]
        );
        assert_eq!(
            parse_scopes(Some("admin")).unwrap_err().error,
            "invalid_scope"
        );
    }
}
