//! The ownership rule: what proves that a domain's owner authorized an organization (see
//! ARCHITECTURE.md, "Verified domain"). A domain name is public and many organizations may
//! watch one; what is private about it, or what acts for its owner, needs one of these proofs,
//! published in the domain's own DNS:
//!
//! - the organization's report address `rua+<domain id>` in the domain's DMARC record
//!   (monitoring set up: the sweep saw it), which is also what attributes reports
//!   (`mailward_workers::ingest`);
//! - a CNAME to the organization's owner-specific hosted target (the owner name carries the
//!   domain id): hosted DMARC seen ready, or, for hosted MTA-STS, the `_mta-sts` CNAME
//!   (`domains::hosting::mta_sts::owner_chose`);
//! - a verified DNS connection (a role that trusts Mailward with the organization's own
//!   external id), which is what lets `publish` write (`dns_connections`);
//! - for an email domain, the organization's single sign-on TXT record
//!   (`_mailward-sso.<domain>`, a value derived from the deployment's secret and the
//!   organization), checked when an administrator asks (`POST /sso/verify`).

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::domain::{Domain, ManagedStatus};
use uuid::Uuid;

/// Whether the domain's own DNS shows the organization's proof of ownership as the sweep last
/// saw it: its report address in the DMARC record, or the hosted DMARC CNAME to its
/// owner-specific target.
pub fn proven(domain: &Domain) -> bool {
    domain.monitoring_status.is_configured()
        || (domain.is_dmarc_managed && domain.managed_dmarc.status == ManagedStatus::Ready)
}

/// Whether `name` is a verified domain of the organization: one of its domains, [`proven`], or
/// a single sign-on domain whose TXT proof was seen (`mailward_oauth::sso`).
pub async fn verified_domain(app: &AppState, org: Uuid, name: &str) -> Result<bool, ServiceError> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let store = app.store.as_ref();
    if mailward_store::identity::sso_orgs_for_domain(store, &name)
        .await?
        .contains(&org)
    {
        return Ok(true);
    }
    for (watcher, id) in mailward_store::reports::watchers(store, &name).await? {
        if watcher != org {
            continue;
        }
        if let Some(domain) = mailward_store::domains::get(store, org, id).await? {
            return Ok(proven(&domain.value));
        }
    }
    Ok(false)
}
