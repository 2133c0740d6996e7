//! Hosted MTA-STS (RFC 8461, SPEC §4.4): Mailward builds the policy from the domain's live MX
//! hosts, serves it at `https://mta-sts.<domain>/.well-known/mta-sts.txt` (the customer's
//! `mta-sts` CNAME points at `<domain>.mta-sts.<hosted zone>`) and serves the `_mta-sts` TXT
//! with the policy `id` at `<owner>._mta-sts.<hosted zone>` (the customer's `_mta-sts`
//! CNAME), so every change gets a new id without the customer touching DNS.
//!
//! - Many organizations may enable hosting for one name (its owner, the owner's MSP, an
//!   auditor); the policy served for the name (the serving route knows only the host name) is
//!   the one of the organization whose owner-specific `_mta-sts` CNAME target the domain
//!   publishes ([`owner_chose`]): the domain's owner chose it in the domain's own DNS. No
//!   certificate or front is requested before that CNAME is seen, at most
//!   [`MAX_FRONTS_PER_ORG`] per organization, and retiring or deleting a policy never removes
//!   another organization's.
//! - Turning it off follows RFC 8461 §8.3: the policy becomes `mode: none` with a new id and is
//!   served until the old `max_age` has passed, then withdrawn by the hourly reconciliation.
//! - The hourly reconciliation rebuilds the policy when the live MX hosts change (`mta_sts.updated`) and moves
//!   `managed_dns_status.mta_sts` from the two CNAMEs.

use super::common::{
    HOSTED_TTL, cname_points_at, next_managed_state as next_state, publish_failed,
};
use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::mta_sts::{MtaStsCertificate, MtaStsRecord, MtaStsRequest, MtaStsState};
use mailward_domain::dns::{DnsError, DnsResolver as _, RecordData, RecordType, Uncached};
use mailward_domain::domain::{Domain, HostingErrorReason, ManagedRecord, ManagedStatus};
use mailward_domain::events::types;
use mailward_domain::hosted_zone::{ZoneRecord, ZoneRecordKind, normalize};
use mailward_domain::mta_sts::{
    DEFAULT_MAX_AGE, HostedMtaSts, MAX_MAX_AGE, MIN_MAX_AGE, ServedPolicy, StsMode,
};
use mailward_domain::policy_fronts::{Closing, FrontStage, PolicyFront};
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, domains};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// The header an HTTPS front names the policy host in (it forwards with the API's own `Host`).
pub const FRONT_HOST_HEADER: &str = mailward_domain::policy_fronts::FRONT_HOST_HEADER;

/// Policy fronts (certificate + HTTPS front) one organization may hold: each costs a
/// certificate and a distribution at the provider.
pub const MAX_FRONTS_PER_ORG: usize = 100;

/// Tries of a write that lost its version check to the sweep.
const WRITE_TRIES: usize = 3;

/// Where the `_mta-sts` TXT is served.
fn txt_target(app: &AppState, domain: &Domain) -> String {
    mailward_plan::mta_sts_txt_target(&super::common::owner(domain), &app.config.hosted_zone)
}

/// Where the policy host's CNAME points.
fn policy_target(app: &AppState, domain: &str) -> String {
    mailward_plan::mta_sts_policy_target(domain, &app.config.hosted_zone)
}

/// The policy-file mode of a hosted mode.
fn file_mode(mode: StsMode) -> mailward_records::mta_sts::Mode {
    match mode {
        StsMode::Testing => mailward_records::mta_sts::Mode::Testing,
        StsMode::Enforce => mailward_records::mta_sts::Mode::Enforce,
        StsMode::None => mailward_records::mta_sts::Mode::None,
    }
}

