//! The page shell every page shares: the head with the hashed assets, the skip link, the main
//! navigation, the organization and sign-out, and the answer's headers (a strict
//! Content-Security-Policy without `unsafe-inline`, no caching of private pages).

use crate::assets;
use crate::session::{CSRF_FIELD, Person};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_http::ApiError;
use mailward_services::ServiceError;
use maud::{DOCTYPE, Markup, html};

/// The pages' policy: scripts and styles from this origin only, inline SVG charts, forms to
/// this origin only, never framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Which main section a page belongs to (marked `aria-current`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// The domain list and pages.
    Domains,
    /// Tasks across domains.
    Tasks,
    /// The organization's pages.
    Organization,
    /// Nothing (sign-in, public pages).
    None,
}

/// A complete page for a signed-in person.
pub fn page(person: &Person, nav: Nav, title: &str, body: Markup) -> Response {
    document(title, Some((person, nav)), body, StatusCode::OK)
}

/// A complete page with another status.
pub fn page_with(
    person: Option<&Person>,
    nav: Nav,
    title: &str,
    body: Markup,
    status: StatusCode,
) -> Response {
    document(title, person.map(|p| (p, nav)), body, status)
}

/// A public page (no navigation but the sign-in link).
pub fn public(title: &str, body: Markup) -> Response {
    document(title, None, body, StatusCode::OK)
}

/// A page for anyone, with another status (a public page's 404 or 410).
pub fn public_with(title: &str, body: Markup, status: StatusCode) -> Response {
    document(title, None, body, status)
}

fn document(
    title: &str,
    person: Option<(&Person, Nav)>,
    body: Markup,
    status: StatusCode,
) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href="data:,";
                title { (title) " · Mailward" }
                link rel="stylesheet" href=(assets::css());
                script type="module" src=(assets::js()) {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    nav aria-label="Main" {
                        a.brand href="/app/" { "Mailward" }
                        @if let Some((person, nav)) = person {
                            (link("/app/domains", "Domains", nav == Nav::Domains))
                            (link("/app/tasks", "Tasks", nav == Nav::Tasks))
                            (link("/app/organization", "Organization", nav == Nav::Organization))
                            span.spacer {}
                            a.org href="/app/organizations" { "Switch organization" }
                            form.inline method="post" action="/app/sign-out" {
                                (csrf(&person.csrf))
                                button.small type="submit" { "Sign out" }
                            }
                        } @else {
                            a href="/app/audit" { "Free domain audit" }
                            span.spacer {}
                            a href="/app/sign-in" { "Sign in" }
                        }
                    }
                }
                main #main tabindex="-1" { (body) }
            }
        }
    };
    html_response(status, markup.into_string())
}

fn link(href: &str, text: &str, current: bool) -> Markup {
    html! {
        @if current { a href=(href) aria-current="page" { (text) } }
        @else { a href=(href) { (text) } }
    }
}

/// The hidden CSRF field of a form.
pub fn csrf(token: &str) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(token); }
}

/// An HTML answer with the pages' headers.
pub fn html_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// A notice box: `ok`, `warn` or `bad`.
pub fn notice(kind: &str, text: &str) -> Markup {
    let role = if kind == "bad" { "alert" } else { "status" };
    html! { div class={ "notice " (kind) } role=(role) { (text) } }
}

/// The signed notice a redirect carried, if any.
pub fn flash(state: &mailward_http::AppState, n: &Option<String>, ns: &Option<String>) -> Markup {
    match crate::session::read_flash(state, n.as_deref(), ns.as_deref()) {
        Some((kind, text)) => notice(&kind, &text),
        None => html! {},
    }
}

/// What an operation's refusal says on a page: its message, and the field it names.
pub fn refusal_text(e: &ServiceError) -> String {
    match e.param_name() {
        Some(param) if e.kind().is_client_error() => format!("{} (field: {param})", e.message()),
        _ if e.kind().is_client_error() => e.message().to_owned(),
        _ => "Something went wrong on our side; try again in a moment.".to_owned(),
    }
}

/// The page of an operation's failure (a missing domain, a refusal, a store fault).
pub fn service_failure(person: &Person, e: ServiceError) -> Response {
    let text = refusal_text(&e);
    let api = ApiError::from(e);
    let status = api.status;
    if status.is_server_error() {
        tracing::error!(code = %api.code, message = %api.message, "web page failed");
    }
    page_with(
        Some(person),
        Nav::None,
        "Not available",
        html! { h1 { "Not available" } (notice("bad", &text)) p { a href="/app/domains" { "Back to your domains" } } },
        status,
    )
}

/// A path's id, or the "not available" page: a malformed id names nothing, like an id of
/// another organization.
pub fn path_id(
    person: &Person,
    raw: &str,
    what: &'static str,
) -> Result<uuid::Uuid, Box<Response>> {
    raw.parse()
        .map_err(|_| Box::new(service_failure(person, ServiceError::not_found(what))))
}

/// The page of a failure before a person is known.
pub fn failure(e: ApiError) -> Response {
    tracing::error!(code = %e.code, message = %e.message, "web page failed");
    page_with(
        None,
        Nav::None,
        "Not available",
        html! { h1 { "Not available" } (notice("bad", "Something went wrong on our side; try again in a moment.")) },
        e.status,
    )
}

/// Formats a percentage with one decimal.
pub fn pct(value: f64) -> String {
    format!("{value:.1}%")
}

/// Formats a count with thousands separators.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Back to `path` with a change's outcome: `ok` when it succeeded, the service's refusal
/// otherwise.
pub fn back_with<T>(
    state: &mailward_http::AppState,
    path: &str,
    ok: &str,
    outcome: Result<T, ServiceError>,
) -> Response {
    match outcome {
        Ok(_) => crate::session::redirect_with(state, path, "ok", ok),
        Err(e) => crate::session::redirect_with(state, path, "bad", &refusal_text(&e)),
    }
}

/// A form field read as one of a closed set of words (the JSON enum's spelling); the refusal
/// names the field.
pub fn enum_field<T: serde::de::DeserializeOwned>(
    fields: &crate::session::Fields,
    name: &str,
) -> Result<T, String> {
    let given = fields.get(name).unwrap_or_default();
    serde_json::from_value(serde_json::Value::String(given.to_owned()))
        .map_err(|_| format!("Unknown value {given:?} (field: {name})."))
}

/// A serialized enum's word (`dmarc`, `open`…).
pub fn word<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234), "1,234");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn the_policy_allows_no_inline_code() {
        assert!(!CSP.contains("unsafe-inline") && !CSP.contains("unsafe-eval"));
    }
}
