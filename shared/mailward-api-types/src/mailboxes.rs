//! Report mailbox connections (an extension beyond SPEC §5): an organization's own report
//! mailbox that Mailward reads on a schedule, over IMAP (a password, or OAuth 2.0 with SASL
//! XOAUTH2/OAUTHBEARER) or the Microsoft Graph mail API.

use crate::constraints::{host_name, one_of, text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

crate::words!(
    /// How a mailbox is read: `imap` (over TLS, port 993 by default) or `microsoft_graph`.
    pub MailboxProviderName = ["imap", "microsoft_graph"]
);
crate::words!(
    /// How Mailward signs in: `password` (IMAP only) or `oauth2` (a refresh token).
    pub MailboxAuthType = ["password", "oauth2"]
);
crate::words!(
    /// The SASL mechanism of an OAuth IMAP login: `xoauth2` (Google's and Microsoft's) or
    /// `oauthbearer` (RFC 7628).
    pub SaslMechanismName = ["xoauth2", "oauthbearer"]
);
crate::schema_type!(
    /// An IMAP server's host name.
    pub MailHost = host_name()
);
crate::schema_type!(
    /// A login or mailbox address: 1 to 320 characters without control characters.
    pub MailUser = text(1, 320)
);
crate::schema_type!(
    /// An IMAP mailbox or Graph folder: 1 to 200 characters, without control characters, `"`
    /// or `\`.
    pub MailFolder = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(r#"^\s*[^\s"\\\u0000-\u001F\u007F-\u009F]([^"\\\u0000-\u001F\u007F-\u009F]*[^\s"\\\u0000-\u001F\u007F-\u009F])?\s*$"#))
        .max_length(Some(200))
);
crate::schema_type!(
    /// A secret (password, client secret, refresh token): 1 to 8192 characters without control
    /// characters, kept as given (not trimmed). Never answered back.
    pub MailSecret = crate::constraints::plain_text(true, 8192)
);
crate::schema_type!(
    /// OAuth scopes, space-separated: 1 to 1024 characters.
    pub MailScope = text(1, 1024)
);
crate::schema_type!(
    /// Minutes between polls, 5 to 1440.
    pub PollInterval = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .minimum(Some(5))
        .maximum(Some(1440))
);

/// How to sign in. With `password`: `password`. With `oauth2`: `token_url`, `client_id` and
/// `refresh_token` (obtained once through the provider's device or authorization-code flow,
/// with offline access), `client_secret` for a confidential client, `scope` when the provider
/// needs one at refresh (Microsoft does), and for IMAP the `mechanism` (default `xoauth2`).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxAuthInput {
    /// `password` or `oauth2`.
    #[serde(rename = "type")]
    #[schema(value_type = MailboxAuthType)]
    pub kind: String,
    #[schema(value_type = Option<MailSecret>)]
    pub password: Option<String>,
    #[schema(value_type = Option<SaslMechanismName>)]
    pub mechanism: Option<String>,
    /// The provider's token endpoint, e.g.
    /// `https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token` or
    /// `https://oauth2.googleapis.com/token`.
    #[schema(value_type = Option<crate::constraints::HttpsUrl>)]
    pub token_url: Option<String>,
    #[schema(value_type = Option<crate::constraints::ClientId>)]
    pub client_id: Option<String>,
    #[schema(value_type = Option<MailSecret>)]
    pub client_secret: Option<String>,
    #[schema(value_type = Option<MailSecret>)]
    pub refresh_token: Option<String>,
    #[schema(value_type = Option<MailScope>)]
    pub scope: Option<String>,
}

/// `POST /mailbox-connections` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMailboxConnection {
    #[schema(value_type = crate::constraints::Label)]
    pub name: String,
    #[schema(value_type = MailboxProviderName)]
    pub provider: String,
    /// IMAP: the server (e.g. `outlook.office365.com`, `imap.gmail.com`). Not for Graph.
    #[schema(value_type = Option<MailHost>)]
    pub host: Option<String>,
    /// IMAP: the port of implicit TLS (default 993). Not for Graph.
    #[schema(minimum = 1, maximum = 65535)]
    pub port: Option<u16>,
    /// IMAP: the login. Graph: the mailbox's address (application permission `Mail.Read`, or
    /// `Mail.ReadWrite` with `move_to`), or `me` for a delegated token.
    #[schema(value_type = MailUser)]
    pub user: String,
    /// The IMAP mailbox (default `INBOX`) or Graph folder (default `inbox`) to read.
    #[schema(value_type = Option<MailFolder>)]
    pub mailbox: Option<String>,
    /// Where processed reports go (an IMAP mailbox, created if missing; a Graph folder id or
    /// well-known name like `archive`). Without it the mailbox is only read, never changed.
    #[schema(value_type = Option<MailFolder>)]
    pub move_to: Option<String>,
    /// Minutes between polls (default 60).
    #[schema(value_type = Option<PollInterval>)]
    pub poll_interval_minutes: Option<u32>,
    pub auth: MailboxAuthInput,
}

