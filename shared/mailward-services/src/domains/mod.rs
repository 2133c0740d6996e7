//! Domains (SPEC §2.1, §4.1): add (one or in bulk), list, read, change and delete, the records
//! guidance and verification, SPF diagnostics and DNS snapshots.
//!
//! A new domain starts with `monitoring_status` `none` and score 0 (or the score of a stored
//! activation scan with `use_stored_scan`), and is evaluated at once by a queued sweep job.

pub mod bulk;
pub mod dkim_discovery;
pub mod hosting;
pub mod plan;
pub mod preview;
pub mod records;
pub mod snapshots;
pub mod spf;
mod views;

pub use crate::access::{load, visible};
use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::domains::{
    BimiOptionsView, CreateDomainRequest, DmarcOptionsView, Domain as DomainView, DomainList,
    ListDomainsParams, SpfOptionsView, UpdateDomainRequest,
};
use mailward_domain::diff::previous_attributes;
use mailward_domain::domain::{
    BimiOptions, DmarcOptions, Domain, MonitoringStatus, Policy, SpfOptions,
};
use mailward_domain::domain_list::{CardSet, DomainCard};
use mailward_domain::email::EmailAddress;
use mailward_domain::events::types::{DOMAIN_CREATED, DOMAIN_DELETED, DOMAIN_UPDATED};
use mailward_domain::names::domain_from_input;
use mailward_domain::purpose::Purpose;
use mailward_store::optimistic::{OnConflict, retry_on_conflict};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, audits, card_cache, domains, groups};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use time::OffsetDateTime;
use uuid::Uuid;

/// Most addresses one `dmarc_options` list may hold.
pub const MAX_REPORT_ADDRESSES: usize = 20;
/// Most entries `spf_options.mechanism_descriptions` may hold.
pub const MAX_MECHANISM_DESCRIPTIONS: usize = 50;
/// Longest mechanism (key) in `spf_options.mechanism_descriptions`, in characters.
pub const MAX_MECHANISM_CHARS: usize = 255;
/// Longest description (value) in `spf_options.mechanism_descriptions`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// Saves a person's change may take when only the service's own writes get in the way.
const MAX_SAVE_ATTEMPTS: u32 = 3;

/// A domain name from input, or 400 naming `param`.
pub(crate) fn parse_domain_name(param: &'static str, raw: &str) -> Result<String, ServiceError> {
    domain_from_input(raw).map_err(|_| {
        ServiceError::invalid(
            param,
            format!("{param} must be a domain name such as example.com"),
        )
    })
}

/// Checks a `group_id` a caller puts a domain in: a group of the organization, and one of the
/// caller's own when it is limited to groups (which also may not leave a domain ungrouped,
/// since it could no longer see it).
async fn check_group(
    app: &AppState,
    caller: &Caller,
    group: Option<Uuid>,
) -> Result<(), ServiceError> {
    let Some(group) = group else {
        if caller.is_group_limited() {
            return Err(ServiceError::invalid(
                "group_id",
                "a member limited to groups must put the domain in one of them",
            ));
        }
        return Ok(());
    };
    if !caller.sees_group(Some(group))
        || !groups::exists(app.store.as_ref(), caller.org_id, group).await?
    {
        return Err(ServiceError::invalid(
            "group_id",
            "group_id names no group of this organization",
        ));
    }
    Ok(())
}

fn already_watched(name: &str) -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        "domain_exists",
        format!("{name} is already a domain of this organization"),
    )
    .param("url")
}

/// The activation scan a domain was added with, kept for its rollout plan.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct OnboardingScan {
    /// When the domain was added with it.
    #[serde(with = "time::serde::rfc3339")]
    pub scanned_at: OffsetDateTime,
    /// The audit as the scan stored it.
    pub audit: serde_json::Value,
}

