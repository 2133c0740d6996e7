//! `GET /oauth/authorize` and the sign-in pages behind it (`POST /oauth/authorize`): the person
//! enters an email address, then the emailed code, then picks an organization and allows (or
//! declines) the connection; the browser goes back to the client's loopback callback with the
//! code. The pages keep their progress in one signed hidden field, so nothing is stored
//! between steps but the sign-in challenge.

use crate::pages::{error_line, escape, page};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_domain::identity::{AMR_MFA, AMR_OTP};
use mailward_http::extract::Query;
use mailward_http::middleware::ClientIp;
use mailward_http::oauth::form;
use mailward_http::rate_limit::{client_subject, hit};
use mailward_http::{AppState, Routes, links};
use mailward_oauth::Urls;
use mailward_oauth::flow::{self, AuthorizeError, AuthorizeParams, PageState};
use mailward_oauth::signin::{self, SignInError};
use mailward_services::config::Scope;
use serde::Deserialize;
use uuid::Uuid;

/// How long the pages may take, start to end.
const PAGE_TTL_SECS: i64 = 900;

fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, "no-store"),
        ],
    )
        .into_response()
}

fn email_page(app: &AppState, state: &PageState, error: Option<&str>) -> Response {
    page(
        StatusCode::OK,
        "Sign in to connect an assistant",
        &format!(
            "<p>An assistant asks to use Mailward on your behalf. Sign in with the email address of your Mailward account; we will send you a one-time code.</p>\n{}<form method=\"post\" action=\"/oauth/authorize\">\n<input type=\"hidden\" name=\"step\" value=\"email\">\n<input type=\"hidden\" name=\"state\" value=\"{}\">\n<label for=\"email\">Email address</label><input id=\"email\" type=\"email\" name=\"email\" required autocomplete=\"email\" autofocus>\n<button type=\"submit\">Send the code</button>\n</form>",
            error_line(error),
            escape(&flow::seal(app, state))
        ),
    )
}

fn code_page(app: &AppState, state: &PageState, error: Option<&str>) -> Response {
    page(
        StatusCode::OK,
        "Enter your code",
        &format!(
            "<p>If an account uses that address, a six-digit code is on its way. It expires in 15 minutes.</p>\n{}<form method=\"post\" action=\"/oauth/authorize\">\n<input type=\"hidden\" name=\"step\" value=\"code\">\n<input type=\"hidden\" name=\"state\" value=\"{}\">\n<label for=\"code\">Code</label><input id=\"code\" type=\"text\" name=\"code\" inputmode=\"numeric\" pattern=\"[0-9]{{6}}\" maxlength=\"6\" required autocomplete=\"one-time-code\" autofocus>\n<button type=\"submit\">Sign in</button>\n</form>",
            error_line(error),
            escape(&flow::seal(app, state))
        ),
    )
}

fn mfa_page(app: &AppState, state: &PageState, error: Option<&str>) -> Response {
    page(
        StatusCode::OK,
        "Enter your authenticator code",
        &format!(
            "<p>Your account has an authenticator app. Enter its current six-digit code, or one of your recovery codes.</p>\n{}<form method=\"post\" action=\"/oauth/authorize\">\n<input type=\"hidden\" name=\"step\" value=\"mfa\">\n<input type=\"hidden\" name=\"state\" value=\"{}\">\n<label for=\"code\">Authenticator or recovery code</label><input id=\"code\" type=\"text\" name=\"code\" maxlength=\"64\" required autocomplete=\"one-time-code\" autofocus>\n<button type=\"submit\">Continue</button>\n</form>",
            error_line(error),
            escape(&flow::seal(app, state))
        ),
    )
}

