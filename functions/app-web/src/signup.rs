//! Signing up from the web: the address and the organization's name, the emailed code, then
//! the organization's first API key shown once and a session opened in the new organization.
//! The same operations as `POST /signup` and `POST /signup/verify`.

use crate::layout::{self, Nav, csrf, notice};
use crate::session::{self, Fields, form_allowed, pre_token};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use mailward_api_types::signup::{SignupRequest, VerifyRequest};
use mailward_domain::identity::AMR_OTP;
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{client_subject, enforce_logged};
use mailward_http::{ApiError, AppState};
use mailward_oauth::flow;
use mailward_services::config::Scope;
use mailward_services::signup;
use maud::html;
use serde::Deserialize;
use uuid::Uuid;

/// `GET /app/sign-up`.
pub async fn page(headers: HeaderMap) -> Response {
    form(&headers, None, StatusCode::OK)
}

fn form(headers: &HeaderMap, error: Option<&str>, status: StatusCode) -> Response {
    let (token, set) = pre_token(headers);
    let body = html! {
        div.card.narrow {
            h1 { "Create your Mailward account" }
            @if let Some(e) = error { (notice("bad", e)) }
            form method="post" action="/app/sign-up" {
                (csrf(&token))
                label for="email" { "Work email address" }
                input #email type="email" name="email" autocomplete="email" required;
                label for="organization_name" { "Organization name" }
                input #organization_name type="text" name="organization_name" autocomplete="organization" required minlength="3" maxlength="128";
                p { button type="submit" { "Email me a code" } }
            }
            p { "Already have an account? " a href="/app/sign-in" { "Sign in" } }
        }
    };
    crate::signin::with_cookie(
        layout::page_with(None, Nav::None, "Sign up", body, status),
        set,
    )
}

/// `POST /app/sign-up`.
pub async fn start(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fields = Fields::parse(&body);
    let (expected, _) = pre_token(&headers);
    if !form_allowed(&headers, &fields, &expected) {
        return form(
            &headers,
            Some("The form expired; please try again."),
            StatusCode::FORBIDDEN,
        );
    }
    if enforce_logged(&app, None, Scope::Signup, &client_subject(&ip))
        .await
        .is_err()
    {
        return form(
            &headers,
            Some("Too many sign-ups from your network; wait a minute and try again."),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    let email = fields.get("email").unwrap_or_default().to_owned();
    let input = SignupRequest {
        email: email.clone(),
        organization_name: fields
            .get("organization_name")
            .unwrap_or_default()
            .to_owned(),
        pricing_type: None,
        attribution_id: None,
    };
    match signup::start(&app, input).await {
        Ok(started) => Redirect::to(&format!(
            "/app/sign-up/code?signup={}&email={}",
            started.signup_id,
            session::encode(&email)
        ))
        .into_response(),
        Err(e) => form(
            &headers,
            Some(&layout::refusal_text(&e)),
            StatusCode::BAD_REQUEST,
        ),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct CodeQuery {
    signup: Option<Uuid>,
    email: Option<String>,
}

/// `GET /app/sign-up/code`.
pub async fn code_page(headers: HeaderMap, Query(q): Query<CodeQuery>) -> Response {
    match q.signup {
        Some(id) => code_form(&headers, id, q.email.as_deref(), None, StatusCode::OK),
        None => Redirect::to("/app/sign-up").into_response(),
    }
}

fn code_form(
    headers: &HeaderMap,
    id: Uuid,
    email: Option<&str>,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let (token, set) = pre_token(headers);
    let body = html! {
        div.card.narrow {
            h1 { "Confirm your address" }
            @if let Some(e) = error { (notice("bad", e)) }
            @if let Some(email) = email { p { "We sent a six-digit code to " strong { (email) } "." } }
            form method="post" action="/app/sign-up/code" {
                (csrf(&token))
                input type="hidden" name="signup" value=(id);
                @if let Some(email) = email { input type="hidden" name="email" value=(email); }
                label for="code" { "Code from the email" }
                input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required;
                p { button type="submit" { "Create account" } }
            }
        }
    };
    crate::signin::with_cookie(
        layout::page_with(None, Nav::None, "Confirm your address", body, status),
        set,
    )
}

/// `POST /app/sign-up/code`: creates the organization, shows its first key once and opens a
/// session in it.
pub async fn finish(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let fields = Fields::parse(&body);
    let Some(id) = fields.get("signup").and_then(|s| s.parse::<Uuid>().ok()) else {
        return Redirect::to("/app/sign-up").into_response();
    };
    let email = fields.get("email").map(str::to_owned);
    let (expected, _) = pre_token(&headers);
    if !form_allowed(&headers, &fields, &expected) {
        return code_form(
            &headers,
            id,
            email.as_deref(),
            Some("The form expired; please start again."),
            StatusCode::FORBIDDEN,
        );
    }
    let input = VerifyRequest {
        signup_id: id,
        code: fields.get("code").unwrap_or_default().to_owned(),
    };
    let (created, account) = match signup::verify_account(&app, input).await {
        Ok(c) => c,
        Err(e) => {
            return code_form(
                &headers,
                id,
                email.as_deref(),
                Some(&layout::refusal_text(&e)),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    let org = created.organization.id;
    let membership = match flow::choices(&app, account).await {
        Ok(choices) => choices
            .into_iter()
            .map(|(m, _)| m)
            .find(|m| m.org_id == org),
        Err(e) => return layout::failure(ApiError::internal(e.description)),
    };
    let Some(membership) = membership else {
        return layout::failure(ApiError::internal("a signup's account is not a member"));
    };
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let cookie = match crate::signin::open_session(
        &app,
        account,
        &membership,
        vec![AMR_OTP.to_owned()],
        "email_code",
        user_agent,
    )
    .await
    {
        Ok(c) => c,
        Err(e) => return layout::failure(e),
    };
    let body = html! {
        div.card {
            h1 { "Welcome to Mailward" }
            (notice("ok", &format!("{} is ready.", created.organization.name)))
            div.secret role="status" {
                p { strong { "Your first API key, for scripts and integrations. Copy it now: it is shown only once." } }
                p { code #new-key { (created.api_key.key) } " " button.small type="button" data-copy="new-key" hidden { "Copy" } }
            }
            p { a.button href="/app/domains" { "Add your first domain" } }
        }
    };
    let mut response = layout::page_with(None, Nav::None, "Welcome", body, StatusCode::OK);
    response.headers_mut().append(header::SET_COOKIE, cookie);
    response
}
