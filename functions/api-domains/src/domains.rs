//! Domains (SPEC §2.1, §4.1): create, list, read, update and delete.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::domains::{
    CreateDomainRequest, Domain, DomainList, ExpandParams, ListDomainsParams, UpdateDomainRequest,
};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains;

/// Adds a domain.
#[utoipa::path(post, path = "/domains", tag = "domains", request_body = CreateDomainRequest,
    description = "Editors, administrators or read-write keys. `url` is normalised (trimmed, \
lower-cased, IDNA, trailing dot and any pasted scheme or path removed). A name the organization \
already watches answers 409 `domain_exists` (param `url`); a `group_id` of no group of the \
organization answers 400 naming `group_id`; a member limited to groups must give one of its \
groups. Emits `domain.created`. The domain is \
evaluated at once by a queued monitoring job, so its status and score are real within seconds.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = Domain), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_domain(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateDomainRequest>,
) -> Result<(StatusCode, axum::Json<Domain>), ApiError> {
    let domain = domains::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(domain)))
}

/// Lists the organization's domains.
#[utoipa::path(get, path = "/domains", tag = "domains", params(ListDomainsParams),
    description = "Filters: `monitoring_status`, `dmarc_policy`, `group_id`, and true|false \
filters on the Domain flags `is_parked`, `is_dmarc_managed`, `is_spf_managed`, `is_dkim_managed`, \
`is_bimi_managed` and `is_mta_sts_managed` (the managed filters test the value the Domain shows; \
Mailward hosts no records yet, so `true` matches nothing and `false` everything). Unknown query \
parameters are ignored, as on every list route. `sort` (default created_at) and `order` (default \
desc). `severity` orders by the most severe open ticket's priority, then ticket count, with \
ticketless domains last under desc and first under asc; `status` keeps configured domains \
(monitoring `setup` or `drifted`) before the others in both directions, with severity ordering \
inside each group. Ties break by name. `expand[]=group` adds the group object (null when \
ungrouped), `expand[]=tasks` the open work. A member limited to groups sees only their domains, \
here and on every per-domain route (others answer 404).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DomainList), (status = 400, body = ErrorBody)))]
pub async fn list_domains(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ListDomainsParams>,
) -> Result<axum::Json<DomainList>, ApiError> {
    Ok(axum::Json(domains::list(&app, &principal, &params).await?))
}

/// One domain.
#[utoipa::path(get, path = "/domains/{id}", tag = "domains", params(("id" = uuid::Uuid, Path, description = "Domain id"), ExpandParams),
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Domain), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_domain(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ExpandParams>,
) -> Result<axum::Json<Domain>, ApiError> {
    Ok(axum::Json(
        domains::get(&app, &principal, id, &params.expand).await?,
    ))
}

/// Updates a domain.
#[utoipa::path(post, path = "/domains/{id}", tag = "domains", request_body = UpdateDomainRequest,
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys. `dmarc_options` and `spf_options` are \
replaced whole and validated (addresses, at most 20 per list; `pct` 0-100: below 100 Mailward \
publishes `t=y`, RFC 9989's replacement of `pct`). `spf_options.mechanism_descriptions` holds at \
most 50 entries, keys 1-255 and values at most 500 characters (Unicode scalar values), no control \
characters; a violation answers 400 naming `spf_options.mechanism_descriptions`. `target_spf` \
must parse as an SPF record. A change to the record a purpose expects (`dmarc_options` for \
dmarc; `spf_options.enabled`, `spf_options.force_flattening` or `target_spf` for spf; \
`bimi_options` for bimi; `is_parked`, which locks the plan down, for dmarc, spf and dkim) \
withdraws that purpose's earlier verification in the same write, so the records guidance shows \
the old live record as `replace`/`verifying` until it is verified again rather than `drifted`; \
sending unchanged values withdraws nothing. A concurrent change by another request to a \
field a person sets (group, parking, options, `target_spf`, `dmarc_setup_at`) answers 409 \
`conflict` and applies nothing; the service's own writes meanwhile (the monitoring sweep, a \
verification) are not conflicts: the change is applied on top of them. Emits `domain.updated` with `previous_attributes`.

**Hosted SPF** (`spf_options.enabled`): Mailward serves the domain's senders, resolved into `ip4:`/`ip6:` networks, at `<owner>._spf.<hosted zone>` (chained as `s2.`, `s3.`… when longer than 450 octets), and the domain publishes one record that includes it: the records guidance and `GET /domains/{id}/spf` (`hosted_spf.record`) give it verbatim. What is flattened is `target_spf` when set, else the domain's SPF record as it was when hosting began (our include left out) merged with its confirmed senders' includes. Without `force_flattening`, includes are flattened most expensive first only until the whole evaluation fits the 10-lookup limit; with it every flattenable include is. Includes whose tree uses macros, `exists`, `ptr`, non-pass terms or `+all`, or has no record, are served as themselves; mechanisms whose meaning depends on the domain (macros, `exists`, `ptr`, qualifiers other than `+`) stay in the domain's own record in front of the include. Turning it on or changing `force_flattening`/`target_spf` while on flattens and publishes first: a sender's record that does not answer gives 503 `spf_flattening_failed`, a zone that refuses gives 503 `publish_failed`, and nothing is stored. `managed_dns_status.spf` is `syncing` until live DNS shows the include, then `ready`; `error` with `drift` (include removed after working), `setup_timeout`, `record_conflict` (several SPF records) or `publish_failed`. The hourly reconciliation re-flattens, records which sender's ranges changed and moves the state. Turning it off withdraws the served records.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Domain), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn update_domain(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateDomainRequest>,
) -> Result<axum::Json<Domain>, ApiError> {
    Ok(axum::Json(
        domains::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes a domain.
#[utoipa::path(delete, path = "/domains/{id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys. Emits `domain.deleted` carrying the \
domain as it was just before removal. The domain's DNS snapshots are removed with it (in the same \
write when they fit, the remainder right after, best effort).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_domain(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    domains::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_domains, create_domain))
        .routes(utoipa_axum::routes!(
            get_domain,
            update_domain,
            delete_domain
        ))
}
