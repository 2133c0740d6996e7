//! Signing in (the emailed code, then the authenticator app when the account has one),
//! choosing the organization, the MFA step-up an organization may require, and signing out.
//! The session opened is the dashboard session of `POST /oauth/session`, stored the same way.

use crate::layout::{self, Nav, csrf, notice};
use crate::posted::{GatedPosted, Posted};
use crate::session::{self, Fields, Person, form_allowed, pre_token, session_cookie};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use mailward_api_types::oauth::{SessionRequest, SessionStartRequest};
use mailward_domain::identity::SsoReturn;
use mailward_http::auth::{JWT_AUDIENCE, JWT_ISSUER, MfaGate, SessionClaims, mint_session_token};
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::{client_subject, enforce_logged};
use mailward_http::{ApiError, AppState};
use mailward_oauth::{flow, session as signin, sessions};
use mailward_services::config::Scope;
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

impl IntoResponse for session::NoPerson {
    fn into_response(self) -> Response {
        match self {
            session::NoPerson::SignIn(next) => {
                Redirect::to(&format!("/app/sign-in?next={}", session::encode(&next)))
                    .into_response()
            }
            session::NoPerson::Mfa(gate, person) => mfa_page(&person, gate, None),
            session::NoPerson::Failed(e) => layout::failure(e),
        }
    }
}

/// `GET /` and `GET /app`: to the application.
pub async fn root() -> Redirect {
    Redirect::to("/app/")
}

/// `GET /app/`: the domains, or the sign-in page.
pub async fn home(person: Result<Person, session::NoPerson>) -> Response {
    match person {
        Ok(_) => Redirect::to("/app/domains").into_response(),
        Err(session::NoPerson::SignIn(_)) => Redirect::to("/app/sign-in").into_response(),
        Err(other) => other.into_response(),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct SignInQuery {
    next: Option<String>,
    signin: Option<Uuid>,
    email: Option<String>,
}

/// Only a path of this application is followed after sign-in.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with("/app/") && !n.starts_with("//") && !n.contains('\\') => {
            n.to_owned()
        }
        _ => "/app/domains".to_owned(),
    }
}

/// `GET /app/sign-in`: the address form.
pub async fn sign_in_page(headers: HeaderMap, Query(q): Query<SignInQuery>) -> Response {
    email_form(&headers, q.next.as_deref(), None, StatusCode::OK)
}

fn email_form(
    headers: &HeaderMap,
    next: Option<&str>,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let (token, set) = pre_token(headers);
    let body = html! {
        div.card.narrow {
            h1 { "Sign in to Mailward" }
            @if let Some(e) = error { (notice("bad", e)) }
            form method="post" action="/app/sign-in" {
                (csrf(&token))
                input type="hidden" name="next" value=(safe_next(next));
                label for="email" { "Email address" }
                input #email type="email" name="email" autocomplete="email" required
                    aria-describedby="email-hint";
                p.hint #email-hint { "We email you a six-digit code. Organizations with single sign-on send you to their identity provider." }
                p { button type="submit" { "Email me a code" } }
            }
            p { "New to Mailward? " a href="/app/sign-up" { "Create an account" } }
        }
    };
    with_cookie(
        layout::page_with(None, Nav::None, "Sign in", body, status),
        set,
    )
}

pub fn with_cookie(mut response: Response, set: Option<header::HeaderValue>) -> Response {
    if let Some(set) = set {
        response.headers_mut().append(header::SET_COOKIE, set);
    }
    response
}

