//! What a domain's aggregate reports say over a window: the DMARC summary (SPEC §2.12) and the
//! senders, both read from the per-day rows ingestion stores.
//!
//! Windows end yesterday (UTC): today's reports are still arriving. A window starts no earlier
//! than the plan's retention allows ([`retention_days`]).

use super::impact::{IMPACT_DAYS, assess, for_domain, senders_of};
pub use super::window::retention_days;
use super::window::{org_window, pct};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::reports::{
    PeriodDelta, ProbeTask, ReportSummary, SenderEntry, SendersParams, SendersView, StoredFigures,
    SummaryParams,
};
use mailward_domain::domain::Policy;
use mailward_domain::reports::ReportKind;
pub use mailward_insights::figures::totals;
use mailward_insights::figures::{figures, round2};
pub use mailward_insights::recommend::ADVANCE_MIN_VOLUME;
use mailward_insights::recommend::{next_action, recommend};
use mailward_store::reports::{day_string, rows_between};
use std::collections::{BTreeMap, BTreeSet};
use time::Duration;

/// Most senders one view lists.
pub const MAX_SENDERS: u32 = 20;

/// Most probe tasks the summary lists.
const MAX_PROBE_TASKS: usize = 10;

/// The days of a summary `period`.
fn period_days(raw: Option<&str>) -> Result<i64, ServiceError> {
    match raw.unwrap_or("last_7_days") {
        "last_7_days" => Ok(7),
        "last_14_days" => Ok(14),
        "last_30_days" => Ok(30),
        _ => Err(ServiceError::invalid(
            "period",
            "period must be last_7_days, last_14_days or last_30_days",
        )),
    }
}

/// The domain's aggregate reports whose range ends from day `from` to day `to`: (authenticated,
/// unauthenticated).
async fn report_counts(
    app: &AppState,
    org: uuid::Uuid,
    domain: uuid::Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<(u64, u64), ServiceError> {
    let reports = mailward_store::reports::list(app.store.as_ref(), org, domain).await?;
    let mut counts = (0, 0);
    for r in reports.iter().filter(|r| r.kind == ReportKind::Dmarc) {
        let last = time::OffsetDateTime::from_unix_timestamp(r.end.max(r.begin + 1) - 1)
            .map(|t| t.date())
            .unwrap_or(time::Date::MIN);
        if (from..=to).contains(&last) {
            if r.authenticated {
                counts.0 += 1;
            } else {
                counts.1 += 1;
            }
        }
    }
    Ok(counts)
}

/// What a domain's summary computes from its report data (rows, senders, report marks): the
/// period's figures and totals, the previous period's figures, the impact of the next policy
/// up and the report counts.
#[derive(Clone)]
struct PeriodData {
    current: mailward_api_types::reports::PeriodFigures,
    previous: mailward_api_types::reports::PeriodFigures,
    totals: mailward_api_types::reports::Totals,
    impact: mailward_api_types::reports::EnforcementImpact,
    counts: (u64, u64),
}

/// [`PeriodData`] by (organization, domain, domain item version, days, first and last day),
/// each at the domain's report counter (`mailward_store::report_versions`): a domain's summary
/// reads its rows again only after a write changed them (or its settings, which the impact
/// depends on, changed the domain's version).
type PeriodKey = (uuid::Uuid, uuid::Uuid, u64, i64, time::Date, time::Date);

/// The process's memo of [`PeriodData`] (a few KB each).
static PERIODS: std::sync::LazyLock<mailward_store::report_versions::Memo<PeriodKey, PeriodData>> =
    std::sync::LazyLock::new(|| mailward_store::report_versions::Memo::new(20_000));

/// The enforcement impact as the summary reads it: over a 30-day period the impact's window is
/// the period's, so only the senders are read and the impact is assessed on the period's rows
/// (not read twice); over another period, the impact itself.
enum ImpactRead {
    Senders(Vec<mailward_domain::senders::DomainSource>),
    Done(mailward_api_types::reports::EnforcementImpact),
}

/// The [`PeriodData`] of a domain (its item at `version`): from the process's memo when it was
/// computed at the domain's current report counter, else read (the period's rows, the previous
/// period's, the impact's senders or the impact, the report counts, all at once) and kept.
async fn period_data(
    app: &AppState,
    org: uuid::Uuid,
    (domain, version): (&mailward_domain::domain::Domain, u64),
    (days, (from, to)): (i64, (time::Date, time::Date)),
    (prev_from, prev_to): (time::Date, time::Date),
) -> Result<PeriodData, ServiceError> {
    let store = app.store.as_ref();
    let id = domain.id;
    let counter = mailward_store::report_versions::version(store, org, id).await?;
    let key = (org, id, version, days, from, to);
    if let Some(data) = PERIODS.get(&key, counter) {
        return Ok(data);
    }
    let (rows, previous, impact, counts) = futures::future::try_join4(
        async { Ok::<_, ServiceError>(rows_between(store, org, id, from, to).await?) },
        async { Ok::<_, ServiceError>(rows_between(store, org, id, prev_from, prev_to).await?) },
        async {
            Ok(if days == IMPACT_DAYS {
                ImpactRead::Senders(senders_of(app, org, id).await?)
            } else {
                ImpactRead::Done(for_domain(app, org, domain, next_policy(domain)).await?)
            })
        },
        report_counts(app, org, id, from, to),
    )
    .await?;
    let impact = match impact {
        ImpactRead::Done(impact) => impact,
        ImpactRead::Senders(senders) => assess(
            domain,
            next_policy(domain),
            (day_string(from), day_string(to)),
            &rows,
            &senders,
        ),
    };
    let data = PeriodData {
        current: figures(from, to, &rows),
        previous: figures(prev_from, prev_to, &previous),
        totals: totals(&rows),
        impact,
        counts,
    };
    PERIODS.keep(key, counter, data.clone());
    Ok(data)
}

/// The policy whose impact the summary shows: the next one up (at reject: what reject stops now).
fn next_policy(domain: &mailward_domain::domain::Domain) -> &'static str {
    match domain.dmarc_policy {
        Policy::None => "quarantine",
        Policy::Quarantine | Policy::Reject => "reject",
    }
}

