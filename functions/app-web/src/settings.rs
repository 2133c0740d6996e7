//! A domain's settings on its page: its group, whether it is parked (it sends no mail), and
//! removing it. The same operations as `POST /domains/{id}` and `DELETE /domains/{id}`, for
//! editors and administrators.

use crate::layout::{self, csrf};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, State};
use axum::response::Response;
use mailward_api_types::admin::ListGroupsParams;
use mailward_api_types::domains::{Domain, UpdateDomainRequest};
use mailward_http::AppState;
use mailward_services::{domains, groups};
use maud::{Markup, html};
use uuid::Uuid;

/// The groups a person may put a domain in: `(id, name)`.
pub async fn group_choices(app: &AppState, person: &Person) -> Vec<(Uuid, String)> {
    let params = ListGroupsParams {
        per_page: Some(100),
        ..ListGroupsParams::default()
    };
    groups::list(app, &person.caller, &params)
        .await
        .map(|l| l.data.into_iter().map(|g| (g.id, g.name)).collect())
        .unwrap_or_default()
}

/// The settings section.
pub fn card(person: &Person, domain: &Domain, choices: &[(Uuid, String)]) -> Markup {
    let path = format!("/app/domains/{}", domain.id);
    html! {
        section.card #settings aria-labelledby="settings-h" {
            h2 #settings-h { "Settings" }
            p { "Reports go to " code { (domain.monitoring_email) } "." }
            @if person.can_write() {
                form method="post" action={ (path) "/settings" } {
                    (csrf(&person.csrf))
                    div.row {
                        div {
                            label for="group_id" { "Group" }
                            select #group_id name="group_id" {
                                option value="" selected[domain.group_id.is_none()] { "No group" }
                                @for (id, name) in choices { option value=(id) selected[domain.group_id == Some(*id)] { (name) } }
                            }
                        }
                        div {
                            label for="is_parked" { "Sends mail?" }
                            select #is_parked name="is_parked" {
                                option value="false" selected[!domain.is_parked] { "Yes, it sends mail" }
                                option value="true" selected[domain.is_parked] { "No, parked (reject everything)" }
                            }
                        }
                        div { button type="submit" { "Save" } }
                    }
                }
                form method="post" action={ (path) "/delete" } data-confirm="Stop watching this domain? Its reports, tasks and history go with it." {
                    (csrf(&person.csrf))
                    p { button.danger type="submit" { "Stop watching " (domain.url) } }
                }
            } @else {
                p { "Group: " (domain.group_id.map_or_else(|| "none".to_owned(), |g| choices.iter().find(|(id, _)| *id == g).map_or(g.to_string(), |(_, n)| n.clone()))) ". " @if domain.is_parked { "Parked." } }
            }
        }
    }
}

/// `POST /app/domains/{id}/settings`.
pub async fn save(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "domain") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let back = format!("/app/domains/{id}#settings");
    let group_id = match fields.get("group_id") {
        None => None,
        Some(g) => match g.parse::<Uuid>() {
            Ok(g) => Some(g),
            Err(_) => return redirect_with(&app, &back, "bad", "Unknown group (field: group_id)."),
        },
    };
    let input = UpdateDomainRequest {
        group_id: Some(group_id),
        is_parked: Some(fields.get("is_parked") == Some("true")),
        ..UpdateDomainRequest::default()
    };
    match domains::update(&app, &person.caller, id, input).await {
        Ok(_) => redirect_with(&app, &back, "ok", "Settings saved."),
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/domains/{id}/delete`.
pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "domain") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    match domains::delete(&app, &person.caller, id).await {
        Ok(()) => redirect_with(
            &app,
            "/app/domains",
            "ok",
            "The domain is no longer watched.",
        ),
        Err(e) => redirect_with(
            &app,
            &format!("/app/domains/{id}#settings"),
            "bad",
            &layout::refusal_text(&e),
        ),
    }
}
