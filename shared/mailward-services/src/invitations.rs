//! Invitations (SPEC §4.2): a person without an account is invited by email with a single-use
//! token; accepting it creates their account and their membership with the invited roles and
//! groups. Only the token's SHA-256 is stored.

use crate::activity::{self, Change};
use crate::caller::{Caller, Credential};
use crate::error::{ErrorKind, ServiceError};
use crate::people::{self, parse_groups, parse_roles};
use crate::state::AppState;
use mailward_api_types::admin::{
    AcceptInvitationRequest, CreateInvitationRequest, Invitation as InvitationView,
    InvitationAccepted, RoleView,
};
use mailward_domain::admin::{
    ActorType, INVITATION_TTL_DEFAULT_SECS, INVITATION_TTL_MAX_SECS, INVITATION_TTL_MIN_SECS,
    Invitation,
};
use mailward_domain::email::EmailAddress;
use mailward_domain::events::types::{INVITATION_CREATED, INVITATION_REVOKED, MEMBER_ADDED};
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::{Account, Membership, Role};
use mailward_domain::secrets;
use mailward_domain::store::WriteOp;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, accounts, invitations as stored, orgs};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// Prefix of acceptance tokens (recognisable in logs and secret scanners).
pub const TOKEN_PREFIX: &str = "mwinv_";

fn new_token() -> String {
    secrets::new_invitation_token()
}

fn token_hash(token: &str) -> String {
    secrets::sha256_hex(token.as_bytes())
}

/// The wire shape of an invitation.
pub fn view(invitation: &Invitation) -> InvitationView {
    InvitationView {
        id: invitation.id,
        email: invitation.email.clone(),
        roles: invitation
            .roles
            .iter()
            .copied()
            .map(RoleView::from)
            .collect(),
        groups: invitation.groups.clone(),
        expires_at: invitation.expires_at,
        sent_at: invitation.sent_at,
        created_at: invitation.created_at,
    }
}

fn require_manager(caller: &Caller) -> Result<(), ServiceError> {
    caller.require_org_admin()
}

/// The pending (unexpired) invitations of the organization, oldest first.
pub async fn list(app: &AppState, caller: &Caller) -> Result<Vec<InvitationView>, ServiceError> {
    require_manager(caller)?;
    let now = app.clock.now();
    Ok(stored::list(app.store.as_ref(), caller.org_id)
        .await?
        .iter()
        .filter(|i| i.expires_at > now)
        .map(view)
        .collect())
}

fn parse_ttl(raw: Option<i64>) -> Result<i64, ServiceError> {
    let ttl = raw.unwrap_or(INVITATION_TTL_DEFAULT_SECS);
    if !(INVITATION_TTL_MIN_SECS..=INVITATION_TTL_MAX_SECS).contains(&ttl) {
        return Err(ServiceError::invalid(
            "ttl_sec",
            format!(
                "ttl_sec must be between {INVITATION_TTL_MIN_SECS} (one day) and {INVITATION_TTL_MAX_SECS} (30 days)"
            ),
        ));
    }
    Ok(ttl)
}

fn upstream_failure(message: impl Into<std::borrow::Cow<'static, str>>) -> ServiceError {
    ServiceError::new(ErrorKind::Unavailable, "upstream_failure", message)
}

/// The invitation email: the token, how to accept it, and until when.
pub(crate) fn email_for(
    app: &AppState,
    org_name: &str,
    invitation: &Invitation,
    token: &str,
) -> OutboundEmail {
    let base = app.config.base_url.trim_end_matches('/');
    OutboundEmail {
        attachments: Vec::new(),
        to: invitation.email.clone(),
        subject: format!("You are invited to {org_name} on Mailward"),
        text: format!(
            "You are invited to join {org_name} on Mailward.\n\n\
             Your invitation token is {token}\n\n\
             Accept it with POST {base}/invitations/accept and the body {{\"token\": \"{token}\"}}.\n\
             It can be used once and expires at {expires} (UTC). If you did not expect it, ignore this email.\n",
            expires = invitation
                .expires_at
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        ),
        ..OutboundEmail::default()
    }
}

