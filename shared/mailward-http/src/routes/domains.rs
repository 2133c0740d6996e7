//! Domains (SPEC §2.1, §4.1): create, list, read, update and delete (bulk add is in
//! [`super::domains_bulk`]). Monitoring state,
//! score and the records guidance come from the sweep and the records endpoints (a later slice);
//! a new domain starts with `monitoring_status` `none` and `score` 0 (or the score of a stored
//! activation scan with `use_stored_scan`).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, PathId, Query};
use crate::pagination::PageParams;
use crate::repo::outbox::OutboxEvent;
use crate::repo::{Versioned, domains, keys};
use crate::routes::dns_quota::normalize_domain;
use crate::state::AppState;
use crate::views::{ErrorBody, PageInfo};
use crate::views_domain::{self, BimiOptionsView, DmarcOptionsView, SpfOptionsView, domain_view};
use axum::extract::State;
use axum::http::StatusCode;
use mailward_domain::domain::{
    BimiOptions, DmarcOptions, Domain, MonitoringStatus, Policy, SpfOptions, normalize_domain_name,
};
use mailward_domain::email::EmailAddress;
use mailward_domain::store::StoreError;
use mailward_plan::Purpose;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// Accepts `example.com`, `Example.COM.`, `https://example.com/path` and IDNs; returns the
/// normalised ASCII name or 400 naming `param`.
fn parse_domain_name(param: &'static str, raw: &str) -> Result<String, ApiError> {
    let trimmed = raw.trim();
    let without_scheme = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .unwrap_or(trimmed);
    let host = without_scheme.split(['/', '?', '#']).next().unwrap_or("");
    let ascii = normalize_domain(param, host)?;
    normalize_domain_name(&ascii).ok_or_else(|| {
        ApiError::invalid_param(
            param,
            format!("{param} must be a domain name such as example.com"),
        )
    })
}

/// `POST /domains` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDomainRequest {
    /// The domain name (a pasted URL is reduced to its host).
    pub url: String,
    /// A group of the organization.
    pub group_id: Option<Uuid>,
    /// Seed the score and parked flag from the stored activation scan of this domain.
    #[serde(default)]
    pub use_stored_scan: bool,
}

async fn check_group(
    state: &AppState,
    principal: &Principal,
    group: Option<Uuid>,
) -> Result<(), ApiError> {
    let Some(group) = group else { return Ok(()) };
    let found = state
        .store
        .get(
            &keys::org_pk(principal.org_id),
            &format!("GROUP#{group}"),
            true,
        )
        .await?;
    if found.is_none() {
        return Err(ApiError::invalid_param(
            "group_id",
            "group_id names no group of this organization",
        ));
    }
    Ok(())
}

fn conflict_exists(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "domain_exists",
        format!("{name} is already a domain of this organization"),
    )
    .param("url")
}

async fn stored_scan(state: &AppState, name: &str) -> Result<Option<(u8, bool)>, ApiError> {
    let Some(item) = state
        .store
        .get(
            &keys::activation_scan_pk(name),
            keys::ACTIVATION_SCAN_SK,
            false,
        )
        .await?
    else {
        return Ok(None);
    };
    let scan: serde_json::Value = crate::repo::decode(&item)?;
    let score = scan["summary"]["score"]
        .as_u64()
        .and_then(|s| u8::try_from(s).ok());
    let parked = scan["summary"]["parked"].as_bool().unwrap_or(false);
    Ok(score.map(|s| (s.min(100), parked)))
}

