//! The one access guard: which of its organization's domains a caller may see. Every per-domain
//! operation loads its domain through [`load`] and every list starts from [`visible`], so a
//! member limited to groups finds only the domains of those groups, for reads and writes alike,
//! and an id of another organization is simply not found.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::domain::Domain;
use mailward_store::{Versioned, domains};
use uuid::Uuid;

/// The organization's domain `id`, or not found. A member limited to groups finds only the
/// domains of those groups: every per-domain operation goes through here, so the limit holds
/// for reads and writes alike.
pub async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<Versioned<Domain>, ServiceError> {
    domains::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .filter(|d| caller.sees_group(d.value.group_id))
        .ok_or_else(|| ServiceError::not_found("domain"))
}

/// The domains of the organization the caller sees (all of them, or those of its groups).
pub async fn visible(app: &AppState, caller: &Caller) -> Result<Vec<Domain>, ServiceError> {
    Ok(domains::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|d| caller.sees_group(d.group_id))
        .collect())
}
