//! SCIM `Users`: the people the identity provider provisioned. A user is a member while
//! `active`; deactivating or deleting it removes the membership (never the last administrator)
//! and ends the person's sessions and MCP connections for the organization at once.

use super::{ScimError, USER_SCHEMA, list_response, meta, parse_filter};
use crate::caller::Caller;
use crate::state::AppState;
use mailward_api_types::admin::{RoleView, UpdateMemberRequest};
use mailward_domain::email::EmailAddress;
use mailward_domain::events::types::MEMBER_ADDED;
use mailward_domain::model::{Account, Membership, Role};
use mailward_domain::scim::ScimUser;
use mailward_store::{Versioned, accounts, scim};
use serde_json::{Value, json};
use uuid::Uuid;

/// The resource of a provisioned user.
pub fn resource(base: &str, user: &ScimUser, group_names: &[(Uuid, String)]) -> Value {
    let location = format!("{base}/scim/v2/Users/{}", user.account_id);
    let formatted = [user.given_name.as_deref(), user.family_name.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = json!({
        "schemas": [USER_SCHEMA],
        "id": user.account_id,
        "userName": user.user_name,
        "active": user.active,
        "emails": [{"value": user.user_name, "primary": true, "type": "work"}],
        "roles": user.roles.iter().map(|r| json!({"value": r.as_str()})).collect::<Vec<_>>(),
        "groups": user.groups.iter().filter_map(|g| {
            group_names.iter().find(|(id, _)| id == g).map(|(id, name)| json!({
                "value": id, "display": name, "$ref": format!("{base}/scim/v2/Groups/{id}"),
            }))
        }).collect::<Vec<_>>(),
        "meta": meta("User", location, user.created_at, user.updated_at, user.revision),
    });
    if let Some(id) = &user.external_id {
        out["externalId"] = json!(id);
    }
    if let Some(name) = &user.display_name {
        out["displayName"] = json!(name);
    }
    if user.given_name.is_some() || user.family_name.is_some() {
        out["name"] = json!({
            "givenName": user.given_name,
            "familyName": user.family_name,
            "formatted": formatted,
        });
    }
    out
}

async fn group_names(app: &AppState, org: Uuid) -> Result<Vec<(Uuid, String)>, ScimError> {
    Ok(mailward_store::groups::list(app.store.as_ref(), org)
        .await?
        .into_iter()
        .map(|g| (g.id, g.name))
        .collect())
}

/// `GET /scim/v2/Users`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    base: &str,
    filter: Option<&str>,
    start_index: usize,
    count: usize,
) -> Result<Value, ScimError> {
    let filter = filter
        .map(|f| parse_filter(f, &["userName", "externalId"]))
        .transpose()?;
    let names = group_names(app, caller.org_id).await?;
    let mut users = scim::users(app.store.as_ref(), caller.org_id).await?;
    users.sort_by_key(|u| u.created_at);
    let all = users
        .iter()
        .filter(|u| match &filter {
            Some((attr, value)) if attr == "userName" => u.user_name.eq_ignore_ascii_case(value),
            Some((_, value)) => u.external_id.as_deref() == Some(value.as_str()),
            None => true,
        })
        .map(|u| resource(base, u, &names))
        .collect();
    Ok(list_response(all, start_index, count))
}

async fn load(app: &AppState, caller: &Caller, id: &str) -> Result<Versioned<ScimUser>, ScimError> {
    let id = Uuid::parse_str(id).map_err(|_| ScimError::not_found("user"))?;
    scim::user(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ScimError::not_found("user"))
}

/// `GET /scim/v2/Users/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
) -> Result<Value, ScimError> {
    let user = load(app, caller, id).await?;
    Ok(resource(
        base,
        &user.value,
        &group_names(app, caller.org_id).await?,
    ))
}

/// What a User body sets.
struct Fields {
    user_name: Option<String>,
    external_id: Option<Option<String>>,
    given_name: Option<Option<String>>,
    family_name: Option<Option<String>>,
    display_name: Option<Option<String>>,
    active: Option<bool>,
    roles: Option<Vec<Role>>,
}

fn text(value: &Value, attr: &str) -> Result<Option<String>, ScimError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) if s.chars().count() <= 256 => Ok(Some(s.clone())),
        _ => Err(ScimError::bad(
            "invalidValue",
            format!("{attr} is a string of at most 256 characters"),
        )),
    }
}