/// The policy file of a hosted policy (CRLF lines), or why the MX hosts make none.
fn generate(m: &HostedMtaSts) -> Result<String, String> {
    mailward_records::mta_sts::generate(file_mode(m.mode), &m.mx, m.max_age)
        .map(|g| g.policy)
        .map_err(|problems| {
            problems
                .iter()
                .map(|p| p.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        })
}

/// The policy file of a hosted policy (validated when it was built).
pub fn policy_text(m: &HostedMtaSts) -> String {
    generate(m).unwrap_or_default()
}

/// The wire state of a domain.
pub fn state(app: &AppState, domain: &Domain) -> MtaStsState {
    let at = |t: OffsetDateTime| {
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    };
    let m = domain.mta_sts.as_ref();
    MtaStsState {
        object: "mta_sts".to_owned(),
        domain_id: domain.id,
        domain: domain.url.clone(),
        enabled: domain.is_mta_sts_managed,
        mode: m.map_or(StsMode::None, |m| m.mode).as_str().to_owned(),
        max_age: m.map(|m| m.max_age),
        mx: m.map(|m| m.mx.clone()).unwrap_or_default(),
        policy_id: m.map(|m| m.policy_id.clone()),
        policy: m.map(policy_text),
        policy_url: format!("https://mta-sts.{}/.well-known/mta-sts.txt", domain.url),
        records: if domain.is_mta_sts_managed {
            let mut records = vec![
                MtaStsRecord {
                    host: format!("_mta-sts.{}", domain.url),
                    record_type: "CNAME".to_owned(),
                    value: txt_target(app, domain),
                },
                MtaStsRecord {
                    host: format!("mta-sts.{}", domain.url),
                    record_type: "CNAME".to_owned(),
                    value: policy_target(app, &domain.url),
                },
            ];
            records.extend(m.and_then(|m| m.front.as_ref()).into_iter().flat_map(|f| {
                f.validation.iter().map(|v| MtaStsRecord {
                    host: v.name.clone(),
                    record_type: v.record_type.clone(),
                    value: v.value.clone(),
                })
            }));
            records
        } else {
            Vec::new()
        },
        certificate: m.and_then(|m| m.front.as_ref()).map(|f| MtaStsCertificate {
            status: f.stage.as_str().to_owned(),
            host: f.host.clone(),
            error: f.failure.clone(),
            requested_at: at(f.requested_at),
            not_after: f.not_after.map(at),
        }),
        status: domain.managed_mta_sts.status.as_str().to_owned(),
        error_reason: domain
            .managed_mta_sts
            .error_reason
            .map(|r| r.as_str().to_owned()),
        retiring_until: m.and_then(|m| m.retiring_until).map(at),
        updated_at: m.map(|m| at(m.updated_at)),
    }
}

/// The MTA-STS state of a domain.
pub async fn get(app: &AppState, caller: &Caller, id: Uuid) -> Result<MtaStsState, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    Ok(state(app, &domain))
}

/// The domain's live MX hosts (uncached), sorted by preference, without a null MX.
/// `Ok(empty)` when the domain has none.
async fn live_mx(app: &AppState, domain: &str) -> Result<Vec<String>, DnsError> {
    let direct = Uncached(app.resolver.as_ref());
    let answer = match direct.lookup(domain, RecordType::Mx).await {
        Ok(answer) => answer,
        Err(DnsError::NxDomain) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut hosts: Vec<(u16, String)> = answer
        .records
        .into_iter()
        .filter_map(|r| match r {
            RecordData::Mx {
                preference,
                exchange,
            } => {
                let host = normalize(&exchange);
                (!host.is_empty()).then_some((preference, host))
            }
            _ => None,
        })
        .collect();
    hosts.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, host) in hosts {
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(out)
}

fn check_max_age(max_age: u64) -> Result<u64, ServiceError> {
    if (MIN_MAX_AGE..=MAX_MAX_AGE).contains(&max_age) {
        Ok(max_age)
    } else {
        Err(ServiceError::invalid(
            "max_age",
            format!("max_age must be between {MIN_MAX_AGE} and {MAX_MAX_AGE} seconds"),
        ))
    }
}

/// The MX hosts a policy of `mode` lists: the live ones, required unless the mode is none.
async fn policy_mx(
    app: &AppState,
    domain: &Domain,
    mode: StsMode,
) -> Result<Vec<String>, ServiceError> {
    let mx = live_mx(app, &domain.url).await.map_err(|e| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "mx_lookup_failed",
            format!("the domain's MX records could not be read ({e}); nothing was changed, try again later"),
        )
    })?;
    if mx.is_empty() && mode != StsMode::None {
        return Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "mta_sts_no_mx",
            format!(
                "{} publishes no MX host: MTA-STS protects mail delivered to MX hosts, publish MX records first (or use mode none)",
                domain.url
            ),
        ));
    }
    Ok(mx)
}

/// A new revision of the policy: a new id even when the text returns to an earlier one.
fn revise(
    previous: Option<&HostedMtaSts>,
    mode: StsMode,
    max_age: u64,
    mx: Vec<String>,
    now: OffsetDateTime,
) -> Result<HostedMtaSts, ServiceError> {
    let revision = previous.map_or(1, |p| p.revision.saturating_add(1));
    let policy = HostedMtaSts {
        mode,
        max_age,
        mx,
        policy_id: format!("{}r{revision}", now.unix_timestamp()),
        revision,
        enabled_at: previous
            .filter(|p| p.retiring_until.is_none())
            .map_or(now, |p| p.enabled_at),
        updated_at: now,
        retiring_until: None,
        front: previous.and_then(|p| p.front.clone()),
        closing_fronts: previous
            .map(|p| p.closing_fronts.clone())
            .unwrap_or_default(),
    };
    generate(&policy).map_err(|why| {
        ServiceError::new(
            ErrorKind::Unprocessable,
            "mta_sts_invalid",
            format!("no MTA-STS policy can be built from the domain's MX hosts: {why}"),
        )
    })?;
    Ok(policy)
}

