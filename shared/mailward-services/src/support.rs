//! Support (SPEC §4.5): tickets between an organization and Mailward's support staff, the unread
//! count, and attachment uploads through the object store (straight from the client, under a
//! signed policy that limits the type and the size to 10 MB).
//!
//! Who sees which tickets: every caller not limited to groups sees the organization's tickets;
//! a member limited to groups sees the tickets they opened.

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::support::{
    CreateTicketRequest, ListTicketsParams, PresignRequest, PresignedUpload, ReplyRequest,
    Ticket as TicketView, TicketList, TicketMessage as MessageView, UnreadCount,
};
use mailward_domain::admin::{ActorType, Ticket, TicketMessage};
use mailward_domain::objects::{ObjectStore, UploadPolicy};
use mailward_domain::store::WriteOp;
use mailward_store::{Versioned, support as stored};
use std::sync::Arc;
use time::Duration;
use uuid::Uuid;

/// The attachment types accepted.
pub use mailward_api_types::support::MIME_TYPES;
/// The largest attachment, in bytes (10 MB).
pub const MAX_ATTACHMENT_BYTES: u64 = 10 * 1024 * 1024;
/// How long an upload form stays valid.
pub const UPLOAD_FORM_TTL: Duration = Duration::minutes(15);
/// Most attachments on one message.
pub const MAX_ATTACHMENTS: usize = 5;
const MAX_SUBJECT_CHARS: usize = 200;
const MAX_BODY_CHARS: usize = 10_000;

fn objects(app: &AppState) -> Result<&Arc<dyn ObjectStore>, ServiceError> {
    app.objects
        .as_ref()
        .ok_or_else(|| ServiceError::unavailable("no object store is configured"))
}

fn text(param: &'static str, raw: &str, max: usize) -> Result<String, ServiceError> {
    let value = raw.trim();
    let chars = value.chars().count();
    if chars == 0 || chars > max {
        return Err(ServiceError::invalid(
            param,
            format!("{param} must be 1 to {max} characters"),
        ));
    }
    Ok(value.to_owned())
}

fn message_view(m: &TicketMessage) -> MessageView {
    MessageView {
        id: m.id,
        author_type: m.author_type,
        author_id: m.author_id,
        body: m.body.clone(),
        attachments: m.attachments.clone(),
        read_at: m.read_at,
        created_at: m.created_at,
    }
}

fn is_unread(m: &TicketMessage) -> bool {
    m.author_type == ActorType::ServiceStaff && m.read_at.is_none()
}

/// A ticket's wire shape (with its messages when asked): the organization's and staff's.
pub fn view(ticket: &Ticket, messages: &[&TicketMessage], with_messages: bool) -> TicketView {
    TicketView {
        id: ticket.id,
        subject: ticket.subject.clone(),
        status: ticket.status.clone(),
        opened_by: ticket.opened_by,
        unread_count: messages.iter().filter(|m| is_unread(m)).count() as u64,
        messages: with_messages.then(|| messages.iter().map(|m| message_view(m)).collect()),
        created_at: ticket.created_at,
        updated_at: ticket.updated_at,
    }
}

fn sees(caller: &Caller, ticket: &Ticket) -> bool {
    !caller.is_group_limited()
        || (ticket.opened_by.is_some() && ticket.opened_by == caller.account_id())
}

/// Checks attachment keys: at most [`MAX_ATTACHMENTS`], each under this organization's support
/// prefix and already uploaded.
async fn check_attachments(
    app: &AppState,
    caller: &Caller,
    keys: &[String],
) -> Result<Vec<String>, ServiceError> {
    attachments_of(app, caller.org_id, keys).await
}

/// [`check_attachments`] for an organization named by staff.
pub async fn attachments_of(
    app: &AppState,
    org: Uuid,
    keys: &[String],
) -> Result<Vec<String>, ServiceError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    if keys.len() > MAX_ATTACHMENTS {
        return Err(ServiceError::invalid(
            "attachments",
            format!("at most {MAX_ATTACHMENTS} attachments per message"),
        ));
    }
    let prefix = format!("support/{org}/");
    let store = objects(app)?;
    for key in keys {
        let uploaded = key.starts_with(&prefix)
            && store
                .head(key)
                .await
                .map_err(ServiceError::unavailable)?
                .is_some();
        if !uploaded {
            return Err(ServiceError::invalid(
                "attachments",
                format!(
                    "{key} is not an uploaded attachment of this organization; upload it with the form from POST /support/presigned-url first"
                ),
            ));
        }
    }
    Ok(keys.to_vec())
}