/// Creates one domain: validation, uniqueness, event. Shared by the single and bulk routes.
pub(crate) async fn create_one(
    state: &AppState,
    principal: &Principal,
    request: CreateDomainRequest,
) -> Result<Domain, ApiError> {
    let name = parse_domain_name("url", &request.url)?;
    check_group(state, principal, request.group_id).await?;
    if domains::name_taken(state.store.as_ref(), principal.org_id, &name).await? {
        return Err(conflict_exists(&name));
    }
    let now = state.clock.now();
    let (score, is_parked) = if request.use_stored_scan {
        stored_scan(state, &name).await?.unwrap_or((0, false))
    } else {
        (0, false)
    };
    let domain = Domain {
        id: Uuid::new_v4(),
        org_id: principal.org_id,
        url: name.clone(),
        group_id: request.group_id,
        is_parked,
        dmarc_options: DmarcOptions::default(),
        spf_options: SpfOptions::default(),
        bimi_options: BimiOptions::default(),
        target_spf: None,
        dmarc_policy: Policy::None,
        monitoring_status: MonitoringStatus::None,
        monitoring_failure_reason: None,
        monitoring_failure_detail: None,
        score,
        registrar: None,
        dmarc_setup_at: None,
        dmarc_verified_at: None,
        last_checked_at: None,
        next_check_at: Some(now),
        sweep_claimed_until: None,
        pending_since: None,
        consecutive_indeterminate: 0,
        verified_purposes: Vec::new(),
        dkim_selectors_seen: Vec::new(),
        dkim_full_probe_at: None,
        dns_conflicts: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    let view =
        serde_json::to_value(domain_view(&domain, &state.config)).map_err(ApiError::internal)?;
    let mut ops = domains::create_ops(&domain)?;
    ops.push(OutboxEvent::new("domain.created", domain.org_id, now, view, None).write_op()?);
    match state.store.transact(ops).await {
        Ok(()) => Ok(domain),
        Err(StoreError::TransactionCanceled { .. }) => Err(conflict_exists(&name)),
        Err(e) => Err(e.into()),
    }
}

/// Adds a domain.
#[utoipa::path(post, path = "/domains", tag = "domains", request_body = CreateDomainRequest,
    description = "Editors, administrators or read-write keys. `url` is normalised (trimmed, \
lower-cased, IDNA, trailing dot and any pasted scheme or path removed). A name the organization \
already watches answers 409 `domain_exists` (param `url`); a `group_id` of no group of the \
organization answers 400 naming `group_id`. Emits `domain.created`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = views_domain::Domain), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create_domain(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateDomainRequest>,
) -> Result<(StatusCode, axum::Json<views_domain::Domain>), ApiError> {
    principal.require_write()?;
    let domain = create_one(&state, &principal, body).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(domain_view(&domain, &state.config)),
    ))
}

/// `GET /domains` parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListDomainsParams {
    /// 1-based page (default 1).
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    pub per_page: Option<u32>,
    /// Filter: none, pending, setup, drifted or failed.
    pub monitoring_status: Option<String>,
    /// Filter: none, quarantine or reject (the policy observed in DNS).
    pub dmarc_policy: Option<String>,
    /// Filter: true or false.
    pub is_parked: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the DMARC record).
    pub is_dmarc_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the SPF record).
    pub is_spf_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the DKIM records).
    pub is_dkim_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts the BIMI record).
    pub is_bimi_managed: Option<bool>,
    /// Filter: true or false (whether Mailward hosts MTA-STS).
    pub is_mta_sts_managed: Option<bool>,
    /// Filter: a group id.
    pub group_id: Option<Uuid>,
    /// created_at (default), url, monitoring_status, dmarc_policy, score, last_14_days_volume,
    /// last_14_days_dmarc_pass_pct, last_14_days_spf_pass_pct, last_14_days_dkim_pass_pct,
    /// open_tasks_count, severity, status or group.
    pub sort: Option<String>,
    /// desc (default) or asc.
    pub order: Option<String>,
    /// group and/or tasks.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]")]
    pub expand: Vec<String>,
}

/// Parsed expansions.
#[derive(Debug, Default, Clone, Copy)]
struct Expand {
    group: bool,
    tasks: bool,
}

fn parse_expand(values: &[String]) -> Result<Expand, ApiError> {
    let mut expand = Expand::default();
    for value in values {
        match value.as_str() {
            "group" => expand.group = true,
            "tasks" => expand.tasks = true,
            _ => {
                return Err(ApiError::invalid_param(
                    "expand[]",
                    "expand[] accepts group and tasks",
                ));
            }
        }
    }
    Ok(expand)
}