/// Serves the TXT with the policy id in the zone.
async fn publish_txt(
    app: &AppState,
    domain: &Domain,
    m: &HostedMtaSts,
) -> Result<(), ServiceError> {
    let record = ZoneRecord::txt(
        &txt_target(app, domain),
        &format!("v=STSv1; id={}", m.policy_id),
        HOSTED_TTL,
    );
    app.zone.upsert(&[record]).await.map_err(publish_failed)
}

/// Whether the domain's `_mta-sts` CNAME names this domain's owner-specific target: the
/// domain's owner chose this organization's policy in the domain's own DNS (one name may be
/// watched, and hosting enabled, by many organizations).
pub(crate) async fn owner_chose(app: &AppState, domain: &Domain) -> bool {
    cname_points_at(
        app,
        &format!("_mta-sts.{}", domain.url),
        &txt_target(app, domain),
    )
    .await
        == Some(true)
}

/// The write of the policy served for the domain's name, when this domain may write it: its
/// policy is the one served already, or the owner chose it (`chosen`, [`owner_chose`]). A
/// policy of `None` stops serving it, only when it is this domain's.
fn served_write(
    served: Option<&Versioned<ServedPolicy>>,
    domain: &Domain,
    policy: Option<&HostedMtaSts>,
    chosen: bool,
) -> Result<Option<mailward_domain::store::WriteOp>, ServiceError> {
    let host = normalize(&domain.url);
    let ours = served.is_some_and(|s| s.value.domain_id == domain.id);
    Ok(match policy {
        Some(m) if ours || chosen => Some(mailward_store::mta_sts::put_op(
            &host,
            &ServedPolicy {
                org_id: domain.org_id,
                domain_id: domain.id,
                policy: policy_text(m),
            },
            served.map(|s| s.version),
        )?),
        None => served
            .filter(|_| ours)
            .map(|s| mailward_store::mta_sts::delete_op_if(&host, s.version)),
        Some(_) => None,
    })
}

/// Saves `change` of the domain with the served policy (when the domain may serve it,
/// [`served_write`]), the `event` and its activity entry in one transaction, retrying on a
/// fresh copy when the sweep wrote the domain meanwhile.
async fn save(
    app: &AppState,
    caller: &Caller,
    (id, chosen): (Uuid, bool),
    event: &'static str,
    change: impl Fn(&Domain) -> Result<Domain, ServiceError>,
) -> Result<Domain, ServiceError> {
    let mut last = None;
    for _ in 0..WRITE_TRIES {
        let current: Versioned<Domain> = crate::access::load(app, caller, id).await?;
        let next = change(&current.value)?;
        let host = normalize(&next.url);
        let served = mailward_store::mta_sts::get(app.store.as_ref(), &host).await?;
        let view = serde_json::to_value(state(app, &next))?;
        let mut ops = domains::save_ops(&next, &current.value, current.version)?;
        ops.extend(served_write(
            served.as_ref(),
            &next,
            next.mta_sts.as_ref(),
            chosen,
        )?);
        ops.push(OutboxEvent::new(event, next.org_id, app.clock.now(), view, None).write_op()?);
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                event,
                "domain",
                Some(next.id),
                format!("{event} for {}", next.url),
            ),
        )?);
        match app.store.transact(ops).await {
            Ok(()) => return Ok(next),
            Err(e) if e.is_conflict() => last = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(
        || ServiceError::unavailable("the domain kept changing"),
        ServiceError::from,
    ))
}

/// The policy of a domain whose hosting is on.
fn active(domain: &Domain) -> Option<HostedMtaSts> {
    domain.mta_sts.clone().filter(|_| domain.is_mta_sts_managed)
}

/// Serves `policy`'s TXT, then saves it on the domain (with `change`) and answers the state.
async fn commit(
    app: &AppState,
    caller: &Caller,
    current: &Domain,
    policy: HostedMtaSts,
    event: &'static str,
    change: impl Fn(&mut Domain),
) -> Result<MtaStsState, ServiceError> {
    publish_txt(app, current, &policy).await?;
    let chosen = owner_chose(app, current).await;
    let saved = save(app, caller, (current.id, chosen), event, |d| {
        let mut next = d.clone();
        next.mta_sts = Some(policy.clone());
        change(&mut next);
        Ok(next)
    })
    .await?;
    Ok(state(app, &saved))
}