fn new_message(
    caller: &Caller,
    ticket: Uuid,
    body: String,
    attachments: Vec<String>,
    now: time::OffsetDateTime,
) -> TicketMessage {
    let (author_type, author_id) = caller.actor();
    TicketMessage {
        id: Uuid::new_v4(),
        ticket_id: ticket,
        author_type,
        author_id,
        body,
        attachments,
        read_at: Some(now),
        created_at: now,
    }
}

/// The time of a new message: now, or just after the ticket's last change when the clock has
/// not moved past it (messages are keyed and ordered by their millisecond, so two in the same
/// millisecond would otherwise read back in either order).
fn after_last(app: &AppState, ticket: &Ticket) -> time::OffsetDateTime {
    app.clock
        .now()
        .max(ticket.updated_at + time::Duration::milliseconds(1))
}

/// Opens a ticket with its first message.
pub async fn open(
    app: &AppState,
    caller: &Caller,
    input: CreateTicketRequest,
) -> Result<TicketView, ServiceError> {
    caller.require_write()?;
    let subject = text("subject", &input.subject, MAX_SUBJECT_CHARS)?;
    let body = text("body", &input.body, MAX_BODY_CHARS)?;
    let attachments = check_attachments(app, caller, &input.attachments).await?;
    let now = app.clock.now();
    let ticket = Ticket {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        subject,
        status: "open".into(),
        opened_by: caller.account_id(),
        created_at: now,
        updated_at: now,
    };
    let message = new_message(caller, ticket.id, body, attachments, now);
    let mut ops = vec![
        stored::create_op(&ticket)?,
        stored::add_message_op(caller.org_id, &message)?,
    ];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "support.ticket_opened",
            "support_ticket",
            Some(ticket.id),
            format!("opened support ticket \"{}\"", ticket.subject),
        ),
    )?);
    app.store.transact(ops).await?;
    announce(app, caller.org_id, ticket.id, message.id).await;
    Ok(view(&ticket, &[&message], true))
}

/// One page of the tickets the caller sees, most recently active first.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    params: &ListTicketsParams,
) -> Result<TicketList, ServiceError> {
    if let Some(status) = params.status.as_deref()
        && !matches!(status, "open" | "closed")
    {
        return Err(ServiceError::invalid(
            "status",
            "status must be open or closed",
        ));
    }
    let (mut tickets, messages) = stored::list_all(app.store.as_ref(), caller.org_id).await?;
    tickets.retain(|t| sees(caller, t) && params.status.as_deref().is_none_or(|s| t.status == s));
    tickets.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
    let (page, page_info) = paginate(
        PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        tickets,
    )?;
    let data = page
        .iter()
        .map(|t| {
            let of: Vec<&TicketMessage> = messages
                .iter()
                .map(|m| &m.value)
                .filter(|m| m.ticket_id == t.id)
                .collect();
            view(t, &of, false)
        })
        .collect();
    Ok(TicketList { data, page_info })
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<(Versioned<Ticket>, Vec<Versioned<TicketMessage>>), ServiceError> {
    let ticket = stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|t| sees(caller, &t.value))
        .ok_or_else(|| ServiceError::not_found("support ticket"))?;
    let messages = stored::messages(app.store.as_ref(), caller.org_id, id).await?;
    Ok((ticket, messages))
}

/// One ticket with its messages (reading does not mark replies read: see [`mark_read`]).
pub async fn get(app: &AppState, caller: &Caller, id: Uuid) -> Result<TicketView, ServiceError> {
    let (ticket, messages) = load(app, caller, id).await?;
    let of: Vec<&TicketMessage> = messages.iter().map(|m| &m.value).collect();
    Ok(view(&ticket.value, &of, true))
}

/// Adds the caller's reply; a closed ticket opens again.
pub async fn reply(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: ReplyRequest,
) -> Result<MessageView, ServiceError> {
    caller.require_write()?;
    let body = text("body", &input.body, MAX_BODY_CHARS)?;
    let attachments = check_attachments(app, caller, &input.attachments).await?;
    let (ticket, _) = load(app, caller, id).await?;
    let now = after_last(app, &ticket.value);
    let message = new_message(caller, id, body, attachments, now);
    let mut next = ticket.value.clone();
    next.status = "open".into();
    next.updated_at = now;
    let mut ops = vec![
        stored::save_op(&next, ticket.version)?,
        stored::add_message_op(caller.org_id, &message)?,
    ];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "support.replied",
            "support_ticket",
            Some(id),
            format!("replied on support ticket \"{}\"", next.subject),
        ),
    )?);
    commit(app, ops).await?;
    announce(app, caller.org_id, id, message.id).await;
    Ok(message_view(&message))
}

