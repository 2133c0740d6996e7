//! The activity log (SPEC §4.5, §2.13).

use crate::common::PageInfo;
use mailward_domain::admin::ActorType;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// One entry: who did what to which target, when.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ActivityEntry {
    pub id: Uuid,
    /// USER, API_KEY, SERVICE_STAFF or SYSTEM.
    #[schema(value_type = String)]
    pub actor_type: ActorType,
    /// The account, API key or staff id; null for SYSTEM.
    pub actor_id: Option<Uuid>,
    /// See `GET /activity-log/actions`.
    pub action: String,
    /// domain, task, group, member, invitation, api_key, webhook_endpoint, organization or
    /// support_ticket.
    pub target_type: String,
    pub target_id: Option<Uuid>,
    /// One line for a person.
    pub summary: String,
    /// Previous values of what changed, when there are any.
    pub previous: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// A page of entries, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActivityList {
    pub data: Vec<ActivityEntry>,
    pub page_info: PageInfo,
}

/// `GET /activity-log` filters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ActivityParams {
    /// USER, API_KEY, SERVICE_STAFF or SYSTEM.
    #[param(value_type = Option<ActorType>, inline)]
    pub actor_type: Option<String>,
    /// An action of `GET /activity-log/actions`.
    #[param(value_type = Option<Action>, inline)]
    pub action: Option<String>,
    /// The target's id.
    pub target_id: Option<Uuid>,
    /// The kind of target.
    pub target_type: Option<String>,
    /// Entries at or after this time (RFC 3339).
    #[param(format = DateTime)]
    pub since: Option<String>,
    /// Entries before this time (RFC 3339).
    #[param(format = DateTime)]
    pub until: Option<String>,
    /// 1-based page (default 1).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Page size, 1-100 (default 25).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// An action of the activity log's catalogue.
    pub Action = mailward_domain::admin::ACTIONS.iter().map(|(action, _)| *action)
);

/// One action of the catalogue.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ActivityAction {
    pub action: String,
    pub description: String,
}
