//! Hosted DKIM keys (SPEC §2.7, §4.1): a key registered for a domain is served in the hosted
//! zone at `<selector>._domainkey.<domain>.<hosted zone>` (the key record as TXT, or a CNAME to
//! the sending service's key host), behind the customer's `<selector>._domainkey.<domain>`
//! CNAME.
//!
//! `dns_status`: `error` with `publish_error` when the zone refused the record (the key is
//! kept, and the sweep retries it), `syncing` once served, `ready` while live DNS shows the
//! customer's CNAME. Deletion is soft: `deleted_at` is set, the served record removed, and the
//! key stays readable by id.

use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::dkim_keys::{DkimKey as DkimKeyView, DkimKeyRequest, ListDkimKeysParams};
use mailward_domain::dkim_keys::{DkimDnsStatus, DkimKey, DkimRecordType, hosted_name};
use mailward_domain::domain::{Domain, HostingErrorReason, ManagedRecord, ManagedStatus};
use mailward_domain::hosted_zone::{ZoneRecord, ZoneRecordKind, normalize};
use mailward_store::dkim_keys as stored;
use time::OffsetDateTime;
use uuid::Uuid;

/// Largest `ttl` (SPEC §8.2).
pub const MAX_TTL: u32 = 86_400;
/// `ttl` when none is given.
pub const DEFAULT_TTL: u32 = 3600;

fn view(app: &AppState, key: &DkimKey, domain: &Domain) -> DkimKeyView {
    DkimKeyView::view(key, &super::common::owner(domain), &app.config.hosted_zone)
}

/// A checked request: the normalized selector and value.
fn validate(input: &DkimKeyRequest) -> Result<(String, String, u32), ServiceError> {
    let selector = input
        .selector
        .trim()
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if selector.is_empty() || selector.len() > 200 || !selector.split('.').all(label_ok) {
        return Err(ServiceError::invalid(
            "selector",
            "selector must be DNS labels of letters, digits and hyphens, separated by dots",
        ));
    }
    let value = input.value.trim().to_owned();
    if value.is_empty() {
        return Err(ServiceError::invalid("value", "value must not be empty"));
    }
    match input.record_type {
        DkimRecordType::Txt => {
            if value.len() > 4096 {
                return Err(ServiceError::invalid(
                    "value",
                    "a DKIM key record is at most 4096 characters",
                ));
            }
            let record = mailward_records::dkim::parse(&value);
            if !record.is_usable() {
                let why = record
                    .problems
                    .iter()
                    .find(|p| p.severity == mailward_records::Severity::Error)
                    .map(|p| p.message.clone())
                    .unwrap_or_else(|| "the key is revoked or missing".to_owned());
                return Err(ServiceError::invalid(
                    "value",
                    format!("value is not a usable DKIM key record: {why}"),
                ));
            }
        }
        DkimRecordType::Cname => {
            if !mailward_records::is_hostname(value.trim_end_matches('.')) {
                return Err(ServiceError::invalid(
                    "value",
                    "value must be a host name for a CNAME key",
                ));
            }
        }
    }
    let ttl = input.ttl.unwrap_or(DEFAULT_TTL);
    if ttl == 0 || ttl > MAX_TTL {
        return Err(ServiceError::invalid(
            "ttl",
            "ttl must be between 1 and 86400",
        ));
    }
    let value = match input.record_type {
        DkimRecordType::Txt => value,
        DkimRecordType::Cname => normalize(&value),
    };
    Ok((selector, value, ttl))
}

fn zone_kind(record_type: DkimRecordType) -> ZoneRecordKind {
    match record_type {
        DkimRecordType::Txt => ZoneRecordKind::Txt,
        DkimRecordType::Cname => ZoneRecordKind::Cname,
    }
}

/// Serves the key and records the outcome on it (status, error, publication time).
async fn publish(app: &AppState, domain: &Domain, key: &mut DkimKey, now: OffsetDateTime) {
    let record = ZoneRecord {
        name: hosted_name(
            &key.selector,
            &super::common::owner(domain),
            &app.config.hosted_zone,
        ),
        kind: zone_kind(key.record_type),
        values: vec![key.value.clone()],
        ttl: key.ttl.unwrap_or(DEFAULT_TTL),
    };
    match app.zone.upsert(&[record]).await {
        Ok(()) => {
            key.publish_error = None;
            key.last_published_at = Some(now);
            key.dns_status = match delegation_seen(app, domain, &key.selector).await {
                Some(true) => DkimDnsStatus::Ready,
                _ => DkimDnsStatus::Syncing,
            };
        }
        Err(e) => {
            key.dns_status = DkimDnsStatus::Error;
            key.publish_error = Some(e.to_string());
        }
    }
}