/// The score and parked flag of a stored activation scan.
fn scan_score(scan: &serde_json::Value) -> (u8, bool) {
    let score = scan["summary"]["score"]
        .as_u64()
        .and_then(|s| u8::try_from(s).ok())
        .unwrap_or(0);
    let parked = scan["summary"]["parked"].as_bool().unwrap_or(false);
    (score.min(100), parked)
}

/// Adds a domain: validation, uniqueness, `domain.created`, then a queued evaluation so its
/// status and score are real within seconds instead of the next sweep period.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateDomainRequest,
) -> Result<DomainView, ServiceError> {
    caller.require_write()?;
    DomainCap::load(app, caller.org_id).await?.take()?;
    let domain = create_one(app, caller, input).await?;
    crate::evaluation::evaluate_soon(app, &[(domain.org_id, domain.id)]).await;
    crate::usage::quantities_changed(app, caller.org_id).await;
    Ok(app.domain_view(&domain))
}

/// Room left under the organization's domain cap (its paid entitlements').
pub(crate) struct DomainCap {
    cap: u64,
    held: u64,
}

impl DomainCap {
    /// Reads the cap and the count.
    pub(crate) async fn load(app: &AppState, org: Uuid) -> Result<Self, ServiceError> {
        let (ent, _) = crate::usage::entitlements(app, org).await?;
        Ok(Self {
            cap: ent.domain_cap,
            held: domains::count(app.store.as_ref(), org).await?,
        })
    }

    /// Takes room for one domain, or refuses with 403 `domain_cap_reached`.
    pub(crate) fn take(&mut self) -> Result<(), ServiceError> {
        if self.held >= self.cap {
            return Err(ServiceError::new(
                crate::error::ErrorKind::Forbidden,
                "domain_cap_reached",
                format!(
                    "the organization's plan allows {} domains and it holds {}: subscribe to a larger plan (POST /billing/checkout) or delete domains. Domains above the cap after a downgrade stay readable but are not swept until the count fits",
                    self.cap, self.held
                ),
            )
            .param("url")
            .details(serde_json::json!({"domain_cap": self.cap, "domains": self.held})));
        }
        self.held += 1;
        Ok(())
    }

    /// Gives back room taken for a domain that was not created.
    pub(crate) fn give_back(&mut self) {
        self.held = self.held.saturating_sub(1);
    }
}

/// Creates one domain (no evaluation queued); shared by the single and bulk operations.
pub(crate) async fn create_one(
    app: &AppState,
    caller: &Caller,
    input: CreateDomainRequest,
) -> Result<Domain, ServiceError> {
    let name = parse_domain_name("url", &input.url)?;
    check_group(app, caller, input.group_id).await?;
    if domains::name_taken(app.store.as_ref(), caller.org_id, &name).await? {
        return Err(already_watched(&name));
    }
    let now = app.clock.now();
    let scan = if input.use_stored_scan {
        audits::activation_scan::<serde_json::Value>(app.store.as_ref(), &name).await?
    } else {
        None
    };
    let (score, is_parked) = scan.as_ref().map_or((0, false), scan_score);
    let domain = Domain {
        group_id: input.group_id,
        is_parked,
        score,
        ..Domain::new(Uuid::new_v4(), caller.org_id, name.clone(), now)
    };
    let view = serde_json::to_value(app.domain_view(&domain))?;
    let mut ops = domains::create_ops(&domain)?;
    if let Some(audit) = scan {
        let onboarding = OnboardingScan {
            scanned_at: now,
            audit,
        };
        ops.push(mailward_store::onboarding::save_op(
            domain.org_id,
            domain.id,
            &onboarding,
        )?);
    }
    ops.push(OutboxEvent::new(DOMAIN_CREATED, domain.org_id, now, view, None).write_op()?);
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "domain.created",
            "domain",
            Some(domain.id),
            format!("added {}", domain.url),
        ),
    )?);
    match app.store.transact(ops).await {
        Ok(()) => Ok(domain),
        Err(e) if e.is_conflict() => Err(already_watched(&name)),
        Err(e) => Err(e.into()),
    }
}

