//! Groups of domains (for managed-service providers: usually one per customer).

use super::{Access, Context, Deleted, Order, Tool, ToolError};
use mailward_api_types::admin::{
    CreateGroupRequest, Group as GroupView, GroupList, ListGroupsParams, UpdateGroupRequest,
};
use mailward_services::groups;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `list_groups`.
pub struct ListGroups;

/// Order and page of the group list.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListGroupsInput {
    /// Sort field: name or created_at
    pub sort: Option<String>,
    /// Sort order
    #[schema(inline)]
    pub order: Option<Order>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl Tool for ListGroups {
    const NAME: &'static str = "list_groups";
    const DESCRIPTION: &'static str = "The organization's groups (for managed-service providers: usually one per customer) with their domain counts.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("groups:read");
    const TITLE: &'static str = "List groups";
    type Input = ListGroupsInput;
    type Output = GroupList;

    async fn call(ctx: &Context, a: ListGroupsInput) -> Result<GroupList, ToolError> {
        let params = ListGroupsParams {
            sort: a.sort,
            order: a.order.map(|o| o.as_str().to_owned()),
            page: a.page,
            per_page: a.per_page,
            ..ListGroupsParams::default()
        };
        Ok(groups::list(&ctx.app, ctx.caller()?, &params).await?)
    }
}

/// `create_group`.
pub struct CreateGroup;

impl Tool for CreateGroup {
    const NAME: &'static str = "create_group";
    const DESCRIPTION: &'static str = "Creates a group to organize domains (e.g. one per customer). Administrators and editors not limited to groups.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("groups:write");
    const TITLE: &'static str = "Create group";
    const IDEMPOTENT: bool = false;
    type Input = CreateGroupRequest;
    type Output = GroupView;

    async fn call(ctx: &Context, input: CreateGroupRequest) -> Result<GroupView, ToolError> {
        Ok(groups::create(&ctx.app, ctx.caller()?, input).await?)
    }
}

/// One group.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupInput {
    /// The group id
    pub group_id: Uuid,
}

/// `update_group`.
pub struct UpdateGroup;

/// A group and what changes (the body of `POST /groups/{id}`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGroupInput {
    /// The group id
    pub group_id: Uuid,
    /// What changes.
    pub changes: UpdateGroupRequest,
}

impl Tool for UpdateGroup {
    const NAME: &'static str = "update_group";
    const DESCRIPTION: &'static str =
        "Renames a group or changes its external ids. Send only what changes in `changes`.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("groups:write");
    const TITLE: &'static str = "Update group";
    const DESTRUCTIVE: bool = true;
    type Input = UpdateGroupInput;
    type Output = GroupView;

    async fn call(ctx: &Context, a: UpdateGroupInput) -> Result<GroupView, ToolError> {
        Ok(groups::update(&ctx.app, ctx.caller()?, a.group_id, a.changes).await?)
    }
}

/// `delete_group`.
pub struct DeleteGroup;

impl Tool for DeleteGroup {
    const NAME: &'static str = "delete_group";
    const DESCRIPTION: &'static str = "Deletes a group; its domains stay, ungrouped. Refused while a member is limited to this group alone.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("groups:write");
    const TITLE: &'static str = "Delete group";
    const DESTRUCTIVE: bool = true;
    type Input = GroupInput;
    type Output = Deleted;

    async fn call(ctx: &Context, a: GroupInput) -> Result<Deleted, ToolError> {
        groups::delete(&ctx.app, ctx.caller()?, a.group_id).await?;
        Ok(Deleted::id(a.group_id))
    }
}