/// Whether live DNS shows the customer's CNAME to our name (`None`: the lookup failed).
async fn delegation_seen(app: &AppState, domain: &Domain, selector: &str) -> Option<bool> {
    let host = format!("{selector}._domainkey.{}", domain.url);
    let target = hosted_name(
        selector,
        &super::common::owner(domain),
        &app.config.hosted_zone,
    );
    super::common::cname_points_at(app, &host, &target).await
}

async fn remove_served(app: &AppState, domain: &Domain, key: &DkimKey) {
    let name = hosted_name(
        &key.selector,
        &super::common::owner(domain),
        &app.config.hosted_zone,
    );
    if let Err(e) = app.zone.remove(&[(name, zone_kind(key.record_type))]).await {
        tracing::warn!(key.id = %key.id, error = %e, "served DKIM record not removed");
    }
}

/// `managed_dns_status.dkim` from the live keys: unknown without keys, error
/// (`dkim_key_error`) when one is in error, ready when all are, syncing otherwise. `since` is
/// when it last entered syncing.
pub fn aggregate(keys: &[DkimKey], current: &ManagedRecord, now: OffsetDateTime) -> ManagedRecord {
    let live: Vec<&DkimKey> = keys.iter().filter(|k| k.deleted_at.is_none()).collect();
    if live.is_empty() {
        return ManagedRecord::default();
    }
    let status = if live.iter().any(|k| k.dns_status == DkimDnsStatus::Error) {
        ManagedStatus::Error
    } else if live.iter().all(|k| k.dns_status == DkimDnsStatus::Ready) {
        ManagedStatus::Ready
    } else {
        ManagedStatus::Syncing
    };
    let since = if status == ManagedStatus::Syncing && current.status != ManagedStatus::Syncing {
        Some(now)
    } else {
        current.since.or(Some(now))
    };
    ManagedRecord {
        status,
        since,
        error_reason: (status == ManagedStatus::Error).then_some(HostingErrorReason::DkimKeyError),
        unchecked_since: None,
    }
}

/// Keeps `is_dkim_managed` (a live key exists) and `managed_dns_status.dkim` in step with the
/// keys after a person's change.
async fn mark_managed(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
) -> Result<Domain, ServiceError> {
    let current = crate::access::load(app, caller, domain_id).await?;
    let keys: Vec<DkimKey> = stored::list(app.store.as_ref(), caller.org_id, domain_id)
        .await?
        .into_iter()
        .map(|k| k.value)
        .collect();
    let now = app.clock.now();
    crate::domains::set_hosting(app, caller, domain_id, current, |d| {
        let mut next = d.clone();
        next.is_dkim_managed = keys.iter().any(|k| k.deleted_at.is_none());
        next.managed_dkim = aggregate(&keys, &d.managed_dkim, now);
        next
    })
    .await
}

/// The hosted keys as the records guidance plans them: `<selector>._domainkey.<domain>` CNAME
/// to where Mailward serves the key.
pub async fn hosted_plans(app: &AppState, domain: &Domain) -> Vec<mailward_plan::DkimPlan> {
    if !domain.is_dkim_managed {
        return Vec::new();
    }
    stored::list(app.store.as_ref(), domain.org_id, domain.id)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|k| k.value.deleted_at.is_none())
        .map(|k| mailward_plan::DkimPlan {
            value: hosted_name(
                &k.value.selector,
                &super::common::owner(domain),
                &app.config.hosted_zone,
            ),
            selector: k.value.selector,
            record_type: mailward_plan::RecordKind::Cname,
        })
        .collect()
}

async fn live_selector_taken(
    app: &AppState,
    org: Uuid,
    domain: Uuid,
    selector: &str,
    except: Option<Uuid>,
) -> Result<bool, ServiceError> {
    Ok(stored::list(app.store.as_ref(), org, domain)
        .await?
        .iter()
        .any(|k| {
            k.value.deleted_at.is_none()
                && k.value.selector == selector
                && Some(k.value.id) != except
        }))
}

