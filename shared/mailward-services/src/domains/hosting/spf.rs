//! Hosted SPF with flattening (`spf_options.enabled`): the customer publishes one `include:`
//! of `<owner>._spf.<hosted zone>`, where Mailward serves the domain's senders resolved into
//! IP networks ([`mailward_spf::flatten`]), chained when long, within the ten-lookup limit.
//!
//! - What is flattened (the *source*): `target_spf` when set; otherwise the domain's SPF record
//!   as it was when hosting began (our own include left out) merged with the includes of its
//!   confirmed senders, the way the records guidance plans SPF.
//! - Turning it on (or changing `spf_options`/`target_spf` while on) flattens and publishes
//!   before anything is stored: a zone or DNS failure answers 503 and changes nothing.
//! - The hourly reconciliation re-flattens ([`REFLATTEN_EVERY`]), republishes what changed,
//!   records which term's networks changed, and moves `managed_dns_status.spf` from live DNS:
//!   `syncing` until the domain's record includes the chain, `ready` while it does, `error`
//!   with `drift`, `setup_timeout`, `record_conflict` (several SPF records) or `publish_failed`.

use super::common::{HOSTED_TTL, next_managed_state as next_state, publish_failed};
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::records as wire;
use mailward_dns::{Budgeted, Deadline};
use mailward_domain::dns::Uncached;
use mailward_domain::domain::{Domain, HostingErrorReason, ManagedRecord, ManagedStatus};
use mailward_domain::hosted_spf::{
    HostedSpf, MAX_REMEMBERED_CHANGES, ServedSpfRecord, SpfRangeChange, SpfSourceTerm,
};
use mailward_domain::hosted_zone::{ZoneError, ZoneRecord, ZoneRecordKind};
use mailward_spf::flatten::{FlattenError, FlattenedTerm, flatten};
use mailward_store::hosted_spf as stored;
use std::collections::BTreeSet;
use time::{Duration, OffsetDateTime};

/// How long a flattening is kept before the hourly reconciliation re-resolves the senders'
/// ranges (a little under the hour, so a schedule firing a few seconds early still does).
pub const REFLATTEN_EVERY: Duration = Duration::minutes(55);
/// Queries one flattening may make (eight providers with nested includes use about 60).
const QUERY_BUDGET: u32 = 400;
/// Time one flattening may take.
const FLATTEN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// Name of the `index`th record of the served chain: `<owner>._spf.<zone>`, then
/// `s2.<owner>._spf.<zone>`, `s3.`…
pub fn chain_name(app: &AppState, domain: &Domain, index: usize) -> String {
    let first =
        mailward_plan::spf_include_target(&super::common::owner(domain), &app.config.hosted_zone);
    match index {
        0 => first,
        i => format!("s{}.{first}", i + 1),
    }
}

/// Why hosting could not be brought up to date.
enum SyncError {
    /// The source could not be flattened.
    Flatten(FlattenError),
    /// The zone refused the records.
    Zone(ZoneError),
}

impl SyncError {
    fn into_service(self) -> ServiceError {
        match self {
            SyncError::Zone(e) => publish_failed(e),
            SyncError::Flatten(FlattenError::Syntax(why)) => ServiceError::invalid(
                "target_spf",
                format!(
                    "the SPF record to host does not parse ({why}); set target_spf to the record Mailward should flatten"
                ),
            ),
            SyncError::Flatten(e @ FlattenError::Dns { .. }) => ServiceError::new(
                ErrorKind::Unavailable,
                "spf_flattening_failed",
                format!(
                    "the senders' SPF records could not be resolved ({e}); nothing was changed, try again later"
                ),
            ),
        }
    }
}

/// True when `term` is an `include:` of a name in the hosted zone (our own chain).
fn includes_our_zone(app: &AppState, term: &str) -> bool {
    let zone = format!(
        ".{}",
        mailward_domain::hosted_zone::normalize(&app.config.hosted_zone)
    );
    term.trim_start_matches('+')
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("include:"))
        && mailward_domain::hosted_zone::normalize(&term[term.find(':').map_or(0, |i| i + 1)..])
            .ends_with(&zone)
}

