//! The organization's people and what happened: members (invited by address with a role,
//! removed), pending invitations (revoked), open alerts, and the activity log. The same
//! operations as `/members`, `/invitations`, `/alerts` and `/activity-log`, with their
//! permissions (administrators manage people; members limited to groups see neither list).

use crate::layout::word;
use crate::layout::{self, Nav, count, csrf, notice};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::activity::ActivityParams;
use mailward_api_types::admin::{CreateInvitationRequest, RoleView};
use mailward_api_types::alerts::AlertFilters;
use mailward_api_types::common::PageParams;
use mailward_http::AppState;
use mailward_services::{activity, alerts, invitations, members};
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

#[derive(Debug, Default, Deserialize)]
pub struct PeopleQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/organization/people`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<PeopleQuery>,
) -> Response {
    let caller = &person.caller;
    let people = members::list(&app, caller).await;
    let invited = invitations::list(&app, caller).await;
    let open = alerts::list_alerts(
        &app,
        caller,
        &AlertFilters {
            status: Some("open".into()),
            domain_id: None,
            rule_id: None,
        },
        PageParams {
            page: Some(1),
            per_page: Some(50),
        },
    )
    .await;
    let body = html! {
        h1 { "People and alerts" }
        (layout::flash(&app, &q.n, &q.ns))
        section.card aria-labelledby="members-h" {
            h2 #members-h { "Members" }
            @match &people {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) => {
                    table.responsive {
                        thead { tr { th scope="col" { "Email" } th scope="col" { "Role" } th scope="col" { "Status" } th scope="col" { "Groups" } @if person.is_admin() { th scope="col" { "Action" } } } }
                        tbody {
                            @for m in list {
                                tr {
                                    td data-label="Email" { (m.email) }
                                    td data-label="Role" { (m.roles.iter().map(word).collect::<Vec<_>>().join(", ")) }
                                    td data-label="Status" { (word(&m.status).replace('_', " ")) }
                                    td data-label="Groups" { @if m.groups.is_empty() { "every domain" } @else { (m.groups.len()) " group(s)" } }
                                    @if person.is_admin() {
                                        td data-label="Action" {
                                            @if m.id != person.account_id {
                                                form.inline method="post" action={ "/app/organization/people/" (m.id) "/remove" } data-confirm="Remove this member? Their sessions end at once." {
                                                    (csrf(&person.csrf))
                                                    button.small.danger type="submit" aria-label={ "Remove " (m.email) } { "Remove" }
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
            @if person.is_admin() { (invite_form(&person)) }
        }
        @if let Ok(invited) = &invited {
            @if !invited.is_empty() {
                section.card aria-labelledby="inv-h" {
                    h2 #inv-h { "Pending invitations" }
                    table.responsive {
                        thead { tr { th scope="col" { "Email" } th scope="col" { "Role" } th scope="col" { "Expires" } @if person.is_admin() { th scope="col" { "Actions" } } } }
                        tbody { @for i in invited { tr {
                            td data-label="Email" { (i.email) }
                            td data-label="Role" { (i.roles.iter().map(word).collect::<Vec<_>>().join(", ")) }
                            td data-label="Expires" { (i.expires_at.date()) }
                            @if person.is_admin() { td data-label="Actions" { div.moves {
                                form.inline method="post" action={ "/app/organization/invitations/" (i.id) "/resend" } {
                                    (layout::csrf(&person.csrf))
                                    button.small.secondary type="submit" aria-label={ "Resend the invitation to " (i.email) } { "Resend" }
                                }
                                form.inline method="post" action={ "/app/organization/invitations/" (i.id) "/revoke" } data-confirm={ "Revoke the invitation to " (i.email) "?" } {
                                    (layout::csrf(&person.csrf))
                                    button.small.danger type="submit" aria-label={ "Revoke the invitation to " (i.email) } { "Revoke" }
                                }
                            } } }
                        } } }
                    }
                }
            }
        }
        section.card aria-labelledby="alerts-h" {
            h2 #alerts-h { "Open alerts" }
            @match &open {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No open alert." },
                Ok(list) => {
                    table.responsive {
                        thead { tr { th scope="col" { "Domain" } th scope="col" { "Rule" } th scope="col" { "What" } th scope="col" { "Since" } } }
                        tbody { @for a in &list.data { tr {
                            td data-label="Domain" { a href={ "/app/domains/" (a.domain_id) } { (a.domain) } }
                            td data-label="Rule" { (a.rule_name) }
                            td data-label="What" { (a.summary) }
                            td data-label="Since" { (a.opened_at) }
                        } } }
                    }
                }
            }
        }
        @if person.is_admin() { p { a href="/app/organization/activity" { "The activity log" } } }
    };
    layout::page(&person, Nav::Organization, "People and alerts", body)
}

fn invite_form(person: &Person) -> Markup {
    html! {
        form method="post" action="/app/organization/people" {
            (csrf(&person.csrf))
            h3 { "Invite someone" }
            div.row {
                div { label for="inv-email" { "Email address" } input #inv-email type="email" name="email" required; }
                div {
                    label for="inv-role" { "Role" }
                    select #inv-role name="role" {
                        option value="viewer" { "Viewer (reads)" }
                        option value="editor" { "Editor (changes domains and tasks)" }
                        option value="admin" { "Administrator" }
                    }
                }
                div { button type="submit" { "Send invitation" } }
            }
        }
    }
}

/// `POST /app/organization/people`: an invitation by mail.
pub async fn invite(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let role = match fields.get("role") {
        Some("admin") => RoleView::Admin,
        Some("editor") => RoleView::Editor,
        _ => RoleView::Viewer,
    };
    let email = fields.get("email").unwrap_or_default().to_owned();
    let input = CreateInvitationRequest {
        email: email.clone(),
        roles: vec![role],
        groups: vec![],
        ttl_sec: None,
    };
    let back = "/app/organization/people";
    match invitations::create(&app, &person.caller, input).await {
        Ok(_) => redirect_with(&app, back, "ok", &format!("Invitation sent to {email}.")),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/people/{id}/remove`.
