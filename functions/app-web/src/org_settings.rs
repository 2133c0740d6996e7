//! The organization's settings: its name and contact details, whether members must use a
//! second factor, the organization-wide switches of `settings`, and the email notification
//! switches (one per kind of mail Mailward sends; they belong to the organization, not to a
//! person). The same operations as `GET`/`POST /organizations/{id}`: everyone reads them,
//! administrators change them (`require_mfa` only when their sign-in completed MFA).

use crate::layout::{self, Nav, csrf};
use crate::organization::subnav;
use crate::posted::Posted;
use crate::session::{Fields, Person, redirect_with};
use axum::extract::{Query, State};
use axum::response::Response;
use mailward_api_types::organizations::{
    EmailNotificationsUpdate, EmailNotificationsView, Organization, SettingsUpdate,
    UpdateOrganizationRequest,
};
use mailward_http::AppState;
use mailward_services::{Credential, organizations};
use maud::{Markup, html};
use serde::Deserialize;

const BACK: &str = "/app/organization/settings";

/// The notification switches: the setting's name and what it sends.
const SWITCHES: [(&str, &str); 12] = [
    (
        "domain_drifted",
        "A domain's records drifted from what was set up",
    ),
    ("domain_failed", "A domain's checks fail"),
    ("domain_setup", "A domain finished its setup"),
    ("first_report", "A domain's first aggregate report arrived"),
    ("tasks_digests", "Digests of open tasks"),
    ("setup_reminders", "Reminders to finish a domain's setup"),
    ("invitation_reminders", "Reminders of pending invitations"),
    (
        "delegation_missing",
        "A record delegated to Mailward is missing",
    ),
    ("hosted_spf_live", "Hosted SPF went live"),
    ("billing_notices", "Billing notices"),
    ("alerts", "Alert rules' email destinations"),
    ("scheduled_reports", "Scheduled reports"),
];

#[derive(Debug, Default, Deserialize)]
pub struct SettingsQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// Whether the person's session completed a second factor (needed to change `require_mfa`).
pub fn session_mfa(person: &Person) -> bool {
    matches!(
        person.caller.credential,
        Credential::Session { mfa: true, .. }
    )
}

/// `GET /app/organization/settings`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<SettingsQuery>,
) -> Response {
    let org = match organizations::get(&app, &person.caller, person.caller.org_id).await {
        Ok(o) => o,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Settings and notifications" }
        (subnav(&person, BACK))
        (layout::flash(&app, &q.n, &q.ns))
        @if person.is_admin() {
            (details_form(&person, &org))
        } @else {
            (details_read(&org))
        }
        (notifications(&person, &org.settings.email_notifications))
    };
    layout::page(
        &person,
        Nav::Organization,
        "Settings and notifications",
        body,
    )
}

fn text_field(id: &str, label: &str, kind: &str, value: Option<&str>, hint: &str) -> Markup {
    let hint_id = format!("{id}-hint");
    html! {
        div {
            label for=(id) { (label) }
            input id=(id) type=(kind) name=(id) value=[value] aria-describedby=(hint_id);
            p.hint id=(hint_id) { (hint) }
        }
    }
}

fn check(name: &str, label: &str, on: bool, hint: Option<Markup>) -> Markup {
    let id = format!("opt-{name}");
    let hint_id = hint.as_ref().map(|_| format!("{id}-hint"));
    html! {
        div.check {
            input id=(id) type="checkbox" name=(name) value="on" checked[on] aria-describedby=[hint_id.as_deref()];
            div {
                label for=(id) { (label) }
                @if let (Some(hint), Some(hint_id)) = (hint, &hint_id) { p.hint id=(hint_id) { (hint) } }
            }
        }
    }
}

fn details_form(person: &Person, org: &Organization) -> Markup {
    let mfa_hint = if session_mfa(person) {
        html! { "Members without an authenticator app are asked to add one at their next sign-in." }
    } else {
        html! {
            "Changing it needs an administrator whose sign-in used two-factor authentication: "
            a href="/app/account/security" { "set up your authenticator app" }
            " (or sign in again with it)."
        }
    };
    html! {
        section.card #details aria-labelledby="details-h" {
            h2 #details-h { "The organization" }
            form method="post" action=(BACK) {
                (csrf(&person.csrf))
                div.fields {
                    div {
                        label for="name" { "Name" }
                        input #name type="text" name="name" value=(org.name) required minlength="3" maxlength="128";
                    }
                    (text_field("email", "Contact email", "email", org.email.as_deref(), "Optional; leave empty to clear."))
                    (text_field("phone_number", "Phone number", "tel", org.phone_number.as_deref(), "4 to 20 digits with + - ( ) . and spaces."))
                    (text_field("website", "Website", "url", org.website.as_deref(), "An absolute http(s) URL."))
                    (text_field("logo_url", "Logo URL", "url", org.logo_url.as_deref(), "An absolute http(s) URL of an image."))
                }
                fieldset {
                    legend { "Security and data" }
                    (check("require_mfa", "Members must use two-factor authentication", org.require_mfa, Some(mfa_hint)))
                    (check("redact_failure_reports", "Redact the local parts of addresses in failure reports", org.settings.redact_failure_reports, Some(html! { "Applies to reports received from now on." })))
                    (check("agent_proposals_enabled", "Propose next steps in domains' rollout plans", org.settings.agent_proposals_enabled, None))
                }
                p { button type="submit" { "Save settings" } }
            }
        }
    }
}