/// `POST /app/sign-in`: emails the code (or sends the person to single sign-on).
pub async fn start(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fields = Fields::parse(&body);
    let next = fields.get("next").map(str::to_owned);
    let (expected, _) = pre_token(&headers);
    if !form_allowed(&headers, &fields, &expected) {
        return email_form(
            &headers,
            next.as_deref(),
            Some("The form expired; please try again."),
            StatusCode::FORBIDDEN,
        );
    }
    let client = client_subject(&ip);
    for scope in [Scope::Signup, Scope::Signin] {
        if let Err(e) = enforce_logged(&app, None, scope, &client).await {
            return throttled(&headers, next.as_deref(), e);
        }
    }
    let email = fields.get("email").unwrap_or_default().to_owned();
    match signin::start(
        &app,
        SessionStartRequest {
            email: email.clone(),
        },
    )
    .await
    {
        Ok(started) => match started.sso_url {
            Some(_) => sso_begin(&app, &headers, &email, started.signin_id).await,
            None => Redirect::to(&format!(
                "/app/sign-in/code?signin={}&email={}&next={}",
                started.signin_id,
                session::encode(&email),
                session::encode(&safe_next(next.as_deref()))
            ))
            .into_response(),
        },
        Err(e) => email_form(
            &headers,
            next.as_deref(),
            Some(&layout::refusal_text(&e)),
            StatusCode::BAD_REQUEST,
        ),
    }
}

/// The cookie that binds a single sign-on to the browser that started it.
const SSO_COOKIE: &str = "mw_sso";

