//! A domain's page: the summary (score, stage, what to do next), the records to publish with
//! copy buttons and "check now", the DMARC reports (volume and pass-rate chart over 7, 14 or
//! 30 days, figures, the enforcement impact, the senders with confirm and discard), and the
//! tasks. Every figure comes from the same operation as its REST route.

use crate::charts::{self, Day};
use crate::domains::{band_class, status_class};
use crate::layout::{self, Nav, count, csrf, notice, pct};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::records::DnsRecordsResponse;
use mailward_api_types::report_data::ReportDataParams;
use mailward_api_types::reports::{ImpactParams, ReportSummary, SummaryParams};
use mailward_api_types::senders::{DomainSourceView, UpdateDomainSourceRequest};
use mailward_http::AppState;
use mailward_services::domains::{self, records};
use mailward_services::reports::{data, impact, senders, views};
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

#[derive(Debug, Default, Deserialize)]
pub struct DomainQuery {
    days: Option<u32>,
    n: Option<String>,
    ns: Option<String>,
}

use crate::layout::word;

fn parse_id(id: &str) -> Option<Uuid> {
    id.parse().ok()
}

/// `GET /app/domains/{id}`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<DomainQuery>,
) -> Response {
    let Some(id) = parse_id(&id) else {
        return layout::service_failure(
            &person,
            mailward_services::ServiceError::not_found("domain"),
        );
    };
    let days = match q.days {
        Some(7) => 7,
        Some(30) => 30,
        _ => 14,
    };
    let caller = &person.caller;
    let domain = match domains::get(&app, caller, id, &[]).await {
        Ok(d) => d,
        Err(e) => return layout::service_failure(&person, e),
    };
    let period = Some(format!("last_{days}_days"));
    let (records, summary, series, sources, impact, tasks) = tokio_join(
        live_records(&app, caller, id),
        views::summary(
            &app,
            caller,
            id,
            &SummaryParams {
                period: period.clone(),
            },
        ),
        data::timeseries(
            &app,
            caller,
            id,
            &ReportDataParams {
                period: Some("last_30_days".into()),
            },
        ),
        senders::list(&app, caller, id),
        impact::enforcement_impact(&app, caller, id, &ImpactParams { policy: None }),
        crate::tasks::of_domain(&app, caller, id),
    )
    .await;
    let (records, summary) = match (records, summary) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(e), _) | (_, Err(e)) => return layout::service_failure(&person, e),
    };
    let history = crate::history::read(&app, caller, id).await;
    let choices = crate::settings::group_choices(&app, &person).await;
    let hosted = crate::hosting::read(&app, caller, id).await;
    let connections = crate::dns::choices(&app, &person).await;
    let points = series.map(|s| s.points).unwrap_or_default();
    let skip = points.len().saturating_sub(days as usize);
    let chart_days: Vec<Day> = points[skip..]
        .iter()
        .map(|p| Day {
            date: p.date.clone(),
            volume: p.volume,
            pass_pct: (p.volume > 0).then(|| 100.0 * p.compliant as f64 / p.volume as f64),
        })
        .collect();
    let path = format!("/app/domains/{id}");
    let body = html! {
        p { a href="/app/domains" { "← All domains" } }
        h1 { (domain.url) }
        (layout::flash(&app, &q.n, &q.ns))
        nav.sections aria-label="On this page" { ul {
            li { a href="#summary" { "Summary" } } li { a href="#records" { "Records" } }
            li { a href="#reports" { "DMARC reports" } } li { a href="#senders" { "Senders" } }
            li { a href="#tls" { "TLS reports" } } li { a href="#conflicts" { "Conflicts" } }
            li { a href="#history" { "DNS history" } } li { a href="#hosting" { "Hosted records" } }
            li { a href="#settings" { "Settings" } }
            li { a href="#tasks" { "Tasks" } }
        } }
        (summary_card(&domain, &summary))
        (records_card(&person, &path, records.as_ref(), crate::dns::publish_form(&person, id, &connections)))
        section.card #reports aria-labelledby="reports-h" {
            h2 #reports-h { "DMARC reports" }
            nav.tabs aria-label="Period" {
                @for d in [7u32, 14, 30] {
                    @if d == days { a href={ (path) "?days=" (d) "#reports" } aria-current="true" { (d) " days" } }
                    @else { a href={ (path) "?days=" (d) "#reports" } { (d) " days" } }
                }
            }
            (figures(&summary))
            (charts::volume_and_pass("volume", &format!("Messages and DMARC pass rate, last {days} days"), "DMARC pass rate", &chart_days))
            @if let Ok(impact) = &impact {
                p {
                    strong { "If you moved to p=" (impact.policy) ": " }
                    @if impact.safe { "no legitimate mail would be affected in this window." }
                    @else { (count(impact.legitimate_affected)) " legitimate message(s) (" (pct(impact.legitimate_affected_pct)) ") would be affected." }
                }
            }
        }
        (senders_card(&person, &path, sources.as_deref().unwrap_or_default()))
        (crate::history::tls_card(&history))
        (crate::history::conflicts_card(&domain))
        (crate::history::snapshots_card(&history))
        (crate::hosting::card(&person, &domain, &hosted))
        (crate::settings::card(&person, &domain, &choices))
        section.card #tasks aria-labelledby="tasks-h" {
            h2 #tasks-h { "Tasks" }
            @match &tasks {
                Ok(list) => (crate::tasks::table(&person, list, false, &format!("{path}#tasks"))),
                Err(e) => (notice("bad", &layout::refusal_text(e))),
            }
        }
    };
    layout::page(&person, Nav::Domains, &domain.url, body)
}