/// Parsed `expand[]`.
#[derive(Debug, Default, Clone, Copy)]
struct Expand {
    group: bool,
    tasks: bool,
}

fn parse_expand(values: &[String]) -> Result<Expand, ServiceError> {
    let mut expand = Expand::default();
    for value in values {
        match value.as_str() {
            "group" => expand.group = true,
            "tasks" => expand.tasks = true,
            _ => {
                return Err(ServiceError::invalid(
                    "expand[]",
                    "expand[] accepts group and tasks",
                ));
            }
        }
    }
    Ok(expand)
}

fn expanded(app: &AppState, domain: &Domain, expand: Expand, related: &Related) -> DomainView {
    let mut view = app.domain_view(domain);
    expand_view(&mut view, expand, related);
    view
}

/// Adds what `expand[]` asked for to a domain's wire shape.
fn expand_view(view: &mut DomainView, expand: Expand, related: &Related) {
    if expand.group {
        view.group = Some(
            view.group_id
                .and_then(|g| related.groups.get(&g))
                .and_then(|g| serde_json::to_value(crate::groups::view_of(g)).ok())
                .unwrap_or(serde_json::Value::Null),
        );
    }
    if expand.tasks {
        view.tasks = Some(related.tasks.get(&view.id).cloned().unwrap_or_default());
    }
}

/// What `expand[]` brings along: the groups and the open work of the organization's domains.
#[derive(Default)]
struct Related {
    groups: HashMap<Uuid, mailward_domain::admin::Group>,
    tasks: HashMap<Uuid, Vec<mailward_api_types::tasks::Task>>,
}

async fn related(app: &AppState, caller: &Caller, expand: Expand) -> Result<Related, ServiceError> {
    let mut related = Related::default();
    if expand.tasks {
        related.tasks = crate::tasks::open_work_by_domain(app, caller.org_id).await?;
    }
    if expand.group {
        related.groups = groups::list(app.store.as_ref(), caller.org_id)
            .await?
            .into_iter()
            .map(|g| (g.id, g))
            .collect();
    }
    Ok(related)
}

fn parse_enum<T: for<'de> Deserialize<'de>>(
    param: &'static str,
    raw: &str,
    allowed: &str,
) -> Result<T, ServiceError> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned()))
        .map_err(|_| ServiceError::invalid(param, format!("{param} must be one of {allowed}")))
}

/// The `sort` keys of `GET /domains`.
pub use mailward_api_types::domains::SORT_KEYS;

/// The `is_*_managed` filters, in the order of [`DomainCard::managed`].
fn managed_filters(params: &ListDomainsParams) -> [Option<bool>; 5] {
    [
        params.is_dmarc_managed,
        params.is_spf_managed,
        params.is_dkim_managed,
        params.is_bimi_managed,
        params.is_mta_sts_managed,
    ]
}

/// The `monitoring_status` and `dmarc_policy` filters of `GET /domains`.
fn parse_filters(
    params: &ListDomainsParams,
) -> Result<(Option<MonitoringStatus>, Option<Policy>), ServiceError> {
    let status = params
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
    let policy = params
        .dmarc_policy
        .as_deref()
        .map(|s| parse_enum("dmarc_policy", s, "none, quarantine, reject"))
        .transpose()?;
    Ok((status, policy))
}

/// The `sort` and `order` of `GET /domains` (whether descending).
fn parse_order(params: &ListDomainsParams) -> Result<(&str, bool), ServiceError> {
    let sort = params.sort.as_deref().unwrap_or("created_at");
    if !SORT_KEYS.contains(&sort) {
        return Err(ServiceError::invalid(
            "sort",
            format!("sort must be one of {}", SORT_KEYS.join(", ")),
        ));
    }
    let descending = match params.order.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(_) => {
            return Err(ServiceError::invalid("order", "order must be asc or desc"));
        }
    };
    Ok((sort, descending))
}

