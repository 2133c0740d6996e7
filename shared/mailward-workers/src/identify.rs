//! Sender identification (the job `identify_senders`, queued after an import): re-reads a
//! domain's report rows within retention, resolves each new source's reverse DNS (forward-
//! confirmed, cached), identifies each row's sender, rewrites the day totals and the `SENDER#`
//! items, then reconciles the sender tasks. What a person does with senders is the operation
//! `mailward_services::reports::senders`.

use futures::StreamExt as _;
pub use mailward_app::jobs::{IDENTIFY_SENDERS, IdentifySenders};
use mailward_domain::candidates::CandidateEvidence;
use mailward_domain::dns::{RecordData, RecordType};
use mailward_domain::domain::Domain;
use mailward_domain::reports::{DayTotal, SourceDay};
use mailward_domain::senders::{
    ConfirmationStatus, DomainSource, MAX_IPS_KEPT, RecentFigures, SenderTotals, SourceNetwork,
    identify, own_selectors, registrable_part, relay_of,
};
use mailward_domain::sources::Catalogue;
use mailward_domain::sources::ForwardingType;
use mailward_ipdata::Owner;
use mailward_services::error::ServiceError;
use mailward_services::reports::senders::{live_spf, reconcile_tasks};
use mailward_services::state::AppState;
use mailward_store::reports::{day_string, rows_as_reported};
use mailward_store::senders as stored;
use mailward_store::{Versioned, domains};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::time::Duration as StdDuration;
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

/// Reverse-DNS lookups in flight per identification.
const PTR_CONCURRENCY: usize = 16;

/// Time limit of one reverse-DNS lookup (with its forward confirmation).
const PTR_TIMEOUT: StdDuration = StdDuration::from_secs(2);

/// Delay before identification runs, so a burst of reports for one domain is mostly read once.
const IDENTIFY_DELAY_SECS: u64 = 5;

/// Queues the identification of a domain's senders (after an import).
pub async fn enqueue_identify(app: &AppState, org: Uuid, domain_id: Uuid) {
    let job = IdentifySenders {
        org_id: org,
        domain_id,
    };
    if let Err(e) = mailward_services::job::enqueue(app, &job, IDENTIFY_DELAY_SECS).await {
        // The next import (or the sweep's sender pass) catches up; the report itself is safe.
        tracing::warn!(domain.id = %domain_id, error = %e, "could not queue sender identification");
    }
}

fn reverse_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.{}.in-addr.arpa", o[3], o[2], o[1], o[0])
        }
        IpAddr::V6(v6) => {
            let mut labels: Vec<String> = v6
                .octets()
                .iter()
                .flat_map(|b| [b >> 4, b & 0x0f])
                .map(|n| format!("{n:x}"))
                .collect();
            labels.reverse();
            format!("{}.ip6.arpa", labels.join("."))
        }
    }
}

/// The forward-confirmed reverse-DNS name of `ip`, or `None`.
async fn confirmed_ptr(app: &AppState, ip: IpAddr) -> Option<String> {
    let answer = app
        .resolver
        .lookup(&reverse_name(ip), RecordType::Ptr)
        .await
        .ok()?;
    let forward = if ip.is_ipv4() {
        RecordType::A
    } else {
        RecordType::Aaaa
    };
    for record in answer.records.iter().take(3) {
        let RecordData::Ptr(name) = record else {
            continue;
        };
        let Ok(back) = app.resolver.lookup(name, forward).await else {
            continue;
        };
        if back.records.iter().any(|r| r.ip() == Some(ip)) {
            return Some(name.trim_end_matches('.').to_ascii_lowercase());
        }
    }
    None
}

/// Reverse-DNS names of `ips`, from the shared cache or looked up (bounded, time-limited).
async fn ptr_names(app: &AppState, ips: BTreeSet<String>) -> HashMap<String, String> {
    let store = app.store.as_ref();
    let now = app.clock.unix();
    futures::stream::iter(ips)
        .map(|ip| async move {
            if let Ok(Some(cached)) = stored::cached_ptr(store, &ip).await {
                return cached.name.map(|n| (ip, n));
            }
            let addr: IpAddr = ip.parse().ok()?;
            match tokio::time::timeout(PTR_TIMEOUT, confirmed_ptr(app, addr)).await {
                Ok(name) => {
                    if let Err(e) = stored::cache_ptr(store, &ip, name.as_deref(), now).await {
                        tracing::debug!(error = %e, "could not cache a reverse-DNS answer");
                    }
                    name.map(|n| (ip, n))
                }
                // A slow server: not cached, asked again next time.
                Err(_) => None,
            }
        })
        .buffer_unordered(PTR_CONCURRENCY)
        .filter_map(|x| async move { x })
        .collect()
        .await
}

