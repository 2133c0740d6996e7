//! A posted form of a signed-in person: the person, the fields, and the form's protection
//! checked before any handler runs (the CSRF token of the session, not cross-site). A form
//! that fails it gets the "form expired" page (403).

use crate::layout;
use crate::session::{Fields, GatedPerson, Person, form_allowed};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mailward_http::AppState;
use maud::html;

/// A form posted by a person past the MFA gate.
pub struct Posted {
    /// Who posted it.
    pub person: Person,
    /// Its fields.
    pub fields: Fields,
}

/// A form posted by a person the organization's MFA requirement still holds (step-up and
/// sign-out only).
pub struct GatedPosted {
    /// Who posted it.
    pub person: Person,
    /// Its fields.
    pub fields: Fields,
}

async fn read(req: Request, state: &AppState, gated: bool) -> Result<(Person, Fields), Response> {
    let (mut parts, body) = req.into_parts();
    let person = if gated {
        GatedPerson::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?
            .0
    } else {
        Person::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?
    };
    let Ok(bytes) = axum::body::to_bytes(body, state.config.max_body_bytes).await else {
        return Err(layout::page_with(
            Some(&person),
            layout::Nav::None,
            "Too large",
            html! { h1 { "That form is too large" } },
            StatusCode::PAYLOAD_TOO_LARGE,
        ));
    };
    let fields = Fields::parse(&bytes);
    if !form_allowed(&parts.headers, &fields, &person.csrf) {
        return Err(forbidden_form(&person));
    }
    Ok((person, fields))
}

impl FromRequest<AppState> for Posted {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (person, fields) = read(req, state, false).await?;
        Ok(Posted { person, fields })
    }
}

impl FromRequest<AppState> for GatedPosted {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (person, fields) = read(req, state, true).await?;
        Ok(GatedPosted { person, fields })
    }
}

/// The answer to a form without its token (an old tab, or another site's form).
pub fn forbidden_form(person: &Person) -> Response {
    layout::page_with(
        Some(person),
        layout::Nav::None,
        "Form expired",
        html! { h1 { "This form expired" } (layout::notice("bad", "Go back, reload the page and try again.")) },
        StatusCode::FORBIDDEN,
    )
}