/// How long the page waits for the records guidance's live DNS lookups (uncached, as
/// `GET /domains/{id}/dns-records` does them) before it renders without them.
const RECORDS_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// The records guidance, or `None` when the domain's DNS is too slow to answer within
/// [`RECORDS_WAIT`]: the page then says so instead of taking the lookups' whole deadline.
async fn live_records(
    app: &AppState,
    caller: &mailward_services::Caller,
    id: Uuid,
) -> Result<Option<DnsRecordsResponse>, mailward_services::ServiceError> {
    match tokio::time::timeout(RECORDS_WAIT, records::dns_records(app, caller, id)).await {
        Ok(answer) => answer.map(Some),
        Err(_) => Ok(None),
    }
}

async fn tokio_join<A, B, C, D, E, F>(
    a: impl Future<Output = A>,
    b: impl Future<Output = B>,
    c: impl Future<Output = C>,
    d: impl Future<Output = D>,
    e: impl Future<Output = E>,
    f: impl Future<Output = F>,
) -> (A, B, C, D, E, F) {
    // Sequential on purpose: the local stack's store is one SQLite connection, and each read
    // is a few hundred microseconds.
    (a.await, b.await, c.await, d.await, e.await, f.await)
}

fn summary_card(domain: &mailward_api_types::domains::Domain, summary: &ReportSummary) -> Markup {
    html! {
        section.card #summary aria-labelledby="summary-h" {
            h2 #summary-h { "Summary" }
            div.grid {
                div {
                    p.muted { "Score" }
                    p { span.score { (domain.score) } " " span class={ "badge " (band_class(&domain.score_band)) } { (domain.score_band) } }
                }
                div {
                    p.muted { "Monitoring" }
                    p { span class={ "badge " (status_class(&domain.monitoring_status)) } { (domain.monitoring_status) } }
                    @if let Some(reason) = &domain.monitoring_failure_reason { p.hint { (reason.replace('_', " ")) } }
                }
                div {
                    p.muted { "Stage" }
                    p { "Published policy p=" (domain.dmarc_policy) }
                    p.hint { "Recommendation: " (summary.recommendation.status.replace('_', " ")) @if let Some(next) = &summary.recommendation.next_policy { ", next p=" (next) } }
                }
            }
            h3 { "What to do next" }
            p { (summary.next_action.message) }
            @if !summary.recommendation.reason.is_empty() { p.hint { (summary.recommendation.reason) } }
        }
    }
}

fn records_card(
    person: &Person,
    path: &str,
    records: Option<&DnsRecordsResponse>,
    publish: Markup,
) -> Markup {
    html! {
        section.card #records aria-labelledby="records-h" {
            h2 #records-h { "Records to publish" }
            @match records {
                None => (notice("warn", "The domain's DNS servers are slow to answer right now, so the records and their status could not be read for this page. Reload in a moment, or press Check now.")),
                Some(records) => (records_table(records)),
            }
            @if person.can_write() {
                form method="post" action={ (path) "/verify" } {
                    (csrf(&person.csrf))
                    p { button type="submit" { "Check now" } " " span.hint { "Looks the records up in live DNS and queues a full evaluation." } }
                }
                (publish)
            }
        }
    }
}

