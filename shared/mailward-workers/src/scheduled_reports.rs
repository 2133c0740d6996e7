//! The scheduled report's sending: the hourly schedule queues the reports due
//! ([`queue_due`]); each job reads the content (`mailward_reporting::content`), typesets the
//! PDF (`mailward_pdf`), mails it to every recipient once per window (claimed per recipient),
//! and only then moves the schedule on and keeps the scores it reported. A crash in between
//! sends the rest on the retry and nobody twice.

use mailward_app::jobs::SendScheduledReport;
use mailward_domain::mailer::{Attachment, OutboundEmail};
use mailward_domain::notifications::Switch;
use mailward_domain::scheduled_reports::{ReportScope, ReportSettings};
use mailward_services::state::AppState;
use mailward_store::scheduled_reports as stored;
use mailward_store::{groups, notifications, orgs};

/// Largest logo read, in bytes.
const MAX_LOGO_BYTES: usize = 1024 * 1024;

/// Queues every report whose send time has come (the hourly schedule); how many.
pub async fn queue_due(state: &AppState) -> anyhow::Result<usize> {
    let due = stored::due(state.store.as_ref(), state.clock.unix()).await?;
    for (org_id, settings_id) in &due {
        let job = SendScheduledReport {
            org_id: *org_id,
            settings_id: *settings_id,
            now: false,
        };
        mailward_services::job::enqueue(state, &job, 0).await?;
    }
    Ok(due.len())
}

/// Reads a logo for the cover: https through the outbound policy, at most 1 MiB. Best effort:
/// a report goes out without a logo rather than not at all.
async fn logo(state: &AppState, url: &str) -> Option<Vec<u8>> {
    mailward_services::outbound::client::check_url(url, state.config.outbound.allow_loopback)
        .ok()?;
    let client = state.outbound_client().ok()?;
    let mut response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        tracing::info!(logo.url = %url, status = response.status().as_u16(), "logo not read");
        return None;
    }
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_LOGO_BYTES {
            return None;
        }
    }
    Some(bytes)
}

/// The PDF of a report.
#[cfg(feature = "pdf")]
fn render(
    content: &mailward_api_types::scheduled_reports::ScheduledReportContent,
    logo: Option<&[u8]>,
) -> anyhow::Result<Vec<u8>> {
    Ok(mailward_pdf::render_scheduled(content, logo)?)
}

/// Without the PDF engine (the workers other than the queue's): never reached, since only the
/// queue worker runs jobs.
#[cfg(not(feature = "pdf"))]
fn render(
    _: &mailward_api_types::scheduled_reports::ScheduledReportContent,
    _: Option<&[u8]>,
) -> anyhow::Result<Vec<u8>> {
    anyhow::bail!(
        "this build has no PDF engine (mailward-workers' `pdf` feature): the queue worker sends scheduled reports"
    )
}

/// The mail of one recipient.
fn mail(
    to: &str,
    content: &mailward_api_types::scheduled_reports::ScheduledReportContent,
    pdf: &[u8],
    dashboard: &str,
    unsubscribe_url: &str,
) -> OutboundEmail {
    let mut text = format!(
        "{}\n{} to {}: {} domain(s), {} messages, {}% passed DMARC.\n\n",
        content.title,
        content.date_from,
        content.date_to,
        content.domains.len(),
        content.volume,
        content.dmarc_pass_pct
    );
    for d in &content.domains {
        text.push_str(&format!(
            "- {}: score {} ({}), {} messages, {}% passed DMARC. Next: {}\n",
            d.domain, d.score, d.band, d.volume, d.dmarc_pass_pct, d.next_action
        ));
    }
    text.push_str(&format!(
        "\nThe report is attached as a PDF. The domains in Mailward: {dashboard}\n\n--\nSent to {to} as a recipient of {}'s scheduled report.\nStop receiving it: {unsubscribe_url}\n",
        content.brand
    ));
    let file = format!(
        "{}-{}.pdf",
        content.title.to_lowercase().replace(' ', "-"),
        content.date_to
    );
    OutboundEmail {
        to: to.to_owned(),
        subject: format!(
            "{}: {} ({} to {})",
            content.brand,
            content.title.to_lowercase(),
            content.date_from,
            content.date_to
        ),
        text,
        html: None,
        unsubscribe_url: Some(unsubscribe_url.to_owned()),
        attachments: vec![Attachment {
            file_name: file,
            content_type: "application/pdf".to_owned(),
            data: pdf.to_vec(),
        }],
    }
}

