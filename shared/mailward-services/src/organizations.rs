//! Organizations (SPEC §4.2): create, update, delete (asynchronous: marked at once, purged by a
//! job) and dismiss onboarding.

use crate::activity::{self, Change};
use crate::caller::{Caller, Credential};
use crate::error::{ErrorKind, ServiceError};
use crate::invitations;
use crate::state::AppState;
use mailward_api_types::api_keys::{ApiKey, ApiKeyWithSecret};
use mailward_api_types::organizations::{
    CreateOrganizationRequest, EmailNotificationsUpdate, Organization as OrganizationView,
    OrganizationCreated, UpdateOrganizationRequest,
};
use mailward_app::jobs::DeleteOrganization;
use mailward_domain::admin::INVITATION_TTL_DEFAULT_SECS;
use mailward_domain::diff::previous_attributes;
use mailward_domain::email::EmailAddress;
use mailward_domain::events::types::{MEMBER_ADDED, ORGANIZATION_UPDATED};
use mailward_domain::model::{
    ApiKeyAccess, EmailNotifications, InvitationFailure, Membership, OrgState, Organization,
    PricingType, Role, validate_org_name,
};
use mailward_domain::store::{Condition, WriteOp};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, accounts, api_keys, orgs};
use time::OffsetDateTime;
use uuid::Uuid;

/// Most administrators copied from the calling organization into one it creates.
const MAX_COPIED_ADMINS: usize = 90;

/// Most organizations an organization creates through API keys (a script; a person signed in
/// creates as many as they need, one at a time). Counted through the children index, which is
/// eventually consistent: a burst of concurrent creations may pass it by a few.
pub const MAX_CHILDREN_BY_KEY: usize = 100;

fn validate_url(param: &'static str, raw: &str) -> Result<String, ServiceError> {
    let invalid =
        || ServiceError::invalid(param, format!("{param} must be an absolute http(s) URL"));
    let parsed = url::Url::parse(raw.trim()).map_err(|_| invalid())?;
    if !matches!(parsed.scheme(), "https" | "http")
        || parsed.host_str().is_none()
        || raw.len() > 2048
    {
        return Err(invalid());
    }
    Ok(parsed.to_string())
}

fn validate_phone(raw: &str) -> Result<String, ServiceError> {
    let phone = raw.trim();
    let digits = phone.bytes().filter(u8::is_ascii_digit).count();
    let allowed = phone
        .bytes()
        .all(|b| b.is_ascii_digit() || b" +-().".contains(&b));
    if !allowed || !(4..=20).contains(&digits) || phone.len() > 32 {
        return Err(ServiceError::invalid(
            "phone_number",
            "phone_number must be 4 to 20 digits with optional + - ( ) . and spaces",
        ));
    }
    Ok(phone.to_owned())
}

fn validate_name(raw: &str) -> Result<String, ServiceError> {
    validate_org_name(raw).map_err(|m| ServiceError::invalid("name", format!("name {m}")))
}