/// Refuses an invitation the caller may not issue: the invitee has an account already; an API
/// key inviting outside the members' email domains; a pending invitation to the same address.
async fn check_invitee(
    app: &AppState,
    caller: &Caller,
    email: &EmailAddress,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    if accounts::get_by_email(store, email.as_str())
        .await?
        .is_some()
    {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "invitation_invitee_exists",
            "this address already has an account; add it with POST /members",
        )
        .param("email"));
    }
    if matches!(caller.credential, Credential::ApiKey { .. }) {
        let members = accounts::members_of(store, caller.org_id).await?;
        let allowed = members
            .iter()
            .any(|m| EmailAddress::parse(&m.email).is_ok_and(|e| e.domain() == email.domain()));
        if !allowed {
            return Err(ServiceError::new(
                ErrorKind::Forbidden,
                "invitation_domain_not_allowed",
                "with an API key, invitations may only go to an email domain an existing member uses; invite from a signed-in session instead",
            )
            .param("email"));
        }
    }
    no_pending_invitation(app, caller.org_id, email, now).await
}

/// 409 `invitation_exists` when a pending invitation to the address exists.
async fn no_pending_invitation(
    app: &AppState,
    org: Uuid,
    email: &EmailAddress,
    now: OffsetDateTime,
) -> Result<(), ServiceError> {
    if stored::list(app.store.as_ref(), org)
        .await?
        .iter()
        .any(|i| i.email == email.as_str() && i.expires_at > now)
    {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "invitation_exists",
            "a pending invitation to this address exists (an account added by POST /members joins once it accepts); resend it with POST /invitations/{id}/resend",
        )
        .param("email"));
    }
    Ok(())
}

fn event_op(
    event: &str,
    invitation: &Invitation,
    now: OffsetDateTime,
) -> Result<WriteOp, ServiceError> {
    let object = serde_json::to_value(view(invitation))?;
    Ok(OutboxEvent::new(event, invitation.org_id, now, object, None).write_op()?)
}

/// An invitation ready to store, with its token (for the email only).
pub(crate) struct Drafted {
    pub invitation: Invitation,
    pub token: String,
}

pub(crate) fn draft(
    org: Uuid,
    email: &EmailAddress,
    roles: Vec<Role>,
    groups: Vec<Uuid>,
    ttl: i64,
    invited_by: Option<Uuid>,
    now: OffsetDateTime,
) -> Drafted {
    let token = new_token();
    Drafted {
        invitation: Invitation {
            id: Uuid::new_v4(),
            org_id: org,
            email: email.as_str().to_owned(),
            roles,
            groups,
            token_hash: token_hash(&token),
            invited_by,
            ttl_secs: ttl,
            expires_at: now + Duration::seconds(ttl),
            sent_at: None,
            created_at: now,
        },
        token,
    }
}

/// The writes that store a drafted invitation with its event.
pub(crate) fn store_ops(
    drafted: &Drafted,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    let mut ops = stored::create_ops(&drafted.invitation)?;
    ops.push(event_op(INVITATION_CREATED, &drafted.invitation, now)?);
    Ok(ops)
}

/// Emails a stored invitation and notes when; a mail failure leaves it stored unsent.
pub(crate) async fn send(
    app: &AppState,
    org_name: &str,
    drafted: &Drafted,
) -> Result<Invitation, ServiceError> {
    app.mailer
        .send(email_for(app, org_name, &drafted.invitation, &drafted.token))
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, invitation.id = %drafted.invitation.id, "invitation email failed");
            upstream_failure(
                "the invitation email could not be sent; the invitation may have been created without it, so list invitations before retrying (a retry creates a second one) or resend it",
            )
        })?;
    let mut sent = drafted.invitation.clone();
    sent.sent_at = Some(app.clock.now());
    let store = app.store.as_ref();
    // Noting the time is best effort: the email is out whichever way this goes.
    if let Some(current) = stored::get(store, sent.org_id, sent.id).await? {
        let ops = vec![stored::save_op(&sent, current.version)?];
        if let Err(e) = store.transact(ops).await {
            tracing::warn!(error = %e, "could not note an invitation's sending time");
        }
    }
    Ok(sent)
}

