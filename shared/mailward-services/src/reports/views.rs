//! What a domain's aggregate reports say over a window: the DMARC summary (SPEC §2.12) and the
//! senders, both read from the per-day rows ingestion stores.
//!
//! Windows end yesterday (UTC): today's reports are still arriving. A window starts no earlier
//! than the plan's retention allows ([`retention_days`]).

pub use super::window::retention_days;
use super::window::{org_window, pct};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::reports::{
    NextAction, PeriodDelta, PeriodFigures, ProbeTask, Recommendation, ReportSummary, SenderEntry,
    SendersParams, SendersView, StoredFigures, SummaryParams, Totals,
};
use mailward_domain::domain::{Domain, Policy};
use mailward_domain::reports::SourceDay;
use mailward_store::reports::{day_string, rows_between};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use time::{Date, Duration};

/// Most senders one view lists.
pub const MAX_SENDERS: u32 = 20;

/// Most probe tasks the summary lists.
const MAX_PROBE_TASKS: usize = 10;

/// Fewest messages in the window before a recommendation to advance is made.
pub const ADVANCE_MIN_VOLUME: u64 = 100;

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

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn figures(from: Date, to: Date, rows: &[(String, SourceDay)]) -> PeriodFigures {
    let (mut volume, mut dmarc, mut spf, mut dkim) = (0, 0, 0, 0);
    for (_, r) in rows {
        volume += r.volume;
        dmarc += r.dmarc_pass;
        spf += r.spf_aligned_pass;
        dkim += r.dkim_aligned_pass;
    }
    PeriodFigures {
        date_from: day_string(from),
        date_to: day_string(to),
        volume,
        dmarc_pass_pct: pct(dmarc, volume),
        spf_pass_pct: pct(spf, volume),
        dkim_pass_pct: pct(dkim, volume),
    }
}

/// Splits the window's messages into the five totals (see [`Totals`]).
pub fn totals(rows: &[(String, SourceDay)]) -> Totals {
    let passing_sources: HashSet<&str> = rows
        .iter()
        .filter(|(_, r)| r.dmarc_pass > 0)
        .map(|(_, r)| r.source_ip.as_str())
        .collect();
    let mut t = Totals::default();
    for (_, r) in rows {
        let forwarded = r.forwarded.min(r.volume);
        let undetermined = r.undetermined.min(r.volume - forwarded);
        // Forwarded mail is counted as forwarded whatever its result; the rest splits.
        let passing = r.dmarc_pass.min(r.volume - forwarded - undetermined);
        let failing = r.volume - forwarded - undetermined - passing;
        t.forwarded += forwarded;
        t.undetermined += undetermined;
        t.compliant += passing;
        if passing_sources.contains(r.source_ip.as_str()) {
            t.non_compliant += failing;
        } else {
            t.unknown += failing;
        }
    }
    t
}

/// Whether to move the policy up: with enough data in the window and no legitimate mail that
/// the next policy would stop over the last 30 days (the enforcement impact), what still fails
/// comes from unidentified sources, which is exactly the mail enforcement is meant to stop.
pub fn recommend(
    domain: &Domain,
    window: &PeriodFigures,
    legitimate_affected: u64,
) -> Recommendation {
    let next = match domain.dmarc_policy {
        Policy::Reject => {
            return Recommendation {
                status: "at_maximum".into(),
                next_policy: None,
                reason: "the domain already publishes p=reject".into(),
            };
        }
        Policy::Quarantine => "reject",
        Policy::None => "quarantine",
    };
    let hold = |reason: String| Recommendation {
        status: "hold".into(),
        next_policy: None,
        reason,
    };
    if window.volume < ADVANCE_MIN_VOLUME {
        return hold(format!(
            "too little report data in the window ({} messages; at least {ADVANCE_MIN_VOLUME} are needed)",
            window.volume
        ));
    }
    if legitimate_affected > 0 {
        return hold(format!(
            "p={next} would stop {legitimate_affected} messages of legitimate senders over the last 30 days; fix those senders first (see the enforcement impact)"
        ));
    }
    Recommendation {
        status: "advance_recommended".into(),
        next_policy: Some(next.into()),
        reason: format!(
            "every known sender passes DMARC ({}% of {} messages); what fails comes from unidentified sources",
            window.dmarc_pass_pct, window.volume
        ),
    }
}

