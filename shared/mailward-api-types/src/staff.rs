//! The staff surface (an extension beyond SPEC §5): Mailward staff's sign-in, the support
//! queue across organizations, and organizations with their suspension.

use crate::support::{Ticket, TicketMessage};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A staff session: the bearer token for `/staff/...`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StaffSession {
    /// Send as `Authorization: Bearer …` on `/staff/...` routes only.
    pub token: String,
    /// Seconds it lives (one hour).
    pub expires_in: i64,
    /// The staff member's address.
    pub email: String,
}

/// A staff suspension as staff see it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StaffSuspension {
    pub reason: String,
    /// The staff member who suspended the organization.
    pub by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
}

/// An organization as staff see it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StaffOrganization {
    pub id: Uuid,
    pub name: String,
    /// The customer's own switch (staff never change it).
    pub is_active: bool,
    /// `active` or `deleting`.
    pub state: String,
    /// Set while staff hold it suspended.
    pub suspension: Option<StaffSuspension>,
    /// How many domains it watches.
    pub domains: u64,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// Organizations found.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StaffOrganizationList {
    pub data: Vec<StaffOrganization>,
}

/// `GET /staff/organizations` filters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StaffOrganizationSearch {
    /// Part of the name, a domain the organization watches (exact), or a member's address
    /// (exact); absent: every organization (at most 200).
    pub q: Option<String>,
}

/// `POST /staff/organizations/{id}/suspend`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct SuspendRequest {
    /// Why (1 to 500 characters); the organization's refused writes quote it.
    pub reason: String,
}

/// A ticket in the support queue.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StaffTicket {
    /// The organization it belongs to.
    pub organization_id: Uuid,
    pub organization_name: String,
    #[serde(flatten)]
    pub ticket: Ticket,
}

/// A page of the support queue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StaffTicketList {
    pub data: Vec<StaffTicket>,
    /// Pass as `cursor` for the next page; null at the end.
    pub next_cursor: Option<String>,
}

/// `GET /staff/tickets` filters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StaffTicketQuery {
    /// `open` (default) or `closed`.
    pub status: Option<String>,
    /// From the previous page's `next_cursor`.
    pub cursor: Option<String>,
    /// 1 to 100 (default 50).
    pub limit: Option<u32>,
}

/// `POST /staff/organizations/{id}/tickets/{ticket_id}/reply`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct StaffReplyRequest {
    /// The reply (1 to 10,000 characters).
    pub body: String,
    /// Object keys of attachments uploaded with `POST /staff/organizations/{id}/tickets/{ticket_id}/presigned-url`.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// Close the ticket with this reply.
    #[serde(default)]
    pub close: bool,
}

/// A reply as written.
pub type StaffReply = TicketMessage;

/// `POST /staff/sources/{id}/proposals`: instructions proposed for one kind of a source.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ProposalRequest {
    /// `dkim` or `spf`.
    pub kind: String,
    /// Human-readable steps (1 to 20, each 1 to 1,000 characters).
    pub steps: Vec<String>,
    /// Records to publish (at most 20).
    #[schema(value_type = Vec<Object>)]
    pub dns_records: Vec<mailward_domain::sources::InstructionRecord>,
    /// Where the proposal came from.
    #[schema(value_type = Object)]
    pub provenance: mailward_domain::sources::Provenance,
}

/// `GET /staff/candidates` filters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CandidateQuery {
    /// PENDING_REVIEW (the default), ACTIVE (promoted) or REJECTED.
    pub status: Option<String>,
    /// Only candidates with at least this many messages (default 0).
    pub min_volume: Option<u64>,
}

/// `GET /staff/candidates`: the candidates, most messages first.
#[derive(Debug, Serialize, ToSchema)]
pub struct CandidateList {
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<mailward_domain::candidates::Candidate>,
}

/// `POST /staff/candidates/{name}/promote`: the catalogue source a candidate becomes.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PromoteRequest {
    /// The service's name (1 to 100 characters).
    pub name: String,
    /// SENDING_TOOL, MAILBOX_PROVIDER, VPS_PROVIDER, SECURITY_PROVIDER or EMAIL_RELAY.
    pub category: String,
    /// Its home page (`https://`).
    pub homepage: Option<String>,
    /// The catalogue slug (lower-case letters, digits, hyphens; default from the name); a
    /// taken one is 409.
    pub external_id: Option<String>,
}

/// One candidate for the catalogue, with its evidence and review.
pub type StaffCandidate = mailward_domain::candidates::Candidate;