fn roles(value: &Value) -> Result<Vec<Role>, ScimError> {
    let items = value
        .as_array()
        .ok_or_else(|| ScimError::bad("invalidValue", "roles is a list"))?;
    let mut out = Vec::new();
    for item in items {
        let raw = item.get("value").unwrap_or(item);
        let role = serde_json::from_value::<RoleView>(raw.clone())
            .map_err(|_| ScimError::bad("invalidValue", "a role is admin, editor or viewer"))?;
        out.push(Role::from(role));
    }
    Ok(out)
}

/// Reads the attributes of a User body (create, replace, or a PATCH value without path).
fn fields(body: &Value) -> Result<Fields, ScimError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ScimError::bad("invalidSyntax", "the body is a JSON object"))?;
    let mut f = Fields {
        user_name: None,
        external_id: None,
        given_name: None,
        family_name: None,
        display_name: None,
        active: None,
        roles: None,
    };
    for (key, value) in obj {
        match key.to_ascii_lowercase().as_str() {
            "username" => f.user_name = text(value, "userName")?,
            "externalid" => f.external_id = Some(text(value, "externalId")?),
            "displayname" => f.display_name = Some(text(value, "displayName")?),
            "active" => {
                f.active = Some(
                    value
                        .as_bool()
                        .ok_or_else(|| ScimError::bad("invalidValue", "active is a boolean"))?,
                );
            }
            "roles" => f.roles = Some(roles(value)?),
            "name" => {
                f.given_name = Some(text(
                    value.get("givenName").unwrap_or(&Value::Null),
                    "name.givenName",
                )?);
                f.family_name = Some(text(
                    value.get("familyName").unwrap_or(&Value::Null),
                    "name.familyName",
                )?);
            }
            "name.givenname" => f.given_name = Some(text(value, "name.givenName")?),
            "name.familyname" => f.family_name = Some(text(value, "name.familyName")?),
            // Read-only, or carried by userName: accepted and ignored (RFC 7644 §3.5.1).
            "schemas" | "id" | "meta" | "emails" | "groups" | "password" => {}
            other => {
                return Err(ScimError::bad(
                    "invalidPath",
                    format!("attribute {other} is not supported"),
                ));
            }
        }
    }
    Ok(f)
}

fn apply(user: &mut ScimUser, f: Fields) {
    if let Some(v) = f.external_id {
        user.external_id = v;
    }
    if let Some(v) = f.given_name {
        user.given_name = v;
    }
    if let Some(v) = f.family_name {
        user.family_name = v;
    }
    if let Some(v) = f.display_name {
        user.display_name = v;
    }
    if let Some(v) = f.roles.filter(|r| !r.is_empty()) {
        user.roles = v;
    }
}

/// The address a create provisions: an email at a verified domain of the organization (the
/// tenant-trust rule: the identity provider speaks for the organization's own domains).
async fn provisionable(
    app: &AppState,
    caller: &Caller,
    user_name: Option<&str>,
) -> Result<String, ScimError> {
    let raw = user_name.ok_or_else(|| {
        ScimError::bad("invalidValue", "userName (the email address) is required")
    })?;
    let email = EmailAddress::parse(raw.trim())
        .map_err(|_| ScimError::bad("invalidValue", "userName must be an email address"))?;
    let email = email.as_str().to_owned();
    let domain = email.rsplit_once('@').map(|(_, d)| d).unwrap_or_default();
    if !crate::ownership::verified_domain(app, caller.org_id, domain).await? {
        return Err(ScimError {
            status: 403,
            scim_type: None,
            detail: format!(
                "{domain} is not a verified domain of the organization: prove it with the single sign-on TXT record (POST /sso/verify) or by monitoring it"
            ),
        });
    }
    Ok(email)
}

