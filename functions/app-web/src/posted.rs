//! A posted form of a signed-in person: the person, the fields, and the form's protection
//! checked before any handler runs (the CSRF token of the session, not cross-site). A form
//! that fails it gets the "form expired" page (403).

use crate::layout;
use crate::session::{Fields, GatedPerson, Person, Upload, form_allowed};
use axum::extract::{FromRequest, FromRequestParts, Multipart, Request};
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

/// The largest form with files (a mark certificate, support attachments): 4 MiB of files and
/// the form around them. API Gateway hands a multipart body to the Lambda base64-encoded (a
/// third larger), and a Lambda receives at most 6 MB.
const MULTIPART_LIMIT: usize = 4 * 1024 * 1024 + 64 * 1024;

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
    let content_type = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let is_multipart = content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data");
    let limit = if is_multipart {
        MULTIPART_LIMIT
    } else {
        state.config.max_body_bytes
    };
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return Err(layout::page_with(
            Some(&person),
            layout::Nav::None,
            "Too large",
            html! { h1 { "That form is too large" } },
            StatusCode::PAYLOAD_TOO_LARGE,
        ));
    };
    let fields = if is_multipart {
        match multipart(&content_type, bytes, state).await {
            Some(fields) => fields,
            None => return Err(forbidden_form(&person)),
        }
    } else {
        Fields::parse(&bytes)
    };
    if !form_allowed(&parts.headers, &fields, &person.csrf) {
        return Err(forbidden_form(&person));
    }
    Ok((person, fields))
}

/// The fields and files of a `multipart/form-data` body; `None` when it does not parse.
async fn multipart(
    content_type: &str,
    bytes: axum::body::Bytes,
    state: &AppState,
) -> Option<Fields> {
    let req = Request::builder()
        .header(axum::http::header::CONTENT_TYPE, content_type)
        .body(axum::body::Body::from(bytes))
        .ok()?;
    let mut form = Multipart::from_request(req, state).await.ok()?;
    let mut fields = Fields::default();
    while let Some(field) = form.next_field().await.ok()? {
        let name = field.name().unwrap_or_default().to_owned();
        match field.file_name().map(str::to_owned) {
            Some(file_name) => {
                let content_type = field.content_type().unwrap_or_default().to_owned();
                let bytes = field.bytes().await.ok()?.to_vec();
                fields.push_file(
                    name,
                    Upload {
                        file_name,
                        content_type,
                        bytes,
                    },
                );
            }
            None => fields.push(name, field.text().await.ok()?),
        }
    }
    Some(fields)
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
