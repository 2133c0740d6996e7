//! SCIM `Groups`: Mailward's groups, and group membership as the members' group limits. A
//! member provisioned over SCIM whose groups are all removed sees no domain.

use super::{GROUP_SCHEMA, ScimError, list_response, meta, parse_filter, patch_operations};
use crate::caller::Caller;
use crate::state::AppState;
use mailward_api_types::admin::{CreateGroupRequest, UpdateGroupRequest, UpdateMemberRequest};
use mailward_domain::admin::Group;
use mailward_domain::model::Membership;
use mailward_store::{accounts, scim};
use serde_json::{Value, json};
use uuid::Uuid;

fn resource(base: &str, group: &Group, members: &[Membership]) -> Value {
    json!({
        "schemas": [GROUP_SCHEMA],
        "id": group.id,
        "displayName": group.name,
        "members": members
            .iter()
            .filter(|m| m.groups.contains(&group.id))
            .map(|m| json!({
                "value": m.account_id,
                "display": m.email,
                "type": "User",
                "$ref": format!("{base}/scim/v2/Users/{}", m.account_id),
            }))
            .collect::<Vec<_>>(),
        "meta": meta(
            "Group",
            format!("{base}/scim/v2/Groups/{}", group.id),
            group.created_at,
            group.updated_at,
            group.updated_at.unix_timestamp().unsigned_abs(),
        ),
    })
}

async fn load(app: &AppState, caller: &Caller, id: &str) -> Result<Group, ScimError> {
    let id = Uuid::parse_str(id).map_err(|_| ScimError::not_found("group"))?;
    mailward_store::groups::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .find(|g| g.id == id)
        .ok_or_else(|| ScimError::not_found("group"))
}

/// `GET /scim/v2/Groups`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    base: &str,
    filter: Option<&str>,
    start_index: usize,
    count: usize,
) -> Result<Value, ScimError> {
    let filter = filter
        .map(|f| parse_filter(f, &["displayName"]))
        .transpose()?;
    let members = accounts::members_of(app.store.as_ref(), caller.org_id).await?;
    let mut groups = mailward_store::groups::list(app.store.as_ref(), caller.org_id).await?;
    groups.sort_by_key(|g| g.created_at);
    let all = groups
        .iter()
        .filter(|g| filter.as_ref().is_none_or(|(_, v)| g.name == *v))
        .map(|g| resource(base, g, &members))
        .collect();
    Ok(list_response(all, start_index, count))
}

/// `GET /scim/v2/Groups/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
) -> Result<Value, ScimError> {
    let group = load(app, caller, id).await?;
    let members = accounts::members_of(app.store.as_ref(), caller.org_id).await?;
    Ok(resource(base, &group, &members))
}

fn member_ids(value: &Value) -> Result<Vec<Uuid>, ScimError> {
    let items = match value {
        Value::Array(items) => items.clone(),
        Value::Null => Vec::new(),
        other => vec![other.clone()],
    };
    items
        .iter()
        .map(|m| {
            m["value"]
                .as_str()
                .and_then(|v| Uuid::parse_str(v).ok())
                .ok_or_else(|| ScimError::bad("invalidValue", "members[].value is a user id"))
        })
        .collect()
}

fn display_name(body: &Value) -> Result<Option<String>, ScimError> {
    match body.get("displayName") {
        None => Ok(None),
        Some(Value::String(name)) => Ok(Some(name.clone())),
        Some(_) => Err(ScimError::bad("invalidValue", "displayName is a string")),
    }
}

/// Sets `group` in or out of each account's group limits (the member must exist).
async fn set_members(
    app: &AppState,
    caller: &Caller,
    group: Uuid,
    add: &[Uuid],
    remove: &[Uuid],
) -> Result<(), ScimError> {
    let store = app.store.as_ref();
    for (account, joining) in add
        .iter()
        .map(|a| (a, true))
        .chain(remove.iter().map(|a| (a, false)))
    {
        let Some(member) = accounts::membership(store, caller.org_id, *account).await? else {
            if joining {
                return Err(ScimError::bad(
                    "invalidValue",
                    format!("{account} is not a member"),
                ));
            }
            continue;
        };
        let mut groups = member.groups.clone();
        groups.retain(|g| *g != group);
        if joining {
            groups.push(group);
        }
        if groups == member.groups {
            continue;
        }
        crate::members::update(
            app,
            caller,
            *account,
            UpdateMemberRequest {
                roles: None,
                groups: Some(groups.clone()),
            },
        )
        .await?;
        if let Some(user) = scim::user(store, caller.org_id, *account).await? {
            let mut next = user.value;
            next.groups = groups;
            next.revision += 1;
            next.updated_at = app.clock.now();
            store
                .transact(vec![scim::put_user_op(&next, Some(user.version))?])
                .await?;
        }
    }
    Ok(())
}

