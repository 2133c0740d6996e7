//! Report data (SPEC §4.5): the organization's DMARC figures over a period, per domain, per
//! sender of a domain, and per day. The organization-wide views read the per-day domain totals
//! (one item per domain and day, kept by sender identification), never the per-source rows;
//! a single domain's senders read its rows. Every view covers only the domains the caller
//! sees (group limits).

use super::window::pct;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use futures::{StreamExt, TryStreamExt};
use mailward_api_types::report_data::{
    DomainReportData, DomainVolume, ReportDataDomains, ReportDataParams, ReportDataSenders,
    ReportDataSummary, ReportDataTimeseries, SenderReportData, VolumeFigures, VolumePoint,
};
use mailward_domain::domain::ScoreBand;
use mailward_domain::domain_list::DomainCard;
use mailward_domain::reports::DayTotal;
use mailward_domain::senders::{ConfirmationStatus, DomainSource};
use mailward_store::report_versions::{self, Memo};
use mailward_store::reports::{day_string, day_totals_between, rows_between};
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;
use time::Date;
use uuid::Uuid;

/// Most domains the summary names.
const TOP_DOMAINS: usize = 10;

/// A resolved period: its name and first and last day.
struct Window {
    name: &'static str,
    from: Date,
    to: Date,
}

async fn window(
    app: &AppState,
    caller: &Caller,
    params: &ReportDataParams,
) -> Result<Window, ServiceError> {
    let (name, days) = match params.period.as_deref().unwrap_or("last_7_days") {
        "last_1_day" => ("last_1_day", 1),
        "last_7_days" => ("last_7_days", 7),
        "last_30_days" => ("last_30_days", 30),
        "last_365_days" => ("last_365_days", 365),
        _ => {
            return Err(ServiceError::invalid(
                "period",
                "period must be last_1_day, last_7_days, last_30_days or last_365_days",
            ));
        }
    };
    let (from, to) = super::window::org_window(app, caller.org_id, days).await?;
    Ok(Window { name, from, to })
}

fn figures(t: &DayTotal) -> VolumeFigures {
    let forwarded = t.forwarded.min(t.volume);
    let compliant = t.dmarc_pass.min(t.volume - forwarded);
    VolumeFigures {
        volume: t.volume,
        compliant,
        failing: t.volume - forwarded - compliant,
        forwarded,
        quarantined: t.quarantined,
        rejected: t.rejected,
        dmarc_pass_pct: pct(t.dmarc_pass, t.volume),
        spf_pass_pct: pct(t.spf_aligned_pass, t.volume),
        dkim_pass_pct: pct(t.dkim_aligned_pass, t.volume),
    }
}

/// Reads run at once per request against the store (one partition each).
const READS_AT_ONCE: usize = 16;

/// Entries each of the process's report memos keeps (~100 bytes each).
const MEMO_ENTRIES: usize = 200_000;

/// A domain's total over a window, as computed at its report counter (`report_versions`).
static TOTALS: LazyLock<Memo<(Uuid, Uuid, Date, Date), DayTotal>> =
    LazyLock::new(|| Memo::new(MEMO_ENTRIES));

/// Senders seen, of them known, of them waiting for a confirmation.
type SenderCounts = (u64, u64, u64);

/// A domain's sender counts since a day, at its report counter.
static SENDER_COUNTS: LazyLock<Memo<(Uuid, Uuid, String), SenderCounts>> =
    LazyLock::new(|| Memo::new(MEMO_ENTRIES));

/// Each visible domain (its list card) with its total over the window. Only the domains that
/// ever had a report are read (`DomainCard::has_reports`), several at a time, and only when the
/// process has not computed their total at their current report counter (`versions`, read
/// before any data).
async fn domain_totals(
    app: &AppState,
    caller: &Caller,
    w: &Window,
    versions: &HashMap<Uuid, i64>,
) -> Result<Vec<(DomainCard, DayTotal)>, ServiceError> {
    let store = app.store.as_ref();
    let mut cards = mailward_store::card_cache::all_cards(store, caller.org_id)
        .await?
        .to_vec();
    cards.retain(|c| caller.sees_group(c.group_id));
    let reads = cards
        .iter()
        .map(|c| (c.id, c.has_reports))
        .collect::<Vec<_>>();
    let totals: Vec<DayTotal> = futures::stream::iter(reads)
        .map(|(id, has_reports)| async move {
            let mut total = DayTotal::default();
            if !has_reports {
                return Ok(total);
            }
            let (key, version) = ((caller.org_id, id, w.from, w.to), version_of(versions, id));
            if let Some(total) = TOTALS.get(&key, version) {
                return Ok(total);
            }
            for (_, day) in day_totals_between(store, caller.org_id, id, w.from, w.to).await? {
                total.merge(&day);
            }
            TOTALS.keep(key, version, total);
            Ok::<_, ServiceError>(total)
        })
        .buffered(READS_AT_ONCE)
        .try_collect()
        .await?;
    Ok(cards.into_iter().zip(totals).collect())
}