fn details_read(org: &Organization) -> Markup {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".to_owned());
    let yes = |b: bool| if b { "yes" } else { "no" };
    html! {
        section.card #details aria-labelledby="details-h" {
            h2 #details-h { "The organization" }
            p.muted { "Only administrators of the whole organization change these settings." }
            dl.facts {
                dt { "Name" } dd { (org.name) }
                dt { "Contact email" } dd { (or_none(&org.email)) }
                dt { "Phone number" } dd { (or_none(&org.phone_number)) }
                dt { "Website" } dd { (or_none(&org.website)) }
                dt { "Two-factor authentication required" } dd { (yes(org.require_mfa)) }
                dt { "Failure reports redacted" } dd { (yes(org.settings.redact_failure_reports)) }
                dt { "Next steps proposed" } dd { (yes(org.settings.agent_proposals_enabled)) }
            }
        }
    }
}

fn notifications(person: &Person, current: &EmailNotificationsView) -> Markup {
    let values = serde_json::to_value(current).unwrap_or_default();
    let on = |name: &str| values[name].as_bool().unwrap_or(true);
    html! {
        section.card #notifications aria-labelledby="notif-h" {
            h2 #notif-h { "Email notifications" }
            p { "Which mail Mailward sends the organization's members. Each message's unsubscribe link turns its switch off." }
            @if person.is_admin() {
                form method="post" action={ (BACK) "/notifications" } {
                    (csrf(&person.csrf))
                    fieldset {
                        legend { "Send mail when" }
                        @for (name, label) in SWITCHES { (check(name, label, on(name), None)) }
                    }
                    p { button type="submit" { "Save notifications" } }
                }
            } @else {
                table.responsive {
                    thead { tr { th scope="col" { "Mail" } th scope="col" { "Sent" } } }
                    tbody { @for (name, label) in SWITCHES { tr {
                        td data-label="Mail" { (label) }
                        td data-label="Sent" {
                            @if on(name) { span.badge.ok { "on" } } @else { span.badge.neutral { "off" } }
                        }
                    } } }
                }
            }
        }
    }
}

/// Clears an optional text field when it was left empty.
fn optional(fields: &Fields, name: &str) -> Option<Option<String>> {
    Some(fields.get(name).map(str::to_owned))
}

/// `POST /app/organization/settings`: the name, details and switches of the first form (an
/// unchecked box is off).
pub async fn save(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let checked = |name: &str| fields.get(name).is_some();
    let input = UpdateOrganizationRequest {
        name: Some(fields.get("name").unwrap_or_default().to_owned()),
        email: optional(&fields, "email"),
        phone_number: optional(&fields, "phone_number"),
        website: optional(&fields, "website"),
        logo_url: optional(&fields, "logo_url"),
        require_mfa: Some(checked("require_mfa")),
        settings: Some(SettingsUpdate {
            redact_failure_reports: Some(checked("redact_failure_reports")),
            agent_proposals_enabled: Some(checked("agent_proposals_enabled")),
            ..SettingsUpdate::default()
        }),
        ..UpdateOrganizationRequest::default()
    };
    let back = format!("{BACK}#details");
    match organizations::update(&app, &person.caller, person.caller.org_id, input).await {
        Ok(org) => redirect_with(
            &app,
            &back,
            "ok",
            &format!("Settings of {} saved.", org.name),
        ),
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/settings/notifications`: every switch as the form sent it.
pub async fn save_notifications(
    State(app): State<AppState>,
    Posted { person, fields }: Posted,
) -> Response {
    let wanted: serde_json::Map<String, serde_json::Value> = SWITCHES
        .iter()
        .map(|(name, _)| ((*name).to_owned(), fields.get(name).is_some().into()))
        .collect();
    let back = format!("{BACK}#notifications");
    let Ok(update) = serde_json::from_value::<EmailNotificationsUpdate>(wanted.into()) else {
        return redirect_with(&app, &back, "bad", "Unknown notification switch.");
    };
    let input = UpdateOrganizationRequest {
        settings: Some(SettingsUpdate {
            email_notifications: Some(update),
            ..SettingsUpdate::default()
        }),
        ..UpdateOrganizationRequest::default()
    };
    match organizations::update(&app, &person.caller, person.caller.org_id, input).await {
        Ok(_) => redirect_with(&app, &back, "ok", "Notifications saved."),
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_is_a_setting() {
        let all: serde_json::Map<String, serde_json::Value> = SWITCHES
            .iter()
            .map(|(name, _)| ((*name).to_owned(), true.into()))
            .collect();
        assert!(serde_json::from_value::<EmailNotificationsUpdate>(all.into()).is_ok());
        let view = serde_json::to_value(EmailNotificationsView::from(
            mailward_domain::model::EmailNotifications::default(),
        ))
        .unwrap();
        assert_eq!(view.as_object().unwrap().len(), SWITCHES.len());
    }
}