fn records_table(records: &DnsRecordsResponse) -> Markup {
    html! {
        {
            p { "Publish these at your DNS host (" (records.dns_provider.id.as_deref().unwrap_or("your provider")) "), then check." }
            @for w in &records.warnings { (notice("warn", &w.message)) }
            table.responsive {
                thead { tr { th scope="col" { "Purpose" } th scope="col" { "Type" } th scope="col" { "Host" } th scope="col" { "Value" } th scope="col" { "Status" } } }
                tbody {
                    @for (i, r) in records.records.iter().enumerate() {
                        tr {
                            td data-label="Purpose" { (word(&r.record.purpose)) @if !r.record.required { " (optional)" } }
                            td data-label="Type" { (word(&r.record.record_type)) }
                            td data-label="Host" { code #{ "host-" (i) } { (r.record.host) } " " button.small.secondary type="button" data-copy={ "host-" (i) } hidden aria-label={ "Copy host of the " (word(&r.record.purpose)) " record" } { "Copy" } }
                            td data-label="Value" { code #{ "value-" (i) } { (r.record.value) } " " button.small.secondary type="button" data-copy={ "value-" (i) } hidden aria-label={ "Copy value of the " (word(&r.record.purpose)) " record" } { "Copy" } }
                            td data-label="Status" { span class={ "badge " (record_class(&word(&r.status))) } { (word(&r.status)) } }
                        }
                    }
                }
            }
        }
    }
}

fn record_class(status: &str) -> &'static str {
    match status {
        "verified" => "ok",
        "pending" => "neutral",
        "verifying" => "warn",
        _ => "bad",
    }
}

fn figures(summary: &ReportSummary) -> Markup {
    html! {
        dl.grid.figure {
            div { dt { "Messages" } dd { (count(summary.volume)) } }
            div { dt { "DMARC pass" } dd { (pct(summary.dmarc_pass_pct)) } }
            div { dt { "SPF pass" } dd { (pct(summary.spf_pass_pct)) } }
            div { dt { "DKIM pass" } dd { (pct(summary.dkim_pass_pct)) } }
        }
    }
}

fn sender_name(s: &DomainSourceView) -> String {
    s.source_name
        .clone()
        .or_else(|| s.sending_domain.clone())
        .or_else(|| s.source_ips.first().cloned())
        .unwrap_or_else(|| "Unidentified sender".to_owned())
}

fn senders_card(person: &Person, path: &str, sources: &[DomainSourceView]) -> Markup {
    html! {
        section.card #senders aria-labelledby="senders-h" {
            h2 #senders-h { "Senders" }
            @if sources.is_empty() {
                p { "No sender seen yet. Senders appear once aggregate reports arrive." }
            } @else {
                table.responsive {
                    thead { tr { th scope="col" { "Sender" } th scope="col" { "Status" } th.num scope="col" { "Messages" } th.num scope="col" { "Compliant" } th scope="col" { "Last seen" } @if person.can_write() { th scope="col" { "Decision" } } } }
                    tbody {
                        @for s in sources {
                            tr {
                                td data-label="Sender" { (sender_name(s)) @if !s.is_known { " " span.badge.neutral { "unknown" } } }
                                td data-label="Status" { span class={ "badge " (confirm_class(&s.confirmation_status)) } { (s.confirmation_status.replace('_', " ")) } }
                                td.num data-label="Messages" { (count(s.totals.compliant + s.totals.non_compliant + s.totals.forwarded + s.totals.unknown)) }
                                td.num data-label="Compliant" { (count(s.totals.compliant)) }
                                td data-label="Last seen" { (s.last_seen_at.as_deref().unwrap_or("—")) }
                                @if person.can_write() {
                                    td data-label="Decision" {
                                        @for (value, text) in [("confirmed", "Confirm"), ("discarded", "Discard")] {
                                            @if s.confirmation_status != value {
                                                form.inline method="post" action={ (path) "/senders/" (s.id) } {
                                                    (csrf(&person.csrf))
                                                    input type="hidden" name="confirmation_status" value=(value);
                                                    button.small.secondary type="submit" aria-label={ (text) " " (sender_name(s)) } { (text) }
                                                    " "
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn confirm_class(status: &str) -> &'static str {
    match status {
        "confirmed" => "ok",
        "discarded" => "neutral",
        _ => "warn",
    }
}

/// `POST /app/domains/{id}/verify`: "check now".
pub async fn verify(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let Some(id) = parse_id(&id) else {
        return layout::service_failure(
            &person,
            mailward_services::ServiceError::not_found("domain"),
        );
    };
    let back = format!("/app/domains/{id}");
    match records::verify(&app, &person.caller, id, None).await {
        Ok(done) => {
            let verified = done.verified.values().filter(|v| **v).count();
            let text = format!(
                "Checked: {verified} of {} record kinds verified in live DNS.{}",
                done.verified.len(),
                if done.queued {
                    " A full evaluation was queued; this page shows its result once it ran."
                } else {
                    ""
                }
            );
            redirect_with(&app, &format!("{back}#records"), "ok", &text)
        }
        Err(e) => redirect_with(
            &app,
            &format!("{back}#records"),
            "bad",
            &layout::refusal_text(&e),
        ),
    }
}

/// `POST /app/domains/{id}/senders/{source}`: confirm or discard a sender.
pub async fn sender(
    State(app): State<AppState>,
    Path((id, source)): Path<(String, String)>,
    Posted { person, fields }: Posted,
) -> Response {
    let (Some(id), Some(source)) = (parse_id(&id), parse_id(&source)) else {
        return layout::service_failure(
            &person,
            mailward_services::ServiceError::not_found("sender"),
        );
    };
    let input = UpdateDomainSourceRequest {
        confirmation_status: fields.get("confirmation_status").map(str::to_owned),
    };
    let back = format!("/app/domains/{id}");
    match senders::update(&app, &person.caller, id, source, input).await {
        Ok(s) => {
            let text = format!(
                "{} is now {}.",
                sender_name(&s),
                s.confirmation_status.replace('_', " ")
            );
            redirect_with(&app, &format!("{back}#senders"), "ok", &text)
        }
        Err(e) => redirect_with(
            &app,
            &format!("{back}#senders"),
            "bad",
            &layout::refusal_text(&e),
        ),
    }
}
