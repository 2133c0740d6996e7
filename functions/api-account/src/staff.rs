//! The staff surface (an extension beyond SPEC §5, the `staff` tag): Mailward staff sign in
//! with the emailed code and their authenticator app (`POST /staff/session`), then work the
//! support queue across organizations and suspend organizations, with the `staff_session`
//! credential that opens these routes and nothing else.

use axum::extract::{Path, State};
use mailward_api_types::ErrorBody;
use mailward_api_types::oauth::SessionRequest;
use mailward_api_types::staff::{
    CandidateList, CandidateQuery, PromoteRequest, ProposalRequest, StaffOrganization,
    StaffOrganizationList, StaffOrganizationSearch, StaffReplyRequest, StaffSession, StaffTicket,
    StaffTicketList, StaffTicketQuery, SuspendRequest,
};
use mailward_api_types::support::{PresignRequest, PresignedUpload, TicketMessage};
use mailward_http::extract::{Json, PathId, Query, path_uuid};
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::staff::{STAFF_TOKEN_TTL_SECS, StaffPrincipal, mint_staff_token};
use mailward_http::{ApiError, AppState, Routes};
use mailward_services::caller::StaffMember;
use mailward_services::config::Scope;
use mailward_staff::{organizations, tickets};

/// Signs staff in.
#[utoipa::path(post, path = "/staff/session", tag = "staff", security(()),
    request_body = SessionRequest,
    description = "The `signin_id` and emailed `code` of `POST /oauth/session/start`, then (after \
403 `mfa_required`) the authenticator app's `mfa_code`: staff always use both. Answers a bearer \
token for the `/staff/...` routes only (one hour). 403 `staff_only` when the account is not on \
the deployment's staff list (`MAILWARD_STAFF_EMAILS`), has no authenticator app, or signed in \
through an organization's single sign-on. Counts in the `signin` bucket.",
    responses(
        (status = 200, description = "The staff session", body = StaffSession),
        (status = 400, description = "`param` code, mfa_code or signin_id", body = ErrorBody),
        (status = 403, description = "`mfa_required` (send `mfa_code`) or `staff_only`", body = ErrorBody),
    ))]
pub async fn staff_session(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    Json(input): Json<SessionRequest>,
) -> Result<axum::Json<StaffSession>, ApiError> {
    let client = mailward_http::rate_limit::client_subject(&ip);
    enforce_logged(&app, log.as_deref(), Scope::Signin, &client).await?;
    let account = mailward_oauth::session::finish_staff(&app, input, &client).await?;
    let member = StaffMember {
        account_id: account.id,
        email: account.email,
    };
    let token = mint_staff_token(&app.config.secret_key, &member, app.clock.unix())?;
    Ok(axum::Json(StaffSession {
        token,
        expires_in: STAFF_TOKEN_TTL_SECS,
        email: member.email,
    }))
}

/// Finds organizations.
#[utoipa::path(get, path = "/staff/organizations", tag = "staff", params(StaffOrganizationSearch),
    security(("staff_session" = [])),
    description = "Organizations whose name contains `q`, that watch the domain `q`, or that the \
person with address `q` belongs to (every organization without `q`), by name, at most 200.",
    responses((status = 200, body = StaffOrganizationList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody)))]
pub async fn staff_search_organizations(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Query(params): Query<StaffOrganizationSearch>,
) -> Result<axum::Json<StaffOrganizationList>, ApiError> {
    let found = organizations::search(&app, &staff, params.q.as_deref()).await?;
    Ok(axum::Json(found))
}