async fn consent_page(app: &AppState, state: &PageState, account: Uuid) -> Response {
    let choices = match flow::choices(app, account).await {
        Ok(c) => c,
        Err(e) => {
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                &error_line(Some(&e.description)),
            );
        }
    };
    if choices.is_empty() {
        return page(
            StatusCode::FORBIDDEN,
            "No organization to connect",
            "<p>Your account is not a member of an active organization, so there is nothing an assistant could use. Ask an administrator for an invitation, or sign up first.</p>",
        );
    }
    let mut options = String::new();
    let may_skip = flow::may_skip_organization(&state.request);
    // One organization: nothing to pick; the token is scoped to it.
    if let [(membership, name)] = choices.as_slice()
        && !may_skip
    {
        options.push_str(&format!(
            "<p>Organization: <strong>{}</strong> <span class=\"muted\">({:?})</span></p>\n<input type=\"hidden\" name=\"organization_id\" value=\"{}\">\n",
            escape(name),
            membership.role(),
            membership.org_id
        ));
    }
    // A hosted connector asking only to stay connected may leave the choice open: its tokens
    // serve the directory for the person's single organization.
    if may_skip {
        options.push_str("<label><input type=\"radio\" name=\"organization_id\" value=\"none\"> No organization: read-only directory access to my one organization</label>\n");
    }
    for (i, (membership, name)) in choices
        .iter()
        .enumerate()
        .filter(|_| choices.len() > 1 || may_skip)
    {
        options.push_str(&format!(
            "<label><input type=\"radio\" name=\"organization_id\" value=\"{}\"{}> {} <span class=\"muted\">({:?})</span></label>\n",
            membership.org_id,
            if i == 0 { " checked" } else { "" },
            escape(name),
            membership.role()
        ));
    }
    let mut reads = String::new();
    let mut writes = String::new();
    for scope in &state.request.scopes {
        let line = format!(
            "<li>{} <span class=\"muted\">({})</span></li>\n",
            escape(mailward_oauth::scope_words(scope)),
            escape(scope)
        );
        if mailward_oauth::is_write_scope(scope) {
            writes.push_str(&line);
        } else {
            reads.push_str(&line);
        }
    }
    // Changes are granted only while the box stays ticked: unticked, nothing is sent and the
    // token carries the reads alone.
    let changes = if writes.is_empty() {
        String::new()
    } else {
        format!(
            "<fieldset><legend>Changes</legend><ul>\n{writes}</ul>\n<label><input type=\"checkbox\" name=\"allow_changes\" value=\"yes\" checked> Allow these changes (untick to connect read-only)</label></fieldset>\n"
        )
    };
    page(
        StatusCode::OK,
        "Allow the assistant?",
        &format!(
            "<p>{} will act as you in the organization you pick, with your role there (a viewer can only read). It may:</p>\n<ul>\n{reads}</ul>\n<form method=\"post\" action=\"/oauth/authorize\">\n<input type=\"hidden\" name=\"step\" value=\"consent\">\n<input type=\"hidden\" name=\"state\" value=\"{}\">\n{changes}{options}<button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button> <button class=\"secondary\" type=\"submit\" name=\"decision\" value=\"deny\">Decline</button>\n</form>\n<p class=\"muted\">You can revoke the connection at any time (DELETE /oauth/connections/{{id}}).</p>",
            escape(&mailward_oauth::client_product(&state.request.redirect_uri)),
            escape(&flow::seal(app, state))
        ),
    )
    .into_response()
}

/// The consent pages' trip to the provider: a page with the link (a form's redirect to another
/// origin would break the pages' `form-action` policy).
pub async fn consent_link(app: &AppState, state: &PageState, email: &str) -> Option<Response> {
    let connection = mailward_oauth::sso::route(app, email).await.ok()??;
    let sealed = flow::seal(app, state);
    let base = links::base_url(&app.config);
    let url = match mailward_oauth::sso::begin(
        app,
        &base,
        &connection,
        email,
        mailward_domain::identity::SsoReturn::Consent(sealed),
    )
    .await
    {
        Ok(url) => url,
        Err(e) => {
            return Some(page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Single sign-on is unavailable",
                &error_line(Some(e.message())),
            ));
        }
    };
    Some(page(
        StatusCode::OK,
        "Sign in with your organization",
        &format!(
            "<p>Your organization signs you in through its identity provider.</p>\n<p><a id=\"sso\" href=\"{}\">Continue to your organization's sign-in</a></p>",
            escape(&url)
        ),
    ))
}

/// The consent pages after the organization's provider signed the person in: the app's code
/// when they have one and the provider's MFA was not taken, else the consent page.
pub async fn after_sso(
    app: &AppState,
    mut state: PageState,
    email: &str,
    result: mailward_domain::identity::SsoResult,
) -> Response {
    let needs_app_code = !mailward_domain::identity::amr_has_mfa(&result.amr)
        && mailward_oauth::mfa::enrolled(app, result.account_id)
            .await
            .unwrap_or(true);
    if needs_app_code {
        return match signin::challenge_after_sso(app, email, result).await {
            Ok(id) => {
                state.challenge = Some(id);
                mfa_page(app, &state, None)
            }
            Err(e) => page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                &error_line(Some(&e.to_string())),
            ),
        };
    }
    state.account = Some(result.account_id);
    state.challenge = None;
    state.amr = result.amr;
    consent_page(app, &state, result.account_id).await
}