/// `POST /domains/{id}/mta-sts`: turns hosting on (mode default testing, `max_age` default
/// 86400), or, when on, changes the policy like PUT.
pub async fn enable(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: MtaStsRequest,
) -> Result<MtaStsState, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?.value;
    if current.is_mta_sts_managed {
        return update(app, caller, id, input).await;
    }
    let mode = input.mode.unwrap_or_default();
    let max_age = check_max_age(input.max_age.unwrap_or(DEFAULT_MAX_AGE))?;
    let mx = policy_mx(app, &current, mode).await?;
    let now = app.clock.now();
    let policy = revise(current.mta_sts.as_ref(), mode, max_age, mx, now)?;
    let enabled = commit(
        app,
        caller,
        &current,
        policy,
        types::MTA_STS_ENABLED,
        |next| {
            next.is_mta_sts_managed = true;
            next.managed_mta_sts = ManagedRecord {
                status: ManagedStatus::Syncing,
                since: Some(now),
                error_reason: None,
                unchecked_since: None,
            };
        },
    )
    .await?;
    // A certificate only for a name whose owner already chose this policy; otherwise the
    // hourly reconciliation requests it once the `_mta-sts` CNAME is seen.
    if !owner_chose(app, &current).await {
        return Ok(enabled);
    }
    Ok(open_front(app, &current, now).await.unwrap_or(enabled))
}

/// Whether the organization may request one more policy front ([`MAX_FRONTS_PER_ORG`]).
async fn front_allowed(app: &AppState, domain: &Domain) -> bool {
    match domains::list(app.store.as_ref(), domain.org_id).await {
        Ok(all) => {
            let held = all
                .iter()
                .filter(|d| d.mta_sts.as_ref().is_some_and(|m| m.front.is_some()))
                .count();
            if held >= MAX_FRONTS_PER_ORG {
                tracing::warn!(domain.id = %domain.id, held, "MTA-STS front not requested: the organization holds the most allowed");
            }
            held < MAX_FRONTS_PER_ORG
        }
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS fronts not counted; next pass");
            false
        }
    }
}

/// The policy host of a domain.
fn policy_host(domain: &str) -> String {
    format!("mta-sts.{}", normalize(domain))
}

/// Requests the certificate of a domain whose policy has no front yet and keeps it on the
/// domain; the state after, or `None` when the provider did not answer (the hourly
/// reconciliation asks again).
async fn open_front(app: &AppState, domain: &Domain, now: OffsetDateTime) -> Option<MtaStsState> {
    let saved = domains::get(app.store.as_ref(), domain.org_id, domain.id)
        .await
        .ok()
        .flatten()?;
    if saved
        .value
        .mta_sts
        .as_ref()
        .is_none_or(|m| m.front.is_some())
    {
        return Some(state(app, &saved.value));
    }
    if !front_allowed(app, domain).await {
        return None;
    }
    let front = match app.fronts.open(&policy_host(&domain.url), now).await {
        Ok(front) => front,
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS certificate not requested; next pass");
            return None;
        }
    };
    let placed = front.clone();
    if let Err(e) =
        super::common::save_managed(app, domain.org_id, domain.id, "mta_sts", now, |d| {
            if let Some(m) = d.mta_sts.as_mut().filter(|m| m.front.is_none()) {
                m.front = Some(placed.clone());
            }
        })
        .await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS certificate not recorded; next pass");
        // Nothing refers to the request: take it down again (the next pass requests anew).
        if let Err(e) = app.fronts.close(&front).await {
            tracing::warn!(domain.id = %domain.id, error = %e, "unrecorded MTA-STS certificate left at the provider");
        }
        return None;
    }
    let after = domains::get(app.store.as_ref(), domain.org_id, domain.id)
        .await
        .ok()
        .flatten()?;
    Some(state(app, &after.value))
}

/// `POST /domains/{id}/mta-sts/retry`: requests a fresh certificate after a failed setup.
/// Refused unless hosting is on, the state is error and the `mta-sts` CNAME is published; a
/// setup in progress is refused, not restarted; an active certificate answers the state
/// unchanged.
pub async fn retry(app: &AppState, caller: &Caller, id: Uuid) -> Result<MtaStsState, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?.value;
    let Some(m) = active(&current) else {
        return Err(not_enabled());
    };
    let stage = m.front.as_ref().map(|f| f.stage);
    if stage.is_some_and(FrontStage::serving) {
        return Ok(state(app, &current));
    }
    if let Some(f) = m.front.as_ref().filter(|f| f.stage.in_progress()) {
        let waiting = if f.stage == FrontStage::PendingValidation {
            "the certificate waits for its validation record (see `records`)"
        } else {
            "the certificate is issued and the HTTPS front is being deployed"
        };
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "mta_sts_setup_in_progress",
            format!("the MTA-STS setup is in progress ({waiting}); it is not restarted"),
        ));
    }
    if current.managed_mta_sts.status != ManagedStatus::Error {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "mta_sts_not_in_error",
            format!(
                "managed_dns_status.mta_sts is {}: a retry starts over after a failed setup only",
                current.managed_mta_sts.status.as_str().to_owned()
            ),
        ));
    }
    let host = policy_host(&current.url);
    let target = policy_target(app, &current.url);
    require_cname(app, &host, &target).await?;
    let now = app.clock.now();
    let front = app.fronts.open(&host, now).await.map_err(|e| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "certificate_request_failed",
            format!("{e}; nothing was changed, try again later"),
        )
    })?;
    save_front(app, caller, id, &host, front, now).await
}

