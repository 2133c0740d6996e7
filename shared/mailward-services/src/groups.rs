//! Groups of domains (SPEC §2.4, §4.2): a managed-service provider's customers, a company's
//! brands. A member may be limited to groups (see [`Caller::sees_group`]).

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::admin::{
    CreateGroupRequest, Group as GroupView, GroupDomains, GroupList, ListGroupsParams,
    UpdateGroupRequest,
};
use mailward_domain::admin::Group;
use mailward_domain::domain::Policy;
use mailward_domain::domain_list::DomainCard;
use mailward_domain::events::types::{GROUP_CREATED, GROUP_DELETED, GROUP_UPDATED};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, accounts, domains, groups};
use std::collections::HashMap;
use uuid::Uuid;

/// Longest group name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Longest external id, in characters.
pub const MAX_EXTERNAL_ID_CHARS: usize = 255;

fn validate_name(raw: &str) -> Result<String, ServiceError> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "name",
            format!("name must be 1 to {MAX_NAME_CHARS} printable characters"),
        ));
    }
    Ok(name.to_owned())
}

fn validate_external(
    param: &'static str,
    raw: Option<String>,
) -> Result<Option<String>, ServiceError> {
    match raw.map(|r| r.trim().to_owned()) {
        Some(v) if v.chars().count() > MAX_EXTERNAL_ID_CHARS || v.chars().any(char::is_control) => {
            Err(ServiceError::invalid(
                param,
                format!("{param} must be at most {MAX_EXTERNAL_ID_CHARS} printable characters"),
            ))
        }
        Some(v) if v.is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// The figures of a group's domains.
fn figures(domains: &[&DomainCard]) -> GroupDomains {
    let count = domains.len();
    let enforced = domains
        .iter()
        .filter(|d| matches!(d.dmarc_policy, Policy::Quarantine | Policy::Reject))
        .count();
    let pct = |part: usize| {
        if count == 0 {
            0.0
        } else {
            (part as f64 * 10_000.0 / count as f64).round() / 100.0
        }
    };
    let average = if count == 0 {
        0.0
    } else {
        let total: u64 = domains.iter().map(|d| u64::from(d.score)).sum();
        (total as f64 * 100.0 / count as f64).round() / 100.0
    };
    let mut window = mailward_domain::domain::ReportFigures::default();
    for d in domains {
        window.volume += d.volume();
        window.counted += d.counted();
        window.dmarc_pass += d.dmarc_pass();
    }
    GroupDomains {
        count: count as u64,
        enforcement_pct: pct(enforced),
        last_14_days_volume: window.volume,
        last_14_days_dmarc_pass_pct: window.pct(window.dmarc_pass),
        average_score: average,
    }
}

/// The wire shape of a group without its domain figures (for `expand[]=group` on domains).
pub fn view_of(group: &Group) -> GroupView {
    view(group, None)
}

/// The group as the API shows it; `domains`, when expanded, are the group's cards.
fn view(group: &Group, domains: Option<&[&DomainCard]>) -> GroupView {
    GroupView {
        id: group.id,
        name: group.name.clone(),
        external_customer_id: group.external_customer_id.clone(),
        external_billing_entity_id: group.external_billing_entity_id.clone(),
        domains: domains.map(figures),
        created_at: group.created_at,
        updated_at: group.updated_at,
    }
}

fn expands_domains(expand: &[String]) -> Result<bool, ServiceError> {
    let mut domains = false;
    for value in expand {
        match value.as_str() {
            "domains" => domains = true,
            _ => {
                return Err(ServiceError::invalid(
                    "expand[]",
                    "expand[] accepts domains",
                ));
            }
        }
    }
    Ok(domains)
}

/// One page of the groups the caller sees.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    params: &ListGroupsParams,
) -> Result<GroupList, ServiceError> {
    let expand = expands_domains(&params.expand)?;
    let sort = params.sort.as_deref().unwrap_or("created_at");
    if !matches!(sort, "created_at" | "name") {
        return Err(ServiceError::invalid(
            "sort",
            "sort must be created_at or name",
        ));
    }
    let descending = match params.order.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(_) => return Err(ServiceError::invalid("order", "order must be asc or desc")),
    };
    let mut all: Vec<Group> = groups::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|g| caller.sees_group(Some(g.id)))
        .collect();
    all.sort_by(|a, b| {
        let primary = match sort {
            "name" => a.name.to_lowercase().cmp(&b.name.to_lowercase()),
            _ => a.created_at.cmp(&b.created_at),
        };
        let primary = if descending {
            primary.reverse()
        } else {
            primary
        };
        primary.then(a.id.cmp(&b.id))
    });
    let (page, page_info) = paginate(
        PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        all,
    )?;
    let cards = if expand {
        Some(mailward_store::card_cache::all_cards(app.store.as_ref(), caller.org_id).await?)
    } else {
        None
    };
    // Each group's cards, in one pass over the organization's.
    let mut by_group: HashMap<Uuid, Vec<&DomainCard>> = HashMap::new();
    for card in cards.iter().flat_map(|set| set.iter()) {
        if let Some(group) = card.group_id {
            by_group.entry(group).or_default().push(card);
        }
    }
    let group_cards = |g: &Group| by_group.get(&g.id).map_or(&[][..], Vec::as_slice);
    Ok(GroupList {
        data: page
            .iter()
            .map(|g| view(g, cards.as_ref().map(|_| group_cards(g))))
            .collect(),
        page_info,
    })
}

async fn load(app: &AppState, caller: &Caller, id: Uuid) -> Result<Versioned<Group>, ServiceError> {
    groups::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|g| caller.sees_group(Some(g.value.id)))
        .ok_or_else(|| ServiceError::not_found("group"))
}

