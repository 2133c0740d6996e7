//! What the organization is connected to: webhook endpoints with their latest deliveries
//! (`/webhook-endpoints`, `/webhook-endpoints/{id}/deliveries`), and the person's AI assistant
//! connections (MCP over OAuth, `/oauth/connections`), which they revoke here.

use crate::domain::word;
use crate::layout::{self, Nav, csrf};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::common::PageParams;
use mailward_http::AppState;
use mailward_services::webhooks::endpoints;
use maud::html;
use serde::Deserialize;
use uuid::Uuid;

#[derive(Debug, Default, Deserialize)]
pub struct IntegrationsQuery {
    n: Option<String>,
    ns: Option<String>,
}

const LATEST: PageParams = PageParams {
    page: Some(1),
    per_page: Some(10),
};

/// `GET /app/organization/integrations`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<IntegrationsQuery>,
) -> Response {
    let caller = &person.caller;
    let hooks = endpoints::list(
        &app,
        caller,
        PageParams {
            page: Some(1),
            per_page: Some(100),
        },
    )
    .await;
    let mut deliveries = Vec::new();
    if let Ok(list) = &hooks {
        for endpoint in &list.data {
            deliveries.push(
                endpoints::deliveries(&app, caller, endpoint.id, LATEST)
                    .await
                    .map(|d| d.data)
                    .unwrap_or_default(),
            );
        }
    }
    let connections = mailward_oauth::connections::list(&app, caller).await;
    let body = html! {
        h1 { "Integrations" }
        (layout::flash(&app, &q.n, &q.ns))
        section.card aria-labelledby="hooks-h" {
            h2 #hooks-h { "Webhook endpoints" }
            @match &hooks {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No endpoint. Create one with " code { "POST /webhook-endpoints" } " to receive signed events." },
                Ok(list) => {
                    @for (endpoint, sent) in list.data.iter().zip(&deliveries) {
                        h3 { code { (endpoint.url) } " " span.badge.neutral { (word(&endpoint.status)) } }
                        @if let Some(d) = &endpoint.description { p.hint { (d) } }
                        @if sent.is_empty() { p.muted { "Nothing delivered yet." } } @else {
                            table.responsive {
                                caption.muted { "Latest deliveries" }
                                thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "Event" } th scope="col" { "Attempt" } th scope="col" { "Result" } } }
                                tbody { @for d in sent { tr {
                                    td data-label="When (UTC)" { (d.created_at.date()) " " (format!("{:02}:{:02}", d.created_at.hour(), d.created_at.minute())) }
                                    td data-label="Event" { (d.event_type) }
                                    td data-label="Attempt" { (d.attempt) }
                                    td data-label="Result" {
                                        span class={ "badge " (if d.status == "succeeded" { "ok" } else if d.status == "failed" { "bad" } else { "warn" }) } { (d.status) }
                                        @if let Some(code) = d.response_status { " HTTP " (code) }
                                        @if let Some(e) = &d.error { " " span.hint { (e) } }
                                    }
                                } } }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="mcp-h" {
            h2 #mcp-h { "Your AI assistant connections" }
            @match &connections {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No assistant is connected to your account." },
                Ok(list) => {
                    table.responsive {
                        thead { tr { th scope="col" { "Client" } th scope="col" { "Scopes" } th scope="col" { "Last used" } th scope="col" { "Action" } } }
                        tbody { @for c in &list.data { tr {
                            td data-label="Client" { (c.client_id) }
                            td data-label="Scopes" { (c.scopes.join(" ")) }
                            td data-label="Last used" { (c.last_used_at.date()) }
                            td data-label="Action" {
                                form.inline method="post" action={ "/app/organization/integrations/connections/" (c.id) "/revoke" } data-confirm="Revoke this connection? The assistant must sign in again." {
                                    (csrf(&person.csrf))
                                    button.small.danger type="submit" aria-label={ "Revoke " (c.client_id) } { "Revoke" }
                                }
                            }
                        } } }
                    }
                }
            }
        }
    };
    layout::page(&person, Nav::Organization, "Integrations", body)
}

/// `POST /app/organization/integrations/connections/{id}/revoke`.
pub async fn revoke(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let back = "/app/organization/integrations";
    let Ok(id) = id.parse::<Uuid>() else {
        return redirect_with(&app, back, "bad", "No such connection.");
    };
    match mailward_oauth::connections::revoke(&app, &person.caller, id).await {
        Ok(()) => redirect_with(
            &app,
            back,
            "ok",
            "Connection revoked: the assistant's tokens stop working at once.",
        ),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}