/// One sender's sums while the rows are read.
#[derive(Default)]
struct Acc {
    source_id: Option<Uuid>,
    sending_domain: Option<String>,
    totals: SenderTotals,
    recent: RecentFigures,
    last_seen: Option<String>,
    last_spf_aligned: Option<String>,
    selectors: BTreeSet<String>,
    ips: BTreeSet<String>,
    /// The autonomous system an unidentified sender was grouped by (`AS15169 Google LLC`).
    network: Option<String>,
    forward_only: bool,
    /// Failing messages (not forwarded), split into totals once the sender's standing is known.
    failing: u64,
    /// Who owns the kept addresses.
    networks: Vec<SourceNetwork>,
}

/// Who owns each address's network, from the IP data (none without it): lookups in memory.
async fn owners(app: &AppState, ips: &BTreeSet<String>) -> HashMap<String, Owner> {
    let Some(data) = app.ip_data().await else {
        return HashMap::new();
    };
    let parsed: Vec<(&String, IpAddr)> = ips
        .iter()
        .filter_map(|ip| Some((ip, ip.parse().ok()?)))
        .collect();
    let owners = data.owners(parsed.iter().map(|(_, ip)| *ip));
    parsed
        .into_iter()
        .zip(owners)
        .filter_map(|((ip, _), owner)| Some((ip.clone(), owner?)))
        .collect()
}

/// What is known of the source addresses: forward-confirmed reverse-DNS names and network
/// owners, by address.
#[derive(Clone, Copy)]
struct Addresses<'a> {
    ptrs: &'a HashMap<String, String>,
    owners: &'a HashMap<String, Owner>,
}