/// `POST /scim/v2/Users`: provisions a person of a verified domain of the organization (the
/// tenant-trust rule: the identity provider speaks for the organization's own domains). An
/// account is created when none uses the address; a member who was added otherwise is adopted.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    base: &str,
    body: &Value,
) -> Result<(u16, Value), ScimError> {
    let f = fields(body)?;
    let email = provisionable(app, caller, f.user_name.as_deref()).await?;
    let store = app.store.as_ref();
    let now = app.clock.now();
    let existing = accounts::get_by_email(store, &email)
        .await?
        .map(|a| a.value);
    if let Some(account) = &existing
        && scim::user(store, caller.org_id, account.id)
            .await?
            .is_some()
    {
        return Err(ScimError {
            status: 409,
            scim_type: Some("uniqueness"),
            detail: format!("{email} is provisioned already"),
        });
    }
    let account = existing.clone().unwrap_or(Account {
        id: Uuid::new_v4(),
        email: email.clone(),
        created_at: now,
    });
    let membership = accounts::membership(store, caller.org_id, account.id).await?;
    let mut user = ScimUser {
        org_id: caller.org_id,
        account_id: account.id,
        user_name: email.clone(),
        external_id: None,
        given_name: None,
        family_name: None,
        display_name: None,
        active: f.active.unwrap_or(true),
        roles: membership
            .as_ref()
            .map_or_else(|| vec![Role::Viewer], |m| m.roles.clone()),
        groups: membership
            .as_ref()
            .map(|m| m.groups.clone())
            .unwrap_or_default(),
        created_at: now,
        updated_at: now,
        revision: 1,
    };
    apply(&mut user, f);
    let mut ops = vec![scim::put_user_op(&user, None)?];
    if existing.is_none() {
        ops.push(accounts::create_account_op(&account)?);
    }
    ops.extend(membership_ops(app, caller, &user, membership).await?);
    match store.transact(ops).await {
        Ok(()) => {}
        Err(e) if e.is_conflict() => {
            return Err(ScimError {
                status: 409,
                scim_type: Some("uniqueness"),
                detail: format!("{email} changed meanwhile; retry"),
            });
        }
        Err(e) => return Err(e.into()),
    }
    Ok((
        201,
        resource(base, &user, &group_names(app, caller.org_id).await?),
    ))
}

/// The membership writes of a new provisioned user: an existing member is adopted (managed by
/// SCIM from then on), an active newcomer joins, an inactive one waits.
async fn membership_ops(
    app: &AppState,
    caller: &Caller,
    user: &ScimUser,
    membership: Option<Membership>,
) -> Result<Vec<mailward_domain::store::WriteOp>, ScimError> {
    let store = app.store.as_ref();
    let mut ops = Vec::new();
    let account = user.account_id;
    let email = user.user_name.clone();
    match (membership, user.active) {
        (Some(m), _) => {
            // Adopted: the identity provider manages the member from now on.
            let version = accounts::membership_versioned(store, caller.org_id, account)
                .await?
                .map_or(0, |v| v.version);
            let next = Membership {
                scim_managed: true,
                roles: user.roles.clone(),
                ..m
            };
            ops.push(accounts::save_membership_op(&next, version)?);
            ops.extend(record(app, caller, user, "adopted")?);
        }
        (None, true) => ops.extend(join_ops(app, caller, user, &email)?),
        (None, false) => ops.extend(record(app, caller, user, "provisioned inactive")?),
    }
    Ok(ops)
}

/// The writes that make a provisioned user a member: the membership, its event, the activity.
fn join_ops(
    app: &AppState,
    caller: &Caller,
    user: &ScimUser,
    email: &str,
) -> Result<Vec<mailward_domain::store::WriteOp>, ScimError> {
    let membership = Membership {
        org_id: caller.org_id,
        account_id: user.account_id,
        email: email.to_owned(),
        roles: user.roles.clone(),
        groups: user.groups.clone(),
        mfa_seen_at: None,
        scim_managed: true,
        created_at: app.clock.now(),
    };
    let mut ops = vec![
        accounts::add_membership_op(&membership)?,
        crate::members::event_op(MEMBER_ADDED, &membership, app.clock.now(), None)?,
    ];
    ops.extend(crate::activity::ops(
        app,
        caller,
        crate::activity::Change::new(
            "member.added",
            "member",
            Some(user.account_id),
            format!("{email} provisioned by SCIM token {}", token_id(caller)),
        ),
    )?);
    Ok(ops)
}

/// The activity entry of a change to a provisioned user that no member operation records (its
/// attributes, an adoption, an inactive user): `member.updated` by the SCIM token.
fn record(
    app: &AppState,
    caller: &Caller,
    user: &ScimUser,
    what: &str,
) -> Result<Vec<mailward_domain::store::WriteOp>, ScimError> {
    Ok(crate::activity::ops(
        app,
        caller,
        crate::activity::Change::new(
            "member.updated",
            "member",
            Some(user.account_id),
            format!(
                "{} {what} by SCIM token {}",
                user.user_name,
                token_id(caller)
            ),
        ),
    )?)
}

fn token_id(caller: &Caller) -> String {
    caller
        .actor()
        .1
        .map(|id| id.to_string())
        .unwrap_or_default()
}

