//! Enforcement impact (beyond the SPEC): from the last 30 days of report rows, which senders
//! and what share of legitimate mail a stricter policy would quarantine or reject now, and why.
//!
//! A row's mail is affected when it failed DMARC and was not forwarded (receivers decide
//! forwarded mail through their own overrides, so it is counted apart). Senders are the stored
//! DomainSources, matched by source IP; an address no sender lists stands alone. The policy
//! is assumed to apply to all failing mail (no `pct` sampling, as in RFC 9989), and the
//! organizational-domain policy is applied to subdomains' mail too (an `sp` is not modelled).

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::reports::{EnforcementImpact, ImpactParams};
use mailward_domain::domain::{Domain, Policy};
use mailward_domain::senders::DomainSource;
pub use mailward_insights::impact::assess;
use mailward_store::reports::{day_string, rows_between};
use uuid::Uuid;

/// Days the impact looks back.
pub const IMPACT_DAYS: i64 = 30;

fn policy_of(raw: Option<&str>, domain: &Domain) -> Result<&'static str, ServiceError> {
    match raw {
        Some("quarantine") => Ok("quarantine"),
        Some("reject") => Ok("reject"),
        Some(_) => Err(ServiceError::invalid(
            "policy",
            "policy must be quarantine or reject",
        )),
        None => Ok(match domain.dmarc_policy {
            Policy::None => "quarantine",
            Policy::Quarantine | Policy::Reject => "reject",
        }),
    }
}

/// The impact over the last 30 days (clamped to retention) for an already loaded domain.
pub async fn for_domain(
    app: &AppState,
    org: Uuid,
    domain: &Domain,
    policy: &str,
) -> Result<EnforcementImpact, ServiceError> {
    let store = app.store.as_ref();
    let (from, to) = super::window::org_window(app, org, IMPACT_DAYS).await?;
    let rows = rows_between(store, org, domain.id, from, to).await?;
    let senders = senders_of(app, org, domain.id).await?;
    Ok(assess(
        domain,
        policy,
        (day_string(from), day_string(to)),
        &rows,
        &senders,
    ))
}

/// The domain's stored senders, which the impact matches rows against.
pub async fn senders_of(
    app: &AppState,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<DomainSource>, ServiceError> {
    Ok(
        mailward_store::senders::list(app.store.as_ref(), org, domain)
            .await?
            .into_iter()
            .map(|s| s.value)
            .collect(),
    )
}

/// `GET /domains/{id}/reports/enforcement-impact`.
pub async fn enforcement_impact(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    params: &ImpactParams,
) -> Result<EnforcementImpact, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    let policy = policy_of(params.policy.as_deref(), &domain)?;
    for_domain(app, caller.org_id, &domain, policy).await
}
