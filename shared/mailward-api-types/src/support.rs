//! Support (SPEC §4.5): tickets with their messages, the unread count, and attachment uploads.

use crate::common::PageInfo;
use mailward_domain::admin::ActorType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// One message of a ticket.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TicketMessage {
    pub id: Uuid,
    /// USER or API_KEY for the organization's side, SERVICE_STAFF for Mailward support.
    #[schema(value_type = String)]
    pub author_type: ActorType,
    /// The account or key that wrote it; null for support staff.
    pub author_id: Option<Uuid>,
    pub body: String,
    /// Object keys of the attachments (from POST /support/presigned-url).
    pub attachments: Vec<String>,
    /// When the organization read a support reply; null while unread. The organization's
    /// own messages carry their creation time.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub read_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// A support ticket.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Ticket {
    pub id: Uuid,
    pub subject: String,
    /// open or closed.
    pub status: String,
    /// The account that opened it (null when opened with an API key).
    pub opened_by: Option<Uuid>,
    /// Support replies not read yet.
    pub unread_count: u64,
    /// The messages, oldest first (on the single-ticket read and on creation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<TicketMessage>>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// A page of tickets.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TicketList {
    pub data: Vec<Ticket>,
    pub page_info: PageInfo,
}

/// `GET /support/tickets` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListTicketsParams {
    /// open or closed (default: both).
    #[param(value_type = Option<TicketStatus>, inline)]
    pub status: Option<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// `status` of a ticket.
    pub TicketStatus = ["open", "closed"]
);

/// `POST /support/tickets` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTicketRequest {
    /// 1 to 200 characters (surrounding spaces are trimmed).
    #[schema(value_type = TicketSubject)]
    pub subject: String,
    /// 1 to 10,000 characters (surrounding spaces are trimmed).
    #[schema(value_type = MessageBody)]
    pub body: String,
    /// Up to 5 object keys from POST /support/presigned-url, already uploaded.
    #[serde(default)]
    #[schema(max_items = 5)]
    pub attachments: Vec<String>,
}

crate::schema_type!(
    /// A ticket's subject: 1 to 200 characters, surrounding spaces trimmed.
    pub TicketSubject = crate::constraints::prose(200)
);
crate::schema_type!(
    /// A support message: 1 to 10,000 characters, surrounding spaces trimmed.
    pub MessageBody = crate::constraints::prose(10_000)
);

/// `POST /support/tickets/{id}/replies` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyRequest {
    /// 1 to 10,000 characters (surrounding spaces are trimmed).
    #[schema(value_type = MessageBody)]
    pub body: String,
    /// Up to 5 object keys, as on creation.
    #[serde(default)]
    #[schema(max_items = 5)]
    pub attachments: Vec<String>,
}

/// `GET /support/unread-count` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UnreadCount {
    /// Support replies not read yet, across the tickets the caller sees.
    pub count: u64,
}

/// `POST /support/presigned-url` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PresignRequest {
    /// 1 to 255 characters, not blank, without path separators or control characters.
    #[schema(
        pattern = r"^[^/\\\u0000-\u001F\u007F-\u009F]*[^/\\\s\u0000-\u001F\u007F-\u009F][^/\\\u0000-\u001F\u007F-\u009F]*$",
        max_length = 255
    )]
    pub file_name: String,
    /// image/png, image/jpeg, image/gif, image/webp or application/pdf.
    #[schema(value_type = AttachmentType)]
    pub mime_type: String,
}

/// The attachment types accepted.
pub const MIME_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
];

crate::words!(
    /// The type of a support attachment.
    pub AttachmentType = MIME_TYPES
);

/// `POST /support/presigned-url` response: an upload form.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PresignedUpload {
    /// POST here as multipart/form-data.
    pub url: String,
    /// Always POST.
    pub method: String,
    /// Send these form fields first, verbatim, then the file in a part named `file`.
    pub fields: BTreeMap<String, String>,
    /// The object key; list it in `attachments` of a ticket or reply once uploaded.
    pub key: String,
    /// The largest accepted file (10 MB), enforced by the upload policy itself.
    pub max_bytes: u64,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
}
