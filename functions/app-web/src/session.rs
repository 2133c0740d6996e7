//! The web application's session and its forms' protection.
//!
//! The session is the dashboard session of `POST /oauth/session` (the same stored session,
//! the same signed token), held in an `HttpOnly`, `Secure`, `SameSite=Lax` cookie whose path
//! is `/app`: the REST API reads only the `Authorization` header, so the cookie authenticates
//! these pages and nothing else. It is resolved exactly like the API's Bearer credential
//! (`mailward_http::auth::resolve_session`): membership, organization, sign-out, group limits,
//! role and the MFA gate all apply.
//!
//! Every form carries a CSRF token: after sign-in an HMAC of the session id under the server
//! secret; before it, a random value also held in a cookie (double submit). A POST whose
//! `Sec-Fetch-Site` says `cross-site` is refused before that.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use mailward_api_types::common::ApiVersion;
use mailward_domain::model::Role;
use mailward_http::AppState;
use mailward_http::auth::{MfaGate, ResolvedAuth, resolve_session};
use mailward_services::{Caller, Credential};
use sha2::Sha256;
use std::collections::HashMap;
use uuid::Uuid;

/// The session cookie.
pub const COOKIE: &str = "mw_session";
/// The pre-sign-in CSRF cookie.
pub const PRE_COOKIE: &str = "mw_presign";
/// The form field of the CSRF token.
pub const CSRF_FIELD: &str = "_csrf";

/// A signed-in person on a page.
#[derive(Debug, Clone)]
pub struct Person {
    /// The caller every operation gets, as the REST API would build it.
    pub caller: Caller,
    /// The account.
    pub account_id: Uuid,
    /// The role in this organization.
    pub role: Role,
    /// The stored session.
    pub session_id: Uuid,
    /// The CSRF token of this session's forms.
    pub csrf: String,
}

impl Person {
    /// Whether the person may change domains, tasks and records (editors and administrators).
    pub fn can_write(&self) -> bool {
        self.caller.require_write().is_ok()
    }

    /// Whether the person administers the organization (keys, members, settings).
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin && !self.caller.is_group_limited()
    }
}

/// Why no person could be made from the request (answered as a page by `signin`).
pub enum NoPerson {
    /// Not signed in (or the session ended): to the sign-in page.
    SignIn(String),
    /// Signed in, but the organization requires MFA first.
    Mfa(MfaGate, Box<Person>),
    /// The store failed.
    Failed(mailward_http::ApiError),
}

impl FromRequestParts<AppState> for Person {
    type Rejection = NoPerson;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let next = parts
            .uri
            .path_and_query()
            .map_or("/app/", |p| p.as_str())
            .to_owned();
        let next = if parts.method == axum::http::Method::GET {
            next
        } else {
            "/app/".to_owned()
        };
        let (person, gate) = person_of(state, &parts.headers)
            .await?
            .ok_or(NoPerson::SignIn(next))?;
        match gate {
            Some(gate) => Err(NoPerson::Mfa(gate, Box::new(person))),
            None => Ok(person),
        }
    }
}

/// A person held at the MFA gate may still reach the step-up page and sign out.
pub struct GatedPerson(pub Person);

impl FromRequestParts<AppState> for GatedPerson {
    type Rejection = NoPerson;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let (person, _) = person_of(state, &parts.headers)
            .await?
            .ok_or(NoPerson::SignIn("/app/".into()))?;
        Ok(GatedPerson(person))
    }
}

async fn person_of(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<(Person, Option<MfaGate>)>, NoPerson> {
    let Some(token) = cookie(headers, COOKIE) else {
        return Ok(None);
    };
    let resolved = resolve_session(state, &token)
        .await
        .map_err(NoPerson::Failed)?;
    let ResolvedAuth::Valid {
        org_id,
        credential,
        groups,
        mfa_gate,
        ..
    } = resolved
    else {
        return Ok(None);
    };
    let Credential::Session {
        account_id,
        role,
        session_id: Some(session_id),
        ..
    } = credential
    else {
        return Ok(None);
    };
    let caller = Caller {
        org_id,
        credential,
        version: ApiVersion::LATEST,
        groups,
    };
    let csrf = sign(state, &format!("app-csrf:{session_id}"));
    Ok(Some((
        Person {
            caller,
            account_id,
            role,
            session_id,
            csrf,
        },
        mfa_gate,
    )))
}

/// A cookie's value from the request.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
        .filter(|v| !v.is_empty())
}

/// The `Set-Cookie` value of the session cookie (empty value and zero age to clear it).
pub fn session_cookie(value: &str, max_age: i64) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/app; Max-Age={max_age}; HttpOnly; Secure; SameSite=Lax"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("mw_session=; Path=/app; Max-Age=0"))
}

/// The pre-sign-in CSRF value and, when it was not there, its `Set-Cookie`.
pub fn pre_token(headers: &HeaderMap) -> (String, Option<HeaderValue>) {
    if let Some(v) = cookie(headers, PRE_COOKIE).filter(|v| v.len() == 43) {
        return (v, None);
    }
    let bytes: [u8; 32] = rand_bytes();
    let value = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let set = HeaderValue::from_str(&format!(
        "{PRE_COOKIE}={value}; Path=/app; Max-Age=3600; HttpOnly; Secure; SameSite=Lax"
    ))
    .ok();
    (value, set)
}

