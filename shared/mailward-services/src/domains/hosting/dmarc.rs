//! Records Mailward serves for a domain in its own zone (the hosted-zone port):
//!
//! - **hosted DMARC** (`POST /domains/{id}/hosted-dmarc`): the customer publishes `_dmarc.<domain>`
//!   CNAME `<owner>._dmarc.<hosted zone>` and Mailward serves the TXT built from the domain's
//!   `dmarc_options` there, republished when they change. `managed_dns_status.dmarc` follows
//!   the customer's CNAME: `syncing` until live DNS shows it, `ready` while it does, `error`
//!   (`drift`) when a working delegation stops pointing at us, `setup_timeout` when it never
//!   appears within the pending window, `record_conflict` when a TXT stands where the CNAME
//!   belongs, `publish_failed` when the zone refused our record;
//! - **the RFC 9989 report-destination authorization** `<domain>._report._dmarc.<report host>`
//!   TXT `v=DMARC1`, for every monitored domain: without it receivers drop the aggregate
//!   reports addressed to Mailward.
//!
//! The sweep reconciles both on every pass ([`reconcile_dmarc`], [`authorize_reports`]); the
//! hourly reconciliation re-checks hosted DMARC too ([`reconcile_dmarc_alone`]).

use super::common::{
    HOSTED_TTL, cname_points_at, next_managed_state, owner, publish_failed, save_managed,
    txt_instead_of_cname,
};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::records::HostedDmarcResponse;
use mailward_domain::domain::{Domain, HostingErrorReason, ManagedRecord, ManagedStatus};
use mailward_domain::hosted_zone::{ZoneError, ZoneRecord, ZoneRecordKind};
use mailward_monitoring::observe::Delegation;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// Where Mailward serves the domain's DMARC record.
pub fn dmarc_target(app: &AppState, domain: &Domain) -> String {
    mailward_plan::dmarc_cname_target(&owner(domain), &app.config.hosted_zone)
}

/// The RFC 9989 authorization name for reports about `domain` sent to the report host.
pub fn report_authorization_name(app: &AppState, domain: &str) -> String {
    format!(
        "{}._report._dmarc.{}",
        mailward_domain::hosted_zone::normalize(domain),
        mailward_domain::hosted_zone::normalize(&app.config.report_domain)
    )
}

fn plan_context(app: &AppState, domain: &Domain) -> mailward_plan::PlanContext {
    let mut ctx = crate::evaluation::plan_context(app, domain, None, Vec::new());
    ctx.dmarc_delegated = true;
    ctx
}

/// The TXT value Mailward serves for the domain's current `dmarc_options`.
fn dmarc_value(app: &AppState, domain: &Domain) -> Result<String, ServiceError> {
    mailward_plan::dmarc_txt_value(&plan_context(app, domain)).ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unprocessable,
            "dmarc_record_unbuildable",
            "no DMARC record can be built from this domain's dmarc_options",
        )
    })
}

/// Serves the domain's DMARC record at its target (idempotent).
pub async fn publish_dmarc(app: &AppState, domain: &Domain) -> Result<(), ServiceError> {
    let value = dmarc_value(app, domain)?;
    let record = ZoneRecord::txt(&dmarc_target(app, domain), &value, HOSTED_TTL);
    app.zone.upsert(&[record]).await.map_err(publish_failed)
}

/// Whether live DNS shows `_dmarc.<domain>` delegated to our target (`None`: the lookup failed).
pub async fn delegation_seen(app: &AppState, domain: &Domain) -> Option<bool> {
    let host = format!("_dmarc.{}", domain.url);
    cname_points_at(app, &host, &dmarc_target(app, domain)).await
}

/// Turns hosted DMARC on: serves the record, then records the state. Nothing is stored when
/// publishing fails. Idempotent.
pub async fn enable(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<HostedDmarcResponse, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?;
    publish_dmarc(app, &current.value).await?;
    let delegated = delegation_seen(app, &current.value).await;
    let now = app.clock.now();
    let saved = crate::domains::set_hosting(app, caller, id, current, |d| {
        let mut next = d.clone();
        next.is_dmarc_managed = true;
        let start = if d.is_dmarc_managed {
            d.managed_dmarc.clone()
        } else {
            ManagedRecord {
                status: ManagedStatus::Syncing,
                since: Some(now),
                error_reason: None,
                unchecked_since: None,
            }
        };
        next.managed_dmarc = match delegated {
            Some(true) => next_managed_state(&start, Some(true), false, now, Duration::ZERO),
            _ => start,
        };
        next
    })
    .await?;
    let ctx = plan_context(app, &saved);
    Ok(HostedDmarcResponse {
        hosted_dmarc_active: delegated == Some(true),
        record: mailward_plan::dmarc_delegation_record(&ctx),
        instructions: format!(
            "Publish _dmarc.{} as a CNAME to {} and delete any TXT record at _dmarc.{}: a name \
             with a CNAME can hold no other record.",
            saved.url,
            dmarc_target(app, &saved),
            saved.url
        ),
        domain: app.domain_view(&saved),
    })
}