/// Sends the browser to the organization's identity provider, to come back to
/// `/app/sign-in/sso` (through `/oauth/sso/callback`). The sign-in's id goes in an `HttpOnly`
/// cookie too: only this browser can open the session it leads to.
async fn sso_begin(app: &AppState, headers: &HeaderMap, email: &str, signin_id: Uuid) -> Response {
    let base = mailward_http::links::base_url(&app.config);
    let begun = match mailward_oauth::sso::route(app, email).await {
        Ok(Some(connection)) => {
            mailward_oauth::sso::begin(app, &base, &connection, email, SsoReturn::Web(signin_id))
                .await
        }
        Ok(None) => Err(mailward_services::ServiceError::not_found("single sign-on")),
        Err(e) => Err(e),
    };
    match begun {
        Ok(url) => {
            // A page with a link rather than a redirect: the form's `form-action 'self'` would
            // stop a redirect to the provider's origin (the script follows the link at once).
            let body = html! {
                div.card.narrow {
                    h1 { "Continue with your identity provider" }
                    p { "Your organization signs you in through its identity provider." }
                    p { a.button href=(url) data-autofollow { "Continue to sign in" } }
                }
            };
            let mut response =
                layout::page_with(None, Nav::None, "Single sign-on", body, StatusCode::OK);
            if let Ok(cookie) = header::HeaderValue::from_str(&format!(
                "{SSO_COOKIE}={signin_id}; Path=/app; Max-Age=900; HttpOnly; Secure; SameSite=Lax"
            )) {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(e) => email_form(
            headers,
            None,
            Some(&layout::refusal_text(&e)),
            StatusCode::SERVICE_UNAVAILABLE,
        ),
    }
}

/// `GET /app/sign-in/sso`: back from the identity provider; opens the session of the sign-in
/// this browser started (or asks for the authenticator app's code when the account has one
/// and the organization does not take the provider's).
pub async fn sso_return(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    headers: HeaderMap,
    Query(q): Query<SignInQuery>,
) -> Response {
    let Some(signin_id) = q.signin else {
        return Redirect::to("/app/sign-in").into_response();
    };
    let bound = session::cookie(&headers, SSO_COOKIE).is_some_and(|c| c == signin_id.to_string());
    if !bound {
        return email_form(
            &headers,
            None,
            Some("This sign-in was started in another browser; start again here."),
            StatusCode::FORBIDDEN,
        );
    }
    let client = client_subject(&ip);
    if enforce_logged(&app, None, Scope::Signin, &client)
        .await
        .is_err()
    {
        return email_form(
            &headers,
            None,
            Some("Too many attempts; wait a minute and try again."),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    let input = SessionRequest {
        signin_id,
        code: None,
        mfa_code: None,
        organization_id: None,
    };
    let signed_in = match signin::finish_any(&app, input, &client).await {
        Ok(s) => s,
        Err(e) if e.code() == "mfa_required" => {
            let form = CodeForm {
                signin_id,
                email: None,
                next: None,
                mfa: true,
            };
            return code_form(&headers, &form, None, StatusCode::OK);
        }
        Err(e) => {
            return email_form(
                &headers,
                None,
                Some(&layout::refusal_text(&e)),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    signed_in_to(&app, &headers, signed_in, "/app/domains", Some(SSO_COOKIE)).await
}

fn throttled(headers: &HeaderMap, next: Option<&str>, e: ApiError) -> Response {
    let mut response = email_form(
        headers,
        next,
        Some("Too many sign-in attempts from your network; wait a minute and try again."),
        StatusCode::TOO_MANY_REQUESTS,
    );
    if let Some(retry) = e
        .into_response()
        .headers()
        .get(header::RETRY_AFTER)
        .cloned()
    {
        response.headers_mut().insert(header::RETRY_AFTER, retry);
    }
    response
}

/// `GET /app/sign-in/code`: the code form.
pub async fn code_page(headers: HeaderMap, Query(q): Query<SignInQuery>) -> Response {
    let Some(signin_id) = q.signin else {
        return Redirect::to("/app/sign-in").into_response();
    };
    code_form(
        &headers,
        &CodeForm {
            signin_id,
            email: q.email,
            next: q.next,
            mfa: false,
        },
        None,
        StatusCode::OK,
    )
}

struct CodeForm {
    signin_id: Uuid,
    email: Option<String>,
    next: Option<String>,
    mfa: bool,
}

fn code_form(
    headers: &HeaderMap,
    form: &CodeForm,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let (token, set) = pre_token(headers);
    let body = html! {
        div.card.narrow {
            h1 { "Enter your code" }
            @if let Some(e) = error { (notice("bad", e)) }
            @if let Some(email) = &form.email {
                p { "We sent a six-digit code to " strong { (email) } ". It is valid for 15 minutes." }
            }
            form method="post" action="/app/sign-in/code" {
                (csrf(&token))
                input type="hidden" name="signin" value=(form.signin_id);
                input type="hidden" name="next" value=(safe_next(form.next.as_deref()));
                @if let Some(email) = &form.email { input type="hidden" name="email" value=(email); }
                @if !form.mfa {
                    label for="code" { "Code from the email" }
                    input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code"
                        pattern="[0-9]{6}" maxlength="6" required;
                } @else {
                    label for="mfa_code" { "Code from your authenticator app" }
                    input #mfa_code type="text" name="mfa_code" inputmode="numeric" autocomplete="one-time-code"
                        maxlength="64" required aria-describedby="mfa-hint";
                    p.hint #mfa-hint { "Six digits from the app, or one of your recovery codes." }
                }
                p { button type="submit" { "Sign in" } }
            }
            p { a href="/app/sign-in" { "Start again" } }
        }
    };
    with_cookie(
        layout::page_with(None, Nav::None, "Enter your code", body, status),
        set,
    )
}

/// `POST /app/sign-in/code`: checks the code, opens the session, sets the cookie.
pub async fn finish(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fields = Fields::parse(&body);
    let Some(signin_id) = fields.get("signin").and_then(|s| s.parse::<Uuid>().ok()) else {
        return Redirect::to("/app/sign-in").into_response();
    };
    let mut form = CodeForm {
        signin_id,
        email: fields.get("email").map(str::to_owned),
        next: fields.get("next").map(str::to_owned),
        mfa: fields.get("mfa_code").is_some(),
    };
    let (expected, _) = pre_token(&headers);
    if !form_allowed(&headers, &fields, &expected) {
        return code_form(
            &headers,
            &form,
            Some("The form expired; please start again."),
            StatusCode::FORBIDDEN,
        );
    }
    let client = client_subject(&ip);
    if enforce_logged(&app, None, Scope::Signin, &client)
        .await
        .is_err()
    {
        return code_form(
            &headers,
            &form,
            Some("Too many attempts; wait a minute and try again."),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    let input = SessionRequest {
        signin_id,
        code: fields.get("code").map(str::to_owned),
        mfa_code: fields.get("mfa_code").map(str::to_owned),
        organization_id: None,
    };
    let signed_in = match signin::finish_any(&app, input, &client).await {
        Ok(s) => s,
        Err(e) if e.code() == "mfa_required" => {
            form.mfa = true;
            return code_form(&headers, &form, None, StatusCode::OK);
        }
        Err(e) => {
            return code_form(
                &headers,
                &form,
                Some(&layout::refusal_text(&e)),
                StatusCode::BAD_REQUEST,
            );
        }
    };
    signed_in_to(
        &app,
        &headers,
        signed_in,
        &safe_next(form.next.as_deref()),
        None,
    )
    .await
}

/// The answer to a completed sign-in: the session opened, its cookie set (and the single
/// sign-on's binding cookie cleared), the browser sent on to `to`.
async fn signed_in_to(
    app: &AppState,
    headers: &HeaderMap,
    signed_in: signin::SignedIn,
    to: &str,
    clear: Option<&str>,
) -> Response {
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let opened = open_session(
        app,
        signed_in.account.id,
        &signed_in.membership,
        signed_in.amr,
        &signed_in.provider,
        user_agent,
    )
    .await;
    let cookie = match opened {
        Ok(cookie) => cookie,
        Err(e) => return layout::failure(e),
    };
    let mut response = Redirect::to(to).into_response();
    response.headers_mut().append(header::SET_COOKIE, cookie);
    if let Some(name) = clear
        && let Ok(value) = header::HeaderValue::from_str(&format!(
            "{name}=; Path=/app; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
        ))
    {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// Opens a stored session and answers the `Set-Cookie` carrying its token.
pub async fn open_session(
    app: &AppState,
    account: Uuid,
    membership: &mailward_domain::model::Membership,
    amr: Vec<String>,
    provider: &str,
    user_agent: Option<&str>,
) -> Result<header::HeaderValue, ApiError> {
    let stored = sessions::open(
        app,
        account,
        membership.org_id,
        amr.clone(),
        provider,
        user_agent,
    )
    .await?;
    let claims = SessionClaims {
        sub: account,
        org: membership.org_id,
        role: membership.role(),
        amr,
        iss: JWT_ISSUER.into(),
        aud: JWT_AUDIENCE.into(),
        iat: stored.created_at.unix_timestamp(),
        exp: stored.expires_at.unix_timestamp(),
        sid: Some(stored.id),
    };
    let token = mint_session_token(&app.config.secret_key, &claims).map_err(ApiError::internal)?;
    Ok(session_cookie(&token, sessions::SESSION_TTL_SECS))
}

/// `POST /app/sign-out`: ends the stored session and clears the cookie.
pub async fn sign_out(
    State(app): State<AppState>,
    GatedPosted { person, .. }: GatedPosted,
) -> Response {
    if let Err(e) = sessions::sign_out(&app, &person.caller).await {
        return layout::service_failure(&person, e);
    }
    let mut response = Redirect::to("/app/sign-in").into_response();
    response
        .headers_mut()
        .append(header::SET_COOKIE, session_cookie("", 0));
    response
}

/// `GET /app/organizations`: the person's organizations, to switch.
pub async fn organizations(State(app): State<AppState>, person: Person) -> Response {
    let choices = match flow::choices(&app, person.account_id).await {
        Ok(c) => c,
        Err(e) => return layout::failure(ApiError::internal(e.description)),
    };
    let body = html! {
        h1 { "Your organizations" }
        div.card {
            table.responsive {
                thead { tr { th scope="col" { "Organization" } th scope="col" { "Your role" } th scope="col" { span.muted { "Action" } } } }
                tbody {
                    @for (membership, name) in &choices {
                        tr {
                            td data-label="Organization" { (name) }
                            td data-label="Your role" { (membership.role().as_str()) }
                            td data-label="Action" {
                                @if membership.org_id == person.caller.org_id {
                                    span.badge.ok { "Current" }
                                } @else {
                                    form.inline method="post" action="/app/organizations" {
                                        (csrf(&person.csrf))
                                        input type="hidden" name="organization_id" value=(membership.org_id);
                                        button.small type="submit" aria-label={ "Switch to " (name) } { "Switch" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::page(&person, Nav::None, "Organizations", body)
}

/// `POST /app/organizations`: opens a session in another organization of the same person
/// (same sign-in methods), and ends the current one.
pub async fn switch(
    State(app): State<AppState>,
    headers: HeaderMap,
    Posted { person, fields }: Posted,
) -> Response {
    let wanted = fields
        .get("organization_id")
        .and_then(|s| s.parse::<Uuid>().ok());
    let choices = match flow::choices(&app, person.account_id).await {
        Ok(c) => c,
        Err(e) => return layout::failure(ApiError::internal(e.description)),
    };
    let Some((membership, _)) = choices.into_iter().find(|(m, _)| Some(m.org_id) == wanted) else {
        return layout::service_failure(
            &person,
            mailward_services::ServiceError::not_found("organization"),
        );
    };
    let stored = match mailward_store_session(&app, &person).await {
        Ok(s) => s,
        Err(e) => return layout::service_failure(&person, e),
    };
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok());
    let cookie = match open_session(
        &app,
        person.account_id,
        &membership,
        stored.0,
        &stored.1,
        user_agent,
    )
    .await
    {
        Ok(c) => c,
        Err(e) => return layout::failure(e),
    };
    let _ = sessions::sign_out(&app, &person.caller).await;
    let mut response = Redirect::to("/app/domains").into_response();
    response.headers_mut().append(header::SET_COOKIE, cookie);
    response
}

/// The current session's sign-in methods and provider, carried to the new organization.
async fn mailward_store_session(
    app: &AppState,
    person: &Person,
) -> Result<(Vec<String>, String), mailward_services::ServiceError> {
    let session = sessions::current(app, person.account_id, person.session_id)
        .await?
        .ok_or_else(|| mailward_services::ServiceError::not_found("session"))?;
    Ok((session.amr, session.provider))
}

/// The page of a session held at the organization's MFA requirement.
pub fn mfa_page(person: &Person, gate: MfaGate, error: Option<&str>) -> Response {
    let body: Markup = html! {
        div.card.narrow {
            h1 { "Two-factor authentication required" }
            @if let Some(e) = error { (notice("bad", e)) }
            @match gate {
                MfaGate::StepUp => {
                    p { "Your organization requires a second factor. Enter the code from your authenticator app." }
                    form method="post" action="/app/mfa" {
                        (csrf(&person.csrf))
                        label for="mfa_code" { "Authenticator code" }
                        input #mfa_code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="64" required;
                        p { button type="submit" { "Continue" } }
                    }
                }
                MfaGate::Enroll => {
                    p { "Your organization requires a second factor, and your account has no authenticator app yet." }
                    p { a.button href="/app/account/security" { "Set up an authenticator app" } }
                }
            }
            form method="post" action="/app/sign-out" {
                (csrf(&person.csrf))
                button.secondary type="submit" { "Sign out" }
            }
        }
    };
    layout::page_with(
        None,
        Nav::None,
        "Two-factor authentication",
        body,
        StatusCode::FORBIDDEN,
    )
}

/// `POST /app/mfa`: the step-up with an app or recovery code.
pub async fn step_up(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    GatedPosted { person, fields }: GatedPosted,
) -> Response {
    let code = fields.get("code").unwrap_or_default();
    match sessions::step_up(&app, &person.caller, code, &client_subject(&ip)).await {
        Ok(_) => Redirect::to("/app/domains").into_response(),
        Err(e) => mfa_page(&person, MfaGate::StepUp, Some(&layout::refusal_text(&e))),
    }
}
