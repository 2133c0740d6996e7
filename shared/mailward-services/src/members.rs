//! Members (SPEC §4.2): the people of an organization, their roles and the groups they are
//! limited to. Administrators (and read-write API keys) manage them; the last administrator is
//! never removed or demoted.

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::people::{may_add_directly, parse_groups, parse_roles};
use crate::state::AppState;
use mailward_api_types::admin::{
    AddMemberRequest, Member, MemberMfaStatus, MemberStatus, UpdateMemberRequest,
};
use mailward_domain::diff::previous_attributes;
use mailward_domain::email::EmailAddress;
use mailward_domain::events::types::{MEMBER_ADDED, MEMBER_REMOVED, MEMBER_UPDATED};
use mailward_domain::model::Membership;
use mailward_domain::store::WriteOp;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, accounts, identity, orgs};
use uuid::Uuid;

pub use crate::people::view;

/// Fills the copied email of memberships stored before it was copied.
async fn with_email(
    app: &AppState,
    mut membership: Membership,
) -> Result<Membership, ServiceError> {
    if membership.email.is_empty()
        && let Some(account) =
            accounts::get_by_id(app.store.as_ref(), membership.account_id).await?
    {
        membership.email = account.email;
    }
    Ok(membership)
}

/// Refuses callers that may not manage people: anyone but administrators and read-write keys,
/// and members limited to groups.
fn require_manager(caller: &Caller) -> Result<(), ServiceError> {
    caller.require_org_admin()
}

/// The members of the organization, oldest first.
pub async fn list(app: &AppState, caller: &Caller) -> Result<Vec<Member>, ServiceError> {
    caller.require_unlimited()?;
    let sso = identity::sso(app.store.as_ref(), caller.org_id)
        .await?
        .map(|c| c.value);
    let mut members = Vec::new();
    for m in accounts::members_of(app.store.as_ref(), caller.org_id).await? {
        let mut member = view(&with_email(app, m).await?);
        member.auth_provider = crate::people::provider_of(sso.as_ref(), &member.email);
        members.push(member);
    }
    members.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(members)
}

/// A check that keeps another administrator in place while `leaving` stops being one; refused
/// when `leaving` is the last administrator.
async fn another_admin_stays(
    app: &AppState,
    org: Uuid,
    leaving: Uuid,
) -> Result<WriteOp, ServiceError> {
    accounts::members_of_versioned(app.store.as_ref(), org)
        .await?
        .into_iter()
        .find(|m| m.value.account_id != leaving && m.value.is_admin())
        .map(|m| accounts::unchanged_membership_op(org, m.value.account_id, m.version))
        .ok_or_else(|| {
            ServiceError::new(
                ErrorKind::Conflict,
                "last_admin",
                "the organization's last administrator cannot be removed or demoted; make another member an administrator first",
            )
        })
}

pub(crate) fn event_op(
    event: &str,
    membership: &Membership,
    now: time::OffsetDateTime,
    previous: Option<serde_json::Value>,
) -> Result<WriteOp, ServiceError> {
    let object = serde_json::to_value(view(membership))?;
    Ok(OutboxEvent::new(event, membership.org_id, now, object, previous).write_op()?)
}

/// What [`add`] did.
#[derive(Debug)]
pub enum Added {
    /// The account became a member (201).
    Created(Member),
    /// The account was a member already; its roles and groups were applied (200).
    Existing(Member),
    /// The account was invited, and becomes a member once it accepts (201, `status`
    /// `pending_acceptance`).
    Pending(Member),
}

/// Adds an existing account to the organization, or applies roles and groups to a member.
pub async fn add(
    app: &AppState,
    caller: &Caller,
    input: AddMemberRequest,
) -> Result<Added, ServiceError> {
    require_manager(caller)?;
    let email = EmailAddress::parse(&input.email)
        .map_err(|_| ServiceError::invalid("email", "email must be a valid email address"))?;
    let roles = parse_roles(&input.roles)?;
    let groups = parse_groups(app, caller, &input.groups).await?;
    let Some(account) = accounts::get_by_email(app.store.as_ref(), email.as_str()).await? else {
        return Err(ServiceError::invalid(
            "email",
            "no account exists for this address; invite the person with POST /invitations",
        ));
    };
    let account = account.value;
    if accounts::membership(app.store.as_ref(), caller.org_id, account.id)
        .await?
        .is_some()
    {
        let member = update(
            app,
            caller,
            account.id,
            UpdateMemberRequest {
                roles: Some(input.roles),
                groups: Some(groups),
            },
        )
        .await?;
        return Ok(Added::Existing(member));
    }
    let now = app.clock.now();
    let membership = Membership {
        org_id: caller.org_id,
        account_id: account.id,
        email: account.email.clone(),
        roles,
        groups,
        mfa_seen_at: None,
        scim_managed: false,
        created_at: now,
    };
    if !may_add_directly(app, caller, caller.org_id, &account).await? {
        let invited = crate::invitations::invite_existing(app, caller, &email, &membership).await?;
        return Ok(Added::Pending(Member {
            status: MemberStatus::PendingAcceptance,
            created_at: invited.created_at,
            ..view(&membership)
        }));
    }
    let mut ops = vec![
        accounts::add_membership_op(&membership)?,
        event_op(MEMBER_ADDED, &membership, now, None)?,
    ];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "member.added",
            "member",
            Some(account.id),
            format!("added {} as a member", account.email),
        ),
    )?);
    match app.store.transact(ops).await {
        Ok(()) => Ok(Added::Created(view(&membership))),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "the account became a member meanwhile; retry to apply roles and groups",
        )),
        Err(e) => Err(e.into()),
    }
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<Versioned<Membership>, ServiceError> {
    let mut found = accounts::membership_versioned(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("member"))?;
    found.value = with_email(app, found.value).await?;
    Ok(found)
}