async fn org_name(app: &AppState, org: Uuid) -> Result<String, ServiceError> {
    Ok(orgs::get(app.store.as_ref(), org)
        .await?
        .map(|o| o.value.name)
        .unwrap_or_default())
}

/// Invites a person without an account: stores the invitation (`invitation.created`), then
/// emails the token.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateInvitationRequest,
) -> Result<InvitationView, ServiceError> {
    require_manager(caller)?;
    let email = EmailAddress::parse(&input.email)
        .map_err(|_| ServiceError::invalid("email", "email must be a valid email address"))?;
    let roles = parse_roles(&input.roles)?;
    let groups = parse_groups(app, caller, &input.groups).await?;
    let ttl = parse_ttl(input.ttl_sec)?;
    let now = app.clock.now();
    check_invitee(app, caller, &email, now).await?;
    let summary = format!("invited {email}");
    let sent = issue(app, caller, &email, (roles, groups, ttl), summary).await?;
    Ok(view(&sent))
}

/// Stores an invitation (`invitation.created`, with its activity entry `summary`) and emails
/// its token.
async fn issue(
    app: &AppState,
    caller: &Caller,
    email: &EmailAddress,
    (roles, groups, ttl): (Vec<Role>, Vec<Uuid>, i64),
    summary: String,
) -> Result<Invitation, ServiceError> {
    let now = app.clock.now();
    let drafted = draft(
        caller.org_id,
        email,
        roles,
        groups,
        ttl,
        caller.account_id(),
        now,
    );
    let mut ops = store_ops(&drafted, now)?;
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "invitation.created",
            "invitation",
            Some(drafted.invitation.id),
            summary,
        ),
    )?);
    app.store.transact(ops).await?;
    let name = org_name(app, caller.org_id).await?;
    send(app, &name, &drafted).await
}

/// Invites an existing account that may not be added without its consent
/// (`people::may_add_directly`): the pending membership of `POST /members`, an invitation
/// (its roles and groups those of `membership`) emailed to the account, which joins by
/// accepting. A pending invitation to the address answers 409 `invitation_exists`.
pub(crate) async fn invite_existing(
    app: &AppState,
    caller: &Caller,
    email: &EmailAddress,
    membership: &Membership,
) -> Result<Invitation, ServiceError> {
    no_pending_invitation(app, caller.org_id, email, app.clock.now()).await?;
    let grants = (
        membership.roles.clone(),
        membership.groups.clone(),
        INVITATION_TTL_DEFAULT_SECS,
    );
    let summary = format!("added {email}, pending their acceptance");
    issue(app, caller, email, grants, summary).await
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<Versioned<Invitation>, ServiceError> {
    let now = app.clock.now();
    stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|i| i.value.expires_at > now)
        .ok_or_else(|| ServiceError::not_found("invitation"))
}

/// Sends a pending invitation again with a new token (the earlier link stops working) and a
/// renewed expiry. The email goes first: when it fails, the invitation stands as it was.
pub async fn resend(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    require_manager(caller)?;
    let current = load(app, caller, id).await?;
    let now = app.clock.now();
    let token = new_token();
    let mut next = current.value.clone();
    next.token_hash = token_hash(&token);
    next.expires_at = now + Duration::seconds(next.ttl_secs.max(INVITATION_TTL_MIN_SECS));
    next.sent_at = Some(now);
    let name = org_name(app, caller.org_id).await?;
    if let Err(e) = app.mailer.send(email_for(app, &name, &next, &token)).await {
        tracing::warn!(error = %e, invitation.id = %id, "invitation resend failed");
        return Err(upstream_failure(
            "the invitation email could not be sent; the invitation still stands with its earlier link and expiry",
        ));
    }
    let mut ops = stored::replace_ops(&next, current.version, &current.value.token_hash)?;
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "invitation.resent",
            "invitation",
            Some(id),
            format!("sent the invitation of {} again", next.email),
        ),
    )?);
    match app.store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "the invitation changed while it was being resent (revoked or accepted); list invitations",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Withdraws a pending invitation (`invitation.revoked`); its token stops working.