/// One page of the organization's domains, filtered and sorted in memory over their list
/// cards (`mailward_domain::domain_list`); only the page's domains are read.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    params: &ListDomainsParams,
) -> Result<DomainList, ServiceError> {
    let expand = parse_expand(&params.expand)?;
    let (status, policy) = parse_filters(params)?;
    let (sort, descending) = parse_order(params)?;
    let wanted = |c: &DomainCard| {
        caller.sees_group(c.group_id)
            && status.is_none_or(|s| c.monitoring_status == s)
            && policy.is_none_or(|p| c.dmarc_policy == p)
            && params.is_parked.is_none_or(|p| c.is_parked == p)
            && managed_filters(params)
                .iter()
                .zip(c.managed)
                .all(|(wanted, flag)| wanted.is_none_or(|w| w == flag))
            && params.group_id.is_none_or(|g| c.group_id == Some(g))
    };
    let store = app.store.as_ref();
    // The organization's cards (the process's copy when current, with its orderings), or
    // (before the daily job built them) the domains themselves.
    let (set, mut read) = match card_cache::card_set(store, caller.org_id).await? {
        Some(set) => (set, HashMap::new()),
        None => {
            let all = domains::list(store, caller.org_id).await?;
            let set = CardSet::new(all.iter().map(DomainCard::of).collect());
            (Arc::new(set), all.into_iter().map(|d| (d.id, d)).collect())
        }
    };
    let cards: Vec<&DomainCard> = set
        .sorted(sort, descending)
        .iter()
        .map(|&i| &set[i as usize])
        .filter(|c| wanted(c))
        .collect();
    let (page, page_info) = paginate(
        PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        cards,
    )?;
    let ids: Vec<Uuid> = page.iter().map(|c| c.id).collect();
    let mut data = if read.is_empty() {
        views::page(app, caller.org_id, &ids).await?
    } else {
        ids.iter()
            .filter_map(|id| read.remove(id))
            .map(|d| app.domain_view(&d))
            .collect()
    };
    let related = related(app, caller, expand).await?;
    for view in &mut data {
        expand_view(view, expand, &related);
    }
    Ok(DomainList { data, page_info })
}

/// One domain, with `expand[]` (`group`, `tasks`).
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    expand: &[String],
) -> Result<DomainView, ServiceError> {
    let expand = parse_expand(expand)?;
    let domain = load(app, caller, id).await?;
    let related = related(app, caller, expand).await?;
    Ok(expanded(app, &domain.value, expand, &related))
}

fn validate_emails(param: &'static str, emails: &[String]) -> Result<Vec<String>, ServiceError> {
    if emails.len() > MAX_REPORT_ADDRESSES {
        return Err(ServiceError::invalid(
            param,
            format!("{param} holds at most {MAX_REPORT_ADDRESSES} addresses"),
        ));
    }
    emails
        .iter()
        .map(|e| EmailAddress::parse(e).map(|e| e.as_str().to_owned()))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ServiceError::invalid(param, format!("{param} must hold valid email addresses"))
        })
}

