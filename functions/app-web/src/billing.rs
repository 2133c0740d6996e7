//! Usage and billing: the organization's domain counts and usage line items (`GET /usage`),
//! its subscription (`GET /billing/subscription`), and the way to the payment provider's
//! hosted checkout and portal (`POST /billing/checkout`, `POST /billing/portal`), for
//! administrators.

use crate::layout::word;
use crate::layout::{self, Nav, count, csrf, notice};
use crate::posted::Posted;
use crate::session::Person;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use mailward_api_types::billing::{CheckoutInput, PortalInput};
use mailward_api_types::organizations::PricingTypeView;
use mailward_http::AppState;
use maud::{Markup, html};

/// `GET /app/organization/billing`.
pub async fn page(State(app): State<AppState>, person: Person) -> Response {
    let usage =
        mailward_services::usage::usage(&app, &person.caller, &["line_items".to_owned()]).await;
    let subscription = mailward_billing::subscription(&app, &person.caller).await;
    let body = html! {
        h1 { "Usage and billing" }
        section.card aria-labelledby="usage-h" {
            h2 #usage-h { "Usage" }
            @match &usage {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(u) => {
                    dl.grid.figure {
                        div { dt { "Active domains" } dd { (count(u.active_domains)) } }
                        div { dt { "Inactive domains" } dd { (count(u.inactive_domains)) } }
                        div { dt { "Parked domains" } dd { (count(u.parked_domains)) } }
                        div { dt { "Plan" } dd { (u.pricing_type.replace('_', " ")) } }
                    }
                    @if let Some(items) = &u.line_items {
                        table {
                            caption.muted { "Usage line items" }
                            thead { tr { th scope="col" { "Item" } th.num scope="col" { "Quantity" } } }
                            tbody { @for i in items { tr { td { (i.code.replace('_', " ")) } td.num { (count(i.quantity)) } } } }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="sub-h" {
            h2 #sub-h { "Subscription" }
            @match &subscription {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(s) => {
                    p { "Plan " strong { (word(&s.plan).replace('_', " ")) } ", status " strong { (s.status.replace('_', " ")) } "." }
                    @if let Some(end) = s.trial_end { p { "Trial ends on " (end.date()) "." } }
                    @if let Some(end) = s.current_period_end { p { "Current period ends on " (end.date()) @if s.cancel_at_period_end { ", then the subscription ends" } "." } }
                    @if let Some(end) = s.grace_period_end { (notice("warn", &format!("Payment is overdue: the grace period ends on {}.", end.date()))) }
                }
            }
            @if person.is_admin() {
                (actions(&person, subscription.as_ref().is_ok_and(|s| s.status != "none" && s.status != "canceled")))
            }
        }
    };
    layout::page(&person, Nav::Organization, "Usage and billing", body)
}

fn actions(person: &Person, subscribed: bool) -> Markup {
    html! {
        div.row {
            @if !subscribed { form method="post" action="/app/organization/billing/checkout" {
                (csrf(&person.csrf))
                label for="plan" { "Plan" }
                select #plan name="plan" { option value="it_teams" { "IT teams" } option value="msp" { "Managed-service providers" } }
                " "
                button type="submit" { "Subscribe" }
            } }
            @if subscribed { form method="post" action="/app/organization/billing/portal" {
                (csrf(&person.csrf))
                button.secondary type="submit" { "Manage billing" }
            } }
        }
    }
}

/// A page that takes the person to the payment provider's hosted page: a link the script
/// follows at once (the form's `form-action 'self'` would stop a redirect to another origin).
fn onward(person: &Person, title: &str, url: &str) -> Response {
    let body = html! {
        div.card.narrow {
            h1 { (title) }
            p { "You continue on the payment provider's secure page." }
            p { a.button href=(url) data-autofollow { "Continue" } }
        }
    };
    layout::page(person, Nav::Organization, title, body)
}

fn refused(person: &Person, e: &mailward_services::ServiceError) -> Response {
    let api = mailward_http::ApiError::from(mailward_services::ServiceError::new(
        e.kind(),
        "refused",
        "refused",
    ));
    let status = if api.status.is_success() {
        StatusCode::BAD_REQUEST
    } else {
        api.status
    };
    layout::page_with(
        Some(person),
        Nav::Organization,
        "Billing",
        html! { h1 { "Billing" } (notice("bad", &layout::refusal_text(e))) p { a href="/app/organization/billing" { "Back" } } },
        status,
    )
}

fn return_url(app: &AppState) -> Option<String> {
    Some(format!(
        "{}/app/organization/billing",
        mailward_http::links::base_url(&app.config)
    ))
}

/// `POST /app/organization/billing/checkout`.
pub async fn checkout(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let plan = match fields.get("plan") {
        Some("msp") => PricingTypeView::Msp,
        _ => PricingTypeView::ItTeams,
    };
    let input = CheckoutInput {
        plan,
        return_url: return_url(&app),
    };
    match mailward_billing::start_checkout(&app, &person.caller, &input).await {
        Ok(page) => onward(&person, "Checkout", &page.url),
        Err(e) => refused(&person, &e),
    }
}

/// `POST /app/organization/billing/portal`.
pub async fn portal(State(app): State<AppState>, Posted { person, .. }: Posted) -> Response {
    let input = PortalInput {
        return_url: return_url(&app),
    };
    match mailward_billing::open_portal(&app, &person.caller, &input).await {
        Ok(page) => onward(&person, "Billing portal", &page.url),
        Err(e) => refused(&person, &e),
    }
}