fn expanded(domain: &Domain, state: &AppState, expand: Expand) -> views_domain::Domain {
    let mut view = domain_view(domain, &state.config);
    if expand.group {
        // Groups are not built yet, so no domain can belong to one: the expansion is null.
        view.group = Some(serde_json::Value::Null);
    }
    if expand.tasks {
        // Tasks are not built yet: no open task exists.
        view.tasks = Some(Vec::new());
    }
    view
}

fn parse_enum<T: for<'de> Deserialize<'de>>(
    param: &'static str,
    raw: &str,
    allowed: &str,
) -> Result<T, ApiError> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned()))
        .map_err(|_| ApiError::invalid_param(param, format!("{param} must be one of {allowed}")))
}

const SORT_KEYS: &[&str] = &[
    "created_at",
    "url",
    "monitoring_status",
    "dmarc_policy",
    "score",
    "last_14_days_volume",
    "last_14_days_dmarc_pass_pct",
    "last_14_days_spf_pass_pct",
    "last_14_days_dkim_pass_pct",
    "open_tasks_count",
    "severity",
    "status",
    "group",
];

/// Reads one `is_*_managed` flag of a Domain view.
type ManagedFlag = fn(&views_domain::Domain) -> bool;

impl ListDomainsParams {
    /// The `is_*_managed` filters paired with the flag of the Domain view each one tests.
    fn managed_filters(&self) -> [(Option<bool>, ManagedFlag); 5] {
        [
            (self.is_dmarc_managed, |v| v.is_dmarc_managed),
            (self.is_spf_managed, |v| v.is_spf_managed),
            (self.is_dkim_managed, |v| v.is_dkim_managed),
            (self.is_bimi_managed, |v| v.is_bimi_managed),
            (self.is_mta_sts_managed, |v| v.is_mta_sts_managed),
        ]
    }

    /// Whether the domain passes the `is_*_managed` filters. They test the flags exactly as the
    /// Domain view shows them, so a filter and the listed values never disagree.
    fn managed_match(&self, domain: &Domain, state: &AppState) -> bool {
        let filters = self.managed_filters();
        if filters.iter().all(|(wanted, _)| wanted.is_none()) {
            return true;
        }
        let view = domain_view(domain, &state.config);
        filters
            .iter()
            .all(|(wanted, flag)| wanted.is_none_or(|w| w == flag(&view)))
    }
}

/// Ticket severity: (priority of the most severe open task, open task count). Domains without
/// tickets have none; tasks are not built yet, so every domain has none today.
fn severity_key(_domain: &Domain) -> Option<(u8, u32)> {
    None
}