/// 409 unless live DNS shows `host` as a CNAME to `target` (the certificate is issued for the
/// name that leads to Mailward); 503 when it cannot be looked up.
async fn require_cname(app: &AppState, host: &str, target: &str) -> Result<(), ServiceError> {
    match cname_points_at(app, host, target).await {
        Some(true) => Ok(()),
        Some(false) => Err(ServiceError::new(
            ErrorKind::Conflict,
            "mta_sts_cname_missing",
            format!(
                "{host} has no CNAME to {target} in live DNS: publish it first, the certificate is issued for the name that leads to Mailward"
            ),
        )),
        None => Err(ServiceError::unavailable(format!(
            "{host} could not be looked up; nothing was changed, try again later"
        ))),
    }
}

/// Saves the new front (the old one closing) with the domain syncing again, retrying a
/// concurrent write.
async fn save_front(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    host: &str,
    front: PolicyFront,
    now: OffsetDateTime,
) -> Result<MtaStsState, ServiceError> {
    let mut last = None;
    for _ in 0..WRITE_TRIES {
        let fresh = crate::access::load(app, caller, id).await?;
        let mut next = fresh.value.clone();
        let Some(policy) = next.mta_sts.as_mut().filter(|_| next.is_mta_sts_managed) else {
            return Err(not_enabled());
        };
        if let Some(old) = policy
            .front
            .take()
            .filter(|old| old.certificate_id != front.certificate_id)
        {
            policy.closing_fronts.push(old);
        }
        policy.front = Some(front.clone());
        next.managed_mta_sts = ManagedRecord {
            status: ManagedStatus::Syncing,
            since: Some(now),
            error_reason: None,
            unchecked_since: None,
        };
        let mut ops = domains::save_ops(&next, &fresh.value, fresh.version)?;
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                "mta_sts.retried",
                "domain",
                Some(next.id),
                format!("new certificate requested for {host}"),
            ),
        )?);
        match app.store.transact(ops).await {
            Ok(()) => return Ok(state(app, &next)),
            Err(e) if e.is_conflict() => last = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.map_or_else(
        || ServiceError::unavailable("the domain kept changing"),
        ServiceError::from,
    ))
}

/// 409 `mta_sts_not_enabled`.
fn not_enabled() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        "mta_sts_not_enabled",
        "hosted MTA-STS is not enabled for this domain: POST /domains/{id}/mta-sts first",
    )
}

/// `PUT /domains/{id}/mta-sts`: changes `mode` and/or `max_age`; the MX hosts are read again
/// and the policy gets a new id. Unchanged values change nothing.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: MtaStsRequest,
) -> Result<MtaStsState, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?.value;
    let Some(existing) = active(&current) else {
        return Err(not_enabled());
    };
    let mode = input.mode.unwrap_or(existing.mode);
    let max_age = check_max_age(input.max_age.unwrap_or(existing.max_age))?;
    let mx = policy_mx(app, &current, mode).await?;
    if (mode, max_age, &mx) == (existing.mode, existing.max_age, &existing.mx) {
        return Ok(state(app, &current));
    }
    let now = app.clock.now();
    let policy = revise(Some(&existing), mode, max_age, mx, now)?;
    commit(
        app,
        caller,
        &current,
        policy,
        types::MTA_STS_UPDATED,
        |_| {},
    )
    .await
}

/// `DELETE /domains/{id}/mta-sts`: turns hosting off. The policy is served as `mode: none`
/// with a new id until the old `max_age` has passed (RFC 8461 §8.3), then the hourly reconciliation withdraws
/// it. Idempotent.
pub async fn disable(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<MtaStsState, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?.value;
    let Some(existing) = active(&current) else {
        return Ok(state(app, &current));
    };
    let now = app.clock.now();
    let mut policy = revise(
        Some(&existing),
        StsMode::None,
        existing.max_age,
        existing.mx.clone(),
        now,
    )?;
    policy.enabled_at = existing.enabled_at;
    policy.retiring_until =
        Some(now + Duration::seconds(i64::try_from(existing.max_age).unwrap_or(i64::MAX / 2)));
    commit(
        app,
        caller,
        &current,
        policy,
        types::MTA_STS_DISABLED,
        |next| {
            next.is_mta_sts_managed = false;
            next.managed_mta_sts = ManagedRecord::default();
        },
    )
    .await
}