fn rand_bytes() -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, id) in out.chunks_mut(16).zip([Uuid::new_v4(), Uuid::new_v4()]) {
        chunk.copy_from_slice(id.as_bytes());
    }
    out
}

fn sign(state: &AppState, message: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&state.config.secret_key)
        .expect("HMAC takes a key of any length");
    mac.update(message.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// The query of a redirect's notice, `n=<ok|bad>:<text>&ns=<signature>`: signed, so nobody
/// can link to one of our pages showing words of their own.
pub fn flash_query(state: &AppState, kind: &str, text: &str) -> String {
    let n = format!("{kind}:{text}");
    let sig = sign(state, &format!("app-flash:{n}"));
    format!("n={}&ns={}", encode(&n), &sig[..22])
}

/// The notice of a page's query (`n`, `ns`), when its signature holds: its kind and text.
pub fn read_flash(state: &AppState, n: Option<&str>, ns: Option<&str>) -> Option<(String, String)> {
    let (n, ns) = (n?, ns?);
    let sig = sign(state, &format!("app-flash:{n}"));
    if !constant_time_eq(&sig.as_bytes()[..22], ns.as_bytes()) {
        return None;
    }
    let (kind, text) = n.split_once(':')?;
    let kind = if kind == "ok" { "ok" } else { "bad" };
    Some((kind.to_owned(), text.to_owned()))
}

/// A redirect to `back` (a path of this application, with an optional `#anchor`) carrying a
/// signed notice.
pub fn redirect_with(
    state: &AppState,
    back: &str,
    kind: &str,
    text: &str,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let (path, anchor) = back.split_once('#').unwrap_or((back, ""));
    let sep = if path.contains('?') { '&' } else { '?' };
    let anchor = if anchor.is_empty() {
        String::new()
    } else {
        format!("#{anchor}")
    };
    axum::response::Redirect::to(&format!(
        "{path}{sep}{}{anchor}",
        flash_query(state, kind, text)
    ))
    .into_response()
}

/// A file part of a `multipart/form-data` form.
#[derive(Debug)]
pub struct Upload {
    /// The name the browser gave (the file's name on the person's machine).
    pub file_name: String,
    /// The type the browser declared.
    pub content_type: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// A posted form's fields (and, for a `multipart/form-data` form, its files).
#[derive(Debug, Default)]
pub struct Fields(HashMap<String, Vec<String>>, HashMap<String, Upload>);

impl Fields {
    /// Parses `application/x-www-form-urlencoded` bytes.
    pub fn parse(body: &[u8]) -> Fields {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body).unwrap_or_default();
        for (k, v) in pairs {
            map.entry(k).or_default().push(v);
        }
        Fields(map, HashMap::new())
    }

    /// Every non-empty value of a field (checkboxes of one name), trimmed.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .get(name)
            .into_iter()
            .flatten()
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// Adds a text field (of a multipart form).
    pub fn push(&mut self, name: String, value: String) {
        self.0.entry(name).or_default().push(value);
    }

    /// Adds a file (of a multipart form); an empty file input (no file chosen) is left out.
    pub fn push_file(&mut self, name: String, upload: Upload) {
        if !upload.bytes.is_empty() || !upload.file_name.is_empty() {
            self.1.insert(name, upload);
        }
    }

    /// The file posted under `name`, if one was chosen.
    pub fn file(&self, name: &str) -> Option<&Upload> {
        self.1.get(name)
    }

    /// The first value of a field, trimmed; `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .and_then(|v| v.first())
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

/// Whether the request may post a form: not cross-site, and its CSRF field is `expected`.
pub fn form_allowed(headers: &HeaderMap, fields: &Fields, expected: &str) -> bool {
    let cross_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("cross-site"));
    let given = fields.get(CSRF_FIELD).unwrap_or_default();
    !cross_site && !expected.is_empty() && constant_time_eq(given.as_bytes(), expected.as_bytes())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Percent-encodes a query value.
pub fn encode(value: &str) -> String {
    serde_urlencoded::to_string([("v", value)])
        .map(|s| s[2..].to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; mw_session=tok; b=2"),
        );
        assert_eq!(cookie(&headers, COOKIE).as_deref(), Some("tok"));
        assert_eq!(cookie(&headers, "c"), None);
    }

    #[test]
    fn forms_need_their_token_and_a_same_site_origin() {
        let fields = Fields::parse(b"_csrf=abc&name=x");
        let mut headers = HeaderMap::new();
        assert!(form_allowed(&headers, &fields, "abc"));
        assert!(!form_allowed(&headers, &fields, "abd"));
        assert!(!form_allowed(&headers, &Fields::parse(b"name=x"), "abc"));
        headers.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(!form_allowed(&headers, &fields, "abc"));
    }

    #[test]
    fn encode_escapes_query_values() {
        assert_eq!(encode("a b"), "a+b");
        assert_eq!(encode("/app/domains?x=1&y"), "%2Fapp%2Fdomains%3Fx%3D1%26y");
    }
}