/// `POST /mailbox-connections/{id}` body: only the fields given change. `auth` replaces the
/// sign-in settings and secrets whole (and lets a connection whose credentials were refused
/// poll again); `move_to` `""` stops moving.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMailboxConnection {
    #[schema(value_type = Option<crate::constraints::Label>)]
    pub name: Option<String>,
    #[schema(value_type = Option<MailHost>)]
    pub host: Option<String>,
    #[schema(minimum = 1, maximum = 65535)]
    pub port: Option<u16>,
    #[schema(value_type = Option<MailUser>)]
    pub user: Option<String>,
    #[schema(value_type = Option<MailFolder>)]
    pub mailbox: Option<String>,
    /// A folder, or `""` to stop moving processed reports.
    pub move_to: Option<String>,
    #[schema(value_type = Option<PollInterval>)]
    pub poll_interval_minutes: Option<u32>,
    /// `true` stops polling until `false`.
    pub paused: Option<bool>,
    pub auth: Option<MailboxAuthInput>,
}

/// The sign-in settings that may be shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MailboxAuthView {
    /// `password` or `oauth2`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `xoauth2` or `oauthbearer` (IMAP with OAuth).
    pub mechanism: Option<String>,
    pub token_url: Option<String>,
    pub client_id: Option<String>,
    pub scope: Option<String>,
    /// Whether a client secret is kept (it is never shown; neither are the password and the
    /// refresh token).
    pub has_client_secret: bool,
}

/// What polls did with the messages they read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PollCountsView {
    pub messages: u64,
    /// Reports imported for this organization.
    pub imported: u64,
    /// Reports it had already.
    pub duplicate: u64,
    /// Reports about no domain this organization watches (never imported for anyone else).
    pub unattributed: u64,
    /// Messages without a readable report.
    pub refused: u64,
}

/// A report mailbox connection. Secrets are stored sealed and never shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MailboxConnection {
    pub id: Uuid,
    /// `mailbox_connection`.
    pub object: String,
    pub name: String,
    /// `imap` or `microsoft_graph`.
    pub provider: String,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: String,
    pub mailbox: String,
    pub move_to: Option<String>,
    pub auth: MailboxAuthView,
    pub poll_interval_minutes: u32,
    /// `pending` (not read yet), `active`, `credentials_refused` (polling stops until `auth`
    /// is replaced), `error` (the next poll tries again) or `paused`.
    #[schema(value_type = MailboxStatusName)]
    pub status: String,
    pub error: Option<String>,
    #[schema(format = DateTime)]
    pub last_polled_at: Option<String>,
    #[schema(format = DateTime)]
    pub next_poll_at: Option<String>,
    pub last_result: Option<PollCountsView>,
    pub totals: PollCountsView,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

crate::schema_type!(
    /// A mailbox connection's status.
    pub MailboxStatusName = one_of(["pending", "active", "credentials_refused", "error", "paused"])
);

/// `GET /mailbox-connections`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MailboxConnectionList {
    pub data: Vec<MailboxConnection>,
}