async fn commit(app: &AppState, ops: Vec<WriteOp>) -> Result<(), ServiceError> {
    match app.store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "the ticket changed meanwhile; read it and retry",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Marks a ticket's support replies read (any member who sees the ticket may); how many were
/// unread.
pub async fn mark_read(app: &AppState, caller: &Caller, id: Uuid) -> Result<u64, ServiceError> {
    let (_, messages) = load(app, caller, id).await?;
    let now = app.clock.now();
    let mut ops = Vec::new();
    for m in messages.iter().filter(|m| is_unread(&m.value)) {
        let mut read = m.value.clone();
        read.read_at = Some(now);
        ops.push(stored::save_message_op(caller.org_id, &read, m.version)?);
    }
    let count = ops.len() as u64;
    if count == 0 {
        return Ok(0);
    }
    // Large backlogs are marked in several commits (the store's transaction limit).
    let per_commit = mailward_domain::store::MAX_TRANSACTION_OPS - 2;
    let mut chunks: Vec<Vec<WriteOp>> = Vec::new();
    for op in ops {
        match chunks.last_mut() {
            Some(chunk) if chunk.len() < per_commit => chunk.push(op),
            _ => chunks.push(vec![op]),
        }
    }
    for (i, mut chunk) in chunks.into_iter().enumerate() {
        if i == 0 {
            chunk.extend(activity::ops(
                app,
                caller,
                Change::new(
                    "support.read",
                    "support_ticket",
                    Some(id),
                    format!(
                        "read {count} support repl{}",
                        if count == 1 { "y" } else { "ies" }
                    ),
                ),
            )?);
        }
        commit(app, chunk).await?;
    }
    Ok(count)
}

/// Support replies not read yet across the tickets the caller sees.
pub async fn unread_count(app: &AppState, caller: &Caller) -> Result<UnreadCount, ServiceError> {
    let (tickets, messages) = stored::list_all(app.store.as_ref(), caller.org_id).await?;
    let visible: std::collections::HashSet<Uuid> = tickets
        .iter()
        .filter(|t| sees(caller, t))
        .map(|t| t.id)
        .collect();
    Ok(UnreadCount {
        count: messages
            .iter()
            .filter(|m| visible.contains(&m.value.ticket_id) && is_unread(&m.value))
            .count() as u64,
    })
}

/// A support reply from Mailward staff (`POST /staff/.../reply`, the operator's CLI), with
/// attachments uploaded under the organization's support prefix.
pub async fn staff_reply(
    app: &AppState,
    org: Uuid,
    ticket_id: Uuid,
    body: &str,
    attachments: &[String],
    close: bool,
) -> Result<MessageView, ServiceError> {
    let body = text("body", body, MAX_BODY_CHARS)?;
    let attachments = attachments_of(app, org, attachments).await?;
    let ticket = stored::get(app.store.as_ref(), org, ticket_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("support ticket"))?;
    let now = after_last(app, &ticket.value);
    let message = TicketMessage {
        id: Uuid::new_v4(),
        ticket_id,
        author_type: ActorType::ServiceStaff,
        author_id: None,
        body,
        attachments,
        read_at: None,
        created_at: now,
    };
    let mut next = ticket.value.clone();
    next.status = if close { "closed" } else { "open" }.into();
    next.updated_at = now;
    let mut ops = vec![
        stored::save_op(&next, ticket.version)?,
        stored::add_message_op(org, &message)?,
    ];
    ops.extend(activity::ops_as(
        app,
        org,
        (ActorType::ServiceStaff, None),
        Change::new(
            "support.replied",
            "support_ticket",
            Some(ticket_id),
            format!("Mailward support replied on \"{}\"", next.subject),
        ),
    )?);
    commit(app, ops).await?;
    announce(app, org, ticket_id, message.id).await;
    Ok(message_view(&message))
}

/// Queues the mail of a new message (support hears of the organization's; the ticket's
/// author of support's). Best effort: the message is kept either way, and the reader sees it
/// in the API.
async fn announce(app: &AppState, org: Uuid, ticket_id: Uuid, message_id: Uuid) {
    let job = mailward_app::jobs::SupportMail {
        org_id: org,
        ticket_id,
        message_id,
    };
    if let Err(e) = crate::job::enqueue(app, &job, 0).await {
        tracing::warn!(org.id = %org, ticket.id = %ticket_id, error = %e, "the support mail could not be queued");
    }
}

/// A file name made safe for an object key: characters outside letters, digits and `-_.()`
/// become `_`, and it never starts with a dot.
fn key_safe(file_name: &str) -> String {
    let mut safe: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.()".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.starts_with('.') {
        safe.replace_range(0..1, "_");
    }
    safe.chars().take(200).collect()
}

