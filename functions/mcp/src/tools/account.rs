//! Who the agent acts as, and the organization's activity log.

use super::{Access, Context, NoInput, Tool, ToolError};
use mailward_api_types::activity::{ActivityAction, ActivityList, ActivityParams};
use mailward_api_types::organizations::Organization;
use mailward_domain::admin::ActorType;
use mailward_services::activity;
use mailward_services::caller::Credential;
use mailward_services::organizations;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// `get_account`.
pub struct GetAccount;

/// What `get_account` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountView {
    /// The signed-in person's account id.
    pub account_id: Uuid,
    /// Their role in the organization.
    pub role: String,
    /// The groups they are limited to (empty: every domain).
    pub groups: Vec<Uuid>,
    /// The organization the token is scoped to.
    pub organization: Organization,
}

impl Tool for GetAccount {
    const NAME: &'static str = "get_account";
    const DESCRIPTION: &'static str = "Who you are acting as: the signed-in person's role and group limits, and the organization the token is scoped to (name, plan, settings). Call it first to learn what you may do: a viewer can only read.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = None;
    const TITLE: &'static str = "Get account";
    type Input = NoInput;
    type Output = AccountView;

    async fn call(ctx: &Context, _: NoInput) -> Result<AccountView, ToolError> {
        let caller = ctx.caller()?;
        let organization = organizations::get(&ctx.app, caller, caller.org_id).await?;
        let Credential::Session {
            account_id, role, ..
        } = &caller.credential
        else {
            return Err(ToolError::new("forbidden", "not a person", None));
        };
        Ok(AccountView {
            account_id: *account_id,
            role: role.as_str().to_owned(),
            groups: caller.groups.clone().unwrap_or_default(),
            organization,
        })
    }
}

/// `list_activity_log`.
pub struct ListActivityLog;

/// Filters of the activity log.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityInput {
    /// Who acted
    #[schema(inline)]
    pub actor_type: Option<ActorType>,
    /// One action (see list_activity_log_actions)
    pub action: Option<String>,
    /// Entries about this object
    pub target_id: Option<Uuid>,
    /// Entries about this kind of object, e.g. domain
    pub target_type: Option<String>,
    /// From this time (RFC 3339)
    pub since: Option<String>,
    /// Up to this time (RFC 3339)
    pub until: Option<String>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl Tool for ListActivityLog {
    const NAME: &'static str = "list_activity_log";
    const DESCRIPTION: &'static str = "Who changed what in the organization, newest first, filtered by actor, action, target and time (administrators not limited to groups).";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("activity:read");
    const TITLE: &'static str = "List activity log";
    type Input = ActivityInput;
    type Output = ActivityList;

    async fn call(ctx: &Context, a: ActivityInput) -> Result<ActivityList, ToolError> {
        let params = ActivityParams {
            actor_type: a.actor_type.map(|t| t.as_str().to_owned()),
            action: a.action,
            target_id: a.target_id,
            target_type: a.target_type,
            since: a.since,
            until: a.until,
            page: a.page,
            per_page: a.per_page,
        };
        Ok(activity::list(&ctx.app, ctx.caller()?, &params).await?)
    }
}

/// `list_activity_log_actions`.
pub struct ListActivityLogActions;

/// What `list_activity_log_actions` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionList {
    /// The actions.
    pub data: Vec<ActivityAction>,
}

impl Tool for ListActivityLogActions {
    const NAME: &'static str = "list_activity_log_actions";
    const DESCRIPTION: &'static str = "Every action the activity log records, with its meaning: the values list_activity_log's `action` filter takes.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("activity:read");
    const TITLE: &'static str = "List activity log actions";
    type Input = NoInput;
    type Output = ActionList;

    async fn call(ctx: &Context, _: NoInput) -> Result<ActionList, ToolError> {
        ctx.caller()?;
        Ok(ActionList {
            data: activity::actions(),
        })
    }
}
