//! Organizations for staff: search by name, domain or member, and staff suspension (separate
//! from the customer's own `is_active`, which staff never change).

use mailward_api_types::staff::{StaffOrganization, StaffOrganizationList, StaffSuspension};
use mailward_app::activity::{self, Change};
use mailward_app::caller::StaffMember;
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_domain::admin::ActorType;
use mailward_domain::model::{OrgState, Organization, Suspension};
use mailward_store::{accounts, domains, orgs, reports};
use std::collections::HashSet;
use uuid::Uuid;

/// At most this many organizations are listed.
pub const MAX_LISTED: usize = 200;

/// The longest suspension reason.
pub const MAX_REASON_CHARS: usize = 500;

async fn view(app: &AppState, org: &Organization) -> Result<StaffOrganization, ServiceError> {
    Ok(StaffOrganization {
        id: org.id,
        name: org.name.clone(),
        is_active: org.is_active,
        state: match org.state {
            OrgState::Active => "active",
            OrgState::Deleting => "deleting",
        }
        .into(),
        suspension: org.suspension.as_ref().map(|s| StaffSuspension {
            reason: s.reason.clone(),
            by: s.by.clone(),
            at: s.at,
        }),
        domains: domains::count(app.store.as_ref(), org.id).await?,
        created_at: org.created_at,
    })
}

/// Organizations whose name contains `q` (any case), that watch the domain `q`, or that the
/// person with address `q` belongs to; every organization without `q` (at most
/// [`MAX_LISTED`], by name).
pub async fn search(
    app: &AppState,
    _staff: &StaffMember,
    q: Option<&str>,
) -> Result<StaffOrganizationList, ServiceError> {
    let store = app.store.as_ref();
    let mut all = orgs::list_all(store).await?;
    all.sort_by_key(|a| a.name.to_lowercase());
    let q = q
        .map(|q| q.trim().to_ascii_lowercase())
        .filter(|q| !q.is_empty());
    if let Some(q) = &q {
        if q.chars().count() > 320 {
            return Err(ServiceError::invalid("q", "q is at most 320 characters"));
        }
        let mut ids: HashSet<Uuid> = reports::watchers(store, q.trim_end_matches('.'))
            .await?
            .into_iter()
            .map(|(org, _)| org)
            .collect();
        if q.contains('@')
            && let Some(account) = accounts::get_by_email(store, q).await?
        {
            for membership in accounts::memberships_of(store, account.value.id).await? {
                ids.insert(membership.org_id);
            }
        }
        all.retain(|o| ids.contains(&o.id) || o.name.to_lowercase().contains(q.as_str()));
    }
    let mut data = Vec::new();
    for org in all.iter().take(MAX_LISTED) {
        data.push(view(app, org).await?);
    }
    Ok(StaffOrganizationList { data })
}

/// Suspends an organization (idempotent: a suspended one keeps its first reason).
pub async fn suspend(
    app: &AppState,
    staff: &StaffMember,
    id: Uuid,
    reason: &str,
) -> Result<StaffOrganization, ServiceError> {
    let reason = check_reason(reason)?;
    change(app, id, |org, now| {
        if org.suspension.is_some() {
            return None;
        }
        org.suspension = Some(Suspension {
            reason: reason.to_owned(),
            by: staff.email.clone(),
            at: now,
        });
        Some(Change::new(
            "organization.suspended",
            "organization",
            Some(id),
            format!(
                "Mailward support ({}) suspended the organization: {reason}",
                staff.email
            ),
        ))
    })
    .await
}

/// Starts an organization's deletion on Mailward staff's decision (a customer who cannot, say,
/// while suspended): marked `deleting` with its activity entry, then the same purge as
/// `DELETE /organizations/{id}`. Repeating it while the purge runs changes nothing.
pub async fn delete(
    app: &AppState,
    staff: &StaffMember,
    id: Uuid,
    reason: &str,
) -> Result<(), ServiceError> {
    let reason = check_reason(reason)?;
    let current = orgs::get(app.store.as_ref(), id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?;
    if current.value.state == mailward_domain::model::OrgState::Deleting {
        return Ok(());
    }
    let entry = activity::ops_as(
        app,
        id,
        (ActorType::ServiceStaff, None),
        Change::new(
            "organization.deletion_requested",
            "organization",
            Some(id),
            format!(
                "Mailward support ({}) started the deletion of {}: {reason}",
                staff.email, current.value.name
            ),
        ),
    )?;
    mailward_services::organizations::begin_deletion(app, current.value, current.version, entry)
        .await
        .map_err(|e| {
            if e.is_conflict() {
                ServiceError::conflict("the organization changed meanwhile; retry")
            } else {
                e
            }
        })?;
    tracing::info!(org.id = %id, staff = %staff.email, "staff started an organization's deletion");
    Ok(())
}

fn check_reason(reason: &str) -> Result<&str, ServiceError> {
    let reason = reason.trim();
    let chars = reason.chars().count();
    if chars == 0 || chars > MAX_REASON_CHARS || reason.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "reason",
            format!("reason is 1 to {MAX_REASON_CHARS} characters without control characters"),
        ));
    }
    Ok(reason)
}

/// Lifts a suspension (idempotent).
pub async fn lift(
    app: &AppState,
    staff: &StaffMember,
    id: Uuid,
) -> Result<StaffOrganization, ServiceError> {
    change(app, id, |org, _| {
        org.suspension.take()?;
        Some(Change::new(
            "organization.suspension_lifted",
            "organization",
            Some(id),
            format!("Mailward support ({}) lifted the suspension", staff.email),
        ))
    })
    .await
}

/// Applies `edit` to the organization and saves it with its activity entry; `edit` answers
/// `None` when there is nothing to change.
async fn change(
    app: &AppState,
    id: Uuid,
    edit: impl FnOnce(&mut Organization, time::OffsetDateTime) -> Option<Change>,
) -> Result<StaffOrganization, ServiceError> {
    let store = app.store.as_ref();
    let current = orgs::get(store, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?;
    let mut org = current.value;
    let now = app.clock.now();
    if let Some(entry) = edit(&mut org, now) {
        org.updated_at = now;
        let ops = activity::ops_as(app, id, (ActorType::ServiceStaff, None), entry)?;
        orgs::save(store, &org, current.version, ops)
            .await
            .map_err(|e| {
                if e.is_conflict() {
                    ServiceError::conflict("the organization changed meanwhile; retry")
                } else {
                    e.into()
                }
            })?;
        tracing::info!(org.id = %id, suspended = org.suspension.is_some(), "staff changed an organization's suspension");
        // Its subscription's collection pauses or resumes with the next quantities report.
        mailward_services::usage::quantities_changed(app, id).await;
    }
    view(app, &org).await
}
