//! What the organization is connected to: webhook endpoints with their latest deliveries
//! (`/webhook-endpoints`, `/webhook-endpoints/{id}/deliveries`), created, edited, given a new
//! signing secret (shown once, like an API key) and deleted by administrators; and the
//! person's AI assistant connections (MCP over OAuth, `/oauth/connections`), which they revoke
//! here.

use crate::layout::word;
use crate::layout::{self, Nav, csrf};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::common::PageParams;
use mailward_api_types::webhooks::{
    CreateWebhookEndpointRequest, SettableStatus, UpdateWebhookEndpointRequest, WebhookEndpoint,
    WebhookEventType,
};
use mailward_http::AppState;
use mailward_services::webhooks::endpoints;
use maud::{Markup, html};
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
    let flash = layout::flash(&app, &q.n, &q.ns);
    render(&app, &person, flash, None).await
}

/// The page, after a notice or with a new signing secret to show once: `(url, secret)`.
async fn render(
    app: &AppState,
    person: &Person,
    flash: Markup,
    secret: Option<(&str, &str)>,
) -> Response {
    let app = app.clone();
    let caller = &person.caller;
    let catalogue = endpoints::event_catalogue().data;
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
    let admin = person.is_admin();
    let body = html! {
        h1 { "Integrations" }
        (flash)
        @if let Some((url, secret)) = secret {
            div.secret role="status" {
                p { strong { "The signing secret of " (url) } " (shown once; verify each delivery's " code { "Mailward-Signature" } " with it):" }
                p { code #hook-secret { (secret) } " " button.small.secondary type="button" data-copy="hook-secret" hidden { "Copy" } }
            }
        }
        section.card aria-labelledby="hooks-h" {
            h2 #hooks-h { "Webhook endpoints" }
            @match &hooks {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No endpoint yet." },
                Ok(list) => {
                    @for (endpoint, sent) in list.data.iter().zip(&deliveries) {
                        h3 { code { (endpoint.url) } " " span.badge.neutral { (word(&endpoint.status)) } }
                        @if let Some(d) = &endpoint.description { p.hint { (d) } }
                        p.hint { "Events: " @if endpoint.enabled_events.is_empty() { "all" } @else { (endpoint.enabled_events.join(", ")) } }
                        @if admin { (edit_form(person, endpoint, &catalogue)) }
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
        @if admin {
            form.card method="post" action="/app/organization/integrations/webhooks" aria-labelledby="new-hook-h" {
                h2 #new-hook-h { "New webhook endpoint" }
                (csrf(&person.csrf))
                label for="hook-url" { "HTTPS URL" }
                input #hook-url type="url" name="url" required placeholder="https://hooks.example.com/mailward";
                label for="hook-description" { "Description (optional)" }
                input #hook-description type="text" name="description" maxlength="500";
                (events_field("new", &catalogue, &[]))
                p { button type="submit" { "Create endpoint" } }
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
    layout::page(person, Nav::Organization, "Integrations", body)
}

/// The event checkboxes (none chosen: every event).
fn events_field(prefix: &str, catalogue: &[WebhookEventType], chosen: &[String]) -> Markup {
    html! {
        details {
            summary { "Events (" @if chosen.is_empty() { "all" } @else { (chosen.len()) " chosen" } ")" }
            fieldset {
                legend.hint { "Leave every box empty to receive all events." }
                @for (i, e) in catalogue.iter().enumerate() {
                    div.check {
                        input id={ (prefix) "-ev-" (i) } type="checkbox" name="enabled_events" value=(e.event_type) checked[chosen.contains(&e.event_type)];
                        label for={ (prefix) "-ev-" (i) } { code { (e.event_type) } " " span.hint { (e.description) } }
                    }
                }
            }
        }
    }
}

fn edit_form(
    person: &Person,
    endpoint: &WebhookEndpoint,
    catalogue: &[WebhookEventType],
) -> Markup {
    let id = endpoint.id;
    let path = format!("/app/organization/integrations/webhooks/{id}");
    let enabled = word(&endpoint.status) == "ENABLED";
    html! {
        details {
            summary aria-label={ "Edit " (endpoint.url) } { "Edit" }
            form method="post" action={ (path) "/edit" } {
                (csrf(&person.csrf))
                label for={ "url-" (id) } { "HTTPS URL" }
                input id={ "url-" (id) } type="url" name="url" required value=(endpoint.url);
                label for={ "desc-" (id) } { "Description" }
                input id={ "desc-" (id) } type="text" name="description" maxlength="500" value=(endpoint.description.as_deref().unwrap_or_default());
                label for={ "status-" (id) } { "Status" }
                select id={ "status-" (id) } name="status" {
                    option value="ENABLED" selected[enabled] { "Enabled" }
                    option value="DISABLED" selected[!enabled] { "Disabled" }
                }
                (events_field(&id.to_string(), catalogue, &endpoint.enabled_events))
                p { button type="submit" { "Save endpoint" } }
            }
            div.moves {
                form.inline method="post" action={ (path) "/rotate" } data-confirm="Give this endpoint a new signing secret? The old one stops working at once." {
                    (csrf(&person.csrf))
                    button.small.secondary type="submit" { "New signing secret" }
                }
                form.inline method="post" action={ (path) "/delete" } data-confirm="Delete this endpoint? Its deliveries stop." {
                    (csrf(&person.csrf))
                    button.small.danger type="submit" { "Delete endpoint" }
                }
            }
        }
    }
}

/// `POST /app/organization/integrations/webhooks`: a new endpoint, its secret shown once.
pub async fn create_hook(
    State(app): State<AppState>,
    Posted { person, fields }: Posted,
) -> Response {
    let input = CreateWebhookEndpointRequest {
        url: fields.get("url").unwrap_or_default().to_owned(),
        description: fields.get("description").map(str::to_owned),
        enabled_events: fields.all("enabled_events"),
    };
    match endpoints::create(&app, &person.caller, input).await {
        Ok(created) => {
            let flash = layout::notice("ok", "Endpoint created.");
            render(
                &app,
                &person,
                flash,
                Some((&created.endpoint.url, &created.secret)),
            )
            .await
        }
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

const BACK: &str = "/app/organization/integrations";

/// `POST /app/organization/integrations/webhooks/{id}/{move}`: edit, rotate or delete.
pub async fn change_hook(
    State(app): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "webhook endpoint") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let caller = &person.caller;
    let done = match action.as_str() {
        "edit" => {
            let status = match fields.get("status") {
                Some("DISABLED") => SettableStatus::Disabled,
                Some("ENABLED") => SettableStatus::Enabled,
                _ => return redirect_with(&app, BACK, "bad", "Unknown status (field: status)."),
            };
            let input = UpdateWebhookEndpointRequest {
                url: fields.get("url").map(str::to_owned),
                description: Some(fields.get("description").map(str::to_owned)),
                enabled_events: Some(fields.all("enabled_events")),
                status: Some(status),
            };
            endpoints::update(&app, caller, id, input)
                .await
                .map(|_| "Endpoint saved.")
        }
        "rotate" => match endpoints::rotate_secret(&app, caller, id).await {
            Ok(rotated) => {
                let flash = layout::notice("ok", "New signing secret.");
                return render(
                    &app,
                    &person,
                    flash,
                    Some((&rotated.endpoint.url, &rotated.secret)),
                )
                .await;
            }
            Err(e) => Err(e),
        },
        "delete" => endpoints::delete(&app, caller, id)
            .await
            .map(|()| "Endpoint deleted."),
        _ => Err(mailward_services::ServiceError::not_found("page")),
    };
    match done {
        Ok(text) => redirect_with(&app, BACK, "ok", text),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
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
