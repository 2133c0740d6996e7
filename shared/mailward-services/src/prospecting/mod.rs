//! Prospecting reports (SPEC §2.12, §4.6): audits of up to ten domains from live DNS, written
//! for a prospect in English or French, previewed as data or HTML, stored with a public PDF
//! link that works for 90 days.
//!
//! Who sees which reports: callers not limited to groups see the organization's reports; a
//! member limited to groups sees the reports they created and those whose domains are all
//! monitored domains of their groups. Creating and deleting need write access; a member limited
//! to groups deletes only their own.
//!
//! The PDF is not made here: [`download`] hands back either the stored PDF or the content to
//! typeset, and the download function (the only one that links the PDF engine) stores what it
//! typeset with [`store_pdf`].

pub use mailward_prospecting::{content, html, texts};

use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::pagination::paginate;
use crate::state::AppState;
use crate::tools::parse_host;
use content::Outcome;
use mailward_api_types::PageParams;
use mailward_api_types::prospecting::{
    CreateProspectingReport, PreviewFormat, PreviewProspectingReport, ProspectingReport,
    ProspectingReportContent, ProspectingReportList,
};
use mailward_domain::objects::ObjectStore;
use mailward_store::prospecting as stored;
use std::collections::HashSet;
use std::sync::Arc;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// How long the public link works (SPEC §8.2).
pub const LINK_VALIDITY: Duration = Duration::days(90);
/// Most domains in one report (SPEC §8.2).
pub const MAX_DOMAINS: usize = 10;
const MAX_GENERATED_FOR_CHARS: usize = 200;

/// A preview in the format asked for.
pub enum Preview {
    /// The content as data.
    Json(Box<ProspectingReportContent>),
    /// The self-contained HTML document.
    Html(String),
}

/// What the public download serves.
pub enum Download {
    /// The PDF typeset earlier, and the file name to offer.
    Pdf(Vec<u8>, String),
    /// Not typeset yet: the content to typeset (then [`store_pdf`]).
    Render(Box<ProspectingReportContent>),
}

fn validate(request: &mut CreateProspectingReport) -> Result<(), ServiceError> {
    let name = request.generated_for.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_GENERATED_FOR_CHARS {
        return Err(ServiceError::invalid(
            "generated_for",
            "generated_for must be 1 to 200 characters",
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "generated_for",
            "generated_for must not contain control characters",
        ));
    }
    request.generated_for = name.to_owned();
    if request.domains.is_empty() || request.domains.len() > MAX_DOMAINS {
        return Err(ServiceError::invalid(
            "domains",
            "domains must list 1 to 10 domain names",
        ));
    }
    if let Some(i) = request.domains.iter().position(|d| d.chars().count() > 253) {
        return Err(ServiceError::invalid(
            format!("domains[{i}]"),
            "a domain name is at most 253 characters",
        ));
    }
    if !(1..=52).contains(&request.deadline_weeks) {
        return Err(ServiceError::invalid(
            "deadline_weeks",
            "deadline_weeks must be between 1 and 52",
        ));
    }
    Ok(())
}