/// The policy served for a request's `Host`: `mta-sts.<domain>` (what senders ask for) or
/// `<domain>.mta-sts.<hosted zone>` (the CNAME target); a port is ignored.
pub async fn served_policy(app: &AppState, host: &str) -> Option<String> {
    let host = normalize(host.rsplit_once(':').map_or(host, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            host
        }
    }));
    let zone_suffix = format!(".mta-sts.{}", normalize(&app.config.hosted_zone));
    let domain = host
        .strip_suffix(&zone_suffix)
        .or_else(|| host.strip_prefix("mta-sts."))?;
    if domain.is_empty() || domain.len() > 253 {
        return None;
    }
    match mailward_store::mta_sts::get(app.store.as_ref(), domain).await {
        Ok(found) => found.map(|p| p.value.policy),
        Err(e) => {
            tracing::warn!(error = %e, "served MTA-STS policy not read");
            None
        }
    }
}

/// One reconciliation pass: withdraws a retired policy, follows MX changes with a new policy
/// (`mta_sts.updated`), puts back a lost TXT, and moves `managed_dns_status.mta_sts` from the
/// customer's two CNAMEs.
pub async fn reconcile(app: &AppState, domain: &Domain, now: OffsetDateTime) {
    let Some(m) = domain.mta_sts.clone() else {
        return;
    };
    let result = if m.retiring_until.is_some_and(|until| until <= now) {
        retire(app, domain).await
    } else if domain.is_mta_sts_managed {
        follow(app, domain, m, now).await
    } else {
        Ok(())
    };
    if let Err(e) = result {
        tracing::debug!(domain.id = %domain.id, error = %e, "MTA-STS not reconciled; next pass");
    }
}

/// Removes a retired policy, its TXT and its front (the policy stays on the domain, no
/// longer served, while a front is still being taken down).
async fn retire(app: &AppState, domain: &Domain) -> anyhow::Result<()> {
    let host = normalize(&domain.url);
    let served = mailward_store::mta_sts::get(app.store.as_ref(), &host).await?;
    let ours = served
        .as_ref()
        .is_some_and(|s| s.value.domain_id == domain.id);
    // The TXT target is this domain's own; the policy host's name in the zone is the name's,
    // led by whichever organization's front serves it: removed only when that is ours.
    let mut names = vec![(txt_target(app, domain), ZoneRecordKind::Txt)];
    if ours {
        names.push((policy_target(app, &domain.url), ZoneRecordKind::Cname));
    }
    app.zone.remove(&names).await?;
    let Some(current) = domains::get(app.store.as_ref(), domain.org_id, domain.id).await? else {
        return Ok(());
    };
    let Some(mut m) = current.value.mta_sts.clone() else {
        return Ok(());
    };
    if current.value.is_mta_sts_managed {
        return Ok(());
    }
    let mut fronts = std::mem::take(&mut m.closing_fronts);
    fronts.extend(m.front.take());
    m.closing_fronts = close_fronts(app, &fronts).await;
    let mut next = current.value.clone();
    next.mta_sts = Some(m).filter(|m| !m.closing_fronts.is_empty());
    let mut ops = domains::save_ops(&next, &current.value, current.version)?;
    ops.extend(served_write(served.as_ref(), &next, None, false)?);
    app.store.transact(ops).await?;
    Ok(())
}

/// The managed domain's pass: new MX hosts, the TXT, the CNAMEs.
async fn follow(
    app: &AppState,
    domain: &Domain,
    m: HostedMtaSts,
    now: OffsetDateTime,
) -> anyhow::Result<()> {
    let mut policy = m.clone();
    if let Ok(mx) = live_mx(app, &domain.url).await
        && !mx.is_empty()
        && mx != m.mx
        && let Ok(revised) = revise(Some(&m), m.mode, m.max_age, mx, now)
    {
        policy = revised;
    }
    let target = txt_target(app, domain);
    let wanted = format!("v=STSv1; id={}", policy.policy_id);
    let intact = app.zone.records(&target).await.is_ok_and(|records| {
        records
            .iter()
            .any(|r| r.kind == ZoneRecordKind::Txt && r.values == [wanted.clone()])
    });
    let mut managed = domain.managed_mta_sts.clone();
    if !intact {
        match publish_txt(app, domain, &policy).await {
            Ok(()) => {
                if managed.error_reason == Some(HostingErrorReason::PublishFailed) {
                    managed.status = ManagedStatus::Syncing;
                    managed.error_reason = None;
                }
            }
            Err(_) => {
                managed = ManagedRecord {
                    status: ManagedStatus::Error,
                    since: managed.since,
                    error_reason: Some(HostingErrorReason::PublishFailed),
                    unchecked_since: None,
                };
                policy = m.clone();
            }
        }
    }
    let window = Duration::seconds(i64::try_from(app.config.pending_grace_secs).unwrap_or(0));
    let chosen = owner_chose(app, domain).await;
    // No certificate before the owner chose this policy; one under way is still followed.
    if chosen || policy.front.is_some() {
        policy.front = front_pass(app, domain, policy.front.as_ref(), now, window).await;
    }
    policy.closing_fronts = close_fronts(app, &policy.closing_fronts).await;
    if let Some(f) = policy.front.as_ref() {
        lead_policy_host(app, domain, f).await;
    }
    if managed.error_reason != Some(HostingErrorReason::PublishFailed) {
        let (delegated, conflict) = delegation(app, domain, &target).await;
        managed = next_state(&managed, delegated, conflict, now, window);
        managed = with_front(managed, policy.front.as_ref(), now);
    }
    if policy.policy_id != m.policy_id {
        save_policy(app, domain, &policy, now, chosen).await?;
    } else if chosen {
        claim_name(app, domain, &policy).await?;
    }
    super::common::save_managed(app, domain.org_id, domain.id, "mta_sts", now, |d| {
        d.managed_mta_sts = managed.clone();
        if let Some(saved) = d.mta_sts.as_mut() {
            saved.front.clone_from(&policy.front);
            saved.closing_fronts.clone_from(&policy.closing_fronts);
        }
    })
    .await
}

