//! The support queue across organizations: tickets by status, one ticket with its messages,
//! staff replies with attachments (uploaded under the organization's support prefix).

use mailward_api_types::staff::{
    StaffReplyRequest, StaffTicket, StaffTicketList, StaffTicketQuery,
};
use mailward_api_types::support::{PresignRequest, PresignedUpload, TicketMessage};
use mailward_app::caller::StaffMember;
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_store::{orgs, support as stored};
use std::collections::HashMap;
use uuid::Uuid;

/// The queue of `status` (`open` by default), oldest change first.
pub async fn queue(
    app: &AppState,
    _staff: &StaffMember,
    query: StaffTicketQuery,
) -> Result<StaffTicketList, ServiceError> {
    let status = query.status.as_deref().unwrap_or("open");
    if status != "open" && status != "closed" {
        return Err(ServiceError::invalid("status", "status is open or closed"));
    }
    let limit = query.limit.unwrap_or(50);
    if !(1..=100).contains(&limit) {
        return Err(ServiceError::invalid("limit", "limit is 1 to 100"));
    }
    let store = app.store.as_ref();
    let (tickets, next_cursor) = stored::queue(
        store,
        status,
        limit as usize,
        query.cursor.filter(|c| !c.is_empty()),
    )
    .await
    .map_err(|e| match e {
        mailward_domain::store::StoreError::Invalid(_) => {
            ServiceError::invalid("cursor", "cursor is not one this queue gave")
        }
        other => other.into(),
    })?;
    let mut names: HashMap<Uuid, String> = HashMap::new();
    let mut data = Vec::with_capacity(tickets.len());
    for ticket in tickets {
        let name = match names.get(&ticket.org_id) {
            Some(name) => name.clone(),
            None => {
                let name = orgs::get(store, ticket.org_id)
                    .await?
                    .map(|o| o.value.name)
                    .unwrap_or_default();
                names.insert(ticket.org_id, name.clone());
                name
            }
        };
        data.push(listed(app, ticket, name, false).await?);
    }
    Ok(StaffTicketList { data, next_cursor })
}

async fn listed(
    app: &AppState,
    ticket: mailward_domain::admin::Ticket,
    organization_name: String,
    with_messages: bool,
) -> Result<StaffTicket, ServiceError> {
    let messages = stored::messages(app.store.as_ref(), ticket.org_id, ticket.id).await?;
    let refs: Vec<_> = messages.iter().map(|m| &m.value).collect();
    Ok(StaffTicket {
        organization_id: ticket.org_id,
        organization_name,
        ticket: mailward_services::support::view(&ticket, &refs, with_messages),
    })
}

/// One ticket with its messages.
pub async fn read(
    app: &AppState,
    _staff: &StaffMember,
    org: Uuid,
    id: Uuid,
) -> Result<StaffTicket, ServiceError> {
    let store = app.store.as_ref();
    let ticket = stored::get(store, org, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("support ticket"))?;
    let name = orgs::get(store, org)
        .await?
        .map(|o| o.value.name)
        .unwrap_or_default();
    listed(app, ticket.value, name, true).await
}

/// Replies (and closes, when asked): the organization sees it unread, and its activity log
/// records it as `SERVICE_STAFF`.
pub async fn reply(
    app: &AppState,
    staff: &StaffMember,
    org: Uuid,
    id: Uuid,
    input: StaffReplyRequest,
) -> Result<TicketMessage, ServiceError> {
    let message = mailward_services::support::staff_reply(
        app,
        org,
        id,
        &input.body,
        &input.attachments,
        input.close,
    )
    .await?;
    tracing::info!(org.id = %org, ticket.id = %id, staff = %staff.email, closed = input.close, "staff replied to a ticket");
    Ok(message)
}

/// An upload form for an attachment of a staff reply on this ticket.
pub async fn presign(
    app: &AppState,
    _staff: &StaffMember,
    org: Uuid,
    id: Uuid,
    input: PresignRequest,
) -> Result<PresignedUpload, ServiceError> {
    stored::get(app.store.as_ref(), org, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("support ticket"))?;
    mailward_services::support::presign_for(app, org, input).await
}
