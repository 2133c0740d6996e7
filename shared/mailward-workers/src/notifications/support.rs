//! Support mail: a new ticket or a customer's reply goes to the support address
//! (`MAILWARD_SUPPORT_EMAIL`), a reply from Mailward staff to the person who opened the ticket
//! (the organization's administrators when a key opened it). Each message is mailed once per
//! recipient; the reply also counts as unread in the API until a member reads the ticket.

pub use mailward_app::jobs::{SEND_SUPPORT_MAIL, SupportMail};
use mailward_domain::admin::ActorType;
use mailward_domain::admin::{Ticket, TicketMessage};
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::{Organization, Role};
use mailward_services::state::AppState;
use mailward_store::{accounts, notifications, orgs, support};

/// Mails one support message to whoever must hear of it.
pub async fn send(state: &AppState, job: SupportMail) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(ticket) = support::get(store, job.org_id, job.ticket_id).await? else {
        return Ok(());
    };
    let Some(message) = support::messages(store, job.org_id, job.ticket_id)
        .await?
        .into_iter()
        .map(|m| m.value)
        .find(|m| m.id == job.message_id)
    else {
        return Ok(());
    };
    let Some(org) = orgs::get(store, job.org_id).await? else {
        return Ok(());
    };
    let ticket = ticket.value;
    let message_is_staff = message.author_type == ActorType::ServiceStaff;
    if message_is_staff && !org.value.is_serviced() {
        return Ok(());
    }
    let mail = if message_is_staff {
        to_the_author(state, &org.value, &ticket, &message).await?
    } else {
        match &state.config.support_email {
            Some(desk) => to_support(state, desk, &org.value, &ticket, &message),
            None => return Ok(()),
        }
    };
    let (recipients, subject, text) = mail;
    let occurrence = format!("support:{}", message.id);
    for to in recipients {
        if !notifications::claim(store, job.org_id, &occurrence, &to, state.clock.unix()).await? {
            continue;
        }
        let email = OutboundEmail {
            attachments: Vec::new(),
            to: to.clone(),
            subject: subject.clone(),
            text: text.clone(),
            html: None,
            unsubscribe_url: None,
        };
        if let Err(e) = state.mailer.send(email).await {
            notifications::release(store, job.org_id, &occurrence, &to).await?;
            return Err(anyhow::anyhow!("{e}"));
        }
    }
    Ok(())
}

/// A mail's recipients, subject and text.
type Mail = (Vec<String>, String, String);

/// Staff's reply, to the person who opened the ticket (the administrators when a key did).
async fn to_the_author(
    state: &AppState,
    org: &Organization,
    ticket: &Ticket,
    message: &TicketMessage,
) -> anyhow::Result<Mail> {
    let store = state.store.as_ref();
    let mut to = Vec::new();
    if let Some(author) = ticket.opened_by
        && let Some(account) = accounts::get_by_id(store, author).await?
    {
        to.push(account.email);
    } else {
        to.extend(
            accounts::members_of(store, org.id)
                .await?
                .into_iter()
                .filter(|m| m.roles.contains(&Role::Admin) && !m.email.is_empty())
                .map(|m| m.email),
        );
    }
    let link = format!("{}/support/tickets/{}", state.config.base_url, ticket.id);
    let text = format!(
        "Mailward support replied to your ticket \"{}\":\n\n{}\n\nRead the ticket and answer: {link}\n",
        ticket.subject, message.body
    );
    Ok((to, format!("Re: {}", ticket.subject), text))
}

/// A new ticket or a customer's reply, to the support desk.
fn to_support(
    state: &AppState,
    desk: &str,
    org: &Organization,
    ticket: &Ticket,
    message: &TicketMessage,
) -> Mail {
    let first = message.created_at == ticket.created_at;
    let who = if message.author_type == ActorType::ApiKey {
        "an API key"
    } else {
        "a member"
    };
    let what = if first {
        "opened the support ticket"
    } else {
        "replied on"
    };
    let text = format!(
        "{} ({who}) {what} \"{}\":\n\n{}\n\nOrganization id: {}\nTicket id: {}\nStaff queue: GET {}/staff/tickets\n",
        org.name, ticket.subject, message.body, org.id, ticket.id, state.config.base_url,
    );
    let prefix = if first { "" } else { "Re: " };
    (
        vec![desk.to_owned()],
        format!("[{}] {prefix}{}", org.name, ticket.subject),
        text,
    )
}
