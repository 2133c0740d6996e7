//! After the commit: the domain's registrar from RDAP, when due (a week after the last answer,
//! a day after a failed try; `mailward_rdap::schedule`). The lookup is bounded in time
//! (`mailward_app::outbound::rdap`) and its outcome is a write of its own, so it can neither
//! fail nor undo the pass: a failure is logged and keeps the registrar known before.

use crate::state::AppState;
use mailward_domain::domain::Domain;
use mailward_rdap::{Lookup, RegistrarState};
use time::OffsetDateTime;

/// Looks the registrar of `domain` up when due and stores what came of it. `organizational` is
/// the pass's RFC 9989 organizational domain, when the audit found one.
pub async fn refresh(
    state: &AppState,
    domain: &Domain,
    organizational: Option<&str>,
    now: OffsetDateTime,
) {
    if state.config.rdap_bootstrap_url.is_none() || !stored(domain).due(now) {
        return;
    }
    let names = mailward_rdap::lookup_names(&domain.url, organizational);
    let lookup = state
        .rdap()
        .lookup_registrar(&state.config, &state.resolver, &names)
        .await;
    if let Lookup::Failed(error) = &lookup {
        tracing::info!(domain.id = %domain.id, domain.name = %domain.url, %error, "RDAP lookup failed; the registrar is looked up again tomorrow");
    }
    if let Err(e) = save(state, domain, &lookup, now).await {
        tracing::warn!(domain.id = %domain.id, error = %e, "could not store the registrar");
    }
}

fn stored(domain: &Domain) -> RegistrarState {
    RegistrarState {
        registrar: domain.registrar.clone(),
        checked_at: domain.registrar_checked_at,
        tried_at: domain.registrar_tried_at,
    }
}

/// Writes the lookup's outcome on the domain as it is now (a version-checked write, read again
/// when another write got there first).
async fn save(
    state: &AppState,
    domain: &Domain,
    lookup: &Lookup,
    now: OffsetDateTime,
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    for _ in 0..3 {
        let Some(current) = mailward_store::domains::get(store, domain.org_id, domain.id).await?
        else {
            return Ok(());
        };
        let Some(next_state) = stored(&current.value).after(lookup, now) else {
            return Ok(());
        };
        let mut next = current.value.clone();
        next.registrar = next_state.registrar;
        next.registrar_checked_at = next_state.checked_at;
        next.registrar_tried_at = next_state.tried_at;
        let ops = mailward_store::domains::save_ops(&next, &current.value, current.version)?;
        match store.transact(ops).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("the domain kept changing while its registrar was stored")
}