/// The domain's open sender tasks (probes), highest priority first.
fn probe_tasks(
    tasks: Vec<mailward_store::Versioned<mailward_tasks::Task>>,
) -> Vec<mailward_tasks::Task> {
    let mut probes: Vec<mailward_tasks::Task> = tasks
        .into_iter()
        .map(|t| t.value)
        .filter(|t| t.status.is_open_work() && t.task_type.is_sender_task())
        .collect();
    mailward_tasks::sort::sort(&mut probes, "priority", false);
    probes
}

/// The DMARC summary of a domain over `period`.
pub async fn summary(
    app: &AppState,
    caller: &Caller,
    id: uuid::Uuid,
    params: &SummaryParams,
) -> Result<ReportSummary, ServiceError> {
    let days = period_days(params.period.as_deref())?;
    let loaded = crate::access::load(app, caller, id).await?;
    let (domain, version) = (loaded.value, loaded.version);
    let (from, to) = org_window(app, caller.org_id, days).await?;
    let span = (to - from).whole_days() + 1;
    let previous = (from - Duration::days(span), from - Duration::days(1));
    let store = app.store.as_ref();
    let (data, tasks) = futures::future::try_join(
        period_data(
            app,
            caller.org_id,
            (&domain, version),
            (days, (from, to)),
            previous,
        ),
        async { Ok(mailward_store::tasks::list_for_domain(store, caller.org_id, id).await?) },
    )
    .await?;
    let PeriodData {
        current,
        previous,
        totals,
        impact,
        counts: (reports_authenticated, reports_unauthenticated),
    } = data;
    let recommendation = recommend(&domain, &current, impact.legitimate_affected);
    let action = next_action(&current, &recommendation, impact.legitimate_affected);
    let probes = probe_tasks(tasks);
    let f = domain.report_figures.clone().unwrap_or_default();
    Ok(ReportSummary {
        reports_authenticated,
        reports_unauthenticated,
        domain_id: domain.id,
        domain: domain.url.clone(),
        date_from: current.date_from.clone(),
        date_to: current.date_to.clone(),
        volume: current.volume,
        dmarc_pass_pct: current.dmarc_pass_pct,
        spf_pass_pct: current.spf_pass_pct,
        dkim_pass_pct: current.dkim_pass_pct,
        totals,
        delta: PeriodDelta {
            volume: current.volume as i64 - previous.volume as i64,
            dmarc_pass_pct: round2(current.dmarc_pass_pct - previous.dmarc_pass_pct),
            spf_pass_pct: round2(current.spf_pass_pct - previous.spf_pass_pct),
            dkim_pass_pct: round2(current.dkim_pass_pct - previous.dkim_pass_pct),
        },
        previous_period: previous,
        stored: StoredFigures {
            last_14_days_volume: f.volume,
            last_14_days_dmarc_pass_pct: f.pct(f.dmarc_pass),
            last_14_days_spf_pass_pct: f.pct(f.spf_aligned_pass),
            last_14_days_dkim_pass_pct: f.pct(f.dkim_aligned_pass),
        },
        policy_state: domain.dmarc_policy.as_str().into(),
        monitoring_state: domain.monitoring_status.as_str().to_owned(),
        recommendation,
        probe_tasks_total: probes.len() as u64,
        probe_tasks: probes
            .iter()
            .take(MAX_PROBE_TASKS)
            .map(|t| ProbeTask {
                id: t.id,
                task_type: t.task_type.as_str().into(),
                priority: t.priority,
                description: t.description.clone(),
                source_alias: t.source_alias.clone(),
                sending_domain: t.sending_domain.clone(),
            })
            .collect(),
        next_action: action,
    })
}

