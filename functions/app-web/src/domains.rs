//! The domain list: SPEC §4.1's filters and sorts, score bands, monitoring status, open tasks,
//! and adding domains by pasting a list (`POST /domains/bulk`'s operation).

use crate::layout::{self, Nav, count, csrf, pct};
use crate::posted::Posted;
use crate::session::{Person, encode, redirect_with};
use axum::extract::{Query, State};
use axum::response::Response;
use mailward_api_types::domains::{BulkRequest, Domain, ListDomainsParams};
use mailward_http::AppState;
use mailward_services::domains::{self, bulk};
use maud::{Markup, html};
use serde::Deserialize;

/// The list's query: the API's parameters, with empty select values meaning "any".
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    page: Option<String>,
    monitoring_status: Option<String>,
    dmarc_policy: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    group_id: Option<String>,
    n: Option<String>,
    ns: Option<String>,
}

fn some(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

const STATUSES: [&str; 5] = ["none", "pending", "setup", "drifted", "failed"];
const POLICIES: [&str; 3] = ["none", "quarantine", "reject"];
const SORTS: [(&str, &str); 7] = [
    ("created_at", "Date added"),
    ("url", "Name"),
    ("score", "Score"),
    ("monitoring_status", "Monitoring status"),
    ("open_tasks_count", "Open tasks"),
    ("last_14_days_volume", "Volume (14 days)"),
    ("last_14_days_dmarc_pass_pct", "DMARC pass rate (14 days)"),
];

/// The CSS class of a score band.
pub fn band_class(band: &str) -> &'static str {
    match band {
        "great" | "good" => "good",
        "bad" => "fair",
        _ => "poor",
    }
}

/// The CSS class of a monitoring status.
pub fn status_class(status: &str) -> &'static str {
    match status {
        "setup" => "ok",
        "pending" | "none" => "neutral",
        "drifted" => "warn",
        _ => "bad",
    }
}

/// `GET /app/domains`.
pub async fn list(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<ListQuery>,
) -> Response {
    let page = some(&q.page)
        .and_then(|p| p.parse::<u32>().ok())
        .unwrap_or(1)
        .clamp(1, 1_000_000);
    let params = ListDomainsParams {
        page: Some(page),
        per_page: Some(50),
        monitoring_status: some(&q.monitoring_status),
        dmarc_policy: some(&q.dmarc_policy),
        sort: some(&q.sort),
        order: some(&q.order),
        group_id: some(&q.group_id).and_then(|g| g.parse().ok()),
        ..ListDomainsParams::default()
    };
    let groups = crate::settings::group_choices(&app, &person).await;
    let listed = match domains::list(&app, &person.caller, &params).await {
        Ok(l) => l,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Domains" }
        (layout::flash(&app, &q.n, &q.ns))
        (filters(&q, &groups))
        div.card {
            p.muted { (count(listed.page_info.total_count)) " domain(s)" }
            (table(&listed.data))
            (pager(&q, page, listed.page_info.has_more))
        }
        @if person.can_write() { (bulk_form(&person)) }
    };
    layout::page(&person, Nav::Domains, "Domains", body)
}

fn filters(q: &ListQuery, groups: &[(uuid::Uuid, String)]) -> Markup {
    let group = some(&q.group_id).unwrap_or_default();
    let status = some(&q.monitoring_status).unwrap_or_default();
    let policy = some(&q.dmarc_policy).unwrap_or_default();
    let sort = some(&q.sort).unwrap_or_default();
    let order = some(&q.order).unwrap_or_default();
    html! {
        form.card method="get" action="/app/domains" aria-label="Filter and sort domains" {
            div.row {
                div {
                    label for="f-status" { "Monitoring status" }
                    select #f-status name="monitoring_status" {
                        option value="" { "Any" }
                        @for s in STATUSES { option value=(s) selected[status == s] { (s) } }
                    }
                }
                div {
                    label for="f-policy" { "DMARC policy" }
                    select #f-policy name="dmarc_policy" {
                        option value="" { "Any" }
                        @for p in POLICIES { option value=(p) selected[policy == p] { (p) } }
                    }
                }
                @if !groups.is_empty() {
                    div {
                        label for="f-group" { "Group" }
                        select #f-group name="group_id" {
                            option value="" { "Any" }
                            @for (id, name) in groups { option value=(id) selected[group == id.to_string()] { (name) } }
                        }
                    }
                }
                div {
                    label for="f-sort" { "Sort by" }
                    select #f-sort name="sort" {
                        @for (key, text) in SORTS { option value=(key) selected[sort == key] { (text) } }
                    }
                }
                div {
                    label for="f-order" { "Order" }
                    select #f-order name="order" {
                        option value="desc" selected[order != "asc"] { "Descending" }
                        option value="asc" selected[order == "asc"] { "Ascending" }
                    }
                }
                div { button type="submit" { "Apply" } }
            }
        }
    }
}

