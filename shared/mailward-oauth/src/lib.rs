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
pub mod mfa;
pub mod session;
pub mod sessions;
pub mod signin;
pub mod signing;
pub mod sso;

use mailward_app::state::AppState;

/// Every scope the authorization server grants: SPEC §5 rule 13's four read scopes and
/// `offline_access`, and (an extension) a write scope beside each area an MCP tool changes
/// plus the read scopes of the administration areas. SPEC's `sources:update` (curating the
/// shared sending-source catalogue) belongs to Mailward staff alone: it is never offered on a
/// customer's consent or in the metadata, and a client asking for it is granted the rest
/// ([`STAFF_ONLY_SCOPES`]). A tool needs its scope
/// ([`scope_words`] says what each allows) and the member's role still bounds what it does;
/// `offline_access` asks for a refresh token.
pub const SCOPES: [&str; 15] = [
    "domains:read",
    "groups:read",
    "tasks:read",
    "dmarc_reports:read",
    "offline_access",
    "domains:write",
    "groups:write",
    "tasks:write",
    "webhooks:read",
    "webhooks:write",
    "prospecting:read",
    "prospecting:write",
    "activity:read",
    "billing:read",
    "billing:write",
];

/// What `scope` lets an assistant do, in words (the consent page lists them).
pub fn scope_words(scope: &str) -> &'static str {
    match scope {
        "domains:read" => "read your domains, their DNS records, plans and hosted records",
        "groups:read" => "read your domain groups",
        "tasks:read" => "read remediation tasks",
        "dmarc_reports:read" => "read DMARC report summaries and senders",
        "offline_access" => "stay connected (a refresh token) until you revoke it",
        "domains:write" => "add, change, verify and delete domains and their hosted records",
        "groups:write" => "create, rename and delete groups",
        "tasks:write" => "complete and dismiss tasks",
        "webhooks:read" => "read webhook endpoints and event types",
        "webhooks:write" => "create and delete webhook endpoints",
        "prospecting:read" => "read prospecting reports",
        "prospecting:write" => "create and delete prospecting reports",
        "activity:read" => "read the activity log",
        "billing:read" => "read the subscription and its entitlements",
        "billing:write" => "open the payment pages (checkout, billing portal) for you to use",
        _ => "an unknown permission",
    }
}

/// Whether `scope` allows changes (the consent page lets the person leave these out).
pub fn is_write_scope(scope: &str) -> bool {
    scope.ends_with(":write")
}

/// Scopes of SPEC's list that customers' tokens never carry: asked for, they are left out of
/// the grant (RFC 6749 §3.3 lets the server grant less than asked), never refused.
pub const STAFF_ONLY_SCOPES: [&str; 1] = ["sources:update"];

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
        return Ok(SCOPES
            .iter()
            .filter(|s| **s != "offline_access")
            .map(|s| (*s).to_owned())
            .collect());
    }
    let mut scopes = Vec::new();
    for scope in asked {
        if STAFF_ONLY_SCOPES.contains(&scope) {
            continue;
        }
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
/// the fixed port 8765, or exactly one of the hosted connectors' HTTPS callbacks in `listed`
/// (no prefix, no wildcard). Nothing else: no open redirect through `redirect_uri`.
pub fn redirect_allowed(uri: &str, listed: &[String]) -> bool {
    if listed.iter().any(|l| l == uri) {
        return true;
    }
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

/// Whether `uri` is a hosted connector's HTTPS callback (not a loopback one).
pub fn is_hosted_callback(uri: &str) -> bool {
    uri.starts_with("https://")
}

/// The product behind a callback, for the consent page: Claude, ChatGPT, an application on
/// this computer (loopback), or the callback's host.
pub fn client_product(uri: &str) -> String {
    let host = url::Url::parse(uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    match host.as_str() {
        "claude.ai" | "claude.com" => "Claude".into(),
        "chatgpt.com" => "ChatGPT".into(),
        _ if !is_hosted_callback(uri) => "An application on this computer".into(),
        _ => format!("The service at {host}"),
    }
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
            assert!(redirect_allowed(ok, &[]), "{ok}");
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
            assert!(!redirect_allowed(bad, &[]), "{bad}");
        }
    }

    #[test]
    fn hosted_callbacks_match_exactly() {
        let listed = vec!["https://claude.ai/api/mcp/auth_callback".to_owned()];
        assert!(redirect_allowed(
            "https://claude.ai/api/mcp/auth_callback",
            &listed
        ));
        for bad in [
            "https://claude.ai/api/mcp/auth_callback/",
            "https://claude.ai/api/mcp/auth_callback?x=1",
            "https://claude.ai/api/mcp/auth_callback#f",
            "https://claude.ai/api/mcp/auth_callbackx",
            "https://claude.ai/api/mcp/",
            "https://CLAUDE.ai/api/mcp/auth_callback",
            "http://claude.ai/api/mcp/auth_callback",
            "https://claude.ai.evil.example/api/mcp/auth_callback",
        ] {
            assert!(!redirect_allowed(bad, &listed), "{bad}");
        }
        assert_eq!(
            client_product("https://chatgpt.com/connector_platform_oauth_redirect"),
            "ChatGPT"
        );
        assert_eq!(
            client_product("https://claude.com/api/mcp/auth_callback"),
            "Claude"
        );
        assert_eq!(
            client_product("http://127.0.0.1:8765/callback"),
            "An application on this computer"
        );
    }

    #[test]
    fn every_scope_is_described_and_writes_are_known() {
        for scope in SCOPES {
            assert_ne!(scope_words(scope), "an unknown permission", "{scope}");
        }
        let writes: Vec<_> = SCOPES.into_iter().filter(|s| is_write_scope(s)).collect();
        assert_eq!(writes.len(), 6, "{writes:?}");
        assert!(!SCOPES.contains(&"sources:update"), "staff only");
        assert!(
            !parse_scopes(None)
                .unwrap()
                .contains(&"offline_access".to_owned())
        );
        assert_eq!(parse_scopes(None).unwrap().len(), SCOPES.len() - 1);
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
        assert_eq!(parse_scopes(None).unwrap().len(), SCOPES.len() - 1);
        assert_eq!(
            parse_scopes(Some("domains:read offline_access domains:read")).unwrap(),
            vec!["domains:read", "offline_access"]
        );
        assert_eq!(
            parse_scopes(Some("admin")).unwrap_err().error,
            "invalid_scope"
        );
        assert_eq!(
            parse_scopes(Some("sources:update domains:read")).unwrap(),
            vec!["domains:read"],
            "the staff-only scope is left out of a customer's grant"
        );
    }
}
