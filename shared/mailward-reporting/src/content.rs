//! What a scheduled report says, read through the API's own operations for its window.

use mailward_api_types::ApiVersion;
use mailward_api_types::report_data::ReportDataParams;
use mailward_api_types::reports::SummaryParams;
use mailward_api_types::scheduled_reports::{
    DayPoint, PriorityCount, ReportedDomain, ScheduledReportContent,
};
use mailward_app::{Caller, Credential, ServiceError, state::AppState};
use mailward_domain::domain::{Domain, ScoreBand};
use mailward_domain::model::ApiKeyAccess;
use mailward_domain::scheduled_reports::{Cadence, ReportSettings};
use std::collections::BTreeMap;
use uuid::Uuid;

/// New senders named per domain.
const SENDERS_NAMED: usize = 5;

/// The service reading for the report: every domain of the organization, or those of the
/// report's group (as a member limited to that group reads them).
fn reader(settings: &ReportSettings) -> Caller {
    Caller {
        org_id: settings.org_id,
        credential: Credential::ApiKey {
            key_id: Uuid::nil(),
            access: ApiKeyAccess::ReadOnly,
        },
        version: ApiVersion::LATEST,
        groups: super::group_of(settings.scope).map(|g| vec![g]),
    }
}

fn stage(plan: &mailward_api_types::tasks::DomainPlan) -> String {
    match plan.current_stage {
        Some(n) => {
            let title = plan
                .stages
                .iter()
                .find(|s| s.number == n)
                .map_or("", |s| s.title.as_str());
            format!("Stage {n} of {}: {title}", plan.stages.len())
        }
        None => "Plan complete".to_owned(),
    }
}

async fn open_tasks(app: &AppState, domain: &Domain) -> Result<Vec<PriorityCount>, ServiceError> {
    const LEVELS: [&str; 4] = ["Critical", "High", "Medium", "Low"];
    let mut counts = [0u64; 4];
    for t in
        mailward_store::tasks::list_for_domain(app.store.as_ref(), domain.org_id, domain.id).await?
    {
        if t.value.status.is_open_work() {
            counts[usize::from(t.value.priority.min(3))] += 1;
        }
    }
    Ok(LEVELS
        .iter()
        .zip(counts)
        .map(|(label, count)| PriorityCount {
            label: (*label).to_owned(),
            count,
        })
        .collect())
}

async fn new_senders(
    app: &AppState,
    domain: &Domain,
    from: &str,
) -> Result<(Vec<String>, u64), ServiceError> {
    let mut fresh: Vec<(u64, String)> =
        mailward_store::senders::list(app.store.as_ref(), domain.org_id, domain.id)
            .await?
            .into_iter()
            .map(|s| s.value)
            .filter(|s| mailward_domain::reports::day_string(s.created_at.date()).as_str() >= from)
            .map(|s| {
                let name = s
                    .source_name
                    .clone()
                    .or_else(|| s.sending_domain.clone())
                    .or_else(|| s.ips.first().cloned())
                    .unwrap_or(s.key);
                (s.recent.volume, name)
            })
            .collect();
    fresh.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let total = fresh.len() as u64;
    Ok((
        fresh
            .into_iter()
            .take(SENDERS_NAMED)
            .map(|(_, n)| n)
            .collect(),
        total,
    ))
}

async fn one(
    app: &AppState,
    caller: &Caller,
    domain: &Domain,
    (period, previous): (&str, Option<u8>),
) -> Result<ReportedDomain, ServiceError> {
    let summary = mailward_services::reports::views::summary(
        app,
        caller,
        domain.id,
        &SummaryParams {
            period: Some(period.to_owned()),
        },
    )
    .await?;
    let series = mailward_services::reports::data::timeseries(
        app,
        caller,
        domain.id,
        &ReportDataParams {
            period: Some(period.to_owned()),
        },
    )
    .await?;
    let plan = mailward_services::domains::plan::plan(app, caller, domain.id).await?;
    let (new_senders, new_senders_total) = new_senders(app, domain, &summary.date_from).await?;
    Ok(ReportedDomain {
        domain: domain.url.clone(),
        score: domain.score,
        band: ScoreBand::of(domain.score).as_str().to_owned(),
        previous_score: previous,
        previous_band: previous.map(|s| ScoreBand::of(s).as_str().to_owned()),
        stage: stage(&plan),
        volume: summary.volume,
        dmarc_pass_pct: summary.dmarc_pass_pct,
        delta_volume: summary.delta.volume,
        delta_dmarc_pass_pct: summary.delta.dmarc_pass_pct,
        days: series
            .points
            .iter()
            .map(|p| DayPoint {
                date: p.date.clone(),
                volume: p.volume,
                compliant: p.compliant,
            })
            .collect(),
        new_senders,
        new_senders_total,
        open_tasks: open_tasks(app, domain).await?,
        next_action: summary.next_action.message,
    })
}

/// The report of `settings` now, named `brand` unless its branding names it, and each domain's
/// score now (kept for the next report's changes).
pub async fn content(
    app: &AppState,
    settings: &ReportSettings,
    brand: &str,
) -> Result<(ScheduledReportContent, BTreeMap<Uuid, u8>), ServiceError> {
    let caller = reader(settings);
    let period = settings.cadence.period();
    let mut domains: Vec<Domain> =
        mailward_store::domains::list(app.store.as_ref(), settings.org_id)
            .await?
            .into_iter()
            .filter(|d| caller.sees_group(d.group_id))
            .collect();
    domains.sort_by(|a, b| a.url.cmp(&b.url));
    let mut reported = Vec::with_capacity(domains.len());
    let mut scores = BTreeMap::new();
    for d in &domains {
        let previous = settings.last_scores.get(&d.id).copied();
        reported.push(one(app, &caller, d, (period, previous)).await?);
        scores.insert(d.id, d.score);
    }
    let all = mailward_services::reports::data::summary(
        app,
        &caller,
        &ReportDataParams {
            period: Some(period.to_owned()),
        },
    )
    .await?;
    let title = match settings.cadence {
        Cadence::Weekly => "Weekly email authentication report",
        Cadence::Monthly => "Monthly email authentication report",
    };
    let generated = app
        .clock
        .now()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    Ok((
        ScheduledReportContent {
            title: title.to_owned(),
            brand: settings
                .branding
                .name
                .clone()
                .unwrap_or_else(|| brand.to_owned()),
            footer: settings.branding.footer.clone(),
            period: period.to_owned(),
            date_from: all.date_from,
            date_to: all.date_to,
            generated_at: generated,
            volume: all.figures.volume,
            dmarc_pass_pct: all.figures.dmarc_pass_pct,
            domains: reported,
        },
        scores,
    ))
}
