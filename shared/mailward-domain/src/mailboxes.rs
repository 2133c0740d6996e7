//! Mailbox connections: an organization's own report mailbox (Microsoft 365, Google
//! Workspace, any IMAP server) that Mailward reads on a schedule, importing the reports it
//! holds for that organization alone. Read over IMAP with a password or an OAuth 2.0 access
//! token (SASL XOAUTH2 or OAUTHBEARER), or over the Microsoft Graph mail API; the access token
//! comes from a refresh token the person obtained once, kept sealed with any password and
//! client secret, and never answered back.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// How the mailbox is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailboxProvider {
    /// IMAP over TLS (`imaps`, port 993 by default).
    Imap,
    /// The Microsoft Graph mail API.
    MicrosoftGraph,
}

impl MailboxProvider {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Imap => "imap",
            Self::MicrosoftGraph => "microsoft_graph",
        }
    }
}

/// How Mailward signs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailboxAuthKind {
    /// An IMAP password (an app password where the provider still offers them).
    Password,
    /// An OAuth 2.0 refresh token, exchanged for access tokens.
    Oauth2,
}

/// The SASL mechanism of an OAuth IMAP login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaslMechanism {
    /// Google's and Microsoft's `XOAUTH2`.
    Xoauth2,
    /// RFC 7628's `OAUTHBEARER`.
    Oauthbearer,
}

/// The sign-in settings that may be shown (the secrets are sealed apart).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxAuth {
    /// Password or OAuth.
    pub kind: MailboxAuthKind,
    /// The SASL mechanism (IMAP with OAuth).
    pub mechanism: Option<SaslMechanism>,
    /// The provider's token endpoint (OAuth).
    pub token_url: Option<String>,
    /// The OAuth client the refresh token was issued to.
    pub client_id: Option<String>,
    /// The scope asked for at each refresh, if any.
    pub scope: Option<String>,
    /// Whether a client secret is kept.
    pub has_client_secret: bool,
}

/// The secrets of a connection, stored sealed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxSecrets {
    /// The IMAP password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// The OAuth client secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The current refresh token (replaced when the provider rotates it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

/// How far reading got, so each poll reads only what is new.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxCursor {
    /// IMAP: the mailbox's UIDVALIDITY when `last_uid` was read (a new one starts over).
    #[serde(default)]
    pub uid_validity: u32,
    /// IMAP: the highest UID processed.
    #[serde(default)]
    pub last_uid: u32,
    /// Graph: the receipt time of the newest message processed.
    #[serde(default)]
    pub received_after: Option<String>,
    /// Graph: the ids processed that were received at exactly `received_after` (the next
    /// list starts at that instant, inclusive).
    #[serde(default)]
    pub seen_at_boundary: Vec<String>,
}

/// What a poll did with the messages it read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollCounts {
    /// Messages read.
    pub messages: u64,
    /// Reports imported for the organization.
    pub imported: u64,
    /// Reports it had already.
    pub duplicate: u64,
    /// Reports about no domain the organization watches.
    pub unattributed: u64,
    /// Messages that held no readable report.
    pub refused: u64,
}

impl PollCounts {
    /// Adds another poll's counts.
    pub fn add(&mut self, other: &PollCounts) {
        self.messages += other.messages;
        self.imported += other.imported;
        self.duplicate += other.duplicate;
        self.unattributed += other.unattributed;
        self.refused += other.refused;
    }
}

/// The status of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailboxStatus {
    /// Not read yet.
    Pending,
    /// The last poll worked.
    Active,
    /// The provider refused the credentials: polling stops until they are replaced.
    CredentialsRefused,
    /// The last poll failed otherwise (network, server): the next one tries again.
    Error,
    /// Paused by a person.
    Paused,
}

/// One mailbox connection, in its organization's partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxConnection {
    /// Its id.
    pub id: Uuid,
    /// The organization whose reports it holds (the only one they are imported for).
    pub org_id: Uuid,
    /// A person's name for it.
    pub name: String,
    /// IMAP or Graph.
    pub provider: MailboxProvider,
    /// IMAP server name (IMAP only).
    pub host: Option<String>,
    /// IMAP port (IMAP only).
    pub port: Option<u16>,
    /// The IMAP login, or the Graph mailbox's address (or `me`).
    pub user: String,
    /// The IMAP mailbox or Graph folder read.
    pub mailbox: String,
    /// Where processed messages go, if anywhere.
    pub move_to: Option<String>,
    /// How to sign in.
    pub auth: MailboxAuth,
    /// [`MailboxSecrets`] sealed with the service key.
    pub sealed_secrets: String,
    /// Minutes between polls.
    pub poll_interval_minutes: u32,
    /// Where the status stands.
    pub status: MailboxStatus,
    /// The last failure, when the status says so.
    pub error: Option<String>,
    /// How far reading got.
    pub cursor: MailboxCursor,
    /// The last poll's counts.
    pub last_result: Option<PollCounts>,
    /// Every poll's counts added up.
    pub totals: PollCounts,
    /// When it was last read.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_polled_at: Option<OffsetDateTime>,
    /// When the schedule reads it next.
    #[serde(with = "time::serde::rfc3339")]
    pub next_poll_at: OffsetDateTime,
    /// Who connected it (the API key or the account).
    pub created_by: Option<Uuid>,
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change by a person.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl MailboxConnection {
    /// Whether the schedule should read it at `now`.
    pub fn is_due(&self, now: OffsetDateTime) -> bool {
        !matches!(
            self.status,
            MailboxStatus::Paused | MailboxStatus::CredentialsRefused
        ) && self.next_poll_at <= now
    }
}

/// The fewest and most minutes between polls.
pub const POLL_INTERVAL_MINUTES: std::ops::RangeInclusive<u32> = 5..=1440;

/// The default minutes between polls: reports come daily, an hour is soon enough.
pub const DEFAULT_POLL_INTERVAL_MINUTES: u32 = 60;

/// Advances a Graph cursor past `received` (id `id`), oldest first.
pub fn advance_graph_cursor(cursor: &mut MailboxCursor, received: &str, id: &str) {
    if cursor.received_after.as_deref() == Some(received) {
        if !cursor.seen_at_boundary.iter().any(|s| s == id) {
            cursor.seen_at_boundary.push(id.to_owned());
        }
    } else {
        cursor.received_after = Some(received.to_owned());
        cursor.seen_at_boundary = vec![id.to_owned()];
    }
}

/// Whether a listed Graph message was processed already.
pub fn graph_seen(cursor: &MailboxCursor, received: &str, id: &str) -> bool {
    cursor.received_after.as_deref() == Some(received)
        && cursor.seen_at_boundary.iter().any(|s| s == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_cursor_skips_the_boundary_it_saw() {
        let mut c = MailboxCursor::default();
        advance_graph_cursor(&mut c, "2026-11-27T10:00:00Z", "a");
        advance_graph_cursor(&mut c, "2026-11-27T10:00:00Z", "b");
        assert!(graph_seen(&c, "2026-11-27T10:00:00Z", "a"));
        assert!(graph_seen(&c, "2026-11-27T10:00:00Z", "b"));
        assert!(!graph_seen(&c, "2026-11-27T10:00:00Z", "c"));
        advance_graph_cursor(&mut c, "2026-11-27T11:00:00Z", "c");
        assert_eq!(c.seen_at_boundary, ["c"]);
        assert!(!graph_seen(&c, "2026-11-27T10:00:00Z", "a"));
    }
}