fn next_action(
    window: &PeriodFigures,
    recommendation: &Recommendation,
    legitimate_affected: u64,
) -> NextAction {
    let (code, message) = if window.volume == 0 {
        (
            "wait_for_reports",
            "No aggregate reports cover the window yet; check the DMARC record names the report address".to_owned(),
        )
    } else if legitimate_affected > 0 {
        (
            "fix_failing_senders",
            format!(
                "Fix SPF or DKIM for the legitimate senders behind {legitimate_affected} failing messages"
            ),
        )
    } else if recommendation.status == "advance_recommended" {
        (
            "advance_policy",
            format!(
                "Publish p={} for the domain",
                recommendation
                    .next_policy
                    .as_deref()
                    .unwrap_or("quarantine")
            ),
        )
    } else {
        ("keep_monitoring", recommendation.reason.clone())
    };
    NextAction {
        code: code.into(),
        message,
    }
}

/// The DMARC summary of a domain over `period`.
pub async fn summary(
    app: &AppState,
    caller: &Caller,
    id: uuid::Uuid,
    params: &SummaryParams,
) -> Result<ReportSummary, ServiceError> {
    let days = period_days(params.period.as_deref())?;
    let domain = crate::access::load(app, caller, id).await?.value;
    let (from, to) = org_window(app, caller.org_id, days).await?;
    let span = (to - from).whole_days() + 1;
    let (prev_to, prev_from) = (from - Duration::days(1), from - Duration::days(span));
    let store = app.store.as_ref();
    let rows = rows_between(store, caller.org_id, id, from, to).await?;
    let previous_rows = rows_between(store, caller.org_id, id, prev_from, prev_to).await?;
    let current = figures(from, to, &rows);
    let previous = figures(prev_from, prev_to, &previous_rows);
    let totals = totals(&rows);
    // What the next policy up would stop (at reject: what reject stops now).
    let next_policy = match domain.dmarc_policy {
        Policy::None => "quarantine",
        Policy::Quarantine | Policy::Reject => "reject",
    };
    let impact = super::impact::for_domain(app, caller.org_id, &domain, next_policy).await?;
    let recommendation = recommend(&domain, &current, impact.legitimate_affected);
    let action = next_action(&current, &recommendation, impact.legitimate_affected);
    let mut probes: Vec<mailward_tasks::Task> =
        mailward_store::tasks::list_for_domain(store, caller.org_id, id)
            .await?
            .into_iter()
            .map(|t| t.value)
            .filter(|t| t.status.is_open_work() && t.task_type.is_sender_task())
            .collect();
    mailward_tasks::sort::sort(&mut probes, "priority", false);
    let f = domain.report_figures.clone().unwrap_or_default();
    Ok(ReportSummary {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ip: &str, volume: u64, pass: u64, forwarded: u64) -> (String, SourceDay) {
        (
            "2026-01-01".into(),
            SourceDay {
                source_ip: ip.into(),
                volume,
                dmarc_pass: pass,
                forwarded,
                ..SourceDay::default()
            },
        )
    }

    #[test]
    fn totals_sum_to_volume_and_tell_known_from_unknown_sources() {
        let rows = vec![
            row("192.0.2.1", 100, 90, 0),
            row("192.0.2.1", 10, 0, 0),
            row("198.51.100.2", 5, 0, 0),
            row("203.0.113.3", 8, 2, 6),
        ];
        let t = totals(&rows);
        assert_eq!(t.compliant, 92);
        assert_eq!(
            t.non_compliant, 20,
            "192.0.2.1 also passes: its failures are known"
        );
        assert_eq!(t.unknown, 5);
        assert_eq!(t.forwarded, 6);
        let sum = t.compliant + t.non_compliant + t.forwarded + t.unknown + t.undetermined;
        assert_eq!(sum, 123);
    }
}