/// One sweep pass over a managed domain's hosted DMARC: repairs the served record when it is
/// missing or stale, and moves the state from what the observation saw. `None` when the domain
/// is not managed.
pub async fn reconcile_dmarc(
    app: &AppState,
    domain: &Domain,
    delegation: &Delegation,
    conclusive: bool,
    now: OffsetDateTime,
) -> Option<ManagedRecord> {
    if !domain.is_dmarc_managed {
        return None;
    }
    let target = dmarc_target(app, domain);
    let served = app.zone.records(&target).await;
    let wanted = dmarc_value(app, domain).ok();
    let stale = match (&served, &wanted) {
        (Ok(records), Some(value)) => !records
            .iter()
            .any(|r| r.kind == ZoneRecordKind::Txt && r.values == [value.clone()]),
        _ => false,
    };
    if stale && let Err(e) = publish_dmarc(app, domain).await {
        tracing::warn!(domain.id = %domain.id, error = %e.message(), "hosted DMARC record not republished");
        return Some(ManagedRecord {
            status: ManagedStatus::Error,
            since: domain.managed_dmarc.since,
            error_reason: Some(HostingErrorReason::PublishFailed),
            unchecked_since: None,
        });
    }
    let (delegated, txt_instead) = match delegation {
        Delegation::Delegated => (Some(true), false),
        Delegation::TxtInsteadOfCname => (Some(false), true),
        Delegation::OtherTarget { .. } | Delegation::Absent => (Some(false), false),
        Delegation::NotExpected => (None, false),
    };
    let delegated = if conclusive { delegated } else { None };
    let window = Duration::seconds(i64::try_from(app.config.pending_grace_secs).unwrap_or(0));
    let mut current = domain.managed_dmarc.clone();
    if current.error_reason == Some(HostingErrorReason::PublishFailed) {
        // Republished above: judge the delegation afresh.
        current.status = ManagedStatus::Syncing;
        current.error_reason = None;
    }
    Some(next_managed_state(
        &current,
        delegated,
        txt_instead,
        now,
        window,
    ))
}

/// Whether `_dmarc.<domain>` holds a DMARC TXT of its own (no CNAME), uncached.
async fn dmarc_txt_at_host(app: &AppState, domain: &Domain) -> bool {
    txt_instead_of_cname(app, &format!("_dmarc.{}", domain.url), "v=dmarc1").await
}

/// The hourly reconciliation's pass over hosted DMARC: the same repair and state move as the
/// sweep's, with the delegation read on its own (a CNAME to us, a DMARC TXT standing where the
/// CNAME belongs, or neither).
pub async fn reconcile_dmarc_alone(app: &AppState, domain: &Domain, now: OffsetDateTime) {
    if !domain.is_dmarc_managed {
        return;
    }
    let (delegation, conclusive) = match delegation_seen(app, domain).await {
        Some(true) => (Delegation::Delegated, true),
        Some(false) if dmarc_txt_at_host(app, domain).await => {
            (Delegation::TxtInsteadOfCname, true)
        }
        Some(false) => (Delegation::Absent, true),
        None => (Delegation::Absent, false),
    };
    let Some(managed) = reconcile_dmarc(app, domain, &delegation, conclusive, now).await else {
        return;
    };
    let result = save_managed(app, domain.org_id, domain.id, "dmarc", now, |d| {
        d.managed_dmarc = managed.clone();
    })
    .await;
    if let Err(e) = result {
        tracing::debug!(domain.id = %domain.id, error = %e, "managed DMARC state not saved; next pass");
    }
}

/// Publishes the report-destination authorization of a domain (idempotent).
pub async fn authorize_reports(app: &AppState, domain: &str) -> Result<(), ZoneError> {
    let record = ZoneRecord::txt(
        &report_authorization_name(app, domain),
        "v=DMARC1",
        HOSTED_TTL,
    );
    app.zone.upsert(&[record]).await
}