/// `severity` ordering: ticketed domains by priority (0 critical first) then count (more first)
/// under desc, reversed under asc; domains without tickets last under desc and first under asc.
fn compare_severity(a: &Domain, b: &Domain, descending: bool) -> Ordering {
    match (severity_key(a), severity_key(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => {
            if descending {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Some(_), None) => {
            if descending {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (Some((pa, ca)), Some((pb, cb))) => {
            let most_severe_first = pa.cmp(&pb).then(cb.cmp(&ca));
            if descending {
                most_severe_first
            } else {
                most_severe_first.reverse()
            }
        }
    }
}

fn sort_domains(list: &mut [Domain], sort: &str, descending: bool) {
    let directed = |o: Ordering| if descending { o.reverse() } else { o };
    list.sort_by(|a, b| {
        let primary = match sort {
            "url" => directed(a.url.cmp(&b.url)),
            "monitoring_status" => {
                directed(status_rank(a.monitoring_status).cmp(&status_rank(b.monitoring_status)))
            }
            "dmarc_policy" => directed(a.dmarc_policy.cmp(&b.dmarc_policy)),
            "score" => directed(a.score.cmp(&b.score)),
            // Report volumes and task counts are zero until reports and tasks exist.
            "last_14_days_volume"
            | "last_14_days_dmarc_pass_pct"
            | "last_14_days_spf_pass_pct"
            | "last_14_days_dkim_pass_pct"
            | "open_tasks_count" => Ordering::Equal,
            "severity" => compare_severity(a, b, descending),
            // Configured domains (monitoring set up) come before the ones still in monitoring or
            // setup states, in both directions; severity orders each group.
            "status" => {
                let configured = |d: &Domain| !views_domain::is_configured(d.monitoring_status);
                configured(a)
                    .cmp(&configured(b))
                    .then_with(|| compare_severity(a, b, descending))
            }
            "group" => directed(a.group_id.cmp(&b.group_id)),
            _ => directed(a.created_at.cmp(&b.created_at)),
        };
        primary
            .then_with(|| a.url.cmp(&b.url))
            .then_with(|| a.id.cmp(&b.id))
    });
}

fn status_rank(status: MonitoringStatus) -> u8 {
    match status {
        MonitoringStatus::None => 0,
        MonitoringStatus::Pending => 1,
        MonitoringStatus::Setup => 2,
        MonitoringStatus::Drifted => 3,
        MonitoringStatus::Failed => 4,
    }
}

/// A page of domains.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DomainList {
    pub data: Vec<views_domain::Domain>,
    pub page_info: PageInfo,
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
inside each group. Ties break by name. `expand[]=group|tasks`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DomainList), (status = 400, body = ErrorBody)))]
pub async fn list_domains(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<ListDomainsParams>,
) -> Result<axum::Json<DomainList>, ApiError> {
    let expand = parse_expand(&params.expand)?;
    let status: Option<MonitoringStatus> = params
        .monitoring_status
        .as_deref()
        .map(|s| {
            parse_enum(
                "monitoring_status",
                s,
                "none, pending, setup, drifted, failed",
            )
        })
        .transpose()?;
    let policy: Option<Policy> = params
        .dmarc_policy
        .as_deref()
        .map(|s| parse_enum("dmarc_policy", s, "none, quarantine, reject"))
        .transpose()?;
    let sort = params.sort.as_deref().unwrap_or("created_at");
    if !SORT_KEYS.contains(&sort) {
        return Err(ApiError::invalid_param(
            "sort",
            format!("sort must be one of {}", SORT_KEYS.join(", ")),
        ));
    }
    let descending = match params.order.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(_) => {
            return Err(ApiError::invalid_param(
                "order",
                "order must be asc or desc",
            ));
        }
    };
    let mut list: Vec<Domain> = domains::list(state.store.as_ref(), principal.org_id)
        .await?
        .into_iter()
        .filter(|d| status.is_none_or(|s| d.monitoring_status == s))
        .filter(|d| policy.is_none_or(|p| d.dmarc_policy == p))
        .filter(|d| params.is_parked.is_none_or(|p| d.is_parked == p))
        .filter(|d| params.managed_match(d, &state))
        .filter(|d| params.group_id.is_none_or(|g| d.group_id == Some(g)))
        .collect();
    sort_domains(&mut list, sort, descending);
    let (page, page_info) = PageParams {
        page: params.page,
        per_page: params.per_page,
    }
    .paginate(list)?;
    Ok(axum::Json(DomainList {
        data: page.iter().map(|d| expanded(d, &state, expand)).collect(),
        page_info,
    }))
}

/// `expand[]` on a single read.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExpandParams {
    /// group and/or tasks.
    #[serde(rename = "expand[]", default)]
    #[param(rename = "expand[]")]
    pub expand: Vec<String>,
}

pub(crate) async fn load(
    state: &AppState,
    principal: &Principal,
    id: Uuid,
) -> Result<Versioned<Domain>, ApiError> {
    domains::get(state.store.as_ref(), principal.org_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("domain"))
}

/// One domain.
#[utoipa::path(get, path = "/domains/{id}", tag = "domains", params(("id" = uuid::Uuid, Path, description = "Domain id"), ExpandParams),
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = views_domain::Domain), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_domain(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ExpandParams>,
) -> Result<axum::Json<views_domain::Domain>, ApiError> {
    let expand = parse_expand(&params.expand)?;
    let domain = load(&state, &principal, id).await?;
    Ok(axum::Json(expanded(&domain.value, &state, expand)))
}