/// Builds and mails one report.
pub async fn send(state: &AppState, job: SendScheduledReport) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(settings) = stored::get(store, job.org_id, job.settings_id).await? else {
        return Ok(());
    };
    let now = state.clock.now();
    let s = &settings.value;
    if !job.now && (!s.enabled || s.next_send_at > now) {
        return Ok(());
    }
    let Some(org) = orgs::get(store, job.org_id).await? else {
        return Ok(());
    };
    let org = org.value;
    let brand = match s.scope {
        ReportScope::Organization => org.name.clone(),
        ReportScope::Group { group_id } => match groups::get(store, job.org_id, group_id).await? {
            Some(g) => g.value.name,
            // The group is gone: its report with it.
            None => return Ok(()),
        },
    };
    let switched_on = org.is_serviced() && org.email_notifications.scheduled_reports;
    // The web application's domain list, filtered to the group a group's report covers.
    let dashboard = match s.scope {
        ReportScope::Organization => format!(
            "{}/app/domains",
            state.config.base_url.trim_end_matches('/')
        ),
        ReportScope::Group { group_id } => format!(
            "{}/app/domains?group_id={group_id}",
            state.config.base_url.trim_end_matches('/')
        ),
    };
    let (content, scores) = mailward_reporting::content(state, s, &brand).await?;
    let period = format!("{}..{}", content.date_from, content.date_to);
    if switched_on {
        let logo_url = s.branding.logo_url.clone().or(org.logo_url.clone());
        let logo = match &logo_url {
            Some(url) => logo(state, url).await,
            None => None,
        };
        let pdf = render(&content, logo.as_deref())?;
        let occurrence = if job.now {
            format!("report:{}:now:{}", s.id, now.unix_timestamp())
        } else {
            format!("report:{}:{period}", s.id)
        };
        for to in &s.recipients {
            let unsubscribe = mailward_services::unsubscribe::recipient_url(
                state,
                job.org_id,
                Switch::ScheduledReports,
                s.id,
                to,
            );
            if !notifications::claim(store, job.org_id, &occurrence, to, state.clock.unix()).await?
            {
                continue;
            }
            if let Err(e) = state
                .mailer
                .send(mail(to, &content, &pdf, &dashboard, &unsubscribe))
                .await
            {
                notifications::release(store, job.org_id, &occurrence, to).await?;
                return Err(anyhow::anyhow!("{e}"));
            }
        }
        tracing::info!(org.id = %job.org_id, report.id = %s.id, %period, recipients = s.recipients.len(), "scheduled report sent");
    } else {
        tracing::info!(org.id = %job.org_id, "scheduled_reports switched off; not sent");
    }
    if !job.now {
        advance(state, &settings.value, (period, scores), switched_on).await?;
    }
    Ok(())
}

/// Moves the schedule on and keeps what was reported (re-read on conflict).
async fn advance(
    state: &AppState,
    sent: &ReportSettings,
    (period, scores): (String, std::collections::BTreeMap<uuid::Uuid, u8>),
    mailed: bool,
) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let now = state.clock.now();
    for _ in 0..8 {
        let Some(current) = stored::get(store, sent.org_id, sent.id).await? else {
            return Ok(());
        };
        let mut next = current.value.clone();
        next.next_send_at = next.cadence.next_send(now);
        if mailed {
            next.last_period = Some(period.clone());
            next.last_sent_at = Some(now);
            next.last_scores = scores.clone();
        }
        let mut ops = vec![stored::put_op(&next, Some(current.version))?];
        if mailed {
            ops.extend(mailward_services::activity::system_ops(
                sent.org_id,
                mailward_services::activity::Change::new(
                    "report.sent",
                    "report_settings",
                    Some(sent.id),
                    format!("sent the {} report for {period}", next.cadence.as_str()),
                ),
                now,
            )?);
        }
        match store.transact(ops).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    anyhow::bail!("the report settings kept changing while the schedule moved on")
}