/// Audits every name (concurrently, through the ten-minute audit cache) and writes the content.
async fn build(
    app: &AppState,
    caller: &Caller,
    request: &CreateProspectingReport,
) -> Result<ProspectingReportContent, ServiceError> {
    let mut seen = HashSet::new();
    let mut names: Vec<(String, Option<String>, Option<&'static str>)> = Vec::new();
    for raw in &request.domains {
        match parse_host("domains", raw) {
            Ok(name) if !seen.insert(name.clone()) => {
                names.push((raw.clone(), None, Some("duplicate")))
            }
            Ok(name) => names.push((raw.clone(), Some(name), None)),
            Err(_) => names.push((raw.clone(), None, Some("invalid_domain"))),
        }
    }
    let audits = futures::future::join_all(names.iter().map(|(_, name, _)| async move {
        match name {
            Some(name) => Some(crate::audit::cached_or_fresh(app, name).await),
            None => None,
        }
    }))
    .await;
    let mut outcomes = Vec::with_capacity(names.len());
    for ((raw, name, reason), audit) in names.into_iter().zip(audits) {
        let outcome = match (audit, reason) {
            (Some(audit), _) => {
                let audit = audit?;
                match content::unusable(&audit) {
                    Some(reason) => Outcome::Skipped(reason),
                    None => Outcome::Audited(Box::new(audit)),
                }
            }
            (None, Some(reason)) => Outcome::Skipped(reason),
            (None, None) => Outcome::Skipped("invalid_domain"),
        };
        outcomes.push((name.unwrap_or(raw), outcome));
    }
    let prepared_by = if request.include_organization_info {
        mailward_store::orgs::get(app.store.as_ref(), caller.org_id)
            .await?
            .map(|org| org.value.name)
    } else {
        None
    };
    Ok(content::build(
        request,
        outcomes,
        prepared_by,
        app.clock.now(),
    ))
}

/// Audits and writes a report without storing anything.
pub async fn preview(
    app: &AppState,
    caller: &Caller,
    body: PreviewProspectingReport,
) -> Result<Preview, ServiceError> {
    let (mut request, format) = body.into_parts();
    validate(&mut request)?;
    let report = build(app, caller, &request).await?;
    Ok(match format {
        PreviewFormat::Json => Preview::Json(Box::new(report)),
        PreviewFormat::Html => Preview::Html(html::render(&report)),
    })
}

fn download_url(app: &AppState, id: Uuid) -> String {
    format!(
        "{}/prospecting-reports/{id}/download",
        app.config.base_url.trim_end_matches('/')
    )
}

/// Audits, writes and stores a report; the answer carries the public link.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    mut request: CreateProspectingReport,
) -> Result<ProspectingReport, ServiceError> {
    caller.require_write()?;
    validate(&mut request)?;
    let report = build(app, caller, &request).await?;
    let id = Uuid::new_v4();
    let now = app.clock.now();
    let record = ProspectingReport {
        id,
        generated_for: request.generated_for,
        domains: request.domains,
        language: request.language,
        theme: request.theme,
        currency: request.currency,
        deadline_weeks: request.deadline_weeks,
        include_organization_info: request.include_organization_info,
        include_bimi: request.include_bimi,
        include_dns_records: request.include_dns_records,
        include_potential_loss: request.include_potential_loss,
        url: download_url(app, id),
        created_by: caller.account_id(),
        created_at: now,
        expires_at: now + LINK_VALIDITY,
        report: Some(report),
    };
    stored::create(app.store.as_ref(), caller.org_id, id, &record).await?;
    Ok(record)
}

/// Whether a member limited to groups sees `report`: they created it, or every audited domain
/// is a monitored domain of their groups.
fn visible(
    caller: &Caller,
    report: &ProspectingReport,
    domains: &[mailward_domain::domain::Domain],
) -> bool {
    if !caller.is_group_limited() {
        return true;
    }
    if report.created_by.is_some() && report.created_by == caller.account_id() {
        return true;
    }
    let audited: Vec<&str> = report
        .report
        .as_ref()
        .map(|c| c.domains.iter().map(|d| d.domain.as_str()).collect())
        .unwrap_or_default();
    !audited.is_empty()
        && audited.iter().all(|name| {
            domains
                .iter()
                .any(|d| d.url == *name && caller.sees_group(d.group_id))
        })
}

async fn monitored(
    app: &AppState,
    caller: &Caller,
) -> Result<Vec<mailward_domain::domain::Domain>, ServiceError> {
    if caller.is_group_limited() {
        Ok(mailward_store::domains::list(app.store.as_ref(), caller.org_id).await?)
    } else {
        Ok(Vec::new())
    }
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<ProspectingReport, ServiceError> {
    let report: ProspectingReport = stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("prospecting report"))?;
    let domains = monitored(app, caller).await?;
    if !visible(caller, &report, &domains) {
        return Err(ServiceError::not_found("prospecting report"));
    }
    Ok(report)
}

/// The reports the caller sees, newest first, without their content.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    page: PageParams,
) -> Result<ProspectingReportList, ServiceError> {
    crate::pagination::resolve(page)?;
    let domains = monitored(app, caller).await?;
    let mut reports: Vec<ProspectingReport> =
        stored::list(app.store.as_ref(), caller.org_id).await?;
    reports.retain(|r| visible(caller, r, &domains));
    reports.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    for r in &mut reports {
        r.report = None;
    }
    let (data, page_info) = paginate(page, reports)?;
    Ok(ProspectingReportList { data, page_info })
}