/// An upload form for one attachment: its key under the organization's support prefix, the
/// declared type, at most 10 MB, valid 15 minutes.
pub async fn presign(
    app: &AppState,
    caller: &Caller,
    input: PresignRequest,
) -> Result<PresignedUpload, ServiceError> {
    caller.require_write()?;
    presign_for(app, caller.org_id, input).await
}

/// The object key of a new attachment named `name` of type `mime_type` under `org`'s support
/// prefix; the name and the type checked.
fn attachment_key(org: Uuid, name: &str, mime_type: &str) -> Result<String, ServiceError> {
    let chars = name.chars().count();
    if chars == 0
        || chars > 255
        || name.trim().is_empty()
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
    {
        return Err(ServiceError::invalid(
            "file_name",
            "file_name must be 1 to 255 characters without path separators or control characters",
        ));
    }
    if !MIME_TYPES.contains(&mime_type) {
        return Err(ServiceError::invalid(
            "mime_type",
            format!("mime_type must be one of {}", MIME_TYPES.join(", ")),
        ));
    }
    Ok(format!(
        "support/{org}/{}/{}",
        Uuid::new_v4(),
        key_safe(name)
    ))
}

/// Stores an attachment the service received itself (the web application's upload form, which
/// cannot post to the object store's origin under its Content-Security-Policy): the same
/// checks as [`presign`], at most [`MAX_ATTACHMENT_BYTES`]; its key, to name in a message.
pub async fn attach(
    app: &AppState,
    caller: &Caller,
    file_name: &str,
    mime_type: &str,
    bytes: Vec<u8>,
) -> Result<String, ServiceError> {
    caller.require_write()?;
    let key = attachment_key(caller.org_id, file_name, mime_type)?;
    if bytes.is_empty() || bytes.len() as u64 > MAX_ATTACHMENT_BYTES {
        return Err(ServiceError::invalid(
            "attachments",
            format!("an attachment must be 1 byte to {MAX_ATTACHMENT_BYTES} bytes"),
        ));
    }
    objects(app)?
        .put(&key, bytes.into(), mime_type)
        .await
        .map_err(ServiceError::unavailable)?;
    Ok(key)
}

/// A link that downloads one attachment of a ticket the caller sees, valid 15 minutes; 404
/// when the ticket has no such attachment.
pub async fn attachment_link(
    app: &AppState,
    caller: &Caller,
    ticket: Uuid,
    key: &str,
) -> Result<String, ServiceError> {
    let (_, messages) = load(app, caller, ticket).await?;
    if !messages
        .iter()
        .any(|m| m.value.attachments.iter().any(|a| a == key))
    {
        return Err(ServiceError::not_found("attachment"));
    }
    objects(app)?
        .presign_download(key, app.clock.now() + UPLOAD_FORM_TTL)
        .await
        .map_err(ServiceError::unavailable)
}

/// An upload form under `org`'s support prefix (a member's, or staff's for a reply).
pub async fn presign_for(
    app: &AppState,
    org: Uuid,
    input: PresignRequest,
) -> Result<PresignedUpload, ServiceError> {
    let policy = UploadPolicy {
        key: attachment_key(org, &input.file_name, &input.mime_type)?,
        content_type: input.mime_type,
        max_bytes: MAX_ATTACHMENT_BYTES,
        expires_at: app.clock.now() + UPLOAD_FORM_TTL,
    };
    let form = objects(app)?
        .presign_upload(&policy)
        .await
        .map_err(ServiceError::unavailable)?;
    Ok(PresignedUpload {
        url: form.url,
        method: "POST".into(),
        fields: form.fields,
        key: policy.key,
        max_bytes: policy.max_bytes,
        expires_at: policy.expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_become_plain_keys() {
        assert_eq!(key_safe("screen shot (1).png"), "screen_shot_(1).png");
        assert_eq!(key_safe(".hidden"), "_hidden");
        assert_eq!(key_safe("résumé.pdf"), "r_sum_.pdf");
        assert!(mailward_domain::objects::is_valid_key(&format!(
            "support/o/i/{}",
            key_safe("..")
        )));
    }
}
