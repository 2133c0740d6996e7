//! A domain's SMTP TLS reports (RFC 8460; SPEC §4.4): the list with its sorts, one report with
//! its failure details, a daily chart and a summary by result type. Reports spanning several
//! days are spread over the UTC days they cover, as aggregate reports are.

use super::window::pct;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::tls_reports::{
    ListTlsReportsParams, ReporterCount, ResultTypeCount, TlsChart, TlsReportItem, TlsReportList,
    TlsReportView, TlsSummary, TlsWindowParams,
};
use mailward_domain::reports::spread_over_days;
use mailward_domain::tls_reports::{RESULT_TYPES, StoredTlsReport};
use mailward_store::reports::day_string;
use mailward_store::tls_reports as stored;
use std::collections::BTreeMap;
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

fn instant(t: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(t).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn item(r: &StoredTlsReport) -> TlsReportItem {
    let mut policy_types: Vec<String> = r.policies.iter().map(|p| p.policy_type.clone()).collect();
    policy_types.sort();
    policy_types.dedup();
    TlsReportItem {
        id: r.id,
        organization_name: r.organization_name.clone(),
        report_id: r.report_id.clone(),
        contact_info: r.contact_info.clone(),
        date_start: instant(r.begin).format(&Rfc3339).unwrap_or_default(),
        date_end: instant(r.end).format(&Rfc3339).unwrap_or_default(),
        day: day_string(instant(r.begin).date()),
        total_successful: r.total_successful,
        total_failure: r.total_failure,
        policy_types,
        authenticated: r.authenticated,
    }
}

async fn reports_of(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
) -> Result<Vec<StoredTlsReport>, ServiceError> {
    crate::access::load(app, caller, domain).await?;
    Ok(stored::list(app.store.as_ref(), caller.org_id, domain).await?)
}

/// `GET /domains/{id}/tls-reports`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    params: ListTlsReportsParams,
) -> Result<TlsReportList, ServiceError> {
    let sort = params.sort.as_deref().unwrap_or("day");
    if ![
        "day",
        "total_successful",
        "total_failure",
        "organization_name",
    ]
    .contains(&sort)
    {
        return Err(ServiceError::invalid(
            "sort",
            "sort must be day, total_successful, total_failure or organization_name",
        ));
    }
    let descending = match params.order.as_deref().unwrap_or("desc") {
        "desc" => true,
        "asc" => false,
        _ => return Err(ServiceError::invalid("order", "order must be desc or asc")),
    };
    let mut items: Vec<TlsReportItem> = reports_of(app, caller, domain)
        .await?
        .iter()
        .map(item)
        .collect();
    items.sort_by(|a, b| {
        let primary = match sort {
            "total_successful" => a.total_successful.cmp(&b.total_successful),
            "total_failure" => a.total_failure.cmp(&b.total_failure),
            "organization_name" => a
                .organization_name
                .to_lowercase()
                .cmp(&b.organization_name.to_lowercase()),
            _ => a.date_start.cmp(&b.date_start),
        };
        let primary = if descending {
            primary.reverse()
        } else {
            primary
        };
        // Ties: newest first, then by id, so pages never overlap.
        primary
            .then(b.date_start.cmp(&a.date_start))
            .then(a.id.cmp(&b.id))
    });
    let (data, page_info) = crate::pagination::paginate(
        PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        items,
    )?;
    Ok(TlsReportList { data, page_info })
}

/// `GET /domains/{id}/tls-reports/{report_id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    id: Uuid,
) -> Result<TlsReportView, ServiceError> {
    crate::access::load(app, caller, domain).await?;
    let report = stored::get(app.store.as_ref(), caller.org_id, domain, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("tls_report"))?;
    Ok(TlsReportView {
        report: item(&report),
        policies: report.policies,
    })
}

/// The window `[from, to]` of a TLS view, ending yesterday, clamped to retention.
async fn window(
    app: &AppState,
    caller: &Caller,
    params: &TlsWindowParams,
) -> Result<(Date, Date), ServiceError> {
    let days = super::window::long_period_days(params.period.as_deref())?;
    super::window::org_window(app, caller.org_id, days).await
}

