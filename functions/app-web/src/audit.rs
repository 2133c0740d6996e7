//! The free domain audit (SPEC §4.8's public tool) as a page anyone can use without an
//! account: the same operation as `GET /tools/audit`, under the same DNS quota.

use crate::layout::word;
use crate::layout::{self, notice};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use mailward_api_types::tools::AuditParams;
use mailward_http::dns_quota::DnsQuota;
use mailward_http::{ApiError, AppState};
use mailward_services::audit;
use maud::html;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
pub struct AuditQuery {
    domain: Option<String>,
}

fn verdict_class(v: &str) -> &'static str {
    match v {
        "pass" => "ok",
        "warn" | "in progress" => "warn",
        "fail" => "bad",
        _ => "neutral",
    }
}

/// `GET /app/audit`.
pub async fn page(
    State(app): State<AppState>,
    quota: Result<DnsQuota, ApiError>,
    Query(q): Query<AuditQuery>,
) -> Response {
    let domain = q.domain.as_deref().map(str::trim).filter(|d| !d.is_empty());
    let result = match (domain, quota) {
        (None, _) => None,
        (Some(_), Err(_)) => Some(Err(
            "Too many audits from your network; wait a minute and try again.".to_owned(),
        )),
        (Some(d), Ok(_)) => {
            let params: Result<AuditParams, _> =
                serde_json::from_value(serde_json::json!({ "domain": d }));
            match params {
                Ok(params) => Some(
                    audit::audit(&app, None, &params, None)
                        .await
                        .map_err(|e| layout::refusal_text(&e)),
                ),
                Err(_) => Some(Err("Enter a domain name (field: domain).".to_owned())),
            }
        }
    };
    let status = match &result {
        Some(Err(_)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let body = html! {
        h1 { "Free domain audit" }
        div.card {
            p { "Checks a domain's MX, SPF, DKIM, DMARC, BIMI, MTA-STS and TLS-RPT in live DNS. No account needed." }
            form method="get" action="/app/audit" {
                label for="domain" { "Domain" }
                div.row {
                    div { input #domain type="text" name="domain" value=[domain] required placeholder="example.com" autocomplete="off" spellcheck="false"; }
                    div { button type="submit" { "Audit" } }
                }
            }
        }
        @match &result {
            None => {},
            Some(Err(text)) => (notice("bad", text)),
            Some(Ok(r)) => {
                section.card aria-labelledby="result-h" {
                    h2 #result-h { "Result for " (r.summary.domain) }
                    p { span.score { (r.summary.score) } " / 100" @if r.summary.parked { " " span.badge.neutral { "parked" } } }
                    table {
                        thead { tr { th scope="col" { "Check" } th scope="col" { "Verdict" } } }
                        tbody {
                            @for (name, v) in [("MX", &r.summary.mx), ("SPF", &r.summary.spf), ("DKIM", &r.summary.dkim), ("DMARC", &r.summary.dmarc), ("BIMI", &r.summary.bimi), ("MTA-STS", &r.summary.mta_sts), ("TLS-RPT", &r.summary.tls_rpt)] {
                                tr { th scope="row" { (name) } td { span class={ "badge " (verdict_class(&word(v))) } { (word(v)) } } }
                            }
                        }
                    }
                    p { a href="/app/sign-in" { "Sign in" } " to watch this domain and get the exact records to publish." }
                }
            }
        }
    };
    let mut response = layout::public("Free domain audit", body);
    *response.status_mut() = status;
    response
}
