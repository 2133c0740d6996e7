//! The organization's pages: API keys (created and shown once, rotated, deleted), by the same
//! operations as `/api-keys`. Administrators only, as the API says.

use crate::layout::{self, Nav, csrf, notice};
use crate::posted::Posted;
use crate::session::Person;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use mailward_api_types::api_keys::{ApiKeyAccessView, ApiKeyWithSecret, CreateApiKeyRequest};
use mailward_api_types::common::PageParams;
use mailward_http::AppState;
use mailward_services::api_keys;
use maud::{Markup, html};

/// `GET /app/organization`.
pub async fn page(State(app): State<AppState>, person: Person) -> Response {
    render(&app, &person, None, None).await
}

async fn render(
    app: &AppState,
    person: &Person,
    created: Option<&ApiKeyWithSecret>,
    error: Option<&str>,
) -> Response {
    let keys = if person.is_admin() {
        match api_keys::list(
            app,
            &person.caller,
            PageParams {
                page: Some(1),
                per_page: Some(100),
            },
        )
        .await
        {
            Ok(k) => Some(k),
            Err(e) => return layout::service_failure(person, e),
        }
    } else {
        None
    };
    let body = html! {
        h1 { "Organization" }
        p { "Signed in as " strong { (person.role.as_str()) } "." }
        (subnav(person, ""))
        @if let Some(e) = error { (notice("bad", e)) }
        section.card aria-labelledby="keys-h" {
            h2 #keys-h { "API keys" }
            @match &keys {
                None => p { "Only administrators of the whole organization manage API keys." },
                Some(keys) => {
                    @if let Some(created) = created { (secret(created)) }
                    @if keys.data.is_empty() { p { "No API key yet." } } @else {
                        table.responsive {
                            thead { tr { th scope="col" { "Name" } th scope="col" { "Access" } th scope="col" { "Ends in" } th scope="col" { "Created" } th scope="col" { "Actions" } } }
                            tbody {
                                @for k in &keys.data {
                                    tr {
                                        td data-label="Name" { (k.name) }
                                        td data-label="Access" { (crate::layout::word(&k.access).replace('_', " ")) }
                                        td data-label="Ends in" { code { "…" (k.last_four) } }
                                        td data-label="Created" { (k.created_at.date()) }
                                        td data-label="Actions" {
                                            form.inline method="post" action={ "/app/organization/api-keys/" (k.id) "/rotate" } data-confirm="Rotate this key? The old secret stops working at once." {
                                                (csrf(&person.csrf)) button.small.secondary type="submit" aria-label={ "Rotate " (k.name) } { "Rotate" }
                                            }
                                            " "
                                            form.inline method="post" action={ "/app/organization/api-keys/" (k.id) "/delete" } data-confirm="Delete this key? Scripts using it stop working." {
                                                (csrf(&person.csrf)) button.small.danger type="submit" aria-label={ "Delete " (k.name) } { "Delete" }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    (create_form(person))
                }
            }
        }
    };
    layout::page(person, Nav::Organization, "Organization", body)
}

/// The organization's pages, the current one (`here`, its path) marked.
pub fn subnav(person: &Person, here: &str) -> Markup {
    let mut pages = vec![
        ("/app/organization/settings", "Settings and notifications"),
        ("/app/organization/people", "People and alerts"),
        ("/app/organization/groups", "Groups and alert rules"),
        ("/app/organization/integrations", "Integrations"),
        ("/app/organization/dns", "DNS connections"),
        ("/app/organization/billing", "Usage and billing"),
        ("/app/prospecting", "Prospecting reports"),
        ("/app/support", "Support"),
    ];
    if person.is_admin() {
        pages.push(("/app/organization/sso", "Single sign-on"));
        pages.push(("/app/organization/activity", "Activity log"));
    }
    pages.push(("/app/account/security", "Your two-factor authentication"));
    html! {
        nav.sections aria-label="Organization pages" { ul {
            @for (href, text) in pages {
                li {
                    @if href == here { a href=(href) aria-current="page" { (text) } }
                    @else { a href=(href) { (text) } }
                }
            }
        } }
    }
}

fn secret(created: &ApiKeyWithSecret) -> Markup {
    html! {
        div.secret role="status" {
            p { strong { "Copy the key " (created.api_key.name) " now: it is shown only once." } }
            p { code #new-key { (created.key) } " " button.small type="button" data-copy="new-key" hidden { "Copy" } }
        }
    }
}

fn create_form(person: &Person) -> Markup {
    html! {
        form method="post" action="/app/organization/api-keys" {
            (csrf(&person.csrf))
            h3 { "Create a key" }
            div.row {
                div { label for="key-name" { "Name" } input #key-name type="text" name="name" required maxlength="100"; }
                div {
                    label for="key-access" { "Access" }
                    select #key-access name="access" { option value="read_write" { "Read and write" } option value="read_only" { "Read only" } }
                }
                div { button type="submit" { "Create key" } }
            }
        }
    }
}

/// `POST /app/organization/api-keys`: creates a key and shows its secret once (this answer is
/// not cached and the secret is in no URL).
pub async fn create(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let access = match fields.get("access") {
        Some("read_only") => ApiKeyAccessView::ReadOnly,
        _ => ApiKeyAccessView::ReadWrite,
    };
    let input = CreateApiKeyRequest {
        name: fields.get("name").unwrap_or_default().to_owned(),
        access,
    };
    match api_keys::create(&app, &person.caller, input).await {
        Ok(created) => render(&app, &person, Some(&created), None).await,
        Err(e) => render(&app, &person, None, Some(&layout::refusal_text(&e))).await,
    }
}

/// `POST /app/organization/api-keys/{id}/rotate`: a new secret, shown once.
pub async fn rotate(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "api_key") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    match api_keys::rotate(&app, &person.caller, id).await {
        Ok(created) => render(&app, &person, Some(&created), None).await,
        Err(e) => render(&app, &person, None, Some(&layout::refusal_text(&e))).await,
    }
}

/// `POST /app/organization/api-keys/{id}/delete`.
pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "api_key") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    match api_keys::delete(&app, &person.caller, id).await {
        Ok(()) => Redirect::to("/app/organization").into_response(),
        Err(e) => render(&app, &person, None, Some(&layout::refusal_text(&e))).await,
    }
}
