//! The refresh-token grant (RFC 6749 §6): a refresh token obtained once (through the
//! provider's device or authorization-code flow) exchanged for an access token at each read.
//! A provider may rotate the refresh token; the new one is answered, and the caller must keep
//! it, since the old one may stop working.

use serde::Deserialize;

/// What one refresh answered.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// The access token to log in with.
    pub access_token: String,
    /// A new refresh token, when the provider rotated it.
    pub refresh_token: Option<String>,
    /// Seconds the access token lives, when said.
    pub expires_in: Option<u64>,
}

/// Why no access token was obtained.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    /// The provider refused the grant (`invalid_grant`: revoked, expired, consent withdrawn;
    /// `invalid_client`: a wrong client secret): the person must connect again.
    #[error("the token endpoint refused the refresh token: {error}{}", describe(.description))]
    Refused {
        /// The OAuth error code.
        error: String,
        /// The provider's description.
        description: Option<String>,
    },
    /// The provider could not be reached or answered something else: try again later.
    #[error("the token endpoint did not answer usefully: {0}")]
    Unavailable(String),
}

fn describe(description: &Option<String>) -> String {
    description
        .as_deref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default()
}

/// The client and grant of one refresh.
#[derive(Debug, Clone, Copy)]
pub struct Grant<'a> {
    /// The provider's token endpoint.
    pub token_url: &'a str,
    /// The OAuth client the refresh token was issued to.
    pub client_id: &'a str,
    /// Its secret, for a confidential client (sent with HTTP Basic, RFC 6749 §2.3.1).
    pub client_secret: Option<&'a str>,
    /// The refresh token.
    pub refresh_token: &'a str,
    /// The scope to ask for (space-separated), when the provider needs it (Microsoft does).
    pub scope: Option<&'a str>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
    error: Option<String>,
    error_description: Option<String>,
}

/// Largest token answer read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Exchanges the refresh token for an access token.
pub async fn refresh(http: &reqwest::Client, grant: Grant<'_>) -> Result<Tokens, RefreshError> {
    // The form is finished before any await: its serializer is not `Send`.
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "refresh_token")
            .append_pair("refresh_token", grant.refresh_token);
        if let Some(scope) = grant.scope {
            form.append_pair("scope", scope);
        }
        if grant.client_secret.is_none() {
            form.append_pair("client_id", grant.client_id);
        }
        form.finish()
    };
    let mut request = http
        .post(grant.token_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    if let Some(secret) = grant.client_secret {
        // RFC 6749 §2.3.1: the client id and secret are form-encoded before Basic.
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(enc(grant.client_id), Some(enc(secret)));
    }
    let response = request
        .body(body)
        .send()
        .await
        .map_err(|e| RefreshError::Unavailable(without_url(&e)))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| RefreshError::Unavailable(without_url(&e)))?;
    if body.len() > MAX_ANSWER_BYTES {
        return Err(RefreshError::Unavailable("the answer is too large".into()));
    }
    let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|_| {
        RefreshError::Unavailable(format!("HTTP {status} without a JSON token answer"))
    })?;
    if let Some(error) = answer.error {
        // RFC 6749 §5.2: these say the grant or the client is wrong, not the moment.
        let permanent = matches!(
            error.as_str(),
            "invalid_grant" | "invalid_client" | "unauthorized_client" | "invalid_scope"
        );
        let description = answer
            .error_description
            .map(|d| d.chars().take(300).collect());
        return Err(if permanent {
            RefreshError::Refused { error, description }
        } else {
            RefreshError::Unavailable(format!("{error}{}", describe(&description)))
        });
    }
    match (status.is_success(), answer.access_token) {
        (true, Some(access_token)) if !access_token.is_empty() => Ok(Tokens {
            access_token,
            refresh_token: answer.refresh_token.filter(|t| !t.is_empty()),
            expires_in: answer.expires_in,
        }),
        _ => Err(RefreshError::Unavailable(format!(
            "HTTP {status} without an access token"
        ))),
    }
}

/// A reqwest error without the URL (it could carry a secret in a query).
pub(crate) fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the endpoint");
    }
    use std::error::Error as _;
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
