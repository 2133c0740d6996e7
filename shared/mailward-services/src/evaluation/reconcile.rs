//! Step 3: the records Mailward serves for the domain, kept right by every pass: hosted DMARC's
//! state follows the customer's `_dmarc` CNAME (and the record is republished when missing),
//! and the RFC 9989 report authorization is published once. Writes to the hosted zone only;
//! the domain's fields they move are committed with the rest of the pass.

use super::observe::Observed;
use crate::state::AppState;
use mailward_domain::domain::{Domain, ManagedRecord};
use time::OffsetDateTime;

/// What the pass did to the records Mailward serves.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hosted {
    /// Hosted DMARC's next state (`None`: not hosted, or nothing to change).
    pub managed_dmarc: Option<ManagedRecord>,
    /// Whether the report authorization is published (from now on, or already).
    pub reports_authorized: bool,
}

/// Reconciles hosted DMARC with what the observation saw, and publishes the report
/// authorization if it never was.
pub async fn reconcile(
    state: &AppState,
    domain: &Domain,
    observed: &Observed,
    now: OffsetDateTime,
) -> Hosted {
    let observation = &observed.observation;
    let managed_dmarc = crate::domains::hosting::dmarc::reconcile_dmarc(
        state,
        domain,
        &observation.delegation,
        observation.transient_failures.is_empty(),
        now,
    )
    .await;
    let mut reports_authorized = domain.reports_authorized;
    if !reports_authorized {
        match crate::domains::hosting::dmarc::authorize_reports(state, &domain.url).await {
            Ok(()) => reports_authorized = true,
            Err(e) => {
                tracing::warn!(domain.id = %domain.id, error = %e, "report authorization not published; next pass tries again")
            }
        }
    }
    Hosted {
        managed_dmarc,
        reports_authorized,
    }
}