/// `POST /domains/{id}` body: any subset.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDomainRequest {
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<Uuid>, nullable)]
    pub group_id: Option<Option<Uuid>>,
    pub is_parked: Option<bool>,
    pub dmarc_options: Option<DmarcOptionsView>,
    pub spf_options: Option<SpfOptionsView>,
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable, format = "date-time")]
    pub dmarc_setup_at: Option<Option<String>>,
    /// The SPF record the domain should publish (must parse as `v=spf1`), or null.
    #[serde(default, deserialize_with = "crate::extract::double_option")]
    #[schema(value_type = Option<String>, nullable)]
    pub target_spf: Option<Option<String>>,
    pub bimi_options: Option<BimiOptionsView>,
    /// Tasks are not built yet: only `false` is accepted.
    pub backfill_tickets: Option<bool>,
}

fn validate_emails(param: &'static str, emails: &[String]) -> Result<Vec<String>, ApiError> {
    if emails.len() > 20 {
        return Err(ApiError::invalid_param(
            param,
            format!("{param} holds at most 20 addresses"),
        ));
    }
    emails
        .iter()
        .map(|e| EmailAddress::parse(e).map(|e| e.as_str().to_owned()))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ApiError::invalid_param(param, format!("{param} must hold valid email addresses"))
        })
}

/// Most entries `spf_options.mechanism_descriptions` may hold.
pub const MAX_MECHANISM_DESCRIPTIONS: usize = 50;
/// Longest mechanism (key) in `spf_options.mechanism_descriptions`, in characters.
pub const MAX_MECHANISM_CHARS: usize = 255;
/// Longest description (value) in `spf_options.mechanism_descriptions`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;

/// Bounds `spf_options.mechanism_descriptions`: at most [`MAX_MECHANISM_DESCRIPTIONS`] entries,
/// keys of 1 to [`MAX_MECHANISM_CHARS`] characters, values of at most [`MAX_DESCRIPTION_CHARS`],
/// and no control characters in either.
fn validate_mechanism_descriptions(
    descriptions: Option<BTreeMap<String, String>>,
) -> Result<Option<BTreeMap<String, String>>, ApiError> {
    const PARAM: &str = "spf_options.mechanism_descriptions";
    let Some(descriptions) = descriptions else {
        return Ok(None);
    };
    let invalid = |message: String| Err(ApiError::invalid_param(PARAM, message));
    if descriptions.len() > MAX_MECHANISM_DESCRIPTIONS {
        return invalid(format!(
            "{PARAM} holds at most {MAX_MECHANISM_DESCRIPTIONS} entries"
        ));
    }
    for (mechanism, description) in &descriptions {
        if mechanism.trim().is_empty() || mechanism.chars().count() > MAX_MECHANISM_CHARS {
            return invalid(format!(
                "{PARAM} keys must be 1 to {MAX_MECHANISM_CHARS} characters"
            ));
        }
        if description.chars().count() > MAX_DESCRIPTION_CHARS {
            return invalid(format!(
                "{PARAM} values must be at most {MAX_DESCRIPTION_CHARS} characters"
            ));
        }
        if mechanism
            .chars()
            .chain(description.chars())
            .any(char::is_control)
        {
            return invalid(format!("{PARAM} must not contain control characters"));
        }
    }
    Ok(Some(descriptions))
}

/// The record purposes whose expected record changed between `before` and `after`: an earlier
/// verification no longer vouches for them, so the live record reads as needing a `replace`
/// (status `verifying`) rather than `drifted`. SPF notes (`mechanism_descriptions`) are not part
/// of the record and do not count; parking locks DMARC, SPF and DKIM down, so a change of
/// `is_parked` counts for those three.
fn purposes_to_reverify(before: &Domain, after: &Domain) -> Vec<&'static str> {
    let spf_record = |d: &Domain| {
        (
            d.spf_options.enabled,
            d.spf_options.force_flattening,
            d.target_spf.clone(),
        )
    };
    let parking = before.is_parked != after.is_parked;
    [
        (
            Purpose::Dmarc,
            parking || before.dmarc_options != after.dmarc_options,
        ),
        (
            Purpose::Spf,
            parking || spf_record(before) != spf_record(after),
        ),
        (Purpose::Dkim, parking),
        (Purpose::Bimi, before.bimi_options != after.bimi_options),
    ]
    .into_iter()
    .filter(|(_, changed)| *changed)
    .map(|(purpose, _)| purpose.as_str())
    .collect()
}