/// Starts the sign-in of an authorization request.
#[utoipa::path(get, path = "/oauth/authorize", tag = "oauth", security(()),
    params(
        ("response_type" = String, Query, description = "`code`"),
        ("client_id" = String, Query, min_length = 1, description = "The connector client id"),
        ("redirect_uri" = String, Query, pattern = r"^(http://(127\.0\.0\.1|localhost|\[::1\])(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?(/[^#]*)?|https://[^#\s]+)$", description = "A loopback callback: `http://127.0.0.1:<port>/…`, `http://localhost:<port>/…` or `http://[::1]:<port>/…` (any port; 8765 for Claude-Code-style clients); or, an extension for hosted connectors, exactly one of the HTTPS callbacks the service lists (`--oauth-redirect-uris`, `MAILWARD_OAUTH_REDIRECT_URIS`, the template's `OAuthRedirectUris`; default `https://claude.ai/api/mcp/auth_callback`, `https://claude.com/api/mcp/auth_callback`, `https://chatgpt.com/connector_platform_oauth_redirect`). Any other HTTPS URL is refused with the 400 page, never redirected to."),
        ("code_challenge" = String, Query, description = "PKCE: base64url SHA-256 of the verifier"),
        ("code_challenge_method" = String, Query, description = "`S256` (plain is refused)"),
        ("state" = Option<String>, Query, description = "Returned unchanged"),
        ("scope" = Option<String>, Query, description = "Space-separated scopes (default: all but `offline_access`)"),
        ("resource" = Option<String>, Query, description = "RFC 8707: `{base_url}/mcp` (default) or `{base_url}/mcp/directory`"),
    ),
    description = "An HTML page: the person signs in with an emailed one-time code, picks an organization and allows the connection; the browser then goes to `redirect_uri` with `code`, `state` and `iss`. A client id other than the connector's (including a client-ID metadata document URL) answers 403 naming the client to use; a bad `redirect_uri` answers 400 and is never redirected to; other errors go back to the client as `error` and `error_description`.",
    responses(
        (status = 200, description = "The sign-in page", content_type = "text/html"),
        (status = 303, description = "An error sent back to the client's redirect URI"),
        (status = 400, description = "Missing client id or a redirect URI that is neither a loopback callback nor a listed hosted callback (a page); a parameter given twice or of the wrong shape (JSON naming it)",
            content((String = "text/html"), (mailward_api_types::ErrorBody = "application/json"))),
        (status = 403, description = "Not the connector client (a page naming the one to use)", content_type = "text/html"),
    ))]
pub async fn authorize(
    State(app): State<AppState>,
    Query(params): Query<AuthorizeParams>,
) -> Response {
    let urls = Urls::new(&app, &links::base_url(&app.config));
    match flow::check_request(&app, &urls, &params) {
        Ok(request) => email_page(
            &app,
            &PageState {
                request,
                challenge: None,
                account: None,
                amr: Vec::new(),
                exp: app.clock.unix() + PAGE_TTL_SECS,
            },
            None,
        ),
        Err(AuthorizeError::Redirect(location)) => see_other(&location),
        Err(AuthorizeError::Page { forbidden, message }) => page(
            if forbidden {
                StatusCode::FORBIDDEN
            } else {
                StatusCode::BAD_REQUEST
            },
            "This sign-in link is not valid",
            &error_line(Some(&message)),
        ),
    }
}

#[derive(Deserialize)]
struct StepForm {
    step: Option<String>,
    state: Option<String>,
    email: Option<String>,
    code: Option<String>,
    organization_id: Option<String>,
    decision: Option<String>,
    /// `yes` while the consent page's box for write scopes stays ticked.
    allow_changes: Option<String>,
}

/// One step of the sign-in pages.
#[utoipa::path(post, path = "/oauth/authorize", tag = "oauth", security(()),
    request_body(content = mailward_api_types::oauth::AuthorizeStepForm, content_type = "application/x-www-form-urlencoded",
        description = "The page's form: `step` (`email`, `code`, `mfa` or `consent`), the signed `state` field, and `email`, `code` or `organization_id` with `decision` (`allow` or `deny`). On consent, write scopes are granted only with `allow_changes=yes` (the page's box, ticked by default); without it the token carries the read scopes alone."),
    description = "Submitted by the sign-in pages of `GET /oauth/authorize`. Wrong codes are counted (five end the sign-in; an address takes at most 20 a day from one client address, across sign-ins, as on `POST /oauth/session`); the signed state expires after 15 minutes. Every step counts in the `signin` bucket per client address (IPv6 per /64): over it, a 429 page with `Retry-After`.",
    responses(
        (status = 200, description = "The next page", content_type = "text/html"),
        (status = 429, description = "Too many sign-in steps from this address (a page, with `Retry-After`)", content_type = "text/html"),
        (status = 303, description = "Back to the client with `code` (allowed) or `error=access_denied` (declined)"),
        (status = 400, description = "The form or its state is not valid (a page)", content_type = "text/html"),
    ))]