/// `POST /scim/v2/Groups`: a new Mailward group, with its members.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    base: &str,
    body: &Value,
) -> Result<(u16, Value), ScimError> {
    let name = display_name(body)?
        .ok_or_else(|| ScimError::bad("invalidValue", "displayName is required"))?;
    let members = member_ids(body.get("members").unwrap_or(&Value::Null))?;
    let created = crate::groups::create(
        app,
        caller,
        CreateGroupRequest {
            name,
            external_customer_id: None,
            external_billing_entity_id: None,
        },
    )
    .await?;
    set_members(app, caller, created.id, &members, &[]).await?;
    Ok((201, get(app, caller, base, &created.id.to_string()).await?))
}

/// `PUT /scim/v2/Groups/{id}`: the name and the whole member list.
pub async fn replace(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let group = load(app, caller, id).await?;
    if let Some(name) = display_name(body)?.filter(|n| *n != group.name) {
        rename(app, caller, group.id, name).await?;
    }
    let wanted = member_ids(body.get("members").unwrap_or(&Value::Null))?;
    let current: Vec<Uuid> = accounts::members_of(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|m| m.groups.contains(&group.id))
        .map(|m| m.account_id)
        .collect();
    let leaving: Vec<Uuid> = current
        .iter()
        .filter(|a| !wanted.contains(a))
        .copied()
        .collect();
    set_members(app, caller, group.id, &wanted, &leaving).await?;
    get(app, caller, base, id).await
}

async fn rename(app: &AppState, caller: &Caller, id: Uuid, name: String) -> Result<(), ScimError> {
    crate::groups::update(
        app,
        caller,
        id,
        UpdateGroupRequest {
            name: Some(name),
            ..UpdateGroupRequest::default()
        },
    )
    .await?;
    Ok(())
}

/// The member a `members[value eq "<id>"]` path names.
fn filtered_member(path: &str) -> Option<Uuid> {
    let inner = path.strip_prefix("members[")?.strip_suffix(']')?;
    let (_, value) = parse_filter(inner, &["value"]).ok()?;
    Uuid::parse_str(&value).ok()
}

/// `PATCH /scim/v2/Groups/{id}`: `displayName`, and `members` added, removed or replaced.
pub async fn patch(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let group = load(app, caller, id).await?;
    for op in patch_operations(body)? {
        let path = op.path.as_deref().map(str::to_ascii_lowercase);
        match (op.op.as_str(), path.as_deref()) {
            (_, Some("displayname")) => {
                let name = op
                    .value
                    .as_str()
                    .ok_or_else(|| ScimError::bad("invalidValue", "displayName is a string"))?;
                rename(app, caller, group.id, name.to_owned()).await?;
            }
            ("add", Some("members")) => {
                set_members(app, caller, group.id, &member_ids(&op.value)?, &[]).await?
            }
            ("remove", Some("members")) => {
                let ids = member_ids(&op.value)?;
                let ids = if ids.is_empty() {
                    all_members(app, caller, group.id).await?
                } else {
                    ids
                };
                set_members(app, caller, group.id, &[], &ids).await?;
            }
            ("replace", Some("members")) => {
                let wanted = member_ids(&op.value)?;
                let leaving: Vec<Uuid> = all_members(app, caller, group.id)
                    .await?
                    .into_iter()
                    .filter(|a| !wanted.contains(a))
                    .collect();
                set_members(app, caller, group.id, &wanted, &leaving).await?;
            }
            ("remove", Some(p)) if p.starts_with("members[") => {
                let member =
                    filtered_member(op.path.as_deref().unwrap_or_default()).ok_or_else(|| {
                        ScimError::bad("invalidPath", "use members[value eq \"<id>\"]")
                    })?;
                set_members(app, caller, group.id, &[], &[member]).await?;
            }
            (_, None) => {
                if let Some(name) = display_name(&op.value)? {
                    rename(app, caller, group.id, name).await?;
                }
                if let Some(members) = op.value.get("members") {
                    set_members(app, caller, group.id, &member_ids(members)?, &[]).await?;
                }
            }
            _ => {
                return Err(ScimError::bad(
                    "invalidPath",
                    "the path is displayName or members",
                ));
            }
        }
    }
    get(app, caller, base, id).await
}

async fn all_members(app: &AppState, caller: &Caller, group: Uuid) -> Result<Vec<Uuid>, ScimError> {
    Ok(accounts::members_of(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|m| m.groups.contains(&group))
        .map(|m| m.account_id)
        .collect())
}

/// `DELETE /scim/v2/Groups/{id}`.
pub async fn delete(app: &AppState, caller: &Caller, id: &str) -> Result<(), ScimError> {
    let group = load(app, caller, id).await?;
    crate::groups::delete(app, caller, group.id).await?;
    Ok(())
}