/// The record to flatten: `target_spf`, or the hosting's earlier source (else the live record
/// without our include) merged with the confirmed senders' includes.
async fn source(
    app: &AppState,
    domain: &Domain,
    previous: Option<&HostedSpf>,
) -> Result<String, SyncError> {
    if let Some(target) = domain
        .target_spf
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(target.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    if domain.is_parked {
        return Ok("v=spf1 -all".to_owned());
    }
    let base = match previous {
        Some(p) => Some(p.source.clone()),
        None => {
            let direct = Uncached(app.resolver.as_ref());
            mailward_plan::fetch_live_spf(&direct, &domain.url)
                .await
                .map_err(|error| {
                    SyncError::Flatten(FlattenError::Dns {
                        name: domain.url.clone(),
                        error,
                    })
                })?
                .map(|live| {
                    live.split_whitespace()
                        .filter(|t| !includes_our_zone(app, t))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
        }
    };
    let senders = mailward_store::senders::list(app.store.as_ref(), domain.org_id, domain.id)
        .await
        .unwrap_or_default();
    let mut ctx = crate::evaluation::plan_context(app, domain, base, Vec::new());
    ctx.hosted_spf_record = None;
    ctx.known_sender_includes = senders
        .into_iter()
        .filter(|s| {
            s.value.confirmation_status == mailward_domain::senders::ConfirmationStatus::Confirmed
        })
        .filter_map(|s| s.value.spf_value)
        .filter(|v| v.trim().to_ascii_lowercase().starts_with("include:"))
        .collect();
    Ok(mailward_plan::planned_spf_source(&ctx))
}

/// Flattens `source`, publishes the chain (removing records a shorter chain no longer uses)
/// and returns the new state, with the terms whose networks changed since `previous`.
async fn flatten_and_publish(
    app: &AppState,
    domain: &Domain,
    source: String,
    previous: Option<&HostedSpf>,
    now: OffsetDateTime,
) -> Result<HostedSpf, SyncError> {
    let direct = Uncached(app.resolver.as_ref());
    let deadline = Deadline::new(&direct, FLATTEN_DEADLINE);
    let resolver = Budgeted::new(&deadline, QUERY_BUDGET);
    let names = |i: usize| chain_name(app, domain, i);
    let out = flatten(
        &resolver,
        &domain.url,
        &source,
        domain.spf_options.force_flattening,
        &names,
    )
    .await
    .map_err(SyncError::Flatten)?;
    let records: Vec<ZoneRecord> = out
        .records
        .iter()
        .map(|r| ZoneRecord::txt(&r.name, &r.value, HOSTED_TTL))
        .collect();
    app.zone.upsert(&records).await.map_err(SyncError::Zone)?;
    if let Some(previous) = previous {
        let unused: Vec<(String, ZoneRecordKind)> = previous
            .records
            .iter()
            .filter(|old| !out.records.iter().any(|r| r.name == old.name))
            .map(|old| (old.name.clone(), ZoneRecordKind::Txt))
            .collect();
        if !unused.is_empty()
            && let Err(e) = app.zone.remove(&unused).await
        {
            tracing::warn!(domain.id = %domain.id, error = %e, "unused hosted SPF records not removed");
        }
    }
    let mut changes = previous.map(|p| p.changes.clone()).unwrap_or_default();
    let terms = out
        .terms
        .into_iter()
        .map(|t| remembered_term(domain, previous, t, &mut changes, now))
        .collect();
    changes.truncate(MAX_REMEMBERED_CHANGES);
    Ok(HostedSpf {
        org_id: domain.org_id,
        domain_id: domain.id,
        source,
        customer_record: out.customer_record,
        records: out
            .records
            .into_iter()
            .map(|r| ServedSpfRecord {
                name: r.name,
                value: r.value,
            })
            .collect(),
        terms,
        lookups: out.lookups,
        forced: domain.spf_options.force_flattening,
        flattened_at: now,
        changes,
    })
}

/// One term of the source record as served, with when its ranges last changed; a change is
/// remembered first in `changes`.
fn remembered_term(
    domain: &Domain,
    previous: Option<&HostedSpf>,
    t: FlattenedTerm,
    changes: &mut Vec<SpfRangeChange>,
    now: OffsetDateTime,
) -> SpfSourceTerm {
    let old = previous.and_then(|p| p.terms.iter().find(|o| o.term == t.term));
    let mut changed_at = old.and_then(|o| o.changed_at);
    if let Some(old) = old.filter(|o| !o.networks.is_empty() && !t.networks.is_empty())
        && old.networks != t.networks
    {
        let before: BTreeSet<&String> = old.networks.iter().collect();
        let after: BTreeSet<&String> = t.networks.iter().collect();
        tracing::info!(domain.id = %domain.id, term = %t.term, "a sender's SPF ranges changed");
        changes.insert(
            0,
            SpfRangeChange {
                term: t.term.clone(),
                at: now,
                added: after.difference(&before).map(|s| (*s).clone()).collect(),
                removed: before.difference(&after).map(|s| (*s).clone()).collect(),
            },
        );
        changed_at = Some(now);
    }
    SpfSourceTerm {
        term: t.term,
        flattened: t.flattened,
        lookups: t.lookups,
        networks: t.networks,
        note: t.note,
        changed_at,
    }
}

/// What a domain update asks of hosted SPF.
pub(crate) enum Change {
    /// Nothing to do.
    None,
    /// Turned on, or its inputs changed while on: flattened and published, saved after the
    /// domain.
    Publish(Box<HostedSpf>),
    /// Turned off: the served records are withdrawn after the domain is saved.
    Off,
}

/// Flattens and publishes for an update of `before` into `wanted`, before anything is stored.
pub(crate) async fn prepare(
    app: &AppState,
    before: &Domain,
    wanted: &Domain,
) -> Result<Change, ServiceError> {
    if !wanted.spf_options.enabled {
        return Ok(if before.is_spf_managed {
            Change::Off
        } else {
            Change::None
        });
    }
    let inputs = |d: &Domain| {
        (
            d.spf_options.force_flattening,
            d.target_spf.clone(),
            d.is_parked,
        )
    };
    if before.is_spf_managed && inputs(before) == inputs(wanted) {
        return Ok(Change::None);
    }
    let previous = stored::get(app.store.as_ref(), wanted.org_id, wanted.id).await?;
    // A changed target_spf replaces the source; otherwise the earlier source is kept.
    let keep = previous
        .as_ref()
        .filter(|_| before.target_spf == wanted.target_spf && before.is_spf_managed)
        .map(|p| &p.value);
    let source = source(app, wanted, keep)
        .await
        .map_err(SyncError::into_service)?;
    let now = app.clock.now();
    let state = flatten_and_publish(
        app,
        wanted,
        source,
        previous.as_ref().map(|p| &p.value),
        now,
    )
    .await
    .map_err(SyncError::into_service)?;
    Ok(Change::Publish(Box::new(state)))
}

/// The domain fields an update's [`Change`] sets, applied in the same write as the update.
pub(crate) fn apply(change: &Change, domain: &mut Domain, now: OffsetDateTime) {
    match change {
        Change::None => {}
        Change::Publish(state) => {
            let republish = domain.hosted_spf_record.as_deref() != Some(&state.customer_record);
            if !domain.is_spf_managed
                || (republish && domain.managed_spf.status != ManagedStatus::Ready)
            {
                domain.managed_spf = ManagedRecord {
                    status: ManagedStatus::Syncing,
                    since: Some(now),
                    error_reason: None,
                    unchecked_since: None,
                };
            }
            domain.is_spf_managed = true;
            domain.hosted_spf_record = Some(state.customer_record.clone());
        }
        Change::Off => {
            domain.is_spf_managed = false;
            domain.managed_spf = ManagedRecord::default();
            domain.hosted_spf_record = None;
        }
    }
}

/// After the domain was saved: stores the new state, or withdraws the served records.
pub(crate) async fn finish(app: &AppState, domain: &Domain, change: Change) {
    match change {
        Change::None => {}
        Change::Publish(state) => save_state(app, &state).await,
        Change::Off => withdraw(app, domain).await,
    }
}

async fn save_state(app: &AppState, state: &HostedSpf) {
    let store = app.store.as_ref();
    let result = match stored::get(store, state.org_id, state.domain_id).await {
        Ok(current) => stored::save(store, state, current.map(|c| c.version)).await,
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        tracing::warn!(domain.id = %state.domain_id, error = %e, "hosted SPF state not saved; the next reconciliation flattens again");
    }
}

/// Removes the served chain and the state (hosting off, or the domain deleted).
pub(crate) async fn withdraw(app: &AppState, domain: &Domain) {
    let store = app.store.as_ref();
    let names: Vec<(String, ZoneRecordKind)> = match stored::get(store, domain.org_id, domain.id)
        .await
    {
        Ok(Some(state)) => state
            .value
            .records
            .iter()
            .map(|r| (r.name.clone(), ZoneRecordKind::Txt))
            .collect(),
        Ok(None) => vec![(chain_name(app, domain, 0), ZoneRecordKind::Txt)],
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF state not read; its records stay served");
            return;
        }
    };
    if let Err(e) = app.zone.remove(&names).await {
        tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF records not removed");
        return;
    }
    if let Err(e) = stored::remove(store, domain.org_id, domain.id).await {
        tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF state not removed");
    }
}

/// Whether the domain's live SPF record includes the served chain: `(Some(included), several
/// records)`; `None` when DNS did not answer.
async fn delegation(app: &AppState, domain: &Domain) -> (Option<bool>, bool) {
    let direct = Uncached(app.resolver.as_ref());
    let first = chain_name(app, domain, 0);
    let includes = |text: &str| {
        text.split_whitespace().any(|t| {
            includes_our_zone(app, t)
                && mailward_domain::hosted_zone::normalize(&t[t.find(':').map_or(0, |i| i + 1)..])
                    == first
        })
    };
    match mailward_spf::lookup_spf_record(&direct, &domain.url).await {
        mailward_spf::RecordLookup::Found { record, .. } => (Some(includes(&record.text)), false),
        mailward_spf::RecordLookup::NotFound => (Some(false), false),
        mailward_spf::RecordLookup::Multiple { .. } => (Some(false), true),
        mailward_spf::RecordLookup::Failed(_) => (None, false),
    }
}

/// Whether the zone still serves the first record of the chain flattened last.
async fn served_intact(app: &AppState, previous: Option<&HostedSpf>) -> bool {
    let Some(first) = previous.and_then(|p| p.records.first()) else {
        return false;
    };
    app.zone.records(&first.name).await.is_ok_and(|served| {
        served
            .iter()
            .any(|r| r.kind == ZoneRecordKind::Txt && r.values == [first.value.clone()])
    })
}

/// One sweep pass over a hosted-SPF domain: re-flattens when due (hourly, or when the source
/// or `force_flattening` changed, or the served chain is missing), then moves
/// `managed_dns_status.spf` from live DNS, with `domain.hosted_record.*` (`record` spf).
pub async fn reconcile(app: &AppState, domain: &Domain, now: OffsetDateTime) {
    if !domain.is_spf_managed {
        return;
    }
    let previous = match stored::get(app.store.as_ref(), domain.org_id, domain.id).await {
        Ok(p) => p.map(|p| p.value),
        Err(e) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF not reconciled");
            return;
        }
    };
    let mut managed = domain.managed_spf.clone();
    let mut customer_record = domain.hosted_spf_record.clone();
    let served_intact = served_intact(app, previous.as_ref()).await;
    match source(app, domain, previous.as_ref()).await {
        Ok(source) => {
            let due = previous.as_ref().is_none_or(|p| {
                now - p.flattened_at >= REFLATTEN_EVERY
                    || p.source != source
                    || p.forced != domain.spf_options.force_flattening
            });
            if due || !served_intact {
                match flatten_and_publish(app, domain, source, previous.as_ref(), now).await {
                    Ok(state) => {
                        customer_record = Some(state.customer_record.clone());
                        save_state(app, &state).await;
                        if managed.error_reason == Some(HostingErrorReason::PublishFailed) {
                            managed = ManagedRecord {
                                status: ManagedStatus::Syncing,
                                since: managed.since,
                                error_reason: None,
                                unchecked_since: None,
                            };
                        }
                    }
                    Err(SyncError::Zone(e)) => {
                        tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF not republished");
                        managed = ManagedRecord {
                            status: ManagedStatus::Error,
                            since: managed.since,
                            error_reason: Some(HostingErrorReason::PublishFailed),
                            unchecked_since: None,
                        };
                    }
                    // The served chain stays as it was; the next pass tries again.
                    Err(SyncError::Flatten(e)) => {
                        tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF not re-flattened");
                    }
                }
            }
        }
        Err(SyncError::Flatten(e)) => {
            tracing::warn!(domain.id = %domain.id, error = %e, "hosted SPF source not read");
        }
        Err(SyncError::Zone(_)) => {}
    }
    if managed.error_reason != Some(HostingErrorReason::PublishFailed) {
        let (included, several) = delegation(app, domain).await;
        let window = Duration::seconds(i64::try_from(app.config.pending_grace_secs).unwrap_or(0));
        managed = next_state(&managed, included, several, now, window);
    }
    let result = super::common::save_managed(app, domain.org_id, domain.id, "spf", now, |d| {
        d.managed_spf = managed.clone();
        if d.is_spf_managed {
            d.hosted_spf_record = customer_record.clone();
        }
    })
    .await;
    if let Err(e) = result {
        tracing::debug!(domain.id = %domain.id, error = %e, "managed SPF state not saved; next pass");
    }
}

/// The hosted-SPF part of `GET /domains/{id}/spf`.
pub async fn view(app: &AppState, domain: &Domain) -> Result<wire::HostedSpf, ServiceError> {
    let state = if domain.is_spf_managed {
        stored::get(app.store.as_ref(), domain.org_id, domain.id)
            .await?
            .map(|s| s.value)
    } else {
        None
    };
    let at = |t: OffsetDateTime| {
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    };
    let descriptions = domain
        .spf_options
        .mechanism_descriptions
        .clone()
        .unwrap_or_default();
    Ok(wire::HostedSpf {
        enabled: domain.spf_options.enabled,
        force_flattening: domain.spf_options.force_flattening,
        active: domain.is_spf_managed && domain.managed_spf.status == ManagedStatus::Ready,
        status: domain.managed_spf.status.as_str().to_owned(),
        error_reason: domain
            .managed_spf
            .error_reason
            .map(|r| r.as_str().to_owned()),
        include: domain.is_spf_managed.then(|| chain_name(app, domain, 0)),
        record: domain
            .is_spf_managed
            .then(|| domain.hosted_spf_record.clone())
            .flatten(),
        served_records: state
            .iter()
            .flat_map(|s| &s.records)
            .map(|r| wire::ServedSpfRecord {
                name: r.name.clone(),
                value: r.value.clone(),
            })
            .collect(),
        lookup_count: state.as_ref().map(|s| s.lookups),
        terms: state
            .iter()
            .flat_map(|s| &s.terms)
            .map(|t| wire::HostedSpfTerm {
                term: t.term.clone(),
                flattened: t.flattened,
                lookups: t.lookups,
                networks: t.networks.len(),
                note: t.note.clone(),
                description: descriptions.get(&t.term).cloned(),
                changed_at: t.changed_at.map(at),
            })
            .collect(),
        flattened_at: state.as_ref().map(|s| at(s.flattened_at)),
        range_changes: state
            .iter()
            .flat_map(|s| &s.changes)
            .map(|c| wire::SpfRangeChangeView {
                term: c.term.clone(),
                at: at(c.at),
                added: c.added.clone(),
                removed: c.removed.clone(),
            })
            .collect(),
    })
}