/// Bounds `spf_options.mechanism_descriptions`: at most [`MAX_MECHANISM_DESCRIPTIONS`] entries,
/// keys of 1 to [`MAX_MECHANISM_CHARS`] characters, values of at most [`MAX_DESCRIPTION_CHARS`],
/// and no control characters in either.
fn validate_mechanism_descriptions(
    descriptions: Option<BTreeMap<String, String>>,
) -> Result<Option<BTreeMap<String, String>>, ServiceError> {
    const PARAM: &str = "spf_options.mechanism_descriptions";
    let Some(descriptions) = descriptions else {
        return Ok(None);
    };
    let invalid = |message: String| Err(ServiceError::invalid(PARAM, message));
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
fn purposes_to_reverify(before: &Domain, after: &Domain) -> Vec<Purpose> {
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
    .map(|(purpose, _)| purpose)
    .collect()
}

fn validate_https(param: &'static str, raw: Option<&str>) -> Result<Option<String>, ServiceError> {
    let Some(raw) = raw else { return Ok(None) };
    let url = url::Url::parse(raw.trim())
        .map_err(|_| ServiceError::invalid(param, format!("{param} must be an https URL")))?;
    if url.scheme() != "https" || url.host_str().is_none() || raw.contains(';') || raw.len() > 2048
    {
        return Err(ServiceError::invalid(
            param,
            format!("{param} must be an https URL without ';'"),
        ));
    }
    Ok(Some(url.to_string()))
}

fn dmarc_options(o: DmarcOptionsView) -> Result<DmarcOptions, ServiceError> {
    if o.pct > 100 {
        return Err(ServiceError::invalid(
            "dmarc_options.pct",
            "pct must be between 0 and 100",
        ));
    }
    Ok(DmarcOptions {
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
        failure_reports: o.failure_reports,
    })
}

fn spf_options(o: SpfOptionsView) -> Result<SpfOptions, ServiceError> {
    Ok(SpfOptions {
        force_flattening: o.force_flattening,
        enabled: o.enabled,
        mechanism_descriptions: validate_mechanism_descriptions(o.mechanism_descriptions)?,
    })
}

fn bimi_options(b: BimiOptionsView) -> Result<BimiOptions, ServiceError> {
    Ok(BimiOptions {
        enabled: b.enabled,
        logo: validate_https("bimi_options.logo", b.logo.as_deref())?,
        certificate: validate_https("bimi_options.certificate", b.certificate.as_deref())?,
    })
}

/// `domain` with every field of `input` applied and validated (nothing stored).
async fn apply_update(
    app: &AppState,
    caller: &Caller,
    mut domain: Domain,
    input: UpdateDomainRequest,
) -> Result<Domain, ServiceError> {
    if let Some(group) = input.group_id
        && group != domain.group_id
    {
        check_group(app, caller, group).await?;
        domain.group_id = group;
    }
    if let Some(parked) = input.is_parked {
        domain.is_parked = parked;
    }
    if let Some(o) = input.dmarc_options {
        domain.dmarc_options = dmarc_options(o)?;
    }
    if let Some(o) = input.spf_options {
        domain.spf_options = spf_options(o)?;
    }
    if let Some(at) = input.dmarc_setup_at {
        domain.dmarc_setup_at = at
            .map(|s| OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339))
            .transpose()
            .map_err(|_| {
                ServiceError::invalid(
                    "dmarc_setup_at",
                    "dmarc_setup_at must be an RFC 3339 date-time",
                )
            })?;
    }
    if let Some(target) = input.target_spf {
        if let Some(record) = &target {
            mailward_spf::parse_record(record.trim()).map_err(|e| {
                ServiceError::invalid(
                    "target_spf",
                    format!("target_spf is not a valid SPF record: {}", e.message),
                )
            })?;
        }
        domain.target_spf = target.map(|t| t.trim().to_owned());
    }
    if let Some(b) = input.bimi_options {
        domain.bimi_options = bimi_options(b)?;
    }
    if let Some(enabled) = input.agent_proposals_enabled {
        domain.agent_proposals_enabled = enabled;
    }
    Ok(domain)
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
    agent_proposals_enabled: Option<bool>,
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
        agent_proposals_enabled: d.agent_proposals_enabled,
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
    onto.agent_proposals_enabled = from.agent_proposals_enabled;
    onto
}

/// What to do when a person's write to a domain lost its version check: the sweep and
/// verification write the domain too (claims, status, score), and losing to one of them is not
/// a conflict with another person, so the write is tried again on the fresh copy. A person's
/// change in between (a person-owned field moved) gives up, and the caller answers 409.
async fn refresh_unless_person_changed(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    seen: &Domain,
) -> Result<OnConflict<Versioned<Domain>>, ServiceError> {
    let fresh = load(app, caller, id).await?;
    Ok(if person_owned(&fresh.value) == person_owned(seen) {
        OnConflict::Retry(fresh)
    } else {
        OnConflict::GiveUp
    })
}