fn table(domains: &[Domain]) -> Markup {
    html! {
        @if domains.is_empty() {
            p { "No domain matches. Add one below, or change the filters." }
        } @else {
            table.responsive {
                caption.muted { "Your domains" }
                thead { tr {
                    th scope="col" { "Domain" }
                    th scope="col" { "Score" }
                    th scope="col" { "Monitoring" }
                    th scope="col" { "DMARC policy" }
                    th.num scope="col" { "Open tasks" }
                    th.num scope="col" { "Volume (14 days)" }
                    th.num scope="col" { "DMARC pass, identified senders (14 days)" }
                } }
                tbody {
                    @for d in domains {
                        tr {
                            td data-label="Domain" { a href={ "/app/domains/" (d.id) } { (d.url) } }
                            td data-label="Score" { span class={ "badge " (band_class(&d.score_band)) } { (d.score) " · " (d.score_band) } }
                            td data-label="Monitoring" { span class={ "badge " (status_class(&d.monitoring_status)) } { (d.monitoring_status) } }
                            td data-label="DMARC policy" { (d.dmarc_policy) }
                            td.num data-label="Open tasks" { (d.open_tasks_count) }
                            td.num data-label="Volume (14 days)" { (count(d.last_14_days_volume)) }
                            td.num data-label="DMARC pass, identified senders (14 days)" { (pct(d.last_14_days_dmarc_pass_pct)) }
                        }
                    }
                }
            }
        }
    }
}

fn pager(q: &ListQuery, page: u32, has_more: bool) -> Markup {
    let keep = format!(
        "monitoring_status={}&dmarc_policy={}&sort={}&order={}&group_id={}",
        encode(&some(&q.monitoring_status).unwrap_or_default()),
        encode(&some(&q.dmarc_policy).unwrap_or_default()),
        encode(&some(&q.sort).unwrap_or_default()),
        encode(&some(&q.order).unwrap_or_default()),
        encode(&some(&q.group_id).unwrap_or_default()),
    );
    html! {
        nav.pager aria-label="Pages" {
            @if page > 1 { a href={ "/app/domains?page=" (page - 1) "&" (keep) } { "Previous page" } }
            @if has_more { a href={ "/app/domains?page=" (page + 1) "&" (keep) } { "Next page" } }
        }
    }
}

fn bulk_form(person: &Person) -> Markup {
    html! {
        section.card aria-labelledby="add-h" {
            h2 #add-h { "Add domains" }
            form method="post" action="/app/domains" {
                (csrf(&person.csrf))
                label for="domains" { "Domains, one per line (or separated by commas)" }
                textarea #domains name="domains" required aria-describedby="domains-hint" {}
                p.hint #domains-hint { "Up to 500 at once. A URL or an email address is read as its domain." }
                p { button type="submit" { "Add" } }
            }
        }
    }
}

/// `POST /app/domains`: adds the pasted domains, each on its own.
pub async fn add(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let entries: Vec<serde_json::Value> = fields
        .get("domains")
        .unwrap_or_default()
        .split(|c: char| c == '\n' || c == ',' || c == ';' || c.is_whitespace())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|url| serde_json::json!({ "url": url }))
        .collect();
    if entries.is_empty() {
        return redirect_with(
            &app,
            "/app/domains",
            "bad",
            "Paste at least one domain (field: domains).",
        );
    }
    let single = entries.len() == 1;
    match bulk::create_many(&app, &person.caller, BulkRequest { domains: entries }).await {
        Ok(done) => {
            if single && let Some(domain) = done.results.first().and_then(|r| r.domain.as_ref()) {
                let back = format!("/app/domains/{}", domain.id);
                return redirect_with(
                    &app,
                    &back,
                    "ok",
                    "Domain added. Publish the records below at your DNS host, then press Check now.",
                );
            }
            let reasons: Vec<String> = done
                .results
                .iter()
                .filter(|r| r.domain.is_none())
                .map(|r| {
                    format!(
                        "{}: {}",
                        r.url.as_deref().unwrap_or("?"),
                        r.reason.as_deref().unwrap_or(&r.result)
                    )
                })
                .take(5)
                .collect();
            let mut text = format!("{} domain(s) added.", done.created_count);
            if done.failed_count > 0 {
                text.push_str(&format!(
                    " {} could not be added: {}.",
                    done.failed_count,
                    reasons.join("; ")
                ));
            }
            let kind = if done.failed_count > 0 { "bad" } else { "ok" };
            redirect_with(&app, "/app/domains", kind, &text)
        }
        Err(e) => redirect_with(&app, "/app/domains", "bad", &layout::refusal_text(&e)),
    }
}
