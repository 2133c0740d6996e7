//! A domain's failure reports (RFC 9991; an extension beyond SPEC): listed newest first,
//! read one at a time, and their original headers analysed by the engine of
//! `POST /tools/header-analyze`. Every member who sees the domain reads them.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::failure_reports::{
    FailureReportList, FailureReportView, ListFailureReportsParams,
};
use mailward_api_types::tools::{HeaderAnalysis, HeaderAnalyzeRequest};
use mailward_domain::failure_reports::StoredFailureReport;
use mailward_store::failure_reports as stored;
use uuid::Uuid;

/// Which sender each source address belongs to (the domain's identified senders).
async fn senders_by_ip(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
) -> Result<std::collections::HashMap<String, Uuid>, ServiceError> {
    let senders = mailward_store::senders::list(app.store.as_ref(), caller.org_id, domain).await?;
    Ok(senders
        .into_iter()
        .flat_map(|s| {
            let id = s.value.id;
            s.value.ips.into_iter().map(move |ip| (ip, id))
        })
        .collect())
}

fn view(
    r: &StoredFailureReport,
    with_headers: bool,
    senders: &std::collections::HashMap<String, Uuid>,
) -> FailureReportView {
    let mut report = r.report.clone();
    if !with_headers {
        report.original_headers = None;
    }
    FailureReportView {
        id: r.id,
        received_at: r.received_at,
        authenticated: r.authenticated,
        redacted: r.redacted,
        report,
        header_analysis_path: format!(
            "/domains/{}/failure-reports/{}/header-analysis",
            r.domain_id, r.id
        ),
        sender_id: r
            .report
            .source_ip
            .as_ref()
            .and_then(|ip| senders.get(ip).copied()),
    }
}

async fn reports_of(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
) -> Result<Vec<StoredFailureReport>, ServiceError> {
    crate::access::load(app, caller, domain).await?;
    Ok(stored::list(app.store.as_ref(), caller.org_id, domain).await?)
}

/// `GET /domains/{id}/failure-reports`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    params: ListFailureReportsParams,
) -> Result<FailureReportList, ServiceError> {
    let auth = params.auth_failure.map(|a| a.trim().to_ascii_lowercase());
    let ip = params.source_ip.map(|a| a.trim().to_owned());
    let mut all: Vec<StoredFailureReport> = reports_of(app, caller, domain)
        .await?
        .into_iter()
        .filter(|r| auth.is_none() || r.report.auth_failure.as_deref() == auth.as_deref())
        .filter(|r| ip.is_none() || r.report.source_ip.as_deref() == ip.as_deref())
        .collect();
    all.sort_by(|a, b| b.received_at.cmp(&a.received_at).then(b.id.cmp(&a.id)));
    let page = PageParams {
        page: params.page,
        per_page: params.per_page,
    };
    let (items, page_info) = paginate(page, all)?;
    let senders = senders_by_ip(app, caller, domain).await?;
    Ok(FailureReportList {
        data: items.iter().map(|r| view(r, false, &senders)).collect(),
        page_info,
    })
}

async fn one(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    id: Uuid,
) -> Result<StoredFailureReport, ServiceError> {
    reports_of(app, caller, domain)
        .await?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| ServiceError::not_found("failure report"))
}

/// `GET /domains/{id}/failure-reports/{report_id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    id: Uuid,
) -> Result<FailureReportView, ServiceError> {
    let report = one(app, caller, domain, id).await?;
    let senders = senders_by_ip(app, caller, domain).await?;
    Ok(view(&report, true, &senders))
}

/// `GET /domains/{id}/failure-reports/{report_id}/header-analysis`: the original headers
/// analysed, DNS re-checked live. 422 when the report carried no headers.
pub async fn header_analysis(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
    id: Uuid,
) -> Result<HeaderAnalysis, ServiceError> {
    let report = one(app, caller, domain, id).await?;
    let Some(headers) = report.report.original_headers.filter(|h| h.len() >= 10) else {
        return Err(ServiceError::new(
            mailward_app::error::ErrorKind::Unprocessable,
            "no_original_headers",
            "this failure report carried no original headers to analyse",
        ));
    };
    let input = HeaderAnalyzeRequest {
        headers,
        include_dns_validation: Some(true),
    };
    crate::header_analysis::analyze(app, caller, input).await
}