/// One report with its content.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<ProspectingReport, ServiceError> {
    load(app, caller, id).await
}

fn pdf_key(id: Uuid) -> String {
    format!("prospecting-reports/{id}.pdf")
}

fn objects(app: &AppState) -> Result<&Arc<dyn ObjectStore>, ServiceError> {
    app.objects
        .as_ref()
        .ok_or_else(|| ServiceError::unavailable("no object store is configured"))
}

/// Deletes a report, its link and its PDF.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_write()?;
    let report = load(app, caller, id).await?;
    if caller.is_group_limited()
        && (report.created_by.is_none() || report.created_by != caller.account_id())
    {
        return Err(ServiceError::forbidden(
            "members limited to groups delete only the reports they created",
        ));
    }
    if !stored::remove(app.store.as_ref(), caller.org_id, id).await? {
        return Err(ServiceError::not_found("prospecting report"));
    }
    if let Some(objects) = app.objects.as_ref() {
        objects
            .delete(&pdf_key(id))
            .await
            .map_err(ServiceError::unavailable)?;
    }
    Ok(())
}

/// The public page of a report (the web application's, beside the PDF download): its content
/// and when the link expires. Unknown ids are 404; an expired link is 410
/// `prospecting_report_expired` (the download removes the PDF).
pub async fn public_content(
    app: &AppState,
    id: Uuid,
) -> Result<(ProspectingReportContent, OffsetDateTime), ServiceError> {
    let report = by_link(app, id).await?;
    if app.clock.now() >= report.expires_at {
        return Err(expired());
    }
    let content = report
        .report
        .ok_or_else(|| ServiceError::not_found("prospecting report"))?;
    Ok((content, report.expires_at))
}

/// A report by its public link's id, whichever organization made it.
async fn by_link(app: &AppState, id: Uuid) -> Result<ProspectingReport, ServiceError> {
    let missing = || ServiceError::not_found("prospecting report");
    let link = stored::link(app.store.as_ref(), id)
        .await?
        .ok_or_else(missing)?;
    stored::get(app.store.as_ref(), link.org_id, id)
        .await?
        .ok_or_else(missing)
}

fn expired() -> ServiceError {
    ServiceError::new(
        ErrorKind::Gone,
        "prospecting_report_expired",
        "this report link expired 90 days after the report was created",
    )
}

/// The public download: the stored PDF, or the content to typeset. Unknown ids are 404;
/// after 90 days the link answers 410 `prospecting_report_expired` and the PDF is removed.
pub async fn download(app: &AppState, id: Uuid) -> Result<Download, ServiceError> {
    let missing = || ServiceError::not_found("prospecting report");
    let report = by_link(app, id).await?;
    let objects = objects(app)?;
    if app.clock.now() >= report.expires_at {
        objects
            .delete(&pdf_key(id))
            .await
            .map_err(ServiceError::unavailable)?;
        return Err(expired());
    }
    if let Some(pdf) = objects
        .get(&pdf_key(id))
        .await
        .map_err(ServiceError::unavailable)?
    {
        let name = report
            .report
            .as_ref()
            .map(|c| file_name(c, id))
            .unwrap_or_else(|| format!("mailward-report-{id}.pdf"));
        return Ok(Download::Pdf(pdf, name));
    }
    report
        .report
        .map(|c| Download::Render(Box::new(c)))
        .ok_or_else(missing)
}

/// Keeps the PDF typeset for a report, so later downloads serve it as is.
pub async fn store_pdf(app: &AppState, id: Uuid, pdf: Vec<u8>) -> Result<(), ServiceError> {
    objects(app)?
        .put(&pdf_key(id), pdf.into(), "application/pdf")
        .await
        .map_err(ServiceError::unavailable)
}

/// A file name for the PDF: the first audited domain, else the report id.
pub fn file_name(report: &ProspectingReportContent, id: Uuid) -> String {
    let stem = report
        .domains
        .first()
        .map(|d| d.domain.replace('.', "-"))
        .unwrap_or_else(|| id.to_string());
    format!("mailward-report-{stem}.pdf")
}