pub async fn revoke(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    require_manager(caller)?;
    let current = load(app, caller, id).await?;
    let now = app.clock.now();
    let mut ops = stored::remove_ops(&current.value, current.version);
    ops.push(event_op(INVITATION_REVOKED, &current.value, now)?);
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "invitation.revoked",
            "invitation",
            Some(id),
            format!("revoked the invitation of {}", current.value.email),
        ),
    )?);
    match app.store.transact(ops).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::not_found("invitation")),
        Err(e) => Err(e.into()),
    }
}

fn token_invalid() -> ServiceError {
    ServiceError::new(
        ErrorKind::Invalid,
        "invitation_token_invalid",
        "this invitation token is unknown, expired, revoked or already used; ask for a new invitation",
    )
    .param("token")
}

/// Accepts an invitation with its token (no other credential): creates the invitee's account
/// when it has none, adds the membership with the invited roles and groups (`member.added`),
/// and consumes the invitation, all in one transaction so a token works once.
pub async fn accept(
    app: &AppState,
    input: AcceptInvitationRequest,
) -> Result<InvitationAccepted, ServiceError> {
    let token = input.token.trim();
    if !token.starts_with(TOKEN_PREFIX) || token.len() > 128 {
        return Err(token_invalid());
    }
    let store = app.store.as_ref();
    let now = app.clock.now();
    let Some(found) = stored::by_token_hash(store, &token_hash(token)).await? else {
        return Err(token_invalid());
    };
    let invitation = found.value;
    if invitation.expires_at <= now
        || !secrets::constant_time_eq(
            invitation.token_hash.as_bytes(),
            token_hash(token).as_bytes(),
        )
    {
        return Err(token_invalid());
    }
    let Some(org) = orgs::get(store, invitation.org_id).await? else {
        return Err(token_invalid());
    };
    let mut ops = stored::remove_ops(&invitation, found.version);
    let account = match accounts::get_by_email(store, &invitation.email).await? {
        Some(existing) => existing.value,
        None => {
            let account = Account {
                id: Uuid::new_v4(),
                email: invitation.email.clone(),
                created_at: now,
            };
            ops.push(accounts::create_account_op(&account)?);
            account
        }
    };
    let membership = Membership {
        org_id: invitation.org_id,
        account_id: account.id,
        email: account.email.clone(),
        roles: invitation.roles.clone(),
        groups: invitation.groups.clone(),
        mfa_seen_at: None,
        scim_managed: false,
        created_at: now,
    };
    ops.push(accounts::add_membership_op(&membership)?);
    let object = serde_json::to_value(people::view(&membership))?;
    ops.push(OutboxEvent::new(MEMBER_ADDED, invitation.org_id, now, object, None).write_op()?);
    ops.extend(activity::ops_as(
        app,
        invitation.org_id,
        (ActorType::User, Some(account.id)),
        Change::new(
            "invitation.accepted",
            "member",
            Some(account.id),
            format!("{} accepted an invitation and joined", account.email),
        ),
    )?);
    match store.transact(ops).await {
        Ok(()) => Ok(InvitationAccepted {
            organization_id: org.value.id,
            organization_name: org.value.name,
            member: people::view(&membership),
        }),
        // The invitation was used or revoked meanwhile, or the person joined another way.
        Err(e) if e.is_conflict() => Err(token_invalid()),
        Err(e) => Err(e.into()),
    }
}
