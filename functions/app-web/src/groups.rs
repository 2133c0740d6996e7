//! Groups (SPEC §4.2: an MSP's clients, each a set of domains) and the alert rules: groups
//! listed with their domains' figures, created and deleted by administrators; and the alert
//! rules (`alert_rules`: listed for every member, written by editors and administrators). The
//! same operations as `/groups` and `/alert-rules`.

use crate::alert_rules;
use crate::layout::{self, Nav, count, csrf, pct};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::admin::{CreateGroupRequest, ListGroupsParams};
use mailward_http::AppState;
use mailward_services::groups;
use maud::html;
use serde::Deserialize;
use uuid::Uuid;

#[derive(Debug, Default, Deserialize)]
pub struct GroupsQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/organization/groups`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<GroupsQuery>,
) -> Response {
    let caller = &person.caller;
    let params = ListGroupsParams {
        expand: vec!["domains".into()],
        per_page: Some(100),
        ..ListGroupsParams::default()
    };
    let listed = groups::list(&app, caller, &params).await;
    let rules = alert_rules::read(&app, caller).await;
    let choices: Vec<(Uuid, String)> = listed
        .as_ref()
        .map(|l| l.data.iter().map(|g| (g.id, g.name.clone())).collect())
        .unwrap_or_default();
    let body = html! {
        h1 { "Groups and alert rules" }
        (layout::flash(&app, &q.n, &q.ns))
        section.card aria-labelledby="groups-h" {
            h2 #groups-h { "Groups" }
            @match &listed {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No group. Groups hold a client's domains; members can be limited to them." },
                Ok(list) => {
                    table.responsive {
                        thead { tr { th scope="col" { "Group" } th.num scope="col" { "Domains" } th.num scope="col" { "Enforcing" } th.num scope="col" { "Volume (14 days)" } @if person.is_admin() { th scope="col" { "Action" } } } }
                        tbody { @for g in &list.data { tr {
                            td data-label="Group" { (g.name) }
                            td.num data-label="Domains" { (g.domains.as_ref().map_or(0, |d| d.count)) }
                            td.num data-label="Enforcing" { (g.domains.as_ref().map_or_else(|| "—".to_owned(), |d| pct(d.enforcement_pct))) }
                            td.num data-label="Volume (14 days)" { (count(g.domains.as_ref().map_or(0, |d| d.last_14_days_volume))) }
                            @if person.is_admin() {
                                td data-label="Action" {
                                    form.inline method="post" action={ "/app/organization/groups/" (g.id) "/delete" } data-confirm="Delete this group? Its domains stay, ungrouped." {
                                        (csrf(&person.csrf))
                                        button.small.danger type="submit" aria-label={ "Delete " (g.name) } { "Delete" }
                                    }
                                }
                            }
                        } } }
                    }
                }
            }
            @if person.is_admin() {
                form method="post" action="/app/organization/groups" {
                    (csrf(&person.csrf))
                    div.row {
                        div { label for="group-name" { "New group" } input #group-name type="text" name="name" required maxlength="100"; }
                        div { button type="submit" { "Create group" } }
                    }
                }
            }
        }
        (alert_rules::section(&person, &rules, &choices))
    };
    layout::page(&person, Nav::Organization, "Groups and alert rules", body)
}

/// `POST /app/organization/groups`.
pub async fn create(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let back = "/app/organization/groups";
    let name = fields.get("name").unwrap_or_default().to_owned();
    let input = CreateGroupRequest {
        name: name.clone(),
        external_customer_id: None,
        external_billing_entity_id: None,
    };
    match groups::create(&app, &person.caller, input).await {
        Ok(_) => redirect_with(&app, back, "ok", &format!("Group {name} created.")),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/groups/{id}/delete`.
pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let back = "/app/organization/groups";
    let Ok(id) = id.parse::<Uuid>() else {
        return redirect_with(&app, back, "bad", "No such group.");
    };
    match groups::delete(&app, &person.caller, id).await {
        Ok(()) => redirect_with(&app, back, "ok", "Group deleted."),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}