pub async fn remove(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let back = "/app/organization/people";
    let Ok(id) = id.parse::<Uuid>() else {
        return redirect_with(&app, back, "bad", "No such member.");
    };
    match members::remove(&app, &person.caller, id).await {
        Ok(()) => redirect_with(&app, back, "ok", "Member removed."),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/invitations/{id}/{move}`: resend or revoke.
pub async fn invitation(
    State(app): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    Posted { person, .. }: Posted,
) -> Response {
    let back = "/app/organization/people";
    let id = match layout::path_id(&person, &id, "invitation") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let done = match action.as_str() {
        "resend" => invitations::resend(&app, &person.caller, id)
            .await
            .map(|()| "Invitation sent again."),
        "revoke" => invitations::revoke(&app, &person.caller, id)
            .await
            .map(|()| "Invitation revoked."),
        _ => Err(mailward_services::ServiceError::not_found("page")),
    };
    match done {
        Ok(text) => redirect_with(&app, back, "ok", text),
        Err(e) => redirect_with(&app, back, "bad", &layout::refusal_text(&e)),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ActivityQuery {
    page: Option<u32>,
}

/// `GET /app/organization/activity`: the activity log, newest first.
pub async fn activity_log(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<ActivityQuery>,
) -> Response {
    let page = q.page.unwrap_or(1).clamp(1, 1_000_000);
    let params = ActivityParams {
        page: Some(page),
        per_page: Some(50),
        ..ActivityParams::default()
    };
    let listed = match activity::list(&app, &person.caller, &params).await {
        Ok(l) => l,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Activity log" }
        div.card {
            p.muted { (count(listed.page_info.total_count)) " entries" }
            @if listed.data.is_empty() { (notice("ok", "Nothing recorded yet.")) }
            table.responsive {
                thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "Who" } th scope="col" { "What" } } }
                tbody { @for e in &listed.data { tr {
                    td data-label="When (UTC)" { (e.created_at.date()) " " (format!("{:02}:{:02}", e.created_at.hour(), e.created_at.minute())) }
                    td data-label="Who" { (word(&e.actor_type).replace('_', " ").to_lowercase()) }
                    td data-label="What" { (e.summary) }
                } } }
            }
            nav.pager aria-label="Pages" {
                @if page > 1 { a href={ "/app/organization/activity?page=" (page - 1) } { "Newer" } }
                @if listed.page_info.has_more { a href={ "/app/organization/activity?page=" (page + 1) } { "Older" } }
            }
        }
    };
    layout::page(&person, Nav::Organization, "Activity log", body)
}