fn version_of(versions: &HashMap<Uuid, i64>, domain: Uuid) -> i64 {
    versions.get(&domain).copied().unwrap_or(0)
}

/// The senders of the window over `cards`: (seen in it, of them known, of them waiting for a
/// confirmation). Only domains that had reports have senders; a domain's counts are read again
/// only when its report counter moved.
async fn sender_counts(
    app: &AppState,
    caller: &Caller,
    cards: &[(DomainCard, DayTotal)],
    from: &str,
    versions: &HashMap<Uuid, i64>,
) -> Result<(u64, u64, u64), ServiceError> {
    let store = app.store.as_ref();
    let ids: Vec<Uuid> = cards
        .iter()
        .filter(|(c, _)| c.has_reports)
        .map(|(c, _)| c.id)
        .collect();
    let per_domain: Vec<(u64, u64, u64)> = futures::stream::iter(ids)
        .map(|id| async move {
            let (key, version) = (
                (caller.org_id, id, from.to_owned()),
                version_of(versions, id),
            );
            if let Some(counts) = SENDER_COUNTS.get(&key, version) {
                return Ok(counts);
            }
            let mut counts = (0, 0, 0);
            for s in mailward_store::senders::list(store, caller.org_id, id).await? {
                if s.value.last_seen_at.as_deref().is_some_and(|d| d >= from) {
                    counts.0 += 1;
                    counts.1 += u64::from(s.value.is_known());
                    counts.2 += u64::from(
                        s.value.confirmation_status == ConfirmationStatus::RequiresConfirmation,
                    );
                }
            }
            SENDER_COUNTS.keep(key, version, counts);
            Ok::<_, ServiceError>(counts)
        })
        .buffered(READS_AT_ONCE)
        .try_collect()
        .await?;
    Ok(per_domain
        .into_iter()
        .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2)))
}

/// `GET /report-data/summary`.
pub async fn summary(
    app: &AppState,
    caller: &Caller,
    params: &ReportDataParams,
) -> Result<ReportDataSummary, ServiceError> {
    let w = window(app, caller, params).await?;
    let versions = report_versions::versions(app.store.as_ref(), caller.org_id).await?;
    let mut per_domain = domain_totals(app, caller, &w, &versions).await?;
    let mut all = DayTotal::default();
    for (_, total) in &per_domain {
        all.merge(total);
    }
    let (senders, known, waiting) =
        sender_counts(app, caller, &per_domain, &day_string(w.from), &versions).await?;
    let domains_total = per_domain.len() as u64;
    per_domain.retain(|(_, t)| t.volume > 0);
    per_domain.sort_by(|a, b| b.1.volume.cmp(&a.1.volume).then(a.0.url.cmp(&b.0.url)));
    Ok(ReportDataSummary {
        period: w.name.into(),
        date_from: day_string(w.from),
        date_to: day_string(w.to),
        domains_total,
        domains_reporting: per_domain.len() as u64,
        figures: figures(&all),
        senders,
        known_senders: known,
        senders_requiring_confirmation: waiting,
        top_domains: per_domain
            .iter()
            .take(TOP_DOMAINS)
            .map(|(d, t)| DomainVolume {
                domain_id: d.id,
                domain: d.url.clone(),
                volume: t.volume,
                dmarc_pass_pct: pct(t.dmarc_pass, t.volume),
            })
            .collect(),
    })
}

