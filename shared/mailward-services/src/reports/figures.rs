//! A domain's report figures: the 14-day window ending yesterday (`report_figures`) and the day
//! its first report covers (`monitoring_since`), kept by ingestion (one report's rows added) and
//! slid by the sweep, retried against concurrent writers of the domain.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::reports::SourceDay;
use mailward_store::reports as stored;
use std::collections::BTreeMap;

/// Recomputes a domain's 14-day report figures (the window ending yesterday) and its first
/// report day, retried against concurrent writers of the domain (the sweep).
pub async fn refresh_figures(
    app: &AppState,
    org: uuid::Uuid,
    domain_id: uuid::Uuid,
    report_day: Option<time::Date>,
) -> Result<(), ServiceError> {
    update_figures(app, org, domain_id, report_day, None).await
}

/// The window `[from, to]` of the domain figures: fourteen days ending yesterday.
pub fn figures_window(app: &AppState) -> (time::Date, time::Date) {
    let today = app.clock.now().date();
    let yesterday = today.previous_day().unwrap_or(today);
    (yesterday - time::Duration::days(13), yesterday)
}

/// What one report's rows add to the figures of the window (its failures classed by its own
/// passing sources; exact only when it is the window's first report).
pub fn contribution(
    rows: &BTreeMap<time::Date, Vec<SourceDay>>,
    (from, to): (time::Date, time::Date),
) -> mailward_domain::domain::ReportFigures {
    mailward_domain::domain::ReportFigures::of_rows(
        stored::day_string(to),
        rows.range(from..=to).flat_map(|(_, day)| day),
    )
}

/// Saves the domain's figures: the stored ones plus `added` when they are of today's window
/// (one report's import: no re-read of the window, whose rows can run to millions), else
/// recomputed from the window's rows.
pub async fn update_figures(
    app: &AppState,
    org: uuid::Uuid,
    domain_id: uuid::Uuid,
    report_day: Option<time::Date>,
    added: Option<&mailward_domain::domain::ReportFigures>,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let (from, yesterday) = figures_window(app);
    let as_of = stored::day_string(yesterday);
    let mut recomputed: Option<mailward_domain::domain::ReportFigures> = None;
    for _ in 0..5 {
        let Some(current) = mailward_store::domains::get(store, org, domain_id).await? else {
            return Ok(());
        };
        let figures = match (added, &current.value.report_figures) {
            (Some(added), Some(stored)) if stored.as_of == as_of => stored.plus(added),
            // The domain's first report (no report day, no figures yet): nothing was counted
            // before it, so its own rows are the figures; reading them back would only cost.
            // A concurrent first report then finds these figures and adds its own.
            (Some(added), None) if current.value.monitoring_since.is_none() => {
                mailward_domain::domain::ReportFigures {
                    as_of: as_of.clone(),
                    exact: true,
                    ..added.clone()
                }
            }
            _ => match &recomputed {
                Some(f) => f.clone(),
                None => {
                    let f = window_figures(app, org, domain_id, (from, yesterday)).await?;
                    recomputed = Some(f.clone());
                    f
                }
            },
        };
        let mut next = current.value.clone();
        next.report_figures = Some(figures);
        if let Some(day) = report_day.map(stored::day_string)
            && next
                .monitoring_since
                .as_ref()
                .is_none_or(|since| day < *since)
        {
            next.monitoring_since = Some(day);
        }
        if next == current.value {
            return Ok(());
        }
        match store
            .transact(mailward_store::domains::save_ops(
                &next,
                &current.value,
                current.version,
            )?)
            .await
        {
            Ok(()) => {
                if current.value.monitoring_since.is_none() && next.monitoring_since.is_some() {
                    first_report_arrived(app, org, domain_id).await;
                }
                return Ok(());
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the domain kept changing while its report figures were saved",
    ))
}

/// The figures of the window `from..=to`, summed from its rows.
async fn window_figures(
    app: &AppState,
    org: uuid::Uuid,
    domain_id: uuid::Uuid,
    (from, to): (time::Date, time::Date),
) -> Result<mailward_domain::domain::ReportFigures, ServiceError> {
    let rows = stored::rows_between(app.store.as_ref(), org, domain_id, from, to).await?;
    Ok(mailward_domain::domain::ReportFigures::of_rows(
        stored::day_string(to),
        rows.iter().map(|(_, r)| r),
    ))
}

/// Queues the `first_report` mail of a domain (once per domain: the occurrence is the domain).
/// The report is stored already; a queue failure costs the mail, not the data, so it is logged.
async fn first_report_arrived(app: &AppState, org: uuid::Uuid, domain_id: uuid::Uuid) {
    let notification = mailward_app::jobs::Notification {
        org_id: org,
        domain_id,
        kind: mailward_app::jobs::Kind::FirstReport,
        occurrence: format!("first_report:{domain_id}"),
    };
    if let Err(e) = mailward_app::jobs::enqueue_notification(app, notification).await {
        tracing::error!(org.id = %org, domain.id = %domain_id, error = %e, "the first-report notification could not be queued");
    }
}
