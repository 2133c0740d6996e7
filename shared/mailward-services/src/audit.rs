//! The domain audit tool (SPEC §2.12, §4.8) and activation scans.
//!
//! Results are cached ten minutes per domain in the store, so repeated audits of one domain
//! cost no DNS; `refresh` bypasses both that cache and the resolver's. `email` captures a lead;
//! `store_scan` saves the result (without the echoed email) for the public activation scan for
//! 24 hours.

use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::outbound::mta_sts::OutboundPolicyFetcher;
use crate::state::AppState;
use crate::tools::parse_host;
use mailward_api_types::tools::AuditParams;
use mailward_audit::{AuditInput, AuditResult};
use mailward_dns::Budgeted;
use mailward_domain::dns::{DnsResolver, Uncached};
use mailward_domain::email::EmailAddress;
use mailward_store::audits::{self, Lead};
use uuid::Uuid;

/// Queries one audit may make.
const AUDIT_QUERY_BUDGET: u32 = 400;

/// Audits from DNS and caches the result; `uncached` also bypasses the resolver's cache.
async fn fresh_audit(
    app: &AppState,
    domain: &str,
    uncached: bool,
) -> Result<AuditResult, ServiceError> {
    let direct = Uncached(app.resolver.as_ref());
    let base: &dyn DnsResolver = if uncached {
        &direct
    } else {
        app.resolver.as_ref()
    };
    let resolver = Budgeted::new(base, AUDIT_QUERY_BUDGET);
    let fetcher = OutboundPolicyFetcher { app };
    let input = AuditInput {
        domain: domain.to_owned(),
        email: None,
        dkim_selectors: Some(mailward_domain::sources::catalogue().dkim_discovery_selectors()),
        extra_selectors: Vec::new(),
        hosted_dmarc_suffix: app.config.hosted_dmarc_suffix.clone(),
    };
    let result = mailward_audit::audit(&resolver, &fetcher, &input).await;
    audits::cache(app.store.as_ref(), domain, &result, app.clock.unix()).await?;
    Ok(result)
}

/// The audit of an already validated domain name: the ten-minute cache, else a fresh audit.
pub(crate) async fn cached_or_fresh(
    app: &AppState,
    domain: &str,
) -> Result<AuditResult, ServiceError> {
    match audits::cached::<AuditResult>(app.store.as_ref(), domain).await? {
        Some(result) => Ok(result),
        None => fresh_audit(app, domain, false).await,
    }
}

/// Audits a domain (optional credential: a caller's organization is kept with a lead).
/// `journey_id` is the visitor journey id the edge read, kept with a lead.
pub async fn audit(
    app: &AppState,
    caller: Option<&Caller>,
    params: &AuditParams,
    journey_id: Option<Uuid>,
) -> Result<AuditResult, ServiceError> {
    let domain = parse_host("domain", &params.domain)?;
    let email = params
        .email
        .as_deref()
        .map(|e| {
            EmailAddress::parse(e)
                .map_err(|_| ServiceError::invalid("email", "email is not a valid address"))
        })
        .transpose()?;
    // Only a caller with credentials may bypass the caches: an anonymous refresh would let
    // anyone make Mailward query any name's servers as often as the rate limit allows.
    let refresh = params.refresh && caller.is_some();
    let cached = if refresh {
        None
    } else {
        audits::cached::<AuditResult>(app.store.as_ref(), &domain).await?
    };
    let mut result = match cached {
        Some(result) => result,
        None => fresh_audit(app, &domain, refresh).await?,
    };
    if params.store_scan {
        audits::store_activation_scan(app.store.as_ref(), &domain, &result, app.clock.unix())
            .await?;
    }
    if let Some(email) = email {
        let lead = Lead {
            email: email.as_str().to_owned(),
            domain: domain.clone(),
            journey_id,
            org_id: caller.map(|c| c.org_id),
            created_at: app.clock.now(),
        };
        audits::record_lead(app.store.as_ref(), &lead).await?;
        result.summary.email = Some(email.as_str().to_owned());
    }
    Ok(result)
}

/// The audit most recently stored with `store_scan` for a domain (24 hours).
pub async fn activation_scan(app: &AppState, domain: &str) -> Result<AuditResult, ServiceError> {
    let domain = parse_host("domain", domain)?;
    audits::activation_scan(app.store.as_ref(), &domain)
        .await?
        .ok_or_else(|| {
            ServiceError::new(
                ErrorKind::NotFound,
                "scan_not_found",
                "no stored scan for this domain (scans expire after 24 hours)",
            )
        })
}