pub async fn step(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let client = client_subject(&ip);
    if let Some(bucket) = hit(&app, Scope::Signin, &client).await
        && bucket.exceeded
    {
        let mut response = page(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-in attempts",
            &format!(
                "<p>Too many sign-in steps came from your network. Try again in {} minutes.</p>",
                bucket.reset_secs.div_ceil(60)
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, bucket.reset_secs.into());
        return response;
    }
    let urls = Urls::new(&app, &links::base_url(&app.config));
    let expired = || {
        page(
            StatusCode::BAD_REQUEST,
            "This sign-in expired",
            "<p>The sign-in took too long or the page was changed. Start again from your assistant.</p>",
        )
    };
    let Ok(input) = form::<StepForm>(&headers, &body) else {
        return expired();
    };
    let Some(mut state) = input.state.as_deref().and_then(|s| flow::open(&app, s)) else {
        return expired();
    };
    match input.step.as_deref() {
        Some("email") => {
            let email = input.email.as_deref().unwrap_or_default();
            match signin::start(&app, email).await {
                Ok(started) => {
                    if started.sso.is_some()
                        && let Some(page) =
                            consent_link(&app, &state, &email.trim().to_lowercase()).await
                    {
                        return page;
                    }
                    state.challenge = Some(started.id);
                    code_page(&app, &state, None)
                }
                Err(e @ (SignInError::InvalidEmail | SignInError::Throttled)) => {
                    email_page(&app, &state, Some(&e.to_string()))
                }
                Err(e) => email_page(&app, &state, Some(&e.to_string())),
            }
        }
        Some("code") => {
            let Some(challenge) = state.challenge else {
                return expired();
            };
            let code = input.code.as_deref().unwrap_or_default();
            match signin::verify(&app, challenge, code, &client).await {
                Ok(signin::Verified::Done(account)) => {
                    state.account = Some(account.id);
                    state.challenge = None;
                    state.amr = vec![AMR_OTP.to_owned()];
                    consent_page(&app, &state, account.id).await
                }
                Ok(signin::Verified::NeedsMfa(_)) => mfa_page(&app, &state, None),
                // Only a challenge completed by single sign-on ends this way; the consent pages'
                // own trips to the provider come back through `after_sso`.
                Ok(signin::Verified::Sso(account, result)) => {
                    state.account = Some(account.id);
                    state.challenge = None;
                    state.amr = result.amr;
                    consent_page(&app, &state, account.id).await
                }
                Err(e @ SignInError::Incorrect(_)) => code_page(&app, &state, Some(&e.to_string())),
                Err(SignInError::Expired) => {
                    state.challenge = None;
                    email_page(
                        &app,
                        &state,
                        Some(
                            "That sign-in expired or had too many wrong codes; enter your address again.",
                        ),
                    )
                }
                Err(e) => code_page(&app, &state, Some(&e.to_string())),
            }
        }
        Some("mfa") => {
            let Some(challenge) = state.challenge else {
                return expired();
            };
            let code = input.code.as_deref().unwrap_or_default();
            match signin::second_factor(&app, challenge, code, &client).await {
                Ok((account, sso)) => {
                    state.account = Some(account.id);
                    state.challenge = None;
                    state.amr = match sso {
                        Some(result) => result.amr,
                        None => vec![AMR_OTP.to_owned()],
                    };
                    state.amr.push(AMR_MFA.to_owned());
                    consent_page(&app, &state, account.id).await
                }
                Err(e @ (SignInError::MfaIncorrect(_) | SignInError::MfaReused)) => {
                    mfa_page(&app, &state, Some(&e.to_string()))
                }
                Err(SignInError::Expired) => {
                    state.challenge = None;
                    email_page(
                        &app,
                        &state,
                        Some(
                            "That sign-in expired or had too many wrong codes; enter your address again.",
                        ),
                    )
                }
                Err(e) => mfa_page(&app, &state, Some(&e.to_string())),
            }
        }
        Some("consent") => {
            let Some(account) = state.account else {
                return expired();
            };
            if input.decision.as_deref() != Some("allow") {
                return see_other(&flow::deny(&urls, &state.request));
            }
            let org = match input.organization_id.as_deref() {
                Some("none") if flow::may_skip_organization(&state.request) => None,
                Some(o) => match Uuid::parse_str(o) {
                    Ok(org) => Some(org),
                    Err(_) => return consent_page(&app, &state, account).await,
                },
                None => return consent_page(&app, &state, account).await,
            };
            let mut request = state.request.clone();
            if input.allow_changes.as_deref() != Some("yes") {
                request
                    .scopes
                    .retain(|scope| !mailward_oauth::is_write_scope(scope));
            }
            match flow::approve(&app, &urls, &request, account, org, &state.amr).await {
                Ok(location) => see_other(&location),
                Err(e) => page(
                    StatusCode::FORBIDDEN,
                    "The connection was not allowed",
                    &error_line(Some(&e.description)),
                ),
            }
        }
        _ => expired(),
    }
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(authorize, step))
}
