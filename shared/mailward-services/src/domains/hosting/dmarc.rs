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

use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::records::HostedDmarcResponse;
use mailward_domain::dns::DnsResolver as _;
use mailward_domain::domain::{Domain, ManagedRecord, ManagedStatus};
use mailward_domain::hosted_zone::{ZoneError, ZoneRecord, ZoneRecordKind};
use mailward_monitoring::observe::Delegation;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// TTL of the records Mailward serves: short, so policy edits show quickly.
pub const HOSTED_TTL: u32 = 300;

/// The owner part of the names served for `domain` (see
/// [`mailward_domain::hosted_zone::owner_name`]).
pub fn owner(domain: &Domain) -> String {
    mailward_domain::hosted_zone::owner_name(domain.id, &domain.url)
}

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

pub(crate) fn publish_failed(e: ZoneError) -> ServiceError {
    ServiceError::new(
        ErrorKind::Unavailable,
        "publish_failed",
        "the hosted record could not be published; nothing was changed, try again later",
    )
    .with_internal(e)
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

/// Whether `host` is, in live DNS without caches, a CNAME to `target` (`None`: the lookup
/// failed; NXDOMAIN or no CNAME is `Some(false)`).
pub(crate) async fn cname_points_at(app: &AppState, host: &str, target: &str) -> Option<bool> {
    let direct = mailward_domain::dns::Uncached(app.resolver.as_ref());
    match direct
        .lookup(host, mailward_domain::dns::RecordType::Cname)
        .await
    {
        Ok(answer) => Some(answer.records.iter().any(|r| {
            matches!(r, mailward_domain::dns::RecordData::Cname(t)
                if mailward_domain::hosted_zone::normalize(t) == target)
        })),
        Err(mailward_domain::dns::DnsError::NxDomain) => Some(false),
        Err(_) => None,
    }
}

/// The next hosted-DMARC state from what DNS shows. `delegated` is `None` when DNS was
/// inconclusive (the state stays); `window` is how long a new delegation may take.
pub fn next_dmarc_state(
    current: &ManagedRecord,
    delegated: Option<bool>,
    txt_instead: bool,
    now: OffsetDateTime,
    window: Duration,
) -> ManagedRecord {
    let Some(delegated) = delegated else {
        return current.clone();
    };
    if delegated {
        return ManagedRecord {
            status: ManagedStatus::Ready,
            since: current.since.or(Some(now)),
            error_reason: None,
        };
    }
    let error = |reason: &str| ManagedRecord {
        status: ManagedStatus::Error,
        since: current.since,
        error_reason: Some(reason.to_owned()),
    };
    match current.status {
        ManagedStatus::Ready => error("drift"),
        // A drift stays a drift until the CNAME is back.
        ManagedStatus::Error if current.error_reason.as_deref() == Some("drift") => current.clone(),
        _ if txt_instead => error("record_conflict"),
        _ => {
            let since = current.since.unwrap_or(now);
            if now - since >= window {
                error("setup_timeout")
            } else {
                ManagedRecord {
                    status: ManagedStatus::Syncing,
                    since: Some(since),
                    error_reason: None,
                }
            }
        }
    }
}

/// Turns hosted DMARC on: serves the record, then records the state. Nothing is stored when
/// publishing fails. Idempotent.
pub async fn enable(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<HostedDmarcResponse, ServiceError> {
    caller.require_write()?;
    let current = super::load(app, caller, id).await?;
    publish_dmarc(app, &current.value).await?;
    let delegated = delegation_seen(app, &current.value).await;
    let now = app.clock.now();
    let saved = super::set_hosting(app, caller, id, current, |d| {
        let mut next = d.clone();
        next.is_dmarc_managed = true;
        let start = if d.is_dmarc_managed {
            d.managed_dmarc.clone()
        } else {
            ManagedRecord {
                status: ManagedStatus::Syncing,
                since: Some(now),
                error_reason: None,
            }
        };
        next.managed_dmarc = match delegated {
            Some(true) => next_dmarc_state(&start, Some(true), false, now, Duration::ZERO),
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
            error_reason: Some("publish_failed".to_owned()),
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
    if current.error_reason.as_deref() == Some("publish_failed") {
        // Republished above: judge the delegation afresh.
        current.status = ManagedStatus::Syncing;
        current.error_reason = None;
    }
    Some(next_dmarc_state(
        &current,
        delegated,
        txt_instead,
        now,
        window,
    ))
}

/// Saves a change the sweep made to a domain's hosting fields (`change` on the latest version),
/// with `domain.hosted_record.ready|error` (`data.record` = `record`) when the managed status
/// of that record moves to ready or error. Nothing is written when nothing changed.
pub(crate) async fn save_managed(
    app: &AppState,
    org: Uuid,
    id: Uuid,
    record: &str,
    now: OffsetDateTime,
    change: impl Fn(&mut Domain),
) -> anyhow::Result<()> {
    let Some(current) = mailward_store::domains::get(app.store.as_ref(), org, id).await? else {
        return Ok(());
    };
    let mut next = current.value.clone();
    change(&mut next);
    if next == current.value {
        return Ok(());
    }
    let status = |d: &Domain| match record {
        "dmarc" => d.managed_dmarc.status,
        "spf" => d.managed_spf.status,
        "mta_sts" => d.managed_mta_sts.status,
        "bimi" => d.managed_bimi.status,
        _ => d.managed_dkim.status,
    };
    let mut ops = vec![mailward_store::domains::save_op(&next, current.version)?];
    let kind = match status(&next) {
        ManagedStatus::Ready => Some(mailward_domain::events::types::DOMAIN_HOSTED_RECORD_READY),
        ManagedStatus::Error => Some(mailward_domain::events::types::DOMAIN_HOSTED_RECORD_ERROR),
        _ => None,
    };
    if let Some(kind) = kind.filter(|_| status(&next) != status(&current.value)) {
        let view = serde_json::to_value(app.domain_view(&next))?;
        let mut event = mailward_store::outbox::OutboxEvent::new(kind, org, now, view, None);
        event.record = Some(record.to_owned());
        ops.push(event.write_op()?);
    }
    app.store.transact(ops).await?;
    Ok(())
}

/// Whether `_dmarc.<domain>` holds a DMARC TXT of its own (no CNAME), uncached.
async fn dmarc_txt_at_host(app: &AppState, domain: &Domain) -> bool {
    txt_instead_of_cname(app, &format!("_dmarc.{}", domain.url), "v=dmarc1").await
}

/// Whether `host` holds, without a CNAME, a TXT record starting with `version` (compared
/// case-insensitively): the customer's own record standing where our CNAME belongs
/// (`record_conflict`). Uncached; a failed lookup is `false`.
pub(crate) async fn txt_instead_of_cname(app: &AppState, host: &str, version: &str) -> bool {
    let direct = mailward_domain::dns::Uncached(app.resolver.as_ref());
    match direct
        .lookup(host, mailward_domain::dns::RecordType::Txt)
        .await
    {
        Ok(answer) => {
            answer.cname_chain.is_empty()
                && answer.records.iter().any(|r| {
                    r.txt_value()
                        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with(version))
                })
        }
        Err(_) => false,
    }
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

/// Removes a deleted domain's served records: its report authorization, unless another
/// organization still monitors the name, its hosted DMARC record and its DKIM keys.
pub async fn withdraw(app: &AppState, domain: &Domain) {
    let mut keys = Vec::new();
    let watched = mailward_store::reports::watchers(app.store.as_ref(), &domain.url)
        .await
        .map(|watchers| watchers.iter().any(|(org, _)| *org != domain.org_id))
        .unwrap_or(true);
    if !watched {
        keys.push((
            report_authorization_name(app, &domain.url),
            ZoneRecordKind::Txt,
        ));
    }
    if domain.is_dmarc_managed {
        keys.push((dmarc_target(app, domain), ZoneRecordKind::Txt));
    }
    if domain.is_dkim_managed
        && let Ok(dkim) =
            mailward_store::dkim_keys::list(app.store.as_ref(), domain.org_id, domain.id).await
    {
        for key in dkim.iter().filter(|k| k.value.deleted_at.is_none()) {
            let kind = match key.value.record_type {
                mailward_domain::dkim_keys::DkimRecordType::Txt => ZoneRecordKind::Txt,
                mailward_domain::dkim_keys::DkimRecordType::Cname => ZoneRecordKind::Cname,
            };
            keys.push((
                mailward_domain::dkim_keys::hosted_name(
                    &key.value.selector,
                    &owner(domain),
                    &app.config.hosted_zone,
                ),
                kind,
            ));
        }
    }
    if domain.is_spf_managed {
        super::hosted_spf::withdraw(app, domain).await;
    }
    super::mta_sts::withdraw(app, domain).await;
    super::bimi::withdraw(app, domain).await;
    if !keys.is_empty()
        && let Err(e) = app.zone.remove(&keys).await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "served records of a deleted domain not removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::seconds(secs)
    }

    fn state(status: ManagedStatus, reason: Option<&str>) -> ManagedRecord {
        ManagedRecord {
            status,
            since: Some(at(0)),
            error_reason: reason.map(str::to_owned),
        }
    }

    #[test]
    fn the_delegation_moves_the_state() {
        let window = Duration::hours(72);
        let syncing = state(ManagedStatus::Syncing, None);
        let ready = next_dmarc_state(&syncing, Some(true), false, at(60), window);
        assert_eq!(ready.status, ManagedStatus::Ready);
        assert_eq!(ready.since, Some(at(0)));
        // Inconclusive DNS changes nothing.
        assert_eq!(next_dmarc_state(&ready, None, false, at(90), window), ready);
        // A working delegation removed: drift, which stays until the CNAME is back.
        let drift = next_dmarc_state(&ready, Some(false), false, at(120), window);
        assert_eq!(drift.error_reason.as_deref(), Some("drift"));
        let still = next_dmarc_state(&drift, Some(false), false, at(99_999_999), window);
        assert_eq!(still.error_reason.as_deref(), Some("drift"));
        assert_eq!(
            next_dmarc_state(&drift, Some(true), false, at(200), window).status,
            ManagedStatus::Ready
        );
        // Never delegated: syncing within the window, setup_timeout after it.
        let waiting = next_dmarc_state(&syncing, Some(false), false, at(3600), window);
        assert_eq!(waiting.status, ManagedStatus::Syncing);
        let late = next_dmarc_state(&syncing, Some(false), false, at(72 * 3600), window);
        assert_eq!(late.error_reason.as_deref(), Some("setup_timeout"));
        // A TXT where the CNAME belongs.
        let conflict = next_dmarc_state(&syncing, Some(false), true, at(60), window);
        assert_eq!(conflict.error_reason.as_deref(), Some("record_conflict"));
    }
}