/// Whether both CNAMEs lead to Mailward (none when DNS did not say), and whether the
/// customer's own `_mta-sts` TXT stands where our CNAME belongs (its id would not follow the
/// policy's edits).
async fn delegation(app: &AppState, domain: &Domain, target: &str) -> (Option<bool>, bool) {
    let txt = cname_points_at(app, &format!("_mta-sts.{}", domain.url), target).await;
    let host = cname_points_at(
        app,
        &format!("mta-sts.{}", domain.url),
        &policy_target(app, &domain.url),
    )
    .await;
    let delegated = match (txt, host) {
        (Some(true), Some(true)) => Some(true),
        (Some(false), _) | (_, Some(false)) => Some(false),
        _ => None,
    };
    // The customer's own `_mta-sts` TXT where our CNAME belongs: its id would not follow
    // the policy's edits.
    let conflict = txt == Some(false)
        && super::common::txt_instead_of_cname(app, &format!("_mta-sts.{}", domain.url), "v=stsv1")
            .await;
    (delegated, conflict)
}

/// The managed state once the front is counted: a failed certificate is an error
/// (`setup_timeout` when its validation never came, `certificate_invalid` otherwise), and the
/// record is not ready before the front serves.
fn with_front(
    managed: ManagedRecord,
    front: Option<&PolicyFront>,
    now: OffsetDateTime,
) -> ManagedRecord {
    let stage = front.map(|f| f.stage);
    match stage {
        Some(FrontStage::Failed) => {
            let reason = if front.is_some_and(|f| f.timed_out) {
                HostingErrorReason::SetupTimeout
            } else {
                HostingErrorReason::CertificateInvalid
            };
            ManagedRecord {
                status: ManagedStatus::Error,
                since: if managed.status == ManagedStatus::Error {
                    managed.since
                } else {
                    Some(now)
                },
                error_reason: Some(reason),
                unchecked_since: None,
            }
        }
        Some(s) if s.serving() => managed,
        _ if managed.status == ManagedStatus::Ready => ManagedRecord {
            status: ManagedStatus::Syncing,
            since: managed.since,
            error_reason: None,
            unchecked_since: None,
        },
        _ => managed,
    }
}

/// The front's pass: requests the certificate when there is none, takes the next step while
/// it is on its way, and fails a validation that did not come within `window`.
async fn front_pass(
    app: &AppState,
    domain: &Domain,
    front: Option<&PolicyFront>,
    now: OffsetDateTime,
    window: Duration,
) -> Option<PolicyFront> {
    let mut next = match front {
        None if !front_allowed(app, domain).await => return None,
        None => match app.fronts.open(&policy_host(&domain.url), now).await {
            Ok(opened) => opened,
            Err(e) => {
                tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS certificate not requested; next pass");
                return None;
            }
        },
        Some(f) if f.stage.in_progress() => match app.fronts.advance(f).await {
            Ok(advanced) => advanced,
            Err(e) => {
                tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS front not advanced; next pass");
                f.clone()
            }
        },
        Some(f) => f.clone(),
    };
    if next.stage == FrontStage::PendingValidation && now - next.requested_at >= window {
        next.stage = FrontStage::Failed;
        next.timed_out = true;
        next.failure = Some(format!(
            "the certificate's validation record was not seen within {} hours of the request",
            window.whole_hours()
        ));
    }
    Some(next)
}

/// Closes fronts being taken down; answers the ones not gone yet.
async fn close_fronts(app: &AppState, fronts: &[PolicyFront]) -> Vec<PolicyFront> {
    let mut left = Vec::new();
    for front in fronts {
        match app.fronts.close(front).await {
            Ok(Closing::Closed) => {}
            Ok(Closing::InProgress) => left.push(front.clone()),
            Err(e) => {
                tracing::warn!(host = %front.host, error = %e, "MTA-STS front not closed; next pass");
                left.push(front.clone());
            }
        }
    }
    left
}