/// Saves `next` (read at `version`) and brings the membership in line with it: joined when it
/// became active, removed (with the person's sessions and connections) when it stopped being
/// active, roles and groups applied otherwise.
async fn save(
    app: &AppState,
    caller: &Caller,
    before: &ScimUser,
    mut next: ScimUser,
    version: u64,
) -> Result<ScimUser, ScimError> {
    let store = app.store.as_ref();
    next.updated_at = app.clock.now();
    next.revision = before.revision + 1;
    let member = accounts::membership(store, caller.org_id, next.account_id).await?;
    match (member.is_some(), next.active) {
        (true, false) => crate::members::remove(app, caller, next.account_id).await?,
        (false, true) => {
            let mut ops = join_ops(app, caller, &next, &next.user_name.clone())?;
            ops.push(scim::put_user_op(&next, Some(version))?);
            store.transact(ops).await.map_err(conflict)?;
            return Ok(next);
        }
        (true, true) if next.roles != before.roles => {
            crate::members::update(
                app,
                caller,
                next.account_id,
                UpdateMemberRequest {
                    roles: Some(next.roles.iter().copied().map(RoleView::from).collect()),
                    groups: None,
                },
            )
            .await?;
        }
        // Attributes only (or an inactive user): no member operation records it.
        _ => {
            let mut ops = record(app, caller, &next, "updated")?;
            ops.push(scim::put_user_op(&next, Some(version))?);
            store.transact(ops).await.map_err(conflict)?;
            return Ok(next);
        }
    }
    store
        .transact(vec![scim::put_user_op(&next, Some(version))?])
        .await
        .map_err(conflict)?;
    Ok(next)
}

fn conflict(e: mailward_domain::store::StoreError) -> ScimError {
    if e.is_conflict() {
        ScimError {
            status: 409,
            scim_type: None,
            detail: "the user changed meanwhile; retry".into(),
        }
    } else {
        e.into()
    }
}

/// `PUT /scim/v2/Users/{id}`: replaces the attributes (roles not sent are kept).
pub async fn replace(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let current = load(app, caller, id).await?;
    let f = fields(body)?;
    if f.user_name
        .as_deref()
        .is_some_and(|u| !u.eq_ignore_ascii_case(&current.value.user_name))
    {
        return Err(ScimError::bad(
            "mutability",
            "userName (the email address) cannot change",
        ));
    }
    let mut next = current.value.clone();
    next.external_id = None;
    next.given_name = None;
    next.family_name = None;
    next.display_name = None;
    next.active = f.active.unwrap_or(true);
    apply(&mut next, f);
    let saved = save(app, caller, &current.value, next, current.version).await?;
    Ok(resource(
        base,
        &saved,
        &group_names(app, caller.org_id).await?,
    ))
}

/// `PATCH /scim/v2/Users/{id}` (RFC 7644 §3.5.2): `add`, `replace` and `remove` on the
/// attributes above, with or without a path.
pub async fn patch(
    app: &AppState,
    caller: &Caller,
    base: &str,
    id: &str,
    body: &Value,
) -> Result<Value, ScimError> {
    let current = load(app, caller, id).await?;
    let mut next = current.value.clone();
    for op in super::patch_operations(body)? {
        let value = match (&op.path, op.op.as_str()) {
            (Some(path), "remove") => json!({ path.clone(): Value::Null }),
            (Some(path), _) => json!({ path.clone(): op.value }),
            (None, "remove") => return Err(ScimError::bad("noTarget", "remove needs a path")),
            (None, _) => op.value,
        };
        let f = fields(&value)?;
        if f.user_name
            .as_deref()
            .is_some_and(|u| !u.eq_ignore_ascii_case(&next.user_name))
        {
            return Err(ScimError::bad(
                "mutability",
                "userName (the email address) cannot change",
            ));
        }
        if let Some(active) = f.active {
            next.active = active;
        }
        apply(&mut next, f);
    }
    let saved = save(app, caller, &current.value, next, current.version).await?;
    Ok(resource(
        base,
        &saved,
        &group_names(app, caller.org_id).await?,
    ))
}

/// `DELETE /scim/v2/Users/{id}`: deprovisions: the membership goes (never the last
/// administrator), with the person's sessions and MCP connections for the organization.
pub async fn delete(app: &AppState, caller: &Caller, id: &str) -> Result<(), ScimError> {
    let current = load(app, caller, id).await?;
    let account = current.value.account_id;
    let mut ops = vec![scim::delete_user_op(
        caller.org_id,
        account,
        current.version,
    )];
    if accounts::membership(app.store.as_ref(), caller.org_id, account)
        .await?
        .is_some()
    {
        crate::members::remove(app, caller, account).await?;
    } else {
        ops.extend(record(app, caller, &current.value, "deleted")?);
    }
    app.store.transact(ops).await.map_err(conflict)?;
    Ok(())
}
