//! Prospecting reports: the organization's reports (written for a prospect's domains, from live
//! DNS), created and deleted by members who write; and each report's public page
//! (`/app/reports/{id}`, no account needed, the link a prospect receives), which shows the
//! findings and offers the PDF (`/prospecting-reports/{id}/download`). The same operations as
//! `/prospecting-reports`.

use crate::layout::{self, Nav, csrf, word};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use mailward_api_types::common::PageParams;
use mailward_api_types::prospecting::{
    CreateProspectingReport, Currency, FindingStatus, Language, ProspectingReportContent,
    RiskLevel, Theme,
};
use mailward_http::AppState;
use mailward_services::ErrorKind;
use mailward_services::prospecting;
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

const BACK: &str = "/app/prospecting";

#[derive(Debug, Default, Deserialize)]
pub struct ReportQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/prospecting`: the organization's reports and the form for a new one.
pub async fn list(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<ReportQuery>,
) -> Response {
    let page = PageParams {
        page: Some(1),
        per_page: Some(100),
    };
    let reports = match prospecting::list(&app, &person.caller, page).await {
        Ok(r) => r,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Prospecting reports" }
        (crate::organization::subnav(&person, BACK))
        (layout::flash(&app, &q.n, &q.ns))
        p { "A report audits a prospect's domains from live DNS (they need not be yours) and explains the findings for a non-technical reader. Anyone with its link can read it, as a page or a PDF, for 90 days." }
        section.card aria-labelledby="reports-h" {
            h2 #reports-h { "Reports" }
            @if reports.data.is_empty() { p { "No report yet." } } @else {
                table.responsive {
                    thead { tr { th scope="col" { "For" } th scope="col" { "Domains" } th scope="col" { "Created" } th scope="col" { "Link until" } @if person.can_write() { th scope="col" { "Actions" } } } }
                    tbody { @for r in &reports.data { tr {
                        td data-label="For" { a href={ "/app/reports/" (r.id) } { (r.generated_for) } }
                        td data-label="Domains" { (r.domains.join(", ")) }
                        td data-label="Created" { (r.created_at.date()) }
                        td data-label="Link until" { (r.expires_at.date()) }
                        @if person.can_write() { td data-label="Actions" {
                            form.inline method="post" action={ (BACK) "/" (r.id) "/delete" } data-confirm={ "Delete the report for " (r.generated_for) "? Its link stops working." } {
                                (csrf(&person.csrf))
                                button.small.danger type="submit" aria-label={ "Delete the report for " (r.generated_for) } { "Delete" }
                            }
                        } }
                    } } }
                }
            }
        }
        @if person.can_write() { (create_form(&person)) }
    };
    layout::page(&person, Nav::Organization, "Prospecting reports", body)
}

fn create_form(person: &Person) -> Markup {
    html! {
        form.card method="post" action=(BACK) aria-labelledby="new-report-h" {
            h2 #new-report-h { "New report" }
            (csrf(&person.csrf))
            label for="report-for" { "Prepared for (company or person)" }
            input #report-for type="text" name="generated_for" required maxlength="200";
            label for="report-domains" { "Domains, one per line (at most 10)" }
            textarea #report-domains name="domains" rows="4" required {}
            div.row {
                div {
                    label for="report-language" { "Language" }
                    select #report-language name="language" { option value="en" { "English" } option value="fr" { "Français" } }
                }
                div {
                    label for="report-currency" { "Currency of the estimate" }
                    select #report-currency name="currency" { @for c in ["USD", "CAD", "EUR", "GBP", "AUD"] { option value=(c) { (c) } } }
                }
                div {
                    label for="report-weeks" { "Weeks to fix everything" }
                    input #report-weeks type="number" name="deadline_weeks" min="1" max="52" value="6";
                }
            }
            div.check {
                input #report-loss type="checkbox" name="include_potential_loss" value="true" checked;
                label for="report-loss" { "Include the potential-loss estimate" }
            }
            div.check {
                input #report-records type="checkbox" name="include_dns_records" value="true";
                label for="report-records" { "List each domain's published records" }
            }
            p { button type="submit" { "Write the report" } }
        }
    }
}

/// `POST /app/prospecting`: audits the domains and stores a report; on to its page.
pub async fn create(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let language = match fields.get("language") {
        Some("fr") => Language::Fr,
        _ => Language::En,
    };
    let currency: Currency = match layout::enum_field(&fields, "currency") {
        Ok(c) => c,
        Err(text) => return redirect_with(&app, BACK, "bad", &text),
    };
    let Some(Ok(deadline_weeks)) = fields.get("deadline_weeks").map(str::parse::<u8>) else {
        return redirect_with(
            &app,
            BACK,
            "bad",
            "Give a number of weeks from 1 to 52 (field: deadline_weeks).",
        );
    };
    let input = CreateProspectingReport {
        generated_for: fields.get("generated_for").unwrap_or_default().to_owned(),
        domains: fields
            .get("domains")
            .unwrap_or_default()
            .split(['\n', ','])
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .collect(),
        language,
        include_organization_info: true,
        include_bimi: true,
        include_dns_records: fields.get("include_dns_records") == Some("true"),
        include_potential_loss: fields.get("include_potential_loss") == Some("true"),
        theme: Theme::Light,
        currency,
        deadline_weeks,
    };
    match prospecting::create(&app, &person.caller, input).await {
        Ok(r) => redirect_with(
            &app,
            &format!("/app/reports/{}", r.id),
            "ok",
            "Report written. Send this page's address, or the PDF, to your prospect.",
        ),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/prospecting/{id}/delete`.
pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "prospecting report") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let outcome = prospecting::delete(&app, &person.caller, id).await;
    layout::back_with(
        &app,
        BACK,
        "Report deleted; its link no longer works.",
        outcome,
    )
}

fn risk_class(risk: Option<RiskLevel>) -> &'static str {
    match risk {
        Some(RiskLevel::Low) => "ok",
        Some(RiskLevel::Moderate) => "warn",
        Some(_) => "bad",
        None => "neutral",
    }
}

fn finding_class(status: FindingStatus) -> &'static str {
    match status {
        FindingStatus::Pass => "ok",
        FindingStatus::Warn => "warn",
        _ => "bad",
    }
}

fn report_body(id: Uuid, r: &ProspectingReportContent, expires: &str) -> Markup {
    let lang = word(&r.language);
    html! {
        div lang=(lang) {
            h1 { (r.cover.title) }
            p { (r.cover.subtitle) }
            p { strong { (r.cover.generated_for) } @if let Some(by) = &r.cover.prepared_by { " · " (by) } " · " (r.cover.date) }
            p { a.button href={ "/prospecting-reports/" (id) "/download" } { "Download the PDF" } " " span.hint { "Link valid until " (expires) "." } }
            section.card aria-labelledby="overall-h" {
                h2 #overall-h { (r.cover.average_score) " / 100 " span class={ "badge " (risk_class(r.cover.overall_risk)) } { (r.cover.overall_risk_word.as_deref().unwrap_or("—")) } }
                p { (r.cover.summary) }
                @if let Some(loss) = &r.potential_loss {
                    p { strong { (layout::count(loss.total)) " " (word(&loss.currency)) } " · " (loss.explanation) }
                }
            }
            @for (i, d) in r.domains.iter().enumerate() {
                section.card aria-labelledby={ "d" (i) "-h" } {
                    h2 id={ "d" (i) "-h" } { (d.domain) " · " (d.score) " / 100 " span class={ "badge " (risk_class(Some(d.risk))) } { (d.risk_word) } }
                    table.responsive {
                        thead { tr { th scope="col" { "Check" } th scope="col" { "Result" } th scope="col" { "What it means" } } }
                        tbody { @for f in &d.findings { tr {
                            td data-label="Check" { (f.dimension.to_uppercase().replace('_', "-")) }
                            td data-label="Result" { span class={ "badge " (finding_class(f.status)) } { (word(&f.status)) } " " (f.title) }
                            td data-label="What it means" { (f.detail) }
                        } } }
                    }
                }
            }
            @if !r.plan.is_empty() {
                section.card aria-labelledby="plan-h" {
                    h2 #plan-h { "Plan" }
                    ol { @for step in &r.plan { li { "Week " (step.week) ": " (step.title) } } }
                }
            }
            @if !r.skipped_domains.is_empty() {
                p.hint { @for s in &r.skipped_domains { (s.domain) ": " (s.message) " " } }
            }
        }
    }
}

/// `GET /app/reports/{id}`: a report's public page.
pub async fn public(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ReportQuery>,
) -> Response {
    let not_found = || {
        layout::public_with(
            "Not found",
            html! { h1 { "No such report" } p { "Check the link you were sent." } },
            StatusCode::NOT_FOUND,
        )
    };
    let Ok(id) = id.parse::<Uuid>() else {
        return not_found();
    };
    match prospecting::public_content(&app, id).await {
        Ok((content, expires)) => {
            let body = html! {
                (layout::flash(&app, &q.n, &q.ns))
                (report_body(id, &content, &expires.date().to_string()))
            };
            layout::public(&content.cover.title, body)
        }
        Err(e) if e.kind() == ErrorKind::Gone => layout::public_with(
            "Report expired",
            html! { h1 { "This report expired" } p { "Report links work for 90 days. Ask whoever sent it for a new one." } },
            StatusCode::GONE,
        ),
        Err(e) if e.kind() == ErrorKind::NotFound => not_found(),
        Err(e) => layout::failure(mailward_http::ApiError::from(e)),
    }
}