fn selector_taken() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        "dkim_key_exists",
        "this domain already has a key at that selector",
    )
    .param("selector")
}

/// The domain's keys (deleted ones left out), oldest first.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    params: &ListDkimKeysParams,
) -> Result<Vec<DkimKeyView>, ServiceError> {
    let domain = crate::access::load(app, caller, domain_id).await?.value;
    let mut keys: Vec<DkimKey> = stored::list(app.store.as_ref(), caller.org_id, domain_id)
        .await?
        .into_iter()
        .map(|k| k.value)
        .filter(|k| k.deleted_at.is_none())
        .filter(|k| params.dns_status.is_none_or(|s| k.dns_status == s))
        .collect();
    keys.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(keys.iter().map(|k| view(app, k, &domain)).collect())
}

/// Registers and serves a key.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    input: DkimKeyRequest,
) -> Result<DkimKeyView, ServiceError> {
    caller.require_write()?;
    let domain = crate::access::load(app, caller, domain_id).await?.value;
    let (selector, value, ttl) = validate(&input)?;
    if live_selector_taken(app, caller.org_id, domain_id, &selector, None).await? {
        return Err(selector_taken());
    }
    let now = app.clock.now();
    let (_, actor) = caller.actor();
    let mut key = DkimKey {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        domain_id,
        selector,
        record_type: input.record_type,
        value,
        ttl: Some(ttl),
        dns_status: DkimDnsStatus::Unknown,
        publish_error: None,
        created_by: actor.map(|id| id.to_string()),
        created_at: now,
        updated_at: now,
        last_published_at: None,
        deleted_at: None,
    };
    publish(app, &domain, &mut key, now).await;
    stored::save(app.store.as_ref(), &key, None).await?;
    let domain = mark_managed(app, caller, domain_id).await?;
    Ok(view(app, &key, &domain))
}

/// One key, deleted or not.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    id: Uuid,
) -> Result<DkimKeyView, ServiceError> {
    let domain = crate::access::load(app, caller, domain_id).await?.value;
    let key = stored::get(app.store.as_ref(), caller.org_id, domain_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("DKIM key"))?;
    Ok(view(app, &key.value, &domain))
}

/// Replaces a key (selector, type, value, ttl) and serves the new record.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    id: Uuid,
    input: DkimKeyRequest,
) -> Result<DkimKeyView, ServiceError> {
    caller.require_write()?;
    let (domain, current) = load_live(app, caller, domain_id, id).await?;
    let (selector, value, ttl) = validate(&input)?;
    if live_selector_taken(app, caller.org_id, domain_id, &selector, Some(id)).await? {
        return Err(selector_taken());
    }
    let before = current.value.clone();
    let mut key = before.clone();
    key.selector = selector;
    key.record_type = input.record_type;
    key.value = value;
    key.ttl = Some(ttl);
    let now = app.clock.now();
    key.updated_at = now;
    if key.selector != before.selector || key.record_type != before.record_type {
        remove_served(app, &domain, &before).await;
    }
    publish(app, &domain, &mut key, now).await;
    save_read(app, &key, current.version).await?;
    let domain = mark_managed(app, caller, domain_id).await?;
    Ok(view(app, &key, &domain))
}

/// The domain and one of its live (not deleted) keys, or 404.
async fn load_live(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    id: Uuid,
) -> Result<(Domain, mailward_store::Versioned<DkimKey>), ServiceError> {
    let domain = crate::access::load(app, caller, domain_id).await?.value;
    let key = stored::get(app.store.as_ref(), caller.org_id, domain_id, id)
        .await?
        .filter(|k| k.value.deleted_at.is_none())
        .ok_or_else(|| ServiceError::not_found("DKIM key"))?;
    Ok((domain, key))
}

/// Saves a person's change to a key read at `version` (409 when it changed meanwhile).
async fn save_read(app: &AppState, key: &DkimKey, version: u64) -> Result<(), ServiceError> {
    stored::save(app.store.as_ref(), key, Some(version))
        .await
        .map_err(|e| {
            if e.is_conflict() {
                ServiceError::conflict("the key changed meanwhile; read it again")
            } else {
                e.into()
            }
        })
}