/// Suspends an organization.
#[utoipa::path(post, path = "/staff/organizations/{id}/suspend", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id")),
    request_body = SuspendRequest, security(("staff_session" = [])),
    description = "From now on the organization is not swept, billed (its subscription's \
collection is paused at the payment provider within a minute, Stripe's \
`pause_collection[behavior]=void`, and resumed when lifted; its quantities are not reported \
meanwhile) or mailed, and its API answers reads only: every change is 403 \
`organization_suspended` quoting `reason`, and its assistants read as viewers. Separate from the \
customer's own `is_active`. Idempotent (a suspended organization keeps its first reason). \
Recorded in its activity log as `organization.suspended` by `SERVICE_STAFF`.",
    responses((status = 200, body = StaffOrganization), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_suspend(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    PathId(id): PathId,
    Json(body): Json<SuspendRequest>,
) -> Result<axum::Json<StaffOrganization>, ApiError> {
    let org = organizations::suspend(&app, &staff, id, &body.reason).await?;
    Ok(axum::Json(org))
}

/// Starts an organization's deletion.
#[utoipa::path(post, path = "/staff/organizations/{id}/delete", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id")),
    request_body = SuspendRequest, security(("staff_session" = [])),
    description = "Staff start the deletion of an organization (with a `reason`, 1 to 500 \
characters), suspended or not: from this commit on every credential of it is refused, and the \
same purge as `DELETE /organizations/{id}` removes everything of it. Recorded as \
`organization.deletion_requested` by `SERVICE_STAFF`. 202; repeating it while the purge runs \
changes nothing.",
    responses((status = 202), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn staff_delete_organization(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    PathId(id): PathId,
    Json(body): Json<SuspendRequest>,
) -> Result<axum::http::StatusCode, ApiError> {
    organizations::delete(&app, &staff, id, &body.reason).await?;
    Ok(axum::http::StatusCode::ACCEPTED)
}

/// Lifts a suspension.
#[utoipa::path(post, path = "/staff/organizations/{id}/unsuspend", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id")),
    security(("staff_session" = [])),
    description = "Ends the suspension (idempotent); recorded as `organization.suspension_lifted`.",
    responses((status = 200, body = StaffOrganization), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn staff_unsuspend(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    PathId(id): PathId,
) -> Result<axum::Json<StaffOrganization>, ApiError> {
    Ok(axum::Json(organizations::lift(&app, &staff, id).await?))
}

/// The support queue.
#[utoipa::path(get, path = "/staff/tickets", tag = "staff", params(StaffTicketQuery),
    security(("staff_session" = [])),
    description = "Tickets of every organization by `status` (open by default), the longest \
untouched first, with `unread_count` (staff replies the organization has not read). Paged by \
`cursor` (`next_cursor` of the previous page) and `limit` (1-100, default 50).",
    responses((status = 200, body = StaffTicketList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody)))]
pub async fn staff_ticket_queue(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Query(params): Query<StaffTicketQuery>,
) -> Result<axum::Json<StaffTicketList>, ApiError> {
    Ok(axum::Json(tickets::queue(&app, &staff, params).await?))
}

/// One ticket with its messages.
#[utoipa::path(get, path = "/staff/organizations/{id}/tickets/{ticket_id}", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id"),
        ("ticket_id" = uuid::Uuid, Path, description = "Ticket id")),
    security(("staff_session" = [])),
    responses((status = 200, body = StaffTicket), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_read_ticket(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path((org, ticket)): Path<(String, String)>,
) -> Result<axum::Json<StaffTicket>, ApiError> {
    let (org, ticket) = (path_uuid(&org, "id")?, path_uuid(&ticket, "ticket_id")?);
    Ok(axum::Json(tickets::read(&app, &staff, org, ticket).await?))
}

/// Replies to a ticket.
#[utoipa::path(post, path = "/staff/organizations/{id}/tickets/{ticket_id}/reply", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id"),
        ("ticket_id" = uuid::Uuid, Path, description = "Ticket id")),
    request_body = StaffReplyRequest, security(("staff_session" = [])),
    description = "A reply from Mailward support (`SERVICE_STAFF`), unread for the organization \
until a member reads the ticket; `close` closes the ticket with it. `attachments`: up to 5 keys \
uploaded with this ticket's staff upload form. Recorded in the organization's activity log as \
`support.replied`.",
    responses((status = 201, body = TicketMessage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn staff_reply(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path((org, ticket)): Path<(String, String)>,
    Json(body): Json<StaffReplyRequest>,
) -> Result<(axum::http::StatusCode, axum::Json<TicketMessage>), ApiError> {
    let (org, ticket) = (path_uuid(&org, "id")?, path_uuid(&ticket, "ticket_id")?);
    let message = tickets::reply(&app, &staff, org, ticket, body).await?;
    Ok((axum::http::StatusCode::CREATED, axum::Json(message)))
}

/// An upload form for a reply's attachment.
#[utoipa::path(post, path = "/staff/organizations/{id}/tickets/{ticket_id}/presigned-url", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Organization id"),
        ("ticket_id" = uuid::Uuid, Path, description = "Ticket id")),
    request_body = PresignRequest, security(("staff_session" = [])),
    description = "As `POST /support/presigned-url` (images and PDF, up to 10 MB), under the \
organization's support prefix, for a staff reply on this ticket.",
    responses((status = 200, body = PresignedUpload), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_presign(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path((org, ticket)): Path<(String, String)>,
    Json(body): Json<PresignRequest>,
) -> Result<axum::Json<PresignedUpload>, ApiError> {
    let (org, ticket) = (path_uuid(&org, "id")?, path_uuid(&ticket, "ticket_id")?);
    Ok(axum::Json(
        tickets::presign(&app, &staff, org, ticket, body).await?,
    ))
}

/// One source with its curation.
#[utoipa::path(get, path = "/staff/sources/{id}", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    security(("staff_session" = [])),
    description = "The source as `GET /sources/{id}` answers it, with `instructions_curation`: per kind (`dkim`, `spf`; `dkim-next`/`spf-next` while a newer proposal waits beside an approved one) the proposal, its provenance, status PENDING|APPROVED|REJECTED, `reviewed_at` and `reviewed_by`. Only staff see it (the `sources:update` permission is theirs alone).",
    responses((status = 200, body = mailward_api_types::sources::SourceView),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_source(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    PathId(id): PathId,
) -> Result<axum::Json<mailward_api_types::sources::SourceView>, ApiError> {
    Ok(axum::Json(
        mailward_staff::sources::get(&app, &staff, id).await?,
    ))
}

/// Proposes instructions for a source.
#[utoipa::path(post, path = "/staff/sources/{id}/proposals", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Source id")),
    request_body = ProposalRequest, security(("staff_session" = [])),
    description = "Records DKIM or SPF setup instructions (`kind`) with their provenance (`doc_url`, `doc_title`, `doc_discovered`, `model` when a tool wrote them, `confidence` 0-1, `critic_notes`, `generated_at`), PENDING until staff review them. Customers keep seeing the instructions in force.",
    responses((status = 200, body = mailward_api_types::sources::SourceView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_propose(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    PathId(id): PathId,
    Json(body): Json<ProposalRequest>,
) -> Result<axum::Json<mailward_api_types::sources::SourceView>, ApiError> {
    Ok(axum::Json(
        mailward_staff::sources::propose(&app, &staff, id, body).await?,
    ))
}

/// Approves the pending proposal of one kind.
#[utoipa::path(post, path = "/staff/sources/{id}/curation/{kind}/approve", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Source id"),
        ("kind" = String, Path, description = "dkim or spf")),
    security(("staff_session" = [])),
    description = "Publishes the pending proposal as the source's instructions for everyone (`GET /sources/{id}`, its `updated_at` the review time); records `reviewed_at` and `reviewed_by`. 409 when nothing waits for review.",
    responses((status = 200, body = mailward_api_types::sources::SourceView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn staff_approve(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path((id, kind)): Path<(String, String)>,
) -> Result<axum::Json<mailward_api_types::sources::SourceView>, ApiError> {
    let id = path_uuid(&id, "id")?;
    Ok(axum::Json(
        mailward_staff::sources::review(&app, &staff, id, &kind, true).await?,
    ))
}

/// Rejects the pending proposal of one kind.
#[utoipa::path(post, path = "/staff/sources/{id}/curation/{kind}/reject", tag = "staff",
    params(("id" = uuid::Uuid, Path, description = "Source id"),
        ("kind" = String, Path, description = "dkim or spf")),
    security(("staff_session" = [])),
    description = "Marks the pending proposal REJECTED (the instructions in force stay). 409 when nothing waits for review.",
    responses((status = 200, body = mailward_api_types::sources::SourceView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn staff_reject(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path((id, kind)): Path<(String, String)>,
) -> Result<axum::Json<mailward_api_types::sources::SourceView>, ApiError> {
    let id = path_uuid(&id, "id")?;
    Ok(axum::Json(
        mailward_staff::sources::review(&app, &staff, id, &kind, false).await?,
    ))
}

/// Candidates for the catalogue.
#[utoipa::path(get, path = "/staff/candidates", tag = "staff", params(CandidateQuery),
    security(("staff_session" = [])),
    description = "Senders seen in aggregate reports that no catalogue source identifies, named \
by the registrable domain of their PTR name, envelope domain or DKIM signer (never a customer's \
own domain), summed across organizations, most messages first: how many organizations and \
domains show it, its volume within each organization's retention, the envelope domains, DKIM \
domains and PTR names seen, and the days. Which organizations is never shown. Every sender \
identification (after each import) rewrites its domain's evidence. `status` PENDING_REVIEW (the \
default), ACTIVE (promoted) or REJECTED. Customers never see candidates.",
    responses((status = 200, body = CandidateList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody)))]
pub async fn staff_candidates(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Query(query): Query<CandidateQuery>,
) -> Result<axum::Json<CandidateList>, ApiError> {
    Ok(axum::Json(
        mailward_staff::candidates::list(&app, &staff, query).await?,
    ))
}

/// One candidate.
#[utoipa::path(get, path = "/staff/candidates/{name}", tag = "staff",
    params(("name" = String, Path, description = "The candidate's domain")),
    security(("staff_session" = [])),
    description = "One candidate with its evidence and review (`reviewed_at`, `reviewed_by`, \
`source_id` once promoted).",
    responses((status = 200, body = Object), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn staff_candidate(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path(name): Path<String>,
) -> Result<axum::Json<mailward_api_types::staff::StaffCandidate>, ApiError> {
    Ok(axum::Json(
        mailward_staff::candidates::get(&app, &staff, &name).await?,
    ))
}

/// Promotes a candidate to the catalogue.
#[utoipa::path(post, path = "/staff/candidates/{name}/promote", tag = "staff",
    params(("name" = String, Path, description = "The candidate's domain")),
    request_body = PromoteRequest, security(("staff_session" = [])),
    description = "Adds an ACTIVE catalogue source (origin `PROMOTED`, its id the UUID v5 of \
`external_id`) recognised by the candidate's domain (`base_domains`) and the envelope domains \
seen outside it (`envelope_froms`), then identifies again the senders of every domain that \
evidenced it: their unknown sender becomes this source. Everyone sees the source in `GET \
/sources`. 409 when the candidate was already reviewed or the `external_id` is taken.",
    responses((status = 200, body = mailward_api_types::sources::SourceView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn staff_promote_candidate(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path(name): Path<String>,
    Json(body): Json<PromoteRequest>,
) -> Result<axum::Json<mailward_api_types::sources::SourceView>, ApiError> {
    Ok(axum::Json(
        mailward_staff::candidates::promote(&app, &staff, &name, body).await?,
    ))
}

/// Rejects a candidate.
#[utoipa::path(post, path = "/staff/candidates/{name}/reject", tag = "staff",
    params(("name" = String, Path, description = "The candidate's domain")),
    security(("staff_session" = [])),
    description = "Takes the candidate out of the review queue (`status` REJECTED; its evidence \
keeps being counted). 409 when it was already reviewed.",
    responses((status = 200, body = Object), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn staff_reject_candidate(
    State(app): State<AppState>,
    StaffPrincipal(staff): StaffPrincipal,
    Path(name): Path<String>,
) -> Result<axum::Json<mailward_api_types::staff::StaffCandidate>, ApiError> {
    Ok(axum::Json(
        mailward_staff::candidates::reject(&app, &staff, &name).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(staff_session))
        .routes(utoipa_axum::routes!(staff_search_organizations))
        .routes(utoipa_axum::routes!(staff_suspend))
        .routes(utoipa_axum::routes!(staff_unsuspend))
        .routes(utoipa_axum::routes!(staff_delete_organization))
        .routes(utoipa_axum::routes!(staff_ticket_queue))
        .routes(utoipa_axum::routes!(staff_read_ticket))
        .routes(utoipa_axum::routes!(staff_reply))
        .routes(utoipa_axum::routes!(staff_presign))
        .routes(utoipa_axum::routes!(staff_source))
        .routes(utoipa_axum::routes!(staff_propose))
        .routes(utoipa_axum::routes!(staff_approve))
        .routes(utoipa_axum::routes!(staff_reject))
        .routes(utoipa_axum::routes!(staff_candidates))
        .routes(utoipa_axum::routes!(staff_candidate))
        .routes(utoipa_axum::routes!(staff_promote_candidate))
        .routes(utoipa_axum::routes!(staff_reject_candidate))
}