#[derive(Default)]
struct SenderSums {
    volume: u64,
    dmarc: u64,
    spf: u64,
    dkim: u64,
    header_from: BTreeSet<String>,
    envelope_from: BTreeSet<String>,
    signers: BTreeSet<String>,
    last_seen: String,
}

/// A domain's senders over `period`, highest volume first.
pub async fn senders(
    app: &AppState,
    caller: &Caller,
    id: uuid::Uuid,
    params: &SendersParams,
) -> Result<SendersView, ServiceError> {
    let days = period_days(params.period.as_deref())?;
    let limit = params.limit.unwrap_or(MAX_SENDERS);
    if !(1..=MAX_SENDERS).contains(&limit) {
        return Err(ServiceError::invalid(
            "limit",
            format!("limit must be 1 to {MAX_SENDERS}"),
        ));
    }
    crate::access::load(app, caller, id).await?;
    let (from, to) = org_window(app, caller.org_id, days).await?;
    let rows = rows_between(app.store.as_ref(), caller.org_id, id, from, to).await?;
    let networks = super::networks_of(app, caller.org_id, id).await?;
    let mut by_ip: BTreeMap<String, SenderSums> = BTreeMap::new();
    let mut total = 0;
    for (day, r) in &rows {
        total += r.volume;
        let s = by_ip.entry(r.source_ip.clone()).or_default();
        s.volume += r.volume;
        s.dmarc += r.dmarc_pass;
        s.spf += r.spf_aligned_pass;
        s.dkim += r.dkim_aligned_pass;
        if !r.header_from.is_empty() {
            s.header_from.insert(r.header_from.clone());
        }
        if let Some(e) = &r.envelope_from {
            s.envelope_from.insert(e.clone());
        }
        s.signers.extend(r.dkim_signers.iter().cloned());
        if *day > s.last_seen {
            s.last_seen = day.clone();
        }
    }
    let mut entries: Vec<SenderEntry> = by_ip
        .into_iter()
        .map(|(ip, s)| SenderEntry {
            network: networks.get(&ip).map(Into::into),
            source_ip: ip,
            volume: s.volume,
            share_pct: pct(s.volume, total),
            dmarc_pass_pct: pct(s.dmarc, s.volume),
            spf_pass_pct: pct(s.spf, s.volume),
            dkim_pass_pct: pct(s.dkim, s.volume),
            header_from: s.header_from.into_iter().collect(),
            envelope_from: s.envelope_from.into_iter().collect(),
            dkim_signers: s.signers.into_iter().collect(),
            last_seen: s.last_seen,
        })
        .collect();
    entries.sort_by(|a, b| b.volume.cmp(&a.volume).then(a.source_ip.cmp(&b.source_ip)));
    let count = entries.len() as u64;
    entries.truncate(limit as usize);
    Ok(SendersView {
        date_from: day_string(from),
        date_to: day_string(to),
        total_volume: total,
        sender_count: count,
        truncated: count > u64::from(limit),
        senders: entries,
    })
}