/// Soft-deletes a key and stops serving it.
pub async fn delete(
    app: &AppState,
    caller: &Caller,
    domain_id: Uuid,
    id: Uuid,
) -> Result<(), ServiceError> {
    caller.require_write()?;
    let (domain, current) = load_live(app, caller, domain_id, id).await?;
    let mut key = current.value.clone();
    let now = app.clock.now();
    key.deleted_at = Some(now);
    key.updated_at = now;
    save_read(app, &key, current.version).await?;
    remove_served(app, &domain, &key).await;
    mark_managed(app, caller, domain_id).await?;
    Ok(())
}

/// One sweep pass over a domain's live keys: republishes keys in error and follows the
/// customer's CNAMEs (`syncing` ↔ `ready`). Best effort: a failure waits for the next pass.
pub async fn reconcile(app: &AppState, domain: &Domain, now: OffsetDateTime) {
    if !domain.is_dkim_managed {
        return;
    }
    let keys = match stored::list(app.store.as_ref(), domain.org_id, domain.id).await {
        Ok(keys) => keys,
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "DKIM keys not reconciled");
            return;
        }
    };
    for current in keys.into_iter().filter(|k| k.value.deleted_at.is_none()) {
        let mut key = current.value.clone();
        if key.dns_status == DkimDnsStatus::Error {
            publish(app, domain, &mut key, now).await;
        } else if let Some(seen) = delegation_seen(app, domain, &key.selector).await {
            key.dns_status = if seen {
                DkimDnsStatus::Ready
            } else {
                DkimDnsStatus::Syncing
            };
        }
        if key != current.value {
            key.updated_at = now;
            if let Err(e) = stored::save(app.store.as_ref(), &key, Some(current.version)).await {
                tracing::debug!(key.id = %key.id, error = %e, "DKIM key changed meanwhile; next pass");
            }
        }
    }
    if let Err(e) = save_aggregate(app, domain.org_id, domain.id, now).await {
        tracing::debug!(domain.id = %domain.id, error = %e, "managed DKIM state not saved; next pass");
    }
}

/// Saves `managed_dns_status.dkim` after the sweep moved keys, with `domain.hosted_record.*`
/// (`record` dkim) when it becomes ready or error.
async fn save_aggregate(
    app: &AppState,
    org: Uuid,
    id: Uuid,
    now: OffsetDateTime,
) -> anyhow::Result<()> {
    let keys: Vec<DkimKey> = stored::list(app.store.as_ref(), org, id)
        .await?
        .into_iter()
        .map(|k| k.value)
        .collect();
    super::common::save_managed(app, org, id, "dkim", now, |d| {
        d.managed_dkim = aggregate(&keys, &d.managed_dkim, now);
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(status: DkimDnsStatus, deleted: bool) -> DkimKey {
        let at = OffsetDateTime::UNIX_EPOCH;
        DkimKey {
            id: Uuid::new_v4(),
            org_id: Uuid::nil(),
            domain_id: Uuid::nil(),
            selector: "s1".into(),
            record_type: DkimRecordType::Txt,
            value: "v=DKIM1; p=x".into(),
            ttl: None,
            dns_status: status,
            publish_error: None,
            created_by: None,
            created_at: at,
            updated_at: at,
            last_published_at: None,
            deleted_at: deleted.then_some(at),
        }
    }

    #[test]
    fn the_keys_make_one_managed_state() {
        use DkimDnsStatus::{Error, Ready, Syncing};
        let now = OffsetDateTime::UNIX_EPOCH + time::Duration::hours(1);
        let none = ManagedRecord::default();
        assert_eq!(aggregate(&[], &none, now), none);
        assert_eq!(aggregate(&[key(Ready, true)], &none, now), none);
        let syncing = aggregate(&[key(Ready, false), key(Syncing, false)], &none, now);
        assert_eq!(
            (syncing.status, syncing.since),
            (ManagedStatus::Syncing, Some(now))
        );
        let later = now + time::Duration::hours(1);
        let ready = aggregate(&[key(Ready, false), key(Error, true)], &syncing, later);
        assert_eq!(
            (ready.status, ready.since),
            (ManagedStatus::Ready, Some(now))
        );
        let error = aggregate(&[key(Ready, false), key(Error, false)], &ready, later);
        assert_eq!(error.status, ManagedStatus::Error);
        assert_eq!(error.error_reason, Some(HostingErrorReason::DkimKeyError));
    }
}