/// Points the policy host's name in our zone at the front once it serves (where the front
/// has an address of its own).
async fn lead_policy_host(app: &AppState, domain: &Domain, front: &PolicyFront) {
    let Some(target) = front.target.as_deref().filter(|_| front.stage.serving()) else {
        return;
    };
    let name = policy_target(app, &domain.url);
    let wanted = normalize(target);
    let there = app.zone.records(&name).await.is_ok_and(|records| {
        records
            .iter()
            .any(|r| r.kind == ZoneRecordKind::Cname && r.values == [wanted.clone()])
    });
    if !there
        && let Err(e) = app
            .zone
            .upsert(&[ZoneRecord::cname(&name, &wanted, HOSTED_TTL)])
            .await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS policy host not pointed at its front; next pass");
    }
}

/// Serves the domain's policy for its name once the owner chose it, in place of another
/// organization's (whose proof the one `_mta-sts` CNAME no longer is).
async fn claim_name(app: &AppState, domain: &Domain, policy: &HostedMtaSts) -> anyhow::Result<()> {
    let host = normalize(&domain.url);
    let served = mailward_store::mta_sts::get(app.store.as_ref(), &host).await?;
    if served
        .as_ref()
        .is_some_and(|s| s.value.domain_id == domain.id && s.value.policy == policy_text(policy))
    {
        return Ok(());
    }
    if let Some(op) = served_write(served.as_ref(), domain, Some(policy), true)? {
        tracing::info!(domain.id = %domain.id, "MTA-STS policy served for the name its owner chose");
        app.store.transact(vec![op]).await?;
    }
    Ok(())
}

/// Saves a policy the reconciliation rebuilt, with `mta_sts.updated`.
async fn save_policy(
    app: &AppState,
    domain: &Domain,
    policy: &HostedMtaSts,
    now: OffsetDateTime,
    chosen: bool,
) -> anyhow::Result<()> {
    let Some(current) = domains::get(app.store.as_ref(), domain.org_id, domain.id).await? else {
        return Ok(());
    };
    if !current.value.is_mta_sts_managed {
        return Ok(());
    }
    let mut next = current.value.clone();
    next.mta_sts = Some(policy.clone());
    let host = normalize(&next.url);
    let served = mailward_store::mta_sts::get(app.store.as_ref(), &host).await?;
    let view = serde_json::to_value(state(app, &next))?;
    let mut ops = domains::save_ops(&next, &current.value, current.version)?;
    ops.extend(served_write(served.as_ref(), &next, Some(policy), chosen)?);
    ops.push(OutboxEvent::new(types::MTA_STS_UPDATED, next.org_id, now, view, None).write_op()?);
    ops.extend(activity::system_ops(
        next.org_id,
        Change::new(
            types::MTA_STS_UPDATED,
            "domain",
            Some(next.id),
            format!("MTA-STS policy of {} follows its MX hosts", next.url),
        ),
        now,
    )?);
    app.store.transact(ops).await?;
    Ok(())
}

/// Stops serving a deleted domain's policy and TXT at once.
pub(crate) async fn withdraw(app: &AppState, domain: &Domain) {
    if domain.mta_sts.is_none() {
        return;
    }
    let host = normalize(&domain.url);
    let served = mailward_store::mta_sts::get(app.store.as_ref(), &host)
        .await
        .ok()
        .flatten();
    let mine = served
        .as_ref()
        .is_some_and(|s| s.value.domain_id == domain.id);
    let mut names = vec![(txt_target(app, domain), ZoneRecordKind::Txt)];
    if mine {
        names.push((policy_target(app, &domain.url), ZoneRecordKind::Cname));
    }
    if let Err(e) = app.zone.remove(&names).await {
        tracing::warn!(domain.id = %domain.id, error = %e, "MTA-STS TXT not removed");
    }
    if let Some(m) = &domain.mta_sts {
        let fronts: Vec<PolicyFront> = m.closing_fronts.iter().chain(&m.front).cloned().collect();
        for left in close_fronts(app, &fronts).await {
            // The domain is going: nothing will call again. Disabled fronts cost nothing but
            // stay listed at the provider until removed by hand.
            tracing::warn!(host = %left.host, certificate = %left.certificate_id, "MTA-STS front left at the provider after its domain was deleted");
        }
    }
    if let Some(s) = served.filter(|_| mine)
        && let Err(e) = app
            .store
            .transact(vec![mailward_store::mta_sts::delete_op_if(
                &host, s.version,
            )])
            .await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "served MTA-STS policy not removed");
    }
}
