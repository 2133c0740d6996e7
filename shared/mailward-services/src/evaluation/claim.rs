//! Step 1: the claim. Only one worker evaluates a domain at a time: the claim is a
//! version-checked write of `sweep_claimed_until`, released by the commit.

use super::{CLAIM_SECS, Swept};
use crate::state::AppState;
use mailward_domain::domain::Domain;
use mailward_store::{Versioned, domains};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// A domain this pass holds.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// The domain as it was before the claim (the events' previous attributes).
    pub before: Versioned<Domain>,
    /// The domain with this pass's claim.
    pub domain: Domain,
    /// The stored version of [`Claimed::domain`].
    pub version: u64,
}

/// Claims the domain for `CLAIM_SECS`, or says why the pass ends here: deleted, claimed by
/// another worker (until when), or changed between the read and the claim.
pub async fn claim(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    now: OffsetDateTime,
) -> anyhow::Result<Result<Claimed, Swept>> {
    let store = state.store.as_ref();
    let Some(current) = domains::get(store, org, id).await? else {
        return Ok(Err(Swept::Gone)); // deleted while its batch was in flight
    };
    if let Some(until) = current
        .value
        .sweep_claimed_until
        .filter(|until| *until > now)
    {
        return Ok(Err(Swept::Busy(until)));
    }
    let mut domain = current.value.clone();
    domain.sweep_claimed_until = Some(now + Duration::seconds(CLAIM_SECS));
    match store
        .transact(domains::save_ops(&domain, &current.value, current.version)?)
        .await
    {
        Ok(()) => Ok(Ok(Claimed {
            version: current.version + 1,
            before: current,
            domain,
        })),
        // Claimed or changed by someone else between the read and the claim.
        Err(e) if e.is_conflict() => Ok(Err(Swept::Superseded)),
        Err(e) => Err(e.into()),
    }
}