/// Creates another organization. With a session the caller becomes its administrator; with an
/// API key the calling organization's administrators do, and the answer carries a read-write
/// key for the new organization (shown once: without it a script could not reach it).
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateOrganizationRequest,
) -> Result<OrganizationCreated, ServiceError> {
    caller.require_org_admin()?;
    let name = validate_name(&input.name)?;
    let invitee = invitee_of(&input, caller)?;
    if matches!(caller.credential, Credential::ApiKey { .. }) {
        let made = orgs::children_of(app.store.as_ref(), caller.org_id)
            .await?
            .iter()
            .filter(|child| child.created_by.is_none() && child.state == OrgState::Active)
            .count();
        if made >= MAX_CHILDREN_BY_KEY {
            return Err(ServiceError::new(
                ErrorKind::Conflict,
                "organization_limit_reached",
                format!(
                    "this organization has created {made} organizations through API keys, the most it may; delete unused ones, or create more signed in"
                ),
            ));
        }
    }
    let now = app.clock.now();
    let mut org = new_organization(caller, name, input, now);
    let mut ops = first_admin_ops(app, caller, org.id, now).await?;
    if let Some(invitee) = &invitee {
        ops.extend(invitee_ops(app, caller, &mut org, invitee, now).await?);
    }
    // The organization as decided (with any invitation failure), written in the same commit.
    ops.splice(0..0, orgs::create_ops(&org)?);
    let key = match caller.credential {
        Credential::ApiKey { key_id, .. } => {
            let short: String = key_id.to_string().chars().take(8).collect();
            let key = api_keys::generate(
                org.id,
                format!("Created by API key {short}"),
                ApiKeyAccess::ReadWrite,
                None,
                now,
            );
            ops.extend(api_keys::create_ops(&key.meta)?);
            Some(key)
        }
        Credential::Session { .. } => None,
    };
    ops.extend(activity::ops_as(
        app,
        org.id,
        caller.actor(),
        Change::new(
            "organization.created",
            "organization",
            Some(org.id),
            format!("created organization {}", org.name),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(OrganizationCreated {
        organization: OrganizationView::from(&org),
        api_key: key.map(|k| ApiKeyWithSecret {
            api_key: ApiKey::from(&k.meta),
            key: k.secret,
        }),
    })
}

/// The person to invite as the new organization's administrator: only a person may name one.
fn invitee_of(
    input: &CreateOrganizationRequest,
    caller: &Caller,
) -> Result<Option<EmailAddress>, ServiceError> {
    match (&input.invite_email, &caller.credential) {
        (Some(Some(_)), Credential::ApiKey { .. }) => Err(ServiceError::invalid(
            "invite_email",
            "invite_email must be omitted or null when using an API key",
        )),
        (Some(Some(raw)), Credential::Session { .. }) => {
            EmailAddress::parse(raw).map(Some).map_err(|_| {
                ServiceError::invalid("invite_email", "invite_email must be a valid email address")
            })
        }
        _ => Ok(None),
    }
}

/// The new organization, a child of the caller's.
fn new_organization(
    caller: &Caller,
    name: String,
    input: CreateOrganizationRequest,
    now: OffsetDateTime,
) -> Organization {
    let referer = input
        .referer
        .map(|r| r.trim().chars().take(512).collect::<String>())
        .filter(|r| !r.is_empty());
    Organization {
        id: Uuid::new_v4(),
        name,
        is_active: true,
        state: OrgState::Active,
        pricing_type: input.pricing_type.map_or(PricingType::Free, Into::into),
        referer,
        attribution_id: input.attribution_id,
        logo_url: None,
        email: None,
        phone_number: None,
        website: None,
        require_mfa: false,
        email_notifications: EmailNotifications::default(),
        agent_proposals_enabled: true,
        redact_failure_reports: true,
        onboarding_dismissed_at: None,
        created_by: caller.account_id(),
        parent_org_id: Some(caller.org_id),
        invitation_failure: None,
        suspension: None,
        created_at: now,
        updated_at: now,
    }
}

/// The new organization's first administrators: the person creating it, or (through an API
/// key) the calling organization's administrators.
async fn first_admin_ops(
    app: &AppState,
    caller: &Caller,
    org_id: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    let admins: Vec<(Uuid, String)> = match caller.account_id() {
        Some(account) => vec![(
            account,
            accounts::membership(app.store.as_ref(), caller.org_id, account)
                .await?
                .map(|m| m.email)
                .unwrap_or_default(),
        )],
        None => accounts::members_of(app.store.as_ref(), caller.org_id)
            .await?
            .into_iter()
            .filter(|m| m.roles.contains(&Role::Admin))
            .map(|m| (m.account_id, m.email))
            .take(MAX_COPIED_ADMINS)
            .collect(),
    };
    let mut ops = Vec::new();
    for (account_id, email) in admins {
        ops.push(WriteOp::Put {
            item: accounts::membership_item(&Membership {
                org_id,
                account_id,
                email,
                roles: vec![Role::Admin],
                groups: Vec::new(),
                mfa_seen_at: None,
                scim_managed: false,
                created_at: now,
            })?,
            condition: Condition::NotExists,
        });
    }
    Ok(ops)
}

/// The invitee: an existing account that may be added without its consent
/// (`people::may_add_directly`) becomes an administrator at once; anyone else gets an
/// invitation, emailed before the commit so its outcome (`org.invitation_failure`) is part of
/// the new organization.
async fn invitee_ops(
    app: &AppState,
    caller: &Caller,
    org: &mut Organization,
    invitee: &EmailAddress,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    let mut ops = Vec::new();
    let creator = caller.account_id();
    let existing = accounts::get_by_email(app.store.as_ref(), invitee.as_str())
        .await?
        .map(|a| a.value);
    // Tenant trust: an existing account is added at once only when it may be without its
    // consent; anyone else gets the invitation, which it joins by accepting.
    let direct = match &existing {
        Some(account) if Some(account.id) != creator => {
            crate::people::may_add_directly(app, caller, org.id, account).await?
        }
        _ => false,
    };
    match existing {
        Some(account) if Some(account.id) == creator => {}
        Some(account) if direct => {
            let membership = Membership {
                org_id: org.id,
                account_id: account.id,
                email: account.email.clone(),
                roles: vec![Role::Admin],
                groups: Vec::new(),
                mfa_seen_at: None,
                scim_managed: false,
                created_at: now,
            };
            ops.push(accounts::add_membership_op(&membership)?);
            let object = serde_json::to_value(crate::people::view(&membership))?;
            ops.push(OutboxEvent::new(MEMBER_ADDED, org.id, now, object, None).write_op()?);
            ops.extend(activity::ops_as(
                app,
                org.id,
                caller.actor(),
                Change::new(
                    "member.added",
                    "member",
                    Some(account.id),
                    format!("added {} as an administrator", account.email),
                ),
            )?);
        }
        _ => ops.extend(invite_admin(app, caller, org, invitee, now).await?),
    }
    Ok(ops)
}

/// The invitation of the new organization's invited administrator, emailed before the commit
/// so its outcome (`org.invitation_failure`) is part of the new organization.
async fn invite_admin(
    app: &AppState,
    caller: &Caller,
    org: &mut Organization,
    invitee: &EmailAddress,
    now: OffsetDateTime,
) -> Result<Vec<WriteOp>, ServiceError> {
    let creator = caller.account_id();
    let mut ops = Vec::new();
    let mut drafted = invitations::draft(
        org.id,
        invitee,
        vec![Role::Admin],
        Vec::new(),
        INVITATION_TTL_DEFAULT_SECS,
        creator,
        now,
    );
    let email = invitations::email_for(app, &org.name, &drafted.invitation, &drafted.token);
    match app.mailer.send(email).await {
        Ok(()) => drafted.invitation.sent_at = Some(now),
        Err(e) => {
            tracing::warn!(error = %e, "the invitation of a new organization failed");
            org.invitation_failure = Some(InvitationFailure {
                code: "upstream_failure".into(),
                message: format!(
                    "the invitation email to {invitee} could not be sent; the invitation is listed by GET /invitations: resend it"
                ),
            });
        }
    }
    ops.extend(invitations::store_ops(&drafted, now)?);
    ops.extend(activity::ops_as(
        app,
        org.id,
        caller.actor(),
        Change::new(
            "invitation.created",
            "invitation",
            Some(drafted.invitation.id),
            format!("invited {invitee} as an administrator"),
        ),
    )?);
    Ok(ops)
}

/// Saves an organization change with its `organization.updated` event and its activity entry
/// (`action`) in one transaction.
async fn save_with_event(
    app: &AppState,
    caller: &Caller,
    action: &'static str,
    before: &Organization,
    after: &Organization,
    read_version: u64,
) -> Result<(), ServiceError> {
    let old_view = serde_json::to_value(OrganizationView::from(before))?;
    let new_view = serde_json::to_value(OrganizationView::from(after))?;
    let mut extra = Vec::new();
    let previous = previous_attributes(&old_view, &new_view);
    extra.extend(activity::ops(
        app,
        caller,
        Change::new(
            action,
            "organization",
            Some(after.id),
            format!("changed organization {}", after.name),
        )
        .previous(previous.clone()),
    )?);
    if let Some(previous) = previous {
        let event = OutboxEvent::new(
            ORGANIZATION_UPDATED,
            after.id,
            after.updated_at,
            new_view,
            Some(previous),
        );
        extra.push(event.write_op()?);
    }
    orgs::save(app.store.as_ref(), after, read_version, extra).await?;
    Ok(())
}

async fn load_own(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<Versioned<Organization>, ServiceError> {
    caller.require_own_org(id)?;
    orgs::get(app.store.as_ref(), id)
        .await?
        .filter(|o| o.value.state == OrgState::Active)
        .ok_or_else(|| ServiceError::not_found("organization"))
}

/// The caller's own organization.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<OrganizationView, ServiceError> {
    Ok(OrganizationView::from(
        &load_own(app, caller, id).await?.value,
    ))
}

/// Updates the caller's own organization. `require_mfa` needs an administrator signed in with
/// MFA. Emits `organization.updated` when something changed.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateOrganizationRequest,
) -> Result<OrganizationView, ServiceError> {
    caller.require_org_admin()?;
    let current = load_own(app, caller, id).await?;
    let before = current.value.clone();
    let mut org = current.value;
    if let Some(is_active) = input.is_active {
        org.is_active = is_active;
    }
    if let Some(name) = &input.name {
        org.name = validate_name(name)?;
    }
    if let Some(logo) = &input.logo_url {
        org.logo_url = logo
            .as_deref()
            .map(|u| validate_url("logo_url", u))
            .transpose()?;
    }
    if let Some(website) = &input.website {
        org.website = website
            .as_deref()
            .map(|u| validate_url("website", u))
            .transpose()?;
    }
    if let Some(email) = &input.email {
        org.email = email
            .as_deref()
            .map(|e| EmailAddress::parse(e).map(|e| e.as_str().to_owned()))
            .transpose()
            .map_err(|_| ServiceError::invalid("email", "email is not a valid address"))?;
    }
    if let Some(phone) = &input.phone_number {
        org.phone_number = phone.as_deref().map(validate_phone).transpose()?;
    }
    if let Some(settings) = input.settings {
        if let Some(n) = settings.email_notifications {
            apply_notifications(&mut org.email_notifications, n);
        }
        if let Some(enabled) = settings.agent_proposals_enabled {
            org.agent_proposals_enabled = enabled;
        }
        if let Some(redact) = settings.redact_failure_reports {
            org.redact_failure_reports = redact;
        }
    }
    if let Some(require_mfa) = input
        .require_mfa
        .filter(|wanted| *wanted != org.require_mfa)
    {
        caller.require_mfa_admin("require_mfa")?;
        org.require_mfa = require_mfa;
    }
    if org == before {
        return Ok(OrganizationView::from(&org));
    }
    org.updated_at = app.clock.now();
    save_with_event(
        app,
        caller,
        "organization.updated",
        &before,
        &org,
        current.version,
    )
    .await?;
    Ok(OrganizationView::from(&org))
}

fn apply_notifications(n: &mut EmailNotifications, u: EmailNotificationsUpdate) {
    let set = |field: &mut bool, value: Option<bool>| {
        if let Some(v) = value {
            *field = v;
        }
    };
    set(&mut n.domain_drifted, u.domain_drifted);
    set(&mut n.domain_failed, u.domain_failed);
    set(&mut n.domain_setup, u.domain_setup);
    set(&mut n.tasks_digests, u.tasks_digests);
    set(&mut n.setup_reminders, u.setup_reminders);
    set(&mut n.first_report, u.first_report);
    set(&mut n.invitation_reminders, u.invitation_reminders);
    set(&mut n.billing_notices, u.billing_notices);
    set(&mut n.hosted_spf_live, u.hosted_spf_live);
    set(&mut n.delegation_missing, u.delegation_missing);
    set(&mut n.alerts, u.alerts);
    set(&mut n.scheduled_reports, u.scheduled_reports);
}

/// Marks the caller's organization `deleting` (every credential of it is refused from this
/// commit on) and queues the purge of its data.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let current = load_own(app, caller, id).await?;
    let org = current.value;
    let entry = activity::ops(
        app,
        caller,
        Change::new(
            "organization.deletion_requested",
            "organization",
            Some(id),
            format!("requested the deletion of {}", org.name),
        ),
    )?;
    begin_deletion(app, org, current.version, entry).await
}

/// Saves `org` (read at `previous`) marked `deleting` with `entry` (its activity entry) and
/// queues the purge: the customer's deletion and Mailward staff's.
pub async fn begin_deletion(
    app: &AppState,
    mut org: mailward_domain::model::Organization,
    previous: u64,
    entry: Vec<mailward_domain::store::WriteOp>,
) -> Result<(), ServiceError> {
    let id = org.id;
    org.state = OrgState::Deleting;
    org.updated_at = app.clock.now();
    let version = orgs::save(app.store.as_ref(), &org, previous, entry).await?;
    if let Err(e) = crate::job::enqueue(
        app,
        &DeleteOrganization {
            org_id: id,
            final_pass: false,
        },
        0,
    )
    .await
    {
        // No purge is queued (a queue outage): undo the mark rather than leave the
        // organization locked out with its data kept, and answer 503 so the caller retries.
        org.state = OrgState::Active;
        if let Err(undo) = orgs::save(app.store.as_ref(), &org, version, Vec::new()).await {
            tracing::error!(org.id = %id, error = %undo, "the organization stays marked deleting without a queued purge");
        }
        return Err(e.into());
    }
    tracing::info!(org.id = %id, "organization deletion accepted");
    Ok(())
}

/// Dismisses onboarding; idempotent (the first timestamp is kept). Any credential of the
/// organization may, read-only keys and viewers included.
pub async fn dismiss_onboarding(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<OrganizationView, ServiceError> {
    caller.require(crate::caller::Permission::DomainsRead)?;
    let current = load_own(app, caller, id).await?;
    if current.value.onboarding_dismissed_at.is_some() {
        return Ok(OrganizationView::from(&current.value));
    }
    let before = current.value.clone();
    let mut org = current.value;
    let now = app.clock.now();
    org.onboarding_dismissed_at = Some(now);
    org.updated_at = now;
    match save_with_event(
        app,
        caller,
        "organization.onboarding_dismissed",
        &before,
        &org,
        current.version,
    )
    .await
    {
        Ok(()) => Ok(OrganizationView::from(&org)),
        // A concurrent dismissal won: return what it stored.
        Err(e) if e.kind() == ErrorKind::Conflict => {
            let latest = load_own(app, caller, id).await?;
            Ok(OrganizationView::from(&latest.value))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_phones_are_validated() {
        assert!(validate_url("website", "https://example.com/x").is_ok());
        assert_eq!(
            validate_url("website", "javascript:alert(1)")
                .unwrap_err()
                .param_name(),
            Some("website")
        );
        assert!(validate_url("logo_url", "ftp://example.com").is_err());
        assert!(validate_phone("+1 (555) 010-0000").is_ok());
        assert!(validate_phone("call me").is_err());
    }
}
