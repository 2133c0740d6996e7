//! What every hosted record shares: the owner name Mailward serves a domain's records under,
//! their TTL, the state machine of `managed_dns_status.<record>` (the same for DMARC, SPF,
//! MTA-STS and BIMI: syncing, ready, error with a reason), the live-DNS checks (a CNAME pointing
//! at us, a TXT standing where our CNAME belongs) and the one writer of a managed status with its
//! `domain.hosted_record.*` event.

use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_domain::dns::DnsResolver as _;
use mailward_domain::domain::{Domain, HostingErrorReason, ManagedRecord, ManagedStatus};
use mailward_domain::hosted_zone::ZoneError;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// TTL of the records Mailward serves: short, so policy edits show quickly.
pub const HOSTED_TTL: u32 = 300;

/// The owner part of the names served for `domain` (see
/// [`mailward_domain::hosted_zone::owner_name`]).
pub fn owner(domain: &Domain) -> String {
    mailward_domain::hosted_zone::owner_name(domain.id, &domain.url)
}

pub(crate) fn publish_failed(e: ZoneError) -> ServiceError {
    ServiceError::new(
        ErrorKind::Unavailable,
        "publish_failed",
        "the hosted record could not be published; nothing was changed, try again later",
    )
    .with_internal(e)
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

/// How long the hourly check may fail to tell whether a hosted record is in place (DNS not
/// answering) before the record is `check_failed`: six passes.
pub const CHECK_FAILED_AFTER: Duration = Duration::hours(6);

/// The next state of a hosted record (DMARC, SPF, MTA-STS, BIMI) from what DNS shows.
/// `delegated` is `None` when DNS was inconclusive: the state stays, unless checks have failed
/// for [`CHECK_FAILED_AFTER`], which is an error `check_failed` (the reason none of the others
/// names) until a check answers again. `window` is how long a new delegation may take.
pub fn next_managed_state(
    current: &ManagedRecord,
    delegated: Option<bool>,
    txt_instead: bool,
    now: OffsetDateTime,
    window: Duration,
) -> ManagedRecord {
    let Some(delegated) = delegated else {
        let unchecked_since = current.unchecked_since.unwrap_or(now);
        if now - unchecked_since >= CHECK_FAILED_AFTER {
            return ManagedRecord {
                status: ManagedStatus::Error,
                since: current.since,
                error_reason: Some(HostingErrorReason::CheckFailed),
                unchecked_since: Some(unchecked_since),
            };
        }
        return ManagedRecord {
            unchecked_since: Some(unchecked_since),
            ..current.clone()
        };
    };
    // A check answered: a failure of checks is over, whatever the record's state was.
    let current = &if current.error_reason == Some(HostingErrorReason::CheckFailed) {
        ManagedRecord {
            status: ManagedStatus::Syncing,
            error_reason: None,
            unchecked_since: None,
            ..current.clone()
        }
    } else {
        ManagedRecord {
            unchecked_since: None,
            ..current.clone()
        }
    };
    if delegated {
        return ManagedRecord {
            status: ManagedStatus::Ready,
            since: current.since.or(Some(now)),
            error_reason: None,
            unchecked_since: None,
        };
    }
    let error = |reason: HostingErrorReason| ManagedRecord {
        status: ManagedStatus::Error,
        since: current.since,
        error_reason: Some(reason),
        unchecked_since: None,
    };
    match current.status {
        ManagedStatus::Ready => error(HostingErrorReason::Drift),
        // A drift stays a drift until the CNAME is back.
        ManagedStatus::Error if current.error_reason == Some(HostingErrorReason::Drift) => {
            current.clone()
        }
        _ if txt_instead => error(HostingErrorReason::RecordConflict),
        _ => {
            let since = current.since.unwrap_or(now);
            if now - since >= window {
                error(HostingErrorReason::SetupTimeout)
            } else {
                ManagedRecord {
                    status: ManagedStatus::Syncing,
                    since: Some(since),
                    error_reason: None,
                    unchecked_since: None,
                }
            }
        }
    }
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
    let mut ops = mailward_store::domains::save_ops(&next, &current.value, current.version)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::seconds(secs)
    }

    fn state(status: ManagedStatus, reason: Option<HostingErrorReason>) -> ManagedRecord {
        ManagedRecord {
            status,
            since: Some(at(0)),
            error_reason: reason,
            unchecked_since: None,
        }
    }

    #[test]
    fn the_delegation_moves_the_state() {
        let window = Duration::hours(72);
        let syncing = state(ManagedStatus::Syncing, None);
        let ready = next_managed_state(&syncing, Some(true), false, at(60), window);
        assert_eq!(ready.status, ManagedStatus::Ready);
        assert_eq!(ready.since, Some(at(0)));
        // Inconclusive DNS changes nothing but noting since when checks fail; after
        // CHECK_FAILED_AFTER it is check_failed, until a check answers again.
        let unsure = next_managed_state(&ready, None, false, at(90), window);
        assert_eq!(
            (unsure.status, unsure.error_reason, unsure.unchecked_since),
            (ManagedStatus::Ready, None, Some(at(90)))
        );
        let later = at(90) + CHECK_FAILED_AFTER;
        let failed = next_managed_state(&unsure, None, false, later, window);
        assert_eq!(failed.error_reason, Some(HostingErrorReason::CheckFailed));
        let back = next_managed_state(&failed, Some(true), false, later, window);
        assert_eq!(
            (back.status, back.unchecked_since),
            (ManagedStatus::Ready, None)
        );
        // A working delegation removed: drift, which stays until the CNAME is back.
        let drift = next_managed_state(&ready, Some(false), false, at(120), window);
        assert_eq!(drift.error_reason, Some(HostingErrorReason::Drift));
        let still = next_managed_state(&drift, Some(false), false, at(99_999_999), window);
        assert_eq!(still.error_reason, Some(HostingErrorReason::Drift));
        assert_eq!(
            next_managed_state(&drift, Some(true), false, at(200), window).status,
            ManagedStatus::Ready
        );
        // Never delegated: syncing within the window, setup_timeout after it.
        let waiting = next_managed_state(&syncing, Some(false), false, at(3600), window);
        assert_eq!(waiting.status, ManagedStatus::Syncing);
        let late = next_managed_state(&syncing, Some(false), false, at(72 * 3600), window);
        assert_eq!(late.error_reason, Some(HostingErrorReason::SetupTimeout));
        // A TXT where the CNAME belongs.
        let conflict = next_managed_state(&syncing, Some(false), true, at(60), window);
        assert_eq!(
            conflict.error_reason,
            Some(HostingErrorReason::RecordConflict)
        );
    }
}
