//! The Microsoft Graph mail API, for Microsoft 365 mailboxes whose IMAP is off:
//! - `GET /users/{user}/mailFolders/{folder}/messages` (`$select`, `$orderby`, `$filter`,
//!   `$top`, paged by `@odata.nextLink`);
//! - `GET /users/{user}/messages/{id}/$value`: the message as MIME;
//! - `POST /users/{user}/messages/{id}/move` with `destinationId`.
//!
//! `{user}` is the mailbox's address (application permission `Mail.Read`, or `Mail.ReadWrite`
//! to move) or `me` (a delegated token).

use crate::oauth::without_url;
use anyhow::{Context as _, anyhow, bail};
use serde::Deserialize;

/// Largest message read.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Messages asked for per page.
const PAGE: usize = 50;

/// One message of the list.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Graph's id of the message.
    pub id: String,
    /// When it was received (ISO 8601, UTC).
    pub received_date_time: String,
}

#[derive(Deserialize)]
struct ListPage {
    value: Vec<Message>,
    #[serde(rename = "@odata.nextLink")]
    next_link: Option<String>,
}

/// A mailbox on Graph.
pub struct Graph<'a> {
    http: &'a reqwest::Client,
    base: url::Url,
    token: &'a str,
    user: &'a str,
}

/// Why a Graph call failed.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// 401/403: the token does not open this mailbox (the person must fix the grant).
    #[error("Microsoft Graph refused access to the mailbox: {0}")]
    Refused(String),
    /// Anything else.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

impl<'a> Graph<'a> {
    /// The mailbox `user` at `base` (e.g. `https://graph.microsoft.com/v1.0`).
    pub fn new(
        http: &'a reqwest::Client,
        base: &str,
        token: &'a str,
        user: &'a str,
    ) -> anyhow::Result<Self> {
        let base = url::Url::parse(base.trim_end_matches('/')).context("the Graph base URL")?;
        Ok(Self {
            http,
            base,
            token,
            user,
        })
    }

    fn url(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty()
                .push("users")
                .push(self.user)
                .extend(segments);
        }
        url
    }

    /// Messages of `folder` received at or after `after` (all when `None`), oldest first, at
    /// most `limit`.
    pub async fn messages(
        &self,
        folder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Message>, GraphError> {
        let mut url = self.url(&["mailFolders", folder, "messages"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("$select", "id,receivedDateTime")
                .append_pair("$orderby", "receivedDateTime asc")
                .append_pair("$top", &PAGE.min(limit.max(1)).to_string());
            if let Some(after) = after {
                q.append_pair("$filter", &format!("receivedDateTime ge {after}"));
            }
        }
        let mut out = Vec::new();
        let mut next = Some(url);
        while let Some(url) = next.take() {
            let page: ListPage = serde_json::from_slice(&self.get(url).await?)
                .context("reading the message list")
                .map_err(GraphError::Failed)?;
            out.extend(page.value);
            if out.len() >= limit {
                out.truncate(limit);
                break;
            }
            if let Some(link) = page.next_link {
                next = Some(self.same_origin(&link).map_err(GraphError::Failed)?);
            }
        }
        Ok(out)
    }

    /// A next-page link must stay on the service the caller named.
    fn same_origin(&self, link: &str) -> anyhow::Result<url::Url> {
        let url = url::Url::parse(link).context("the next-page link")?;
        if url.origin() != self.base.origin() {
            bail!(
                "the next-page link leaves {}",
                self.base.origin().ascii_serialization()
            );
        }
        Ok(url)
    }

    /// The message as MIME.
    pub async fn mime(&self, id: &str) -> Result<Vec<u8>, GraphError> {
        self.get(self.url(&["messages", id, "$value"])).await
    }

    /// Moves the message to `destination` (a folder id or a well-known name like `archive`).
    pub async fn move_to(&self, id: &str, destination: &str) -> Result<(), GraphError> {
        let response = self
            .http
            .post(self.url(&["messages", id, "move"]))
            .bearer_auth(self.token)
            .json(&serde_json::json!({ "destinationId": destination }))
            .send()
            .await
            .map_err(|e| GraphError::Failed(anyhow!(without_url(&e))))?;
        check(response.status(), &[]).map(|_| ())
    }

    async fn get(&self, url: url::Url) -> Result<Vec<u8>, GraphError> {
        let mut response = self
            .http
            .get(url)
            .bearer_auth(self.token)
            .send()
            .await
            .map_err(|e| GraphError::Failed(anyhow!(without_url(&e))))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| GraphError::Failed(anyhow!(without_url(&e))))?
        {
            if body.len() + chunk.len() > MAX_MESSAGE_BYTES {
                return Err(GraphError::Failed(anyhow!(
                    "an answer is larger than {MAX_MESSAGE_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        check(status, &body)?;
        Ok(body)
    }
}

/// Graph's error body: `{"error": {"code": …, "message": …}}`.
fn check(status: reqwest::StatusCode, body: &[u8]) -> Result<(), GraphError> {
    if status.is_success() {
        return Ok(());
    }
    let why = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            Some(format!(
                "{}: {}",
                e.get("code")?.as_str()?,
                e.get("message").and_then(|m| m.as_str()).unwrap_or("")
            ))
        })
        .unwrap_or_else(|| format!("HTTP {status}"));
    let why: String = why.chars().take(300).collect();
    if matches!(status.as_u16(), 401 | 403) {
        Err(GraphError::Refused(why))
    } else {
        Err(GraphError::Failed(anyhow!(
            "Microsoft Graph answered {status}: {why}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_escape_each_segment_and_links_stay_home() {
        let http = reqwest::Client::new();
        let g = Graph::new(
            &http,
            "https://graph.example/v1.0/",
            "t",
            "dmarc@contoso.example",
        )
        .unwrap();
        assert_eq!(
            g.url(&["messages", "AAk/x=", "$value"]).as_str(),
            "https://graph.example/v1.0/users/dmarc@contoso.example/messages/AAk%2Fx=/$value"
        );
        assert!(
            g.same_origin("https://graph.example/v1.0/users/x/messages?$skip=50")
                .is_ok()
        );
        assert!(g.same_origin("https://evil.example/v1.0/users/x").is_err());
        assert!(g.same_origin("http://graph.example/v1.0/users/x").is_err());
    }

    #[test]
    fn errors_name_the_code() {
        let body = br#"{"error":{"code":"ErrorAccessDenied","message":"Access is denied."}}"#;
        match check(reqwest::StatusCode::FORBIDDEN, body) {
            Err(GraphError::Refused(why)) => {
                assert_eq!(why, "ErrorAccessDenied: Access is denied.")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            check(reqwest::StatusCode::BAD_GATEWAY, b""),
            Err(GraphError::Failed(_))
        ));
    }
}