/// `GET /report-data/domains`.
pub async fn domains(
    app: &AppState,
    caller: &Caller,
    params: &ReportDataParams,
) -> Result<ReportDataDomains, ServiceError> {
    let w = window(app, caller, params).await?;
    let versions = report_versions::versions(app.store.as_ref(), caller.org_id).await?;
    let mut per_domain = domain_totals(app, caller, &w, &versions).await?;
    per_domain.sort_by(|a, b| b.1.volume.cmp(&a.1.volume).then(a.0.url.cmp(&b.0.url)));
    let mut lines = Vec::with_capacity(per_domain.len());
    for (d, t) in per_domain {
        lines.push(DomainReportData {
            domain_id: d.id,
            domain: d.url.clone(),
            score: d.score,
            score_band: ScoreBand::of(d.score).as_str().to_owned(),
            policy: d.dmarc_policy.as_str().into(),
            figures: figures(&t),
        });
    }
    Ok(ReportDataDomains {
        period: w.name.into(),
        date_from: day_string(w.from),
        date_to: day_string(w.to),
        domains: lines,
    })
}

/// `GET /report-data/domains/{id}/senders`.
pub async fn senders(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    params: &ReportDataParams,
) -> Result<ReportDataSenders, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    let w = window(app, caller, params).await?;
    let store = app.store.as_ref();
    let rows = rows_between(store, caller.org_id, id, w.from, w.to).await?;
    let stored: Vec<DomainSource> = mailward_store::senders::list(store, caller.org_id, id)
        .await?
        .into_iter()
        .map(|s| s.value)
        .collect();
    let by_id: BTreeMap<Uuid, &DomainSource> = stored.iter().map(|s| (s.id, s)).collect();
    let total: u64 = rows.iter().map(|(_, r)| r.volume).sum();
    let mut lines: Vec<SenderReportData> = super::by_sender::group(&rows, &stored)
        .into_iter()
        .map(|((sender_id, ip), s)| {
            let sender = sender_id.and_then(|i| by_id.get(&i).copied());
            SenderReportData {
                sender_id,
                name: sender
                    .and_then(|x| x.source_name.clone().or_else(|| x.sending_domain.clone()))
                    .unwrap_or(ip),
                sending_domain: sender.and_then(|x| x.sending_domain.clone()),
                is_known: sender.is_some_and(DomainSource::is_known),
                confirmation_status: sender
                    .map_or(ConfirmationStatus::RequiresConfirmation, |x| {
                        x.confirmation_status
                    })
                    .as_str()
                    .into(),
                volume: s.volume,
                share_pct: pct(s.volume, total),
                dmarc_pass_pct: pct(s.dmarc, s.volume),
                spf_pass_pct: pct(s.spf, s.volume),
                dkim_pass_pct: pct(s.dkim, s.volume),
                forwarded: s.forwarded,
                failing: s.affected,
                source_networks: sender
                    .map(|x| {
                        x.networks
                            .iter()
                            .filter(|n| s.ips.contains(&n.ip))
                            .map(Into::into)
                            .collect()
                    })
                    .unwrap_or_default(),
                source_ips: s
                    .ips
                    .into_iter()
                    .take(mailward_domain::senders::MAX_IPS_KEPT)
                    .collect(),
            }
        })
        .collect();
    lines.sort_by(|a, b| b.volume.cmp(&a.volume).then(a.name.cmp(&b.name)));
    Ok(ReportDataSenders {
        domain_id: domain.id,
        domain: domain.url,
        period: w.name.into(),
        date_from: day_string(w.from),
        date_to: day_string(w.to),
        total_volume: total,
        senders: lines,
    })
}

/// `GET /report-data/domains/{id}/timeseries`.
pub async fn timeseries(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    params: &ReportDataParams,
) -> Result<ReportDataTimeseries, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    let w = window(app, caller, params).await?;
    let stored: BTreeMap<String, DayTotal> =
        day_totals_between(app.store.as_ref(), caller.org_id, id, w.from, w.to)
            .await?
            .into_iter()
            .collect();
    let mut points = Vec::new();
    let mut day = w.from;
    while day <= w.to {
        let key = day_string(day);
        let t = stored.get(&key).copied().unwrap_or_default();
        let f = figures(&t);
        points.push(VolumePoint {
            date: key,
            volume: t.volume,
            compliant: f.compliant,
            failing: f.failing,
            forwarded: f.forwarded,
            spf_aligned_pass: t.spf_aligned_pass,
            dkim_aligned_pass: t.dkim_aligned_pass,
        });
        let Some(next) = day.next_day() else { break };
        day = next;
    }
    Ok(ReportDataTimeseries {
        domain_id: domain.id,
        domain: domain.url,
        period: w.name.into(),
        date_from: day_string(w.from),
        date_to: day_string(w.to),
        points,
    })
}
