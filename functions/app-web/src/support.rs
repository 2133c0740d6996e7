//! Support tickets with Mailward's staff: the organization's tickets (unread replies counted),
//! one ticket's conversation (read marks its replies read), a new ticket and replies, each
//! with up to five attachments (PNG, JPEG, GIF, WebP or PDF). The same operations as
//! `/support/tickets`; attachments go through the service into the object store
//! (`support::attach`), because the page's Content-Security-Policy lets forms post to this
//! origin only, and come back as short-lived download links.

use crate::layout::{self, Nav, csrf};
use crate::posted::Posted;
use crate::session::{Fields, Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use mailward_api_types::support::{
    CreateTicketRequest, ListTicketsParams, ReplyRequest, Ticket, TicketMessage,
};
use mailward_domain::admin::ActorType;
use mailward_http::AppState;
use mailward_services::support;
use mailward_services::{Caller, ServiceError};
use maud::{Markup, html};
use serde::Deserialize;

const BACK: &str = "/app/support";
/// The file inputs of a message form.
const FILE_INPUTS: usize = 3;

#[derive(Debug, Default, Deserialize)]
pub struct SupportQuery {
    n: Option<String>,
    ns: Option<String>,
    /// An attachment to download (its object key).
    key: Option<String>,
}

fn attachments_field(prefix: &str) -> Markup {
    html! {
        fieldset {
            legend { "Attachments (optional): PNG, JPEG, GIF, WebP or PDF, at most 4 MB in all" }
            @for i in 0..FILE_INPUTS {
                label for={ (prefix) "-file-" (i) } { "File " (i + 1) }
                input id={ (prefix) "-file-" (i) } type="file" name={ "file" (i) } accept="image/png,image/jpeg,image/gif,image/webp,application/pdf";
            }
        }
    }
}

/// `GET /app/support`.
pub async fn list(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<SupportQuery>,
) -> Response {
    let params = ListTicketsParams {
        per_page: Some(100),
        ..ListTicketsParams::default()
    };
    let tickets = match support::list(&app, &person.caller, &params).await {
        Ok(t) => t,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Support" }
        (crate::organization::subnav(&person, BACK))
        (layout::flash(&app, &q.n, &q.ns))
        section.card aria-labelledby="tickets-h" {
            h2 #tickets-h { "Your tickets" }
            @if tickets.data.is_empty() { p { "No ticket yet." } } @else {
                table.responsive {
                    thead { tr { th scope="col" { "Subject" } th scope="col" { "Status" } th scope="col" { "Unread replies" } th scope="col" { "Last activity (UTC)" } } }
                    tbody { @for t in &tickets.data { tr {
                        td data-label="Subject" { a href={ (BACK) "/" (t.id) } { (t.subject) } }
                        td data-label="Status" { span class={ "badge " (if t.status == "open" { "warn" } else { "neutral" }) } { (t.status) } }
                        td data-label="Unread replies" { (t.unread_count) }
                        td data-label="Last activity (UTC)" { (t.updated_at.date()) }
                    } } }
                }
            }
        }
        @if person.can_write() {
            form.card method="post" action=(BACK) enctype="multipart/form-data" aria-labelledby="new-ticket-h" {
                h2 #new-ticket-h { "Ask for help" }
                (csrf(&person.csrf))
                label for="ticket-subject" { "Subject" }
                input #ticket-subject type="text" name="subject" required maxlength="200";
                label for="ticket-body" { "What happened?" }
                textarea #ticket-body name="body" required maxlength="10000" rows="6" {}
                (attachments_field("new"))
                p { button type="submit" { "Open ticket" } }
            }
        }
    };
    layout::page(&person, Nav::Organization, "Support", body)
}

/// Stores the form's chosen files; their keys.
async fn attach_all(
    app: &AppState,
    caller: &Caller,
    fields: &Fields,
) -> Result<Vec<String>, ServiceError> {
    let mut keys = Vec::new();
    for i in 0..FILE_INPUTS {
        if let Some(file) = fields.file(&format!("file{i}")) {
            let mime = file
                .content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim();
            keys.push(
                support::attach(app, caller, &file.file_name, mime, file.bytes.clone()).await?,
            );
        }
    }
    Ok(keys)
}

/// `POST /app/support`: opens a ticket.
pub async fn open(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let caller = &person.caller;
    let opened = async {
        let attachments = attach_all(&app, caller, &fields).await?;
        let input = CreateTicketRequest {
            subject: fields.get("subject").unwrap_or_default().to_owned(),
            body: fields.get("body").unwrap_or_default().to_owned(),
            attachments,
        };
        support::open(&app, caller, input).await
    };
    match opened.await {
        Ok(t) => redirect_with(
            &app,
            &format!("{BACK}/{}", t.id),
            "ok",
            "Ticket opened: support answers here and by mail.",
        ),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

fn author(m: &TicketMessage) -> &'static str {
    match m.author_type {
        ActorType::ServiceStaff => "Mailward support",
        _ => "Your organization",
    }
}

fn file_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

fn conversation(ticket: &Ticket) -> Markup {
    let path = format!("{BACK}/{}", ticket.id);
    html! {
        @for m in ticket.messages.as_deref().unwrap_or_default() {
            article.card {
                h3 { (author(m)) " " span.hint { (m.created_at.date()) " " (format!("{:02}:{:02}", m.created_at.hour(), m.created_at.minute())) " UTC" } }
                @for line in m.body.lines() { (line) br; }
                @if !m.attachments.is_empty() {
                    ul { @for key in &m.attachments {
                        li { a href={ (path) "?key=" (crate::session::encode(key)) } { (file_name(key)) } }
                    } }
                }
            }
        }
    }
}

/// `GET /app/support/{id}`: the conversation (its replies marked read), or one attachment.
pub async fn ticket(
    State(app): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<SupportQuery>,
) -> Response {
    let id = match layout::path_id(&person, &id, "ticket") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let caller = &person.caller;
    if let Some(key) = &q.key {
        return match support::attachment_link(&app, caller, id, key).await {
            Ok(link) => Redirect::to(&link).into_response(),
            Err(e) => layout::service_failure(&person, e),
        };
    }
    let ticket = match support::get(&app, caller, id).await {
        Ok(t) => t,
        Err(e) => return layout::service_failure(&person, e),
    };
    if ticket.unread_count > 0 {
        // Reading the page reads the replies; a failure leaves them unread, nothing else.
        let _ = support::mark_read(&app, caller, id).await;
    }
    let body = html! {
        p { a href=(BACK) { "← All tickets" } }
        h1 { (ticket.subject) }
        (layout::flash(&app, &q.n, &q.ns))
        p { "Status: " span class={ "badge " (if ticket.status == "open" { "warn" } else { "neutral" }) } { (ticket.status) } }
        (conversation(&ticket))
        @if person.can_write() {
            form.card method="post" action={ (BACK) "/" (id) } enctype="multipart/form-data" aria-labelledby="reply-h" {
                h2 #reply-h { "Reply" }
                (csrf(&person.csrf))
                label for="reply-body" { "Message" }
                textarea #reply-body name="body" required maxlength="10000" rows="5" {}
                (attachments_field("reply"))
                p { button type="submit" { "Send reply" } }
            }
        }
    };
    layout::page(&person, Nav::Organization, &ticket.subject, body)
}

/// `POST /app/support/{id}`: a reply.
pub async fn reply(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "ticket") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let caller = &person.caller;
    let back = format!("{BACK}/{id}");
    let sent = async {
        let attachments = attach_all(&app, caller, &fields).await?;
        let input = ReplyRequest {
            body: fields.get("body").unwrap_or_default().to_owned(),
            attachments,
        };
        support::reply(&app, caller, id, input).await
    };
    match sent.await {
        Ok(_) => redirect_with(&app, &back, "ok", "Reply sent."),
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}