/// Runs a person's write to a domain (`write` gets the copy to change, with its version) and
/// applies it again on a fresh copy when only the service's own writes got in the way; see
/// [`refresh_unless_person_changed`].
async fn write_unless_person_changed<T, F, Fut>(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    current: Versioned<Domain>,
    write: F,
) -> Result<T, ServiceError>
where
    F: Fn(Versioned<Domain>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ServiceError>>,
{
    let latest_seen = std::sync::Mutex::new(current.value.clone());
    retry_on_conflict(
        MAX_SAVE_ATTEMPTS,
        current,
        |base: Versioned<Domain>| {
            *latest_seen.lock().unwrap_or_else(|p| p.into_inner()) = base.value.clone();
            write(base)
        },
        || {
            let seen = latest_seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            async move { refresh_unless_person_changed(app, caller, id, &seen).await }
        },
    )
    .await
}

/// Changes a domain. Options are replaced whole and validated; a change to what a record
/// purpose expects withdraws that purpose's earlier verification in the same write. Emits
/// `domain.updated` with `previous_attributes`.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateDomainRequest,
) -> Result<DomainView, ServiceError> {
    caller.require_write()?;
    let backfill = input.backfill_tickets == Some(true);
    let current = load(app, caller, id).await?;
    let before = current.value.clone();
    let wanted = apply_update(app, caller, current.value.clone(), input).await?;
    if wanted == before {
        if backfill {
            return backfill_tasks(app, caller, id).await;
        }
        return Ok(app.domain_view(&wanted));
    }
    let stale = purposes_to_reverify(&before, &wanted);
    // Hosted SPF is flattened and published before anything is stored.
    let spf = hosting::spf::prepare(app, &before, &wanted).await?;
    let now = app.clock.now();
    let saved = write_unless_person_changed(app, caller, id, current, |base| {
        let (wanted, stale, spf) = (&wanted, &stale, &spf);
        async move {
            let mut next = with_person_fields(base.value.clone(), wanted);
            next.verified_purposes.retain(|p| !stale.contains(p));
            hosting::spf::apply(spf, &mut next, now);
            let summary = format!("changed {}", next.url);
            save_updated(app, caller, &base, next, summary).await
        }
    })
    .await?;
    if saved.is_dmarc_managed
        && saved.dmarc_options != before.dmarc_options
        && let Err(e) = hosting::dmarc::publish_dmarc(app, &saved).await
    {
        // The sweep's reconciliation republishes it (or marks it publish_failed).
        tracing::warn!(domain.id = %saved.id, error = %e.message(), "hosted DMARC record not republished");
    }
    hosting::spf::finish(app, &saved, spf).await;
    if backfill {
        return backfill_tasks(app, caller, id).await;
    }
    Ok(app.domain_view(&saved))
}

/// Saves a change to a domain's hosting fields (made by `change` on the latest version), with
/// its activity entry and `domain.updated` event; nothing is written when nothing changes.
pub(crate) async fn set_hosting(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    current: Versioned<Domain>,
    change: impl Fn(&Domain) -> Domain,
) -> Result<Domain, ServiceError> {
    let change = &change;
    write_unless_person_changed(app, caller, id, current, |base| async move {
        let next = change(&base.value);
        if next == base.value {
            return Ok(next);
        }
        let summary = format!("changed hosting of {}", next.url);
        save_updated(app, caller, &base, next, summary).await
    })
    .await
}

/// Saves `next` over `base` (read at its version) with the `domain.updated` activity entry and
/// event, in one transaction.
async fn save_updated(
    app: &AppState,
    caller: &Caller,
    base: &Versioned<Domain>,
    mut next: Domain,
    summary: String,
) -> Result<Domain, ServiceError> {
    next.updated_at = app.clock.now();
    let old_view = serde_json::to_value(app.domain_view(&base.value))?;
    let new_view = serde_json::to_value(app.domain_view(&next))?;
    let previous = previous_attributes(&old_view, &new_view);
    let entry = activity::ops(
        app,
        caller,
        Change::new("domain.updated", "domain", Some(next.id), summary).previous(previous.clone()),
    )?;
    let event = OutboxEvent::new(
        DOMAIN_UPDATED,
        next.org_id,
        next.updated_at,
        new_view,
        previous,
    );
    let mut ops = domains::save_ops(&next, &base.value, base.version)?;
    ops.push(event.write_op()?);
    ops.extend(entry);
    app.store.transact(ops).await?;
    Ok(next)
}