fn validate_https(param: &'static str, raw: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    let url = url::Url::parse(raw.trim())
        .map_err(|_| ApiError::invalid_param(param, format!("{param} must be an https URL")))?;
    if url.scheme() != "https" || url.host_str().is_none() || raw.contains(';') || raw.len() > 2048
    {
        return Err(ApiError::invalid_param(
            param,
            format!("{param} must be an https URL without ';'"),
        ));
    }
    Ok(Some(url.to_string()))
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
verification) are not conflicts: the change is applied on top of them. Emits `domain.updated` with `previous_attributes`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = views_domain::Domain), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_domain(
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateDomainRequest>,
) -> Result<axum::Json<views_domain::Domain>, ApiError> {
    principal.require_write()?;
    let current = load(&state, &principal, id).await?;
    let before = current.value.clone();
    let mut domain = current.value;
    if let Some(group) = body.group_id {
        check_group(&state, &principal, group).await?;
        domain.group_id = group;
    }
    if let Some(parked) = body.is_parked {
        domain.is_parked = parked;
    }
    if let Some(o) = body.dmarc_options {
        if o.pct > 100 {
            return Err(ApiError::invalid_param(
                "dmarc_options.pct",
                "pct must be between 0 and 100",
            ));
        }
        domain.dmarc_options = DmarcOptions {
            additional_emails: validate_emails(
                "dmarc_options.additional_emails",
                &o.additional_emails,
            )?,
            legacy_ruf_emails: validate_emails(
                "dmarc_options.legacy_ruf_emails",
                &o.legacy_ruf_emails,
            )?,
            policy: o.policy,
            pct: o.pct,
            sp: o.sp,
            strict_spf: o.strict_spf,
            strict_dkim: o.strict_dkim,
        };
    }
    if let Some(o) = body.spf_options {
        domain.spf_options = SpfOptions {
            force_flattening: o.force_flattening,
            enabled: o.enabled,
            mechanism_descriptions: validate_mechanism_descriptions(o.mechanism_descriptions)?,
        };
    }
    if let Some(at) = body.dmarc_setup_at {
        domain.dmarc_setup_at = at
            .map(|s| OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339))
            .transpose()
            .map_err(|_| {
                ApiError::invalid_param(
                    "dmarc_setup_at",
                    "dmarc_setup_at must be an RFC 3339 date-time",
                )
            })?;
    }
    if let Some(target) = body.target_spf {
        if let Some(record) = &target {
            mailward_spf::parse_record(record.trim()).map_err(|e| {
                ApiError::invalid_param(
                    "target_spf",
                    format!("target_spf is not a valid SPF record: {}", e.message),
                )
            })?;
        }
        domain.target_spf = target.map(|t| t.trim().to_owned());
    }
    if let Some(b) = body.bimi_options {
        domain.bimi_options = BimiOptions {
            enabled: b.enabled,
            logo: validate_https("bimi_options.logo", b.logo.as_deref())?,
            certificate: validate_https("bimi_options.certificate", b.certificate.as_deref())?,
        };
    }
    if body.backfill_tickets == Some(true) {
        return Err(ApiError::invalid_param(
            "backfill_tickets",
            "tasks are not available yet; omit backfill_tickets or send false",
        ));
    }
    if domain == before {
        return Ok(axum::Json(domain_view(&domain, &state.config)));
    }
    let stale = purposes_to_reverify(&before, &domain);
    // The sweep and verification write the domain too (claims, status, score). Losing the
    // version check to one of them is not a conflict with another person: the change is applied
    // again on the fresh copy. A person's change in between still ends in a 409.
    let (mut base, mut version) = (before, current.version);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut next = with_person_fields(base.clone(), &domain);
        next.verified_purposes
            .retain(|p| !stale.contains(&p.as_str()));
        next.updated_at = state.clock.now();
        let old_view =
            serde_json::to_value(domain_view(&base, &state.config)).map_err(ApiError::internal)?;
        let new_view =
            serde_json::to_value(domain_view(&next, &state.config)).map_err(ApiError::internal)?;
        let previous = crate::routes::organizations::previous_attributes(&old_view, &new_view);
        let event = OutboxEvent::new(
            "domain.updated",
            next.org_id,
            next.updated_at,
            new_view,
            previous,
        );
        let saved = state
            .store
            .transact(vec![domains::save_op(&next, version)?, event.write_op()?])
            .await;
        match saved {
            Ok(()) => return Ok(axum::Json(domain_view(&next, &state.config))),
            Err(e) if is_version_conflict(&e) && attempts < MAX_SAVE_ATTEMPTS => {
                let fresh = load(&state, &principal, id).await?;
                if person_owned(&fresh.value) != person_owned(&base) {
                    return Err(e.into());
                }
                (base, version) = (fresh.value, fresh.version);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Saves a person's change may take when only the service's own writes get in the way.
const MAX_SAVE_ATTEMPTS: u32 = 3;

fn is_version_conflict(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::TransactionCanceled { .. } | StoreError::ConditionFailed
    )
}

/// The fields only a person changes (through this API); the sweep and verification never do.
#[derive(Debug, PartialEq)]
struct PersonOwned<'a> {
    group_id: Option<Uuid>,
    is_parked: bool,
    dmarc_options: &'a DmarcOptions,
    spf_options: &'a SpfOptions,
    bimi_options: &'a BimiOptions,
    target_spf: Option<&'a str>,
    dmarc_setup_at: Option<OffsetDateTime>,
}