/// One group.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    expand: &[String],
) -> Result<GroupView, ServiceError> {
    let expand = expands_domains(expand)?;
    let group = load(app, caller, id).await?.value;
    let cards = if expand {
        Some(mailward_store::card_cache::all_cards(app.store.as_ref(), caller.org_id).await?)
    } else {
        None
    };
    let domains: Option<Vec<&DomainCard>> = cards.as_ref().map(|set| {
        set.iter()
            .filter(|d| d.group_id == Some(group.id))
            .collect()
    });
    Ok(view(&group, domains.as_deref()))
}

fn event_op(
    event: &str,
    group: &Group,
    previous: Option<serde_json::Value>,
) -> Result<mailward_domain::store::WriteOp, ServiceError> {
    let object = serde_json::to_value(view(group, None))?;
    Ok(OutboxEvent::new(event, group.org_id, group.updated_at, object, previous).write_op()?)
}

/// Creates a group. Administrators and editors not limited to groups.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateGroupRequest,
) -> Result<GroupView, ServiceError> {
    caller.require_write()?;
    caller.require_unlimited()?;
    let now = app.clock.now();
    let group = Group {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        name: validate_name(&input.name)?,
        external_customer_id: validate_external(
            "external_customer_id",
            input.external_customer_id,
        )?,
        external_billing_entity_id: validate_external(
            "external_billing_entity_id",
            input.external_billing_entity_id,
        )?,
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![
        groups::create_op(&group)?,
        event_op(GROUP_CREATED, &group, None)?,
    ];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "group.created",
            "group",
            Some(group.id),
            format!("created group {}", group.name),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(view(&group, None))
}

/// Changes a group; `backfill_tickets` queues a re-derivation of its domains' tasks.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateGroupRequest,
) -> Result<GroupView, ServiceError> {
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    let mut group = current.value.clone();
    if let Some(name) = &input.name {
        group.name = validate_name(name)?;
    }
    if let Some(value) = input.external_customer_id {
        group.external_customer_id = validate_external("external_customer_id", value)?;
    }
    if let Some(value) = input.external_billing_entity_id {
        group.external_billing_entity_id = validate_external("external_billing_entity_id", value)?;
    }
    if group != current.value {
        group.updated_at = app.clock.now();
        let before = serde_json::to_value(view(&current.value, None))?;
        let after = serde_json::to_value(view(&group, None))?;
        let previous = mailward_domain::diff::previous_attributes(&before, &after);
        let mut ops = vec![
            groups::save_op(&group, current.version)?,
            event_op(GROUP_UPDATED, &group, previous.clone())?,
        ];
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                "group.updated",
                "group",
                Some(id),
                format!("changed group {}", group.name),
            )
            .previous(previous),
        )?);
        app.store.transact(ops).await?;
    }
    if input.backfill_tickets == Some(true) {
        let members: Vec<(Uuid, Uuid)> = domains::list(app.store.as_ref(), caller.org_id)
            .await?
            .into_iter()
            .filter(|d| d.group_id == Some(id))
            .map(|d| (d.org_id, d.id))
            .collect();
        crate::evaluation::evaluate_soon(app, &members).await;
    }
    Ok(view(&group, None))
}

/// Deletes a group: its domains become ungrouped (never deleted) and members limited to it lose
/// that group.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_write()?;
    caller.require_unlimited()?;
    let current = load(app, caller, id).await?;
    let store = app.store.as_ref();
    let now = app.clock.now();
    // A member limited to this group alone would be left with no limit (every domain), so the
    // deletion waits until such members get another group or leave.
    let stranded: Vec<Uuid> = accounts::members_of(store, caller.org_id)
        .await?
        .into_iter()
        .filter(|m| m.groups == [id])
        .map(|m| m.account_id)
        .collect();
    if !stranded.is_empty() {
        return Err(ServiceError::new(
            crate::error::ErrorKind::Conflict,
            "group_has_members",
            format!(
                "{} member(s) are limited to this group alone (ids {}); give them another group or remove them first",
                stranded.len(),
                stranded
                    .iter()
                    .map(Uuid::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // Ungroup its domains first (each on its own, retried against the sweep), so a failure
    // leaves the group in place and the call repeatable.
    for domain in domains::list(store, caller.org_id)
        .await?
        .into_iter()
        .filter(|d| d.group_id == Some(id))
    {
        ungroup(app, caller, domain.id, id).await?;
    }
    for member in accounts::members_of(store, caller.org_id)
        .await?
        .into_iter()
        .filter(|m| m.groups.contains(&id))
    {
        if let Some(current) =
            accounts::membership_versioned(store, caller.org_id, member.account_id).await?
        {
            let mut next = current.value.clone();
            next.groups.retain(|g| *g != id);
            store
                .transact(vec![accounts::save_membership_op(&next, current.version)?])
                .await?;
        }
    }
    let mut gone = current.value.clone();
    gone.updated_at = now;
    let mut ops = vec![
        groups::delete_op(caller.org_id, id, current.version),
        event_op(GROUP_DELETED, &gone, None)?,
    ];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "group.deleted",
            "group",
            Some(id),
            format!("deleted group {}", gone.name),
        ),
    )?);
    store.transact(ops).await?;
    Ok(())
}

/// Takes one domain out of a group (retried when the sweep wrote the domain meanwhile).
async fn ungroup(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    group: Uuid,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    for _ in 0..5 {
        let Some(current) = domains::get(store, caller.org_id, domain_id).await? else {
            return Ok(());
        };
        if current.value.group_id != Some(group) {
            return Ok(());
        }
        let mut next = current.value.clone();
        next.group_id = None;
        next.updated_at = app.clock.now();
        match store
            .transact(domains::save_ops(&next, &current.value, current.version)?)
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "a domain of the group kept changing; retry the deletion",
    ))
}