/// `backfill_tickets`: evaluates the domain now (as the sweep does), so its tasks are derived at
/// once, and answers the domain as that evaluation left it.
async fn backfill_tasks(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<DomainView, ServiceError> {
    crate::evaluation::evaluate(app, caller.org_id, id)
        .await
        .map_err(|e| ServiceError::unavailable(format!("evaluating the domain: {e:#}")))?;
    Ok(app.domain_view(&load(app, caller, id).await?.value))
}

/// Deletes a domain and its DNS snapshots. Emits `domain.deleted` carrying the domain as it was
/// just before.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    write_unless_person_changed(app, caller, id, current, |base| async move {
        let view = serde_json::to_value(app.domain_view(&base.value))?;
        let event = OutboxEvent::new(DOMAIN_DELETED, caller.org_id, app.clock.now(), view, None);
        let mut extra = vec![event.write_op()?];
        extra.extend(activity::ops(
            app,
            caller,
            Change::new(
                "domain.deleted",
                "domain",
                Some(base.value.id),
                format!("removed {}", base.value.url),
            ),
        )?);
        domains::remove(app.store.as_ref(), &base.value, base.version, extra).await?;
        Ok(base.value)
    })
    .await
    .map(|removed| async move {
        hosting::withdraw(app, &removed).await;
        // The candidates its reports evidenced lose that evidence (a failure leaves it to the
        // organization's purge or is harmless: counts for staff only).
        if let Err(e) = mailward_store::candidates::forget_domain(app.store.as_ref(), id).await {
            tracing::warn!(domain.id = %id, error = %e, "could not drop the domain's candidate evidence");
        }
        // Its open alerts resolve: nothing would ever judge them again.
        if let Err(e) = crate::alerts::evaluate::domain_gone(app, caller.org_id, id).await {
            tracing::warn!(domain.id = %id, error = %e, "could not resolve the domain's open alerts");
        }
    })?
    .await;
    crate::usage::quantities_changed(app, caller.org_id).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_domain::domain::ReportFigures;
    use mailward_domain::domain_list::sort_cards;

    /// A domain `url` created `age` seconds after the epoch with the fields the sort keys read.
    fn domain(url: &str, age: i64, tasks: Option<(u8, u32)>, status: MonitoringStatus) -> Domain {
        let at = time::OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(age);
        let mut d = Domain::new(uuid::Uuid::new_v4(), uuid::Uuid::nil(), url.into(), at);
        d.highest_open_task_priority = tasks.map(|(p, _)| p);
        d.open_tasks_count = tasks.map_or(0, |(_, n)| n);
        d.monitoring_status = status;
        d
    }

    fn order(list: &[Domain], sort: &str, descending: bool) -> Vec<String> {
        let mut list: Vec<DomainCard> = list.iter().map(DomainCard::of).collect();
        sort_cards(&mut list, sort, descending);
        list.into_iter().map(|d| d.url).collect()
    }

    #[test]
    fn every_sort_key_orders_and_severity_and_status_follow_the_spec() {
        use MonitoringStatus::{Drifted, Failed, None as Unset, Pending, Setup};
        let mut a = domain("a.test", 3, Some((2, 1)), Setup);
        let mut b = domain("b.test", 1, Some((0, 1)), Pending);
        let mut c = domain("c.test", 2, None, Drifted);
        let mut d = domain("d.test", 4, Some((0, 3)), Failed);
        let mut e = domain("e.test", 5, None, Unset);
        for (x, score, policy, volume, pass) in [
            (&mut a, 40, Policy::Quarantine, 100, 90),
            (&mut b, 90, Policy::Reject, 10, 5),
            (&mut c, 10, Policy::None, 1000, 999),
            (&mut d, 70, Policy::None, 0, 0),
            (&mut e, 55, Policy::Reject, 50, 10),
        ] {
            x.score = score;
            x.dmarc_policy = policy;
            x.report_figures = Some(ReportFigures {
                as_of: "2026-11-25".into(),
                volume: volume + 7,
                counted: volume,
                dmarc_pass: pass,
                spf_aligned_pass: pass,
                dkim_aligned_pass: pass,
                exact: true,
            });
        }
        let (g1, g2) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
        a.group_id = Some(g2);
        b.group_id = Some(g1);
        let all = [a, b, c, d, e];
        let asc = |sort: &str| order(&all, sort, false);
        assert_eq!(
            asc("created_at"),
            ["b.test", "c.test", "a.test", "d.test", "e.test"]
        );
        assert_eq!(
            asc("url"),
            ["a.test", "b.test", "c.test", "d.test", "e.test"]
        );
        assert_eq!(
            asc("score"),
            ["c.test", "a.test", "e.test", "d.test", "b.test"]
        );
        assert_eq!(
            asc("dmarc_policy"),
            ["c.test", "d.test", "a.test", "b.test", "e.test"]
        );
        assert_eq!(
            asc("monitoring_status"),
            ["e.test", "b.test", "a.test", "c.test", "d.test"]
        );
        assert_eq!(
            asc("open_tasks_count"),
            ["c.test", "e.test", "a.test", "b.test", "d.test"]
        );
        assert_eq!(
            asc("last_14_days_volume"),
            ["d.test", "b.test", "e.test", "a.test", "c.test"]
        );
        // Pass shares: d 0 (no volume), e 20%, b 50%, a 90%, c 99.9%.
        for key in ["dmarc", "spf", "dkim"] {
            let sort = format!("last_14_days_{key}_pass_pct");
            assert_eq!(
                asc(&sort),
                ["d.test", "e.test", "b.test", "a.test", "c.test"]
            );
        }
        // No group first ascending (then by name), then by group id.
        assert_eq!(
            asc("group"),
            ["c.test", "d.test", "e.test", "b.test", "a.test"]
        );
        // Every key without ties reverses under desc; ties are broken by name both ways.
        assert_eq!(
            order(&all, "dmarc_policy", true),
            ["b.test", "e.test", "a.test", "c.test", "d.test"]
        );
        assert_eq!(
            order(&all, "open_tasks_count", true),
            ["d.test", "a.test", "b.test", "c.test", "e.test"]
        );
        for sort in [
            "created_at",
            "url",
            "score",
            "monitoring_status",
            "last_14_days_volume",
            "last_14_days_dmarc_pass_pct",
            "last_14_days_spf_pass_pct",
            "last_14_days_dkim_pass_pct",
        ] {
            let mut down = order(&all, sort, true);
            down.reverse();
            assert_eq!(down, asc(sort), "{sort}");
        }
        // severity: priority, then count, most severe first under desc; no tickets last under
        // desc and first under asc (SPEC §4.1).
        assert_eq!(
            order(&all, "severity", true),
            ["d.test", "b.test", "a.test", "c.test", "e.test"]
        );
        assert_eq!(
            order(&all, "severity", false),
            ["c.test", "e.test", "a.test", "b.test", "d.test"]
        );
        // status: configured domains (setup, drifted; tickets or none) before monitoring and
        // setup states in both directions, severity ordering inside each group.
        assert_eq!(
            order(&all, "status", true),
            ["a.test", "c.test", "d.test", "b.test", "e.test"]
        );
        assert_eq!(
            order(&all, "status", false),
            ["c.test", "a.test", "e.test", "b.test", "d.test"]
        );
        let tested = [
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
        assert!(SORT_KEYS.iter().all(|k| tested.contains(k)));
    }
}
