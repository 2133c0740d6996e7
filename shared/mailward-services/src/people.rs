//! What the member and invitation operations share: a membership's wire shape, validated
//! roles and groups, and whether an account may join without its consent.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::admin::{AuthProvider, Member, MemberStatus, RoleView};
use mailward_domain::model::{Account, Membership, Role};
use mailward_store::{accounts, groups, orgs};
use uuid::Uuid;

/// How a member signs in: through the organization's single sign-on when their address is at
/// one of its verified domains (`google`, `microsoft`, or `oidc` for any other issuer), else
/// with an emailed code.
pub fn provider_of(
    sso: Option<&mailward_domain::identity::SsoConnection>,
    email: &str,
) -> AuthProvider {
    let domain = email.rsplit_once('@').map(|(_, d)| d).unwrap_or_default();
    match sso.filter(|c| {
        c.domains
            .iter()
            .any(|d| d.name == domain && d.verified_at.is_some())
    }) {
        None => AuthProvider::EmailCode,
        Some(c) => match mailward_domain::identity::provider_kind(&c.issuer) {
            "google" => AuthProvider::Google,
            "microsoft" => AuthProvider::Microsoft,
            _ => AuthProvider::Oidc,
        },
    }
}

/// The wire shape of a membership, `auth_provider` `email_code` (the member list applies
/// [`provider_of`]).
pub fn view(membership: &Membership) -> Member {
    Member {
        id: membership.account_id,
        email: membership.email.clone(),
        roles: membership
            .roles
            .iter()
            .copied()
            .map(RoleView::from)
            .collect(),
        groups: membership.groups.clone(),
        auth_provider: AuthProvider::EmailCode,
        created_at: membership.created_at,
        status: MemberStatus::Active,
    }
}

/// Whether an existing account may be made a member of the caller's organization without its
/// consent (tenant trust): it already shares an organization with the caller (the caller's
/// account's organizations; for an API key, the organization, its parent and its children), or
/// its address is at a verified domain of the organization ([`crate::ownership`]). Anyone else
/// is added pending their acceptance.
pub(crate) async fn may_add_directly(
    app: &AppState,
    caller: &Caller,
    org: Uuid,
    account: &Account,
) -> Result<bool, ServiceError> {
    let store = app.store.as_ref();
    let theirs: Vec<Uuid> = accounts::memberships_of(store, account.id)
        .await?
        .iter()
        .map(|m| m.org_id)
        .collect();
    let shared: Vec<Uuid> = match caller.account_id() {
        Some(me) => accounts::memberships_of(store, me)
            .await?
            .iter()
            .map(|m| m.org_id)
            .collect(),
        None => {
            let mut related = vec![caller.org_id];
            if let Some(current) = orgs::get(store, caller.org_id).await? {
                related.extend(current.value.parent_org_id);
            }
            related.extend(
                orgs::children_of(store, caller.org_id)
                    .await?
                    .iter()
                    .map(|o| o.id),
            );
            related
        }
    };
    if theirs.iter().any(|o| shared.contains(o)) {
        return Ok(true);
    }
    let Some((_, email_domain)) = account.email.rsplit_once('@') else {
        return Ok(false);
    };
    crate::ownership::verified_domain(app, org, email_domain).await
}

/// Validated roles: at least one, each once, strongest first.
pub(crate) fn parse_roles(roles: &[RoleView]) -> Result<Vec<Role>, ServiceError> {
    let mut out: Vec<Role> = Vec::new();
    for role in [Role::Admin, Role::Editor, Role::Viewer] {
        if roles.iter().any(|r| Role::from(*r) == role) {
            out.push(role);
        }
    }
    if out.is_empty() {
        return Err(ServiceError::invalid(
            "roles",
            "roles must hold at least one of admin, editor, viewer",
        ));
    }
    Ok(out)
}

/// Validated group ids: each a group of the caller's organization, each once.
pub(crate) async fn parse_groups(
    app: &AppState,
    caller: &Caller,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, ServiceError> {
    let mut out: Vec<Uuid> = Vec::new();
    for id in ids {
        if out.contains(id) {
            continue;
        }
        if !groups::exists(app.store.as_ref(), caller.org_id, *id).await? {
            return Err(ServiceError::invalid(
                "groups",
                format!("{id} is not a group of this organization"),
            ));
        }
        out.push(*id);
    }
    Ok(out)
}