/// Forwarding derived from the network each address is in: applied to `rows`, and stored for
/// every other reader (`rows_between` applies the same). Answers the forwarding addresses.
async fn derive_forwarding(
    app: &AppState,
    (org, domain_id): (Uuid, Uuid),
    (ips, Addresses { ptrs, owners }): (&BTreeSet<String>, Addresses<'_>),
    catalogue: &Catalogue,
    rows: &mut [(String, SourceDay)],
) -> Result<BTreeMap<String, ForwardingType>, ServiceError> {
    let relays: BTreeMap<String, ForwardingType> = ips
        .iter()
        .filter_map(|ip| {
            let as_domain = owners.get(ip).and_then(|o| o.as_domain.as_deref());
            relay_of(ptrs.get(ip).map(String::as_str), as_domain, catalogue)
                .map(|r| (ip.clone(), r))
        })
        .collect();
    for (_, row) in rows.iter_mut() {
        if let Some(relay) = relays.get(&row.source_ip) {
            row.forwarded = row.forwarded_through(*relay);
        }
    }
    let store = app.store.as_ref();
    let stored_relays = mailward_store::reports::forwarders(store, org, domain_id).await?;
    if let Some(op) =
        mailward_store::reports::forwarders_op(org, domain_id, &relays, &stored_relays)?
    {
        store.transact(vec![op]).await?;
    }
    Ok(relays)
}

/// The networks of the addresses a sender keeps.
fn networks(
    ips: &BTreeSet<String>,
    Addresses { ptrs, owners }: Addresses<'_>,
    data: Option<&mailward_ipdata::IpData>,
) -> Vec<SourceNetwork> {
    ips.iter()
        .take(MAX_IPS_KEPT)
        .map(|ip| {
            let ptr = ptrs.get(ip).cloned();
            let owner = owners.get(ip).cloned().unwrap_or_default();
            SourceNetwork {
                ip: ip.clone(),
                ptr_service: ptr
                    .as_deref()
                    .and_then(|p| Some(data?.service(&registrable_part(p))?.name.clone())),
                ptr,
                asn: owner.asn,
                as_name: owner.as_name,
                as_domain: owner.as_domain,
                country_code: owner.country_code,
                country: owner.country,
            }
        })
        .collect()
}

/// Rebuilds a domain's senders from its report rows and reconciles its sender tasks.
pub async fn identify_domain(
    app: &AppState,
    org: Uuid,
    domain_id: Uuid,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let Some(domain) = domains::get(store, org, domain_id).await? else {
        return Ok(());
    };
    let today = app.clock.now().date();
    let yesterday = today.previous_day().unwrap_or(today);
    // Everything the plan keeps (a window longer than any retention is clamped to it).
    let (from, _) = mailward_services::reports::window::org_window(app, org, 100 * 365).await?;
    let mut rows = rows_as_reported(store, org, domain_id, from, today).await?;
    let ips = rows.iter().map(|(_, r)| r.source_ip.clone());
    let ips: BTreeSet<String> = ips.filter(|ip| !ip.is_empty()).collect();
    let owners = owners(app, &ips).await;
    let ptrs = ptr_names(app, ips.clone()).await;
    let catalogue = mailward_store::sources::load_for(store, org).await?;
    let known = Addresses {
        ptrs: &ptrs,
        owners: &owners,
    };
    let relays =
        derive_forwarding(app, (org, domain_id), (&ips, known), &catalogue, &mut rows).await?;
    let recent_days = Duration::days(mailward_services::reports::senders::RECENT_DAYS - 1);
    let recent = (day_string(yesterday - recent_days), day_string(yesterday));
    let mut candidates = BTreeMap::new();
    let mut accs = accumulate(
        (&rows, known),
        &domain.value.url,
        &catalogue,
        &recent,
        &mut candidates,
    );
    let ip_data = app.ip_data().await;
    for acc in accs.values_mut() {
        acc.networks = networks(&acc.ips, known, ip_data.as_deref());
    }
    let existing: HashMap<Uuid, Versioned<DomainSource>> = stored::list(store, org, domain_id)
        .await?
        .into_iter()
        .map(|s| (s.value.id, s))
        .collect();
    let now = app.clock.now();
    // Unconditional puts recomputed from the rows: one bulk write, not transactions.
    let totals = day_totals(app, org, domain_id, (from, today), &rows).await?;
    store.put_all(totals).await?;
    let (ops, all) = next_senders(
        accs,
        existing,
        (org, domain_id),
        &catalogue,
        (now, yesterday),
    )?;
    save_senders(app, domain_id, ops).await?;
    for e in candidates.values_mut() {
        (e.org_id, e.domain_id) = (org, domain_id);
    }
    mailward_store::candidates::replace_for_domain(store, domain_id, &candidates).await?;
    if !relays.is_empty() {
        // An import adds its rows to the 14-day figures as reported; derived forwarding
        // changes what they count.
        mailward_services::reports::figures::refresh_figures(app, org, domain_id, None).await?;
    }
    let live_spf = live_spf(app, &domain.value.url).await;
    reconcile_tasks(app, &domain.value, &all, live_spf.as_ref()).await?;
    provider_figures(app, &domain.value, (known, &catalogue), &all, today).await?;
    // The pass rate and the senders are final now (forwarding derived): the alerts that read
    // them are judged. One lost here is judged again at the next identification.
    let trigger = mailward_domain::alerts::Trigger::Reports;
    if let Err(e) = mailward_services::alerts::evaluate(app, org, domain_id, trigger).await {
        tracing::warn!(domain.id = %domain_id, error = %e, "alert rules could not be evaluated");
    }
    Ok(())
}

/// Each mailbox provider's figures over the sender-requirements window, from the rows of the
/// reports it sent: the domain's own mail is what passes DMARC or comes from a sender that is
/// confirmed, or recognised and not discarded.
async fn provider_figures(
    app: &AppState,
    domain: &Domain,
    (known, catalogue): (Addresses<'_>, &Catalogue),
    senders: &[DomainSource],
    today: Date,
) -> Result<(), ServiceError> {
    use mailward_services::sender_requirements as requirements;
    let from = today - Duration::days(i64::from(requirements::WINDOW_DAYS) - 1);
    let (by_key, counts) = requirements::providers_by_report(app, domain, from).await?;
    let mut figures: BTreeMap<_, mailward_domain::sender_requirements::ProviderFigures> = counts
        .into_iter()
        .map(|(p, n)| {
            (
                p,
                mailward_domain::sender_requirements::ProviderFigures {
                    reports: n,
                    ..Default::default()
                },
            )
        })
        .collect();
    if !figures.is_empty() {
        let standing: HashMap<&str, &DomainSource> =
            senders.iter().map(|s| (s.key.as_str(), s)).collect();
        let rows = mailward_store::reports::rows_by_report_between(
            app.store.as_ref(),
            domain.org_id,
            domain.id,
            from,
            today,
        )
        .await?;
        for (_, key, row) in &rows {
            let Some(f) = by_key.get(key).and_then(|p| figures.get_mut(p)) else {
                continue;
            };
            let (who, _) = sender_of(row, known, &domain.url, catalogue);
            let own = row.dmarc_pass > 0
                || standing.get(who.key.as_str()).is_some_and(|s| {
                    s.confirmation_status == ConfirmationStatus::Confirmed
                        || (s.source_id.is_some()
                            && s.confirmation_status != ConfirmationStatus::Discarded)
                });
            requirements::add_row(f, row, own);
        }
    }
    requirements::store_figures(app, domain, figures, known.ptrs, &day_string(today)).await
}

/// The senders as the rows leave them (`all`), and the writes of those that changed (`ops`).
fn next_senders(
    accs: BTreeMap<String, Acc>,
    existing: HashMap<Uuid, Versioned<DomainSource>>,
    (org, domain_id): (Uuid, Uuid),
    catalogue: &Catalogue,
    (now, yesterday): (OffsetDateTime, Date),
) -> Result<(Vec<mailward_domain::store::WriteOp>, Vec<DomainSource>), ServiceError> {
    let mut ops = Vec::new();
    let mut all: Vec<DomainSource> = Vec::new();
    let mut seen = BTreeSet::new();
    for (key, acc) in accs {
        let id = DomainSource::id_for(domain_id, &key);
        seen.insert(id);
        let previous = existing.get(&id);
        let mut next = merged(
            acc,
            key,
            previous.map(|p| &p.value),
            (org, domain_id),
            catalogue,
            now,
        );
        next.recent_to = Some(day_string(yesterday));
        let unchanged = previous.is_some_and(|p| {
            let mut same = next.clone();
            same.updated_at = p.value.updated_at;
            same == p.value
        });
        if unchanged {
            all.push(next);
            continue;
        }
        next.updated_at = now;
        ops.push(stored::save_op(&next, previous.map(|p| p.version))?);
        all.push(next);
    }
    // Senders no row names any more: one a person decided on (confirmed, discarded, a check
    // ignored) stays, quiet, so the decision is kept; an undecided one goes (its rows aged
    // out, or its mail is now counted under another sender, as when an address's network
    // became known and its mail joined the network's sender).
    for (id, old) in existing {
        if seen.contains(&id) {
            continue;
        }
        let decided = old.value.confirmation_status != ConfirmationStatus::RequiresConfirmation
            || old.value.ignore_spf
            || old.value.ignore_dkim;
        if !decided {
            ops.push(mailward_domain::store::WriteOp::Delete {
                pk: mailward_store::keys::domain_pk(org, domain_id),
                sk: mailward_store::keys::sender_sk(domain_id, id),
                condition: mailward_domain::store::Condition::Version(old.version),
            });
            continue;
        }
        let mut next = old.value.clone();
        next.recent = RecentFigures::default();
        next.recent_to = Some(day_string(yesterday));
        if next != old.value {
            next.updated_at = now;
            ops.push(stored::save_op(&next, Some(old.version))?);
        }
        all.push(next);
    }
    Ok((ops, all))
}

/// Saves the senders that changed; a conflict is a person's write, which stands.
async fn save_senders(
    app: &AppState,
    domain_id: Uuid,
    ops: Vec<mailward_domain::store::WriteOp>,
) -> Result<(), ServiceError> {
    // Each sender on its own: a person who moved one meanwhile keeps their write (the next
    // run refreshes that one), and every other sender is still saved.
    let applied = app.store.write_each(ops).await?;
    let lost = applied.iter().filter(|a| !**a).count();
    if lost > 0 {
        tracing::debug!(domain.id = %domain_id, senders = lost, "senders changed during identification");
    }
    Ok(())
}

/// Adds a row of a sender no catalogue source identifies to the evidence of the candidate it
/// names (by domain; never the watched domain itself, nor a bare address).
fn note_candidate(
    candidates: &mut BTreeMap<String, CandidateEvidence>,
    who: &mailward_domain::senders::SenderIdentity,
    (day, row, ptr): (&str, &SourceDay, Option<&str>),
    domain: &str,
) {
    let own = |name: &str| {
        let (name, domain) = (name.to_ascii_lowercase(), domain.to_ascii_lowercase());
        name == domain
            || name.ends_with(&format!(".{domain}"))
            || domain.ends_with(&format!(".{name}"))
    };
    let Some(name) = who.sending_domain.as_deref() else {
        return;
    };
    if who.source_id.is_some() || own(name) {
        return;
    }
    let e = candidates
        .entry(name.to_owned())
        .or_insert_with(|| CandidateEvidence {
            name: name.to_owned(),
            ..Default::default()
        });
    e.volume += row.volume;
    e.saw(day);
    if let Some(envelope) = row.envelope_from.as_deref().filter(|d| !own(d)) {
        CandidateEvidence::note(&mut e.envelope_domains, envelope);
    }
    for signer in &row.dkim_passing {
        let d = mailward_domain::senders::domain_of_signer(signer).0;
        if !own(d) {
            CandidateEvidence::note(&mut e.dkim_domains, d);
        }
    }
    if let Some(ptr) = ptr {
        CandidateEvidence::note(&mut e.ptr_names, ptr);
    }
    if !row.source_ip.is_empty() {
        CandidateEvidence::note(&mut e.ips, &row.source_ip);
    }
}

/// Each sender's sums over the rows (`recent`: the first and last day of the recent window),
/// and the evidence of candidates for the catalogue.
/// Who sent a row: its identity, a sender known only by its address grouped by its network's
/// autonomous system (with that network's label).
fn sender_of(
    row: &SourceDay,
    Addresses { ptrs, owners }: Addresses<'_>,
    domain: &str,
    catalogue: &Catalogue,
) -> (
    mailward_domain::senders::SenderIdentity,
    Option<(u32, String)>,
) {
    let ptr = ptrs.get(&row.source_ip).map(String::as_str);
    let mut who = identify(row, ptr, domain, catalogue);
    let owner = owners.get(&row.source_ip);
    let network = owner.and_then(|o| {
        let asn = o.asn?;
        Some((
            asn,
            SourceNetwork {
                asn: Some(asn),
                as_name: o.as_name.clone(),
                ..Default::default()
            }
            .as_label()?,
        ))
    });
    if let (Some((asn, _)), true) = (&network, who.key.starts_with("ip:")) {
        who.key = format!("as:{asn}");
    }
    (who, network)
}

fn accumulate(
    (rows, Addresses { ptrs, owners }): (&[(String, SourceDay)], Addresses<'_>),
    domain: &str,
    catalogue: &Catalogue,
    recent: &(String, String),
    candidates: &mut BTreeMap<String, CandidateEvidence>,
) -> BTreeMap<String, Acc> {
    let mut accs: BTreeMap<String, Acc> = BTreeMap::new();
    for (day, row) in rows {
        let ptr = ptrs.get(&row.source_ip).map(String::as_str);
        let (who, network) = sender_of(row, Addresses { ptrs, owners }, domain, catalogue);
        note_candidate(candidates, &who, (day, row, ptr), domain);
        let acc = accs.entry(who.key.clone()).or_default();
        if who.key.starts_with("as:") {
            acc.network = network.map(|(_, label)| label);
        }
        acc.source_id = who.source_id;
        acc.forward_only = who.forward_only;
        if acc.sending_domain.is_none() {
            acc.sending_domain = who.sending_domain;
        }
        let forwarded = if who.forward_only {
            row.forwarded_through(ForwardingType::ForwarderOnly)
        } else {
            row.forwarded.min(row.volume)
        };
        let compliant = row.dmarc_pass.min(row.volume - forwarded);
        acc.totals.compliant += compliant;
        acc.totals.forwarded += forwarded;
        acc.failing += row.volume - forwarded - compliant;
        if acc.last_seen.as_ref().is_none_or(|d| day > d) {
            acc.last_seen = Some(day.clone());
        }
        if row.spf_aligned_pass > 0 && acc.last_spf_aligned.as_ref().is_none_or(|d| day > d) {
            acc.last_spf_aligned = Some(day.clone());
        }
        acc.selectors.extend(
            own_selectors(row, domain)
                .into_iter()
                .map(str::to_ascii_lowercase),
        );
        if !row.source_ip.is_empty() {
            acc.ips.insert(row.source_ip.clone());
        }
        if *day >= recent.0 && *day <= recent.1 {
            acc.recent.volume += row.volume;
            acc.recent.dmarc_pass += row.dmarc_pass;
            acc.recent.spf_aligned_pass += row.spf_aligned_pass;
            acc.recent.dkim_aligned_pass += row.dkim_aligned_pass;
        }
    }
    accs
}

/// A sender as identification leaves it: what the rows say over what was stored (`previous`,
/// with a person's decisions), or a new one.
fn merged(
    acc: Acc,
    key: String,
    previous: Option<&DomainSource>,
    (org, domain_id): (Uuid, Uuid),
    catalogue: &Catalogue,
    now: OffsetDateTime,
) -> DomainSource {
    let id = DomainSource::id_for(domain_id, &key);
    let source = acc.source_id.and_then(|sid| catalogue.by_id(sid));
    let mut next = previous.map_or_else(
        || DomainSource {
            id,
            org_id: org,
            domain_id,
            key: key.clone(),
            source_id: None,
            spf_value: None,
            source_name: None,
            source_homepage: None,
            sending_domain: None,
            dkim_selectors: Vec::new(),
            confirmation_status: ConfirmationStatus::RequiresConfirmation,
            confirmed_at: None,
            last_seen_at: None,
            last_spf_aligned_at: None,
            totals: SenderTotals::default(),
            recent: RecentFigures::default(),
            recent_to: None,
            ips: Vec::new(),
            networks: Vec::new(),
            ignore_spf: false,
            ignore_dkim: false,
            created_at: now,
            updated_at: now,
        },
        Clone::clone,
    );
    let vouched =
        acc.source_id.is_some() || next.confirmation_status == ConfirmationStatus::Confirmed;
    let mut totals = acc.totals;
    if vouched {
        totals.non_compliant = acc.failing;
    } else {
        totals.unknown = acc.failing;
    }
    next.source_id = acc.source_id;
    next.spf_value = source.and_then(|s| s.spf_discovery_values.first().cloned());
    next.source_name = source
        .map(|s| s.display_name.clone().unwrap_or_else(|| s.name.clone()))
        .or_else(|| acc.sending_domain.clone())
        .or_else(|| acc.network.clone())
        .or_else(|| key.strip_prefix("ip:").map(str::to_owned));
    next.source_homepage = source.and_then(|s| s.homepage.clone());
    next.sending_domain = acc.sending_domain;
    next.dkim_selectors = acc.selectors.into_iter().collect();
    next.last_seen_at = acc.last_seen;
    next.last_spf_aligned_at = acc.last_spf_aligned;
    next.totals = totals;
    next.recent = acc.recent;
    next.ips = acc.ips.into_iter().take(MAX_IPS_KEPT).collect();
    next.networks = acc.networks;
    next
}

/// The domain's day totals that differ from what the rows sum to, as items to put.
async fn day_totals(
    app: &AppState,
    org: Uuid,
    domain_id: Uuid,
    (from, to): (Date, Date),
    rows: &[(String, mailward_domain::reports::SourceDay)],
) -> Result<Vec<mailward_domain::store::Item>, ServiceError> {
    let mut totals: BTreeMap<&str, DayTotal> = BTreeMap::new();
    for (day, row) in rows {
        totals.entry(day.as_str()).or_default().add(row);
    }
    let stored: HashMap<String, DayTotal> =
        mailward_store::reports::day_totals_between(app.store.as_ref(), org, domain_id, from, to)
            .await?
            .into_iter()
            .collect();
    totals
        .into_iter()
        .filter(|(day, total)| stored.get(*day) != Some(total))
        .map(|(day, total)| {
            Ok(mailward_store::reports::day_total_item(
                org, domain_id, day, &total,
            )?)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_names_follow_rfc_1035_and_3596() {
        assert_eq!(
            reverse_name("192.0.2.10".parse().unwrap()),
            "10.2.0.192.in-addr.arpa"
        );
        let v6 = reverse_name("2001:db8::1".parse().unwrap());
        assert!(v6.starts_with("1.0.0.0.0.0.0.0."), "{v6}");
        assert!(v6.ends_with(".8.b.d.0.1.0.0.2.ip6.arpa"), "{v6}");
    }
}