fn person_owned(d: &Domain) -> PersonOwned<'_> {
    PersonOwned {
        group_id: d.group_id,
        is_parked: d.is_parked,
        dmarc_options: &d.dmarc_options,
        spf_options: &d.spf_options,
        bimi_options: &d.bimi_options,
        target_spf: d.target_spf.as_deref(),
        dmarc_setup_at: d.dmarc_setup_at,
    }
}

/// `onto` with the person-owned fields of `from`.
fn with_person_fields(mut onto: Domain, from: &Domain) -> Domain {
    onto.group_id = from.group_id;
    onto.is_parked = from.is_parked;
    onto.dmarc_options = from.dmarc_options.clone();
    onto.spf_options = from.spf_options.clone();
    onto.bimi_options = from.bimi_options.clone();
    onto.target_spf = from.target_spf.clone();
    onto.dmarc_setup_at = from.dmarc_setup_at;
    onto
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
    State(state): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    principal.require_write()?;
    let mut current = load(&state, &principal, id).await?;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let view = serde_json::to_value(domain_view(&current.value, &state.config))
            .map_err(ApiError::internal)?;
        let event = OutboxEvent::new(
            "domain.deleted",
            principal.org_id,
            state.clock.now(),
            view,
            None,
        );
        let removed = domains::remove(
            state.store.as_ref(),
            &current.value,
            current.version,
            vec![event.write_op()?],
        )
        .await;
        match removed {
            Ok(()) => return Ok(StatusCode::NO_CONTENT),
            // A sweep pass or verification wrote the domain meanwhile: delete the fresh copy.
            Err(e) if is_version_conflict(&e) && attempts < MAX_SAVE_ATTEMPTS => {
                let fresh = load(&state, &principal, id).await?;
                if person_owned(&fresh.value) != person_owned(&current.value) {
                    return Err(e.into());
                }
                current = fresh;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(list_domains, create_domain))
        .routes(utoipa_axum::routes!(
            get_domain,
            update_domain,
            delete_domain
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_urls_and_idns_become_names() {
        assert_eq!(
            parse_domain_name("url", "https://Example.com/path?q").unwrap(),
            "example.com"
        );
        assert_eq!(
            parse_domain_name("url", "bücher.de.").unwrap(),
            "xn--bcher-kva.de"
        );
        for bad in [
            "",
            "localhost",
            "_dmarc.example.com",
            "1.2.3.4",
            "http://",
            "exa mple.com",
        ] {
            assert_eq!(
                parse_domain_name("url", bad).unwrap_err().param.as_deref(),
                Some("url"),
                "{bad}"
            );
        }
    }
}