/// Changes a member's roles and groups.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateMemberRequest,
) -> Result<Member, ServiceError> {
    require_manager(caller)?;
    let roles = input.roles.as_deref().map(parse_roles).transpose()?;
    let groups = match &input.groups {
        Some(ids) => Some(parse_groups(app, caller, ids).await?),
        None => None,
    };
    for _ in 0..3 {
        let current = load(app, caller, id).await?;
        let mut next = current.value.clone();
        if let Some(roles) = &roles {
            next.roles = roles.clone();
        }
        if let Some(groups) = &groups {
            next.groups = groups.clone();
        }
        if next == current.value {
            return Ok(view(&next));
        }
        let before = serde_json::to_value(view(&current.value))?;
        let after = serde_json::to_value(view(&next))?;
        let previous = previous_attributes(&before, &after);
        let now = app.clock.now();
        let mut ops = vec![
            accounts::save_membership_op(&next, current.version)?,
            event_op(MEMBER_UPDATED, &next, now, previous.clone())?,
        ];
        if current.value.is_admin() && !next.is_admin() {
            ops.push(another_admin_stays(app, caller.org_id, id).await?);
        }
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                "member.updated",
                "member",
                Some(id),
                format!("changed the roles or groups of {}", next.email),
            )
            .previous(previous),
        )?);
        match app.store.transact(ops).await {
            Ok(()) => return Ok(view(&next)),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the member or the administrators changed meanwhile; retry",
    ))
}

/// Ends what a person removed from `org` held there: their dashboard sessions and the MCP
/// connections they made for it (every request checks the membership anyway; this removes
/// what would otherwise linger until it expires).
pub async fn end_access(
    app: &AppState,
    account: Uuid,
    org: Uuid,
) -> Result<(), mailward_domain::store::StoreError> {
    let store = app.store.as_ref();
    identity::end_sessions_in(store, account, org).await?;
    for connection in mailward_store::oauth::list_connections(store, account).await? {
        if connection.org_id == Some(org) {
            mailward_store::oauth::delete_connection(store, account, connection.id).await?;
        }
    }
    Ok(())
}

/// Removes a member (their sessions and MCP connections for the organization end at once).
pub async fn remove(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    require_manager(caller)?;
    for _ in 0..3 {
        let current = load(app, caller, id).await?;
        let now = app.clock.now();
        let mut ops = vec![
            accounts::remove_membership_op(caller.org_id, id, current.version),
            event_op(MEMBER_REMOVED, &current.value, now, None)?,
        ];
        if current.value.is_admin() {
            ops.push(another_admin_stays(app, caller.org_id, id).await?);
        }
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                "member.removed",
                "member",
                Some(id),
                format!("removed {}", current.value.email),
            ),
        )?);
        match app.store.transact(ops).await {
            Ok(()) => {
                // The membership check already refuses the removed person's tokens; their
                // stored sessions in this organization go too.
                if let Err(e) = end_access(app, id, caller.org_id).await {
                    tracing::warn!(error = %e, "could not end a removed member's sessions");
                }
                return Ok(());
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the member or the administrators changed meanwhile; retry",
    ))
}

/// Each member's MFA status: whether they have a confirmed authenticator app, when a session
/// with a second factor was first seen, and whether the organization's requirement holds them
/// until they enrol.
pub async fn mfa_statuses(
    app: &AppState,
    caller: &Caller,
) -> Result<Vec<MemberMfaStatus>, ServiceError> {
    require_manager(caller)?;
    let required = orgs::get(app.store.as_ref(), caller.org_id)
        .await?
        .is_some_and(|o| o.value.require_mfa);
    let mut out = Vec::new();
    for m in accounts::members_of(app.store.as_ref(), caller.org_id).await? {
        let m = with_email(app, m).await?;
        let enrolled = identity::has_totp(app.store.as_ref(), m.account_id).await?;
        out.push(MemberMfaStatus {
            member_id: m.account_id,
            email: m.email.clone(),
            mfa_enabled: enrolled,
            mfa_seen_at: m.mfa_seen_at,
            blocked_by_requirement: required && !enrolled,
        });
    }
    out.sort_by(|a, b| a.email.cmp(&b.email));
    Ok(out)
}
