//! The activity log (SPEC §4.5, §2.13): every mutation records who made it, what action, on
//! which target, when, and what changed, in the same transaction as the change itself (the
//! operations call [`ops`] or [`system_ops`] and add the writes to their commit).

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::activity::{
    ActivityAction, ActivityEntry as EntryView, ActivityList, ActivityParams,
};
use mailward_domain::admin::{ACTIONS, ActivityEntry, ActorType};
use mailward_domain::store::WriteOp;
use mailward_store::activity as stored;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

/// What one mutation did.
#[derive(Debug, Clone)]
pub struct Change {
    /// One of [`ACTIONS`].
    pub action: &'static str,
    /// The kind of target (domain, task, group ...).
    pub target_type: &'static str,
    /// The target's id.
    pub target_id: Option<Uuid>,
    /// One line for a person.
    pub summary: String,
    /// Previous values of the changed fields, when there are any.
    pub previous: Option<Value>,
}

impl Change {
    /// A change of `action` on a target.
    pub fn new(
        action: &'static str,
        target_type: &'static str,
        target_id: Option<Uuid>,
        summary: impl Into<String>,
    ) -> Self {
        debug_assert!(
            ACTIONS.iter().any(|(a, _)| *a == action),
            "{action} is not in the activity catalogue"
        );
        Self {
            action,
            target_type,
            target_id,
            summary: summary.into(),
            previous: None,
        }
    }

    /// With the previous values of what changed.
    pub fn previous(mut self, previous: Option<Value>) -> Self {
        self.previous = previous;
        self
    }
}

fn entry_ops(
    org: Uuid,
    actor: (ActorType, Option<Uuid>),
    change: Change,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    let entry = ActivityEntry {
        id: Uuid::new_v4(),
        org_id: org,
        actor_type: actor.0,
        actor_id: actor.1,
        action: change.action.to_owned(),
        target_type: change.target_type.to_owned(),
        target_id: change.target_id,
        summary: change.summary,
        previous: change.previous,
        created_at: now,
    };
    Ok(stored::record_ops(&entry)?)
}

/// The writes that record `change` made by `caller` in its organization.
pub fn ops(app: &AppState, caller: &Caller, change: Change) -> Result<Vec<WriteOp>, ServiceError> {
    entry_ops(caller.org_id, caller.actor(), change, app.clock.now())
}

/// The writes that record `change` made by `actor` in `org` (signup, invitation acceptance).
pub fn ops_as(
    app: &AppState,
    org: Uuid,
    actor: (ActorType, Option<Uuid>),
    change: Change,
) -> Result<Vec<WriteOp>, ServiceError> {
    entry_ops(org, actor, change, app.clock.now())
}

/// The writes that record `change` made by the service itself in `org`.
pub fn system_ops(
    org: Uuid,
    change: Change,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    entry_ops(org, (ActorType::System, None), change, now)
}

fn view(entry: &ActivityEntry) -> EntryView {
    EntryView {
        id: entry.id,
        actor_type: entry.actor_type,
        actor_id: entry.actor_id,
        action: entry.action.clone(),
        target_type: entry.target_type.clone(),
        target_id: entry.target_id,
        summary: entry.summary.clone(),
        previous: entry.previous.clone(),
        created_at: entry.created_at,
    }
}

fn parse_time(
    param: &'static str,
    raw: Option<&str>,
) -> Result<Option<OffsetDateTime>, ServiceError> {
    raw.map(|r| {
        OffsetDateTime::parse(r, &time::format_description::well_known::Rfc3339).map_err(|_| {
            ServiceError::invalid(param, format!("{param} must be an RFC 3339 date-time"))
        })
    })
    .transpose()
}

/// One page of the organization's activity, newest first, filtered.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    params: &ActivityParams,
) -> Result<ActivityList, ServiceError> {
    caller.require_admin()?;
    caller.require_unlimited()?;
    let actor_type: Option<ActorType> = params
        .actor_type
        .as_deref()
        .map(|raw| {
            serde_json::from_value(Value::String(raw.to_owned())).map_err(|_| {
                ServiceError::invalid(
                    "actor_type",
                    "actor_type must be USER, API_KEY, SERVICE_STAFF or SYSTEM",
                )
            })
        })
        .transpose()?;
    if let Some(action) = params.action.as_deref()
        && !ACTIONS.iter().any(|(a, _)| *a == action)
    {
        return Err(ServiceError::invalid(
            "action",
            "unknown action; see GET /activity-log/actions",
        ));
    }
    let since = parse_time("since", params.since.as_deref())?;
    let until = parse_time("until", params.until.as_deref())?;
    let entries: Vec<ActivityEntry> = stored::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|e| actor_type.is_none_or(|t| e.actor_type == t))
        .filter(|e| params.action.as_deref().is_none_or(|a| e.action == a))
        .filter(|e| params.target_id.is_none_or(|t| e.target_id == Some(t)))
        .filter(|e| {
            params
                .target_type
                .as_deref()
                .is_none_or(|t| e.target_type == t)
        })
        .filter(|e| since.is_none_or(|s| e.created_at >= s))
        .filter(|e| until.is_none_or(|u| e.created_at < u))
        .collect();
    let (page, page_info) = paginate(
        mailward_api_types::PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        entries,
    )?;
    Ok(ActivityList {
        data: page.iter().map(view).collect(),
        page_info,
    })
}

/// One entry.
pub async fn get(app: &AppState, caller: &Caller, id: Uuid) -> Result<EntryView, ServiceError> {
    caller.require_admin()?;
    caller.require_unlimited()?;
    stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .map(|e| view(&e))
        .ok_or_else(|| ServiceError::not_found("activity entry"))
}

/// The catalogue of actions.
pub fn actions() -> Vec<ActivityAction> {
    ACTIONS
        .iter()
        .map(|(action, description)| ActivityAction {
            action: (*action).to_owned(),
            description: (*description).to_owned(),
        })
        .collect()
}