/// Successful and failed sessions per day in `[from, to]`.
pub(crate) fn per_day(
    reports: &[StoredTlsReport],
    from: Date,
    to: Date,
) -> BTreeMap<Date, (u64, u64)> {
    let mut days = BTreeMap::new();
    for r in reports {
        let ok = spread_over_days(r.begin, r.end, r.total_successful);
        let failed = spread_over_days(r.begin, r.end, r.total_failure);
        for (day, n) in ok {
            if (from..=to).contains(&day) {
                days.entry(day).or_insert((0, 0)).0 += n;
            }
        }
        for (day, n) in failed {
            if (from..=to).contains(&day) {
                days.entry(day).or_insert((0, 0)).1 += n;
            }
        }
    }
    days
}

/// Whether a report covers any day of `[from, to]`.
fn overlaps(r: &StoredTlsReport, from: Date, to: Date) -> bool {
    let first = instant(r.begin).date();
    let last = instant((r.end - 1).max(r.begin)).date();
    first <= to && last >= from
}

/// `GET /domains/{id}/tls-reports/chart`.
pub async fn chart(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    params: &TlsWindowParams,
) -> Result<TlsChart, ServiceError> {
    let reports = reports_of(app, caller, domain).await?;
    let (from, to) = window(app, caller, params).await?;
    let days = per_day(&reports, from, to);
    let mut chart = TlsChart {
        date_from: day_string(from),
        date_to: day_string(to),
        labels: Vec::new(),
        successful: Vec::new(),
        failed: Vec::new(),
    };
    let mut day = from;
    while day <= to {
        let (ok, failed) = days.get(&day).copied().unwrap_or_default();
        chart.labels.push(day_string(day));
        chart.successful.push(ok);
        chart.failed.push(failed);
        let Some(next) = day.next_day() else { break };
        day = next;
    }
    Ok(chart)
}

/// `GET /domains/{id}/tls-reports/summary`.
pub async fn summary(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    params: &TlsWindowParams,
) -> Result<TlsSummary, ServiceError> {
    let reports = reports_of(app, caller, domain).await?;
    let (from, to) = window(app, caller, params).await?;
    let in_window: Vec<&StoredTlsReport> =
        reports.iter().filter(|r| overlaps(r, from, to)).collect();
    let (mut ok, mut failed) = (0, 0);
    for (s, f) in per_day(&reports, from, to).values() {
        ok += s;
        failed += f;
    }
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_reporter: BTreeMap<String, ReporterCount> = BTreeMap::new();
    for r in &in_window {
        for p in &r.policies {
            for d in &p.failure_details {
                *by_type.entry(d.result_type.clone()).or_default() += d.failed_session_count;
            }
        }
        let line = by_reporter
            .entry(r.organization_name.clone())
            .or_insert_with(|| ReporterCount {
                organization_name: r.organization_name.clone(),
                reports: 0,
                total_successful: 0,
                total_failure: 0,
            });
        line.reports += 1;
        line.total_successful += r.total_successful;
        line.total_failure += r.total_failure;
    }
    let mut failures: Vec<ResultTypeCount> = RESULT_TYPES
        .iter()
        .map(|t| ResultTypeCount {
            result_type: (*t).to_owned(),
            failed_session_count: by_type.remove(*t).unwrap_or(0),
        })
        .collect();
    failures.extend(by_type.into_iter().map(|(t, n)| ResultTypeCount {
        result_type: t,
        failed_session_count: n,
    }));
    let mut reporters: Vec<ReporterCount> = by_reporter.into_values().collect();
    reporters.sort_by(|a, b| {
        (b.total_successful + b.total_failure)
            .cmp(&(a.total_successful + a.total_failure))
            .then(a.organization_name.cmp(&b.organization_name))
    });
    Ok(TlsSummary {
        date_from: day_string(from),
        date_to: day_string(to),
        reports: in_window.len() as u64,
        total_successful: ok,
        total_failure: failed,
        failure_pct: pct(failed, ok + failed),
        failures_by_result_type: failures,
        reporters,
    })
}
