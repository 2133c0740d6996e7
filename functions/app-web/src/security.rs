//! The signed-in person's own second factor: an authenticator app (TOTP, RFC 6238) enrolled,
//! confirmed with its first code, its recovery codes shown once and replaced, and removed. The
//! same operations as `/account/mfa*`, and like them open to a person the organization's MFA
//! requirement holds at the door (so they can enrol and go on). The secret and the recovery
//! codes are rendered by the POST that made them: never in a URL, never cached.

use crate::layout::{self, Nav, csrf};
use crate::org_settings::session_mfa;
use crate::organization::subnav;
use crate::posted::GatedPosted;
use crate::session::{GatedPerson, Person, redirect_with};
use axum::extract::{Query, State};
use axum::response::Response;
use base64::Engine as _;
use mailward_api_types::identity::{MfaStatus, RecoveryCodes, TotpEnrollment};
use mailward_http::AppState;
use mailward_http::middleware::ClientIp;
use mailward_http::rate_limit::client_subject;
use mailward_oauth::{mfa, sessions};
use mailward_services::Credential;
use maud::{Markup, html};
use serde::Deserialize;

const BACK: &str = "/app/account/security";

/// What the answer of a POST shows once.
enum Shown<'a> {
    Nothing,
    Enrolment(&'a TotpEnrollment),
    Codes(&'a RecoveryCodes),
}

#[derive(Debug, Default, Deserialize)]
pub struct SecurityQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/account/security`.
pub async fn page(
    State(app): State<AppState>,
    GatedPerson(person): GatedPerson,
    Query(q): Query<SecurityQuery>,
) -> Response {
    let flash = layout::flash(&app, &q.n, &q.ns);
    render(&app, &person, Shown::Nothing, flash).await
}

async fn render(app: &AppState, person: &Person, shown: Shown<'_>, flash: Markup) -> Response {
    let status = match mfa::status(app, person.account_id, session_mfa(person)).await {
        Ok(s) => s,
        Err(e) => return layout::service_failure(person, e),
    };
    let body = html! {
        h1 { "Two-factor authentication" }
        (subnav(person, BACK))
        (flash)
        @match shown {
            Shown::Enrolment(e) => (enrolment(person, e)),
            Shown::Codes(c) => (codes(c)),
            Shown::Nothing => {},
        }
        section.card #totp aria-labelledby="totp-h" {
            h2 #totp-h { "Authenticator app" }
            (state(person, &status))
        }
    };
    layout::page(person, Nav::Organization, "Two-factor authentication", body)
}

fn code_input(id: &str, hint: &str) -> Markup {
    let hint_id = format!("{id}-hint");
    html! {
        label for=(id) { "Code" }
        input id=(id) type="text" name="code" inputmode="numeric" autocomplete="one-time-code"
            maxlength="64" required aria-describedby=(hint_id);
        p.hint id=(hint_id) { (hint) }
    }
}

fn state(person: &Person, status: &MfaStatus) -> Markup {
    html! {
        @if status.totp_enabled {
            p {
                span.badge.ok { "On" } " "
                @if let Some(at) = status.confirmed_at { "Since " (at.date()) ". " }
                "Sign-ins ask for the app's code after the emailed one."
            }
            p { (status.recovery_codes_remaining) " recovery codes left." }
            @if !status.session_mfa {
                p.hint { "This session was opened without the app: sign in again with it to change settings that need two-factor authentication." }
            }
            form method="post" action={ (BACK) "/recovery-codes" } {
                (csrf(&person.csrf))
                h3 { "Replace the recovery codes" }
                (code_input("regen-code", "Six digits from the app. The old recovery codes stop working."))
                p { button.secondary type="submit" { "Make new recovery codes" } }
            }
            form method="post" action={ (BACK) "/totp/disable" } data-confirm="Turn off two-factor authentication? Sign-ins will need only the emailed code." {
                (csrf(&person.csrf))
                h3 { "Turn it off" }
                (code_input("off-code", "Six digits from the app, or one of your recovery codes."))
                p { button.danger type="submit" { "Turn off two-factor authentication" } }
            }
        } @else if status.totp_pending {
            p { span.badge.warn { "Waiting" } " An enrolment awaits the first code from your app." }
            (confirm_form(person))
            div.row {
                form method="post" action={ (BACK) "/totp" } {
                    (csrf(&person.csrf))
                    button.secondary type="submit" { "Start again with a new secret" }
                }
                form method="post" action={ (BACK) "/totp/disable" } {
                    (csrf(&person.csrf))
                    button.danger type="submit" { "Cancel the enrolment" }
                }
            }
        } @else {
            p { span.badge.neutral { "Off" } " Sign-ins need only the code Mailward emails you." }
            p { "An authenticator app (such as 1Password, Google Authenticator or Microsoft Authenticator) adds a second step: a six-digit code that changes every 30 seconds." }
            form method="post" action={ (BACK) "/totp" } {
                (csrf(&person.csrf))
                button type="submit" { "Set up an authenticator app" }
            }
        }
    }
}

fn confirm_form(person: &Person) -> Markup {
    html! {
        form method="post" action={ (BACK) "/totp/confirm" } {
            (csrf(&person.csrf))
            (code_input("confirm-code", "The six digits your app shows now."))
            p { button type="submit" { "Confirm and turn on" } }
        }
    }
}

fn enrolment(person: &Person, e: &TotpEnrollment) -> Markup {
    let qr = format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(e.qr_svg.as_bytes())
    );
    html! {
        section.card #enrol aria-labelledby="enrol-h" {
            h2 #enrol-h { "Add Mailward to your app" }
            div.enrol {
                img.qr src=(qr) alt="QR code of the authenticator link below" width="200" height="200";
                div {
                    p { "Scan the code with your authenticator app, or type this secret into it:" }
                    p { code #totp-secret { (e.secret) } " " button.small type="button" data-copy="totp-secret" hidden { "Copy" } }
                    p.hint { (e.algorithm) ", " (e.digits) " digits, every " (e.period) " seconds. This secret is shown only now." }
                    p { "Or open this link in an app on this device:" }
                    p { code #totp-uri { (e.otpauth_uri) } }
                }
            }
            h3 { "Confirm with a first code" }
            (confirm_form(person))
        }
    }
}

fn codes(c: &RecoveryCodes) -> Markup {
    html! {
        section.card #codes aria-labelledby="codes-h" {
            h2 #codes-h { "Your recovery codes" }
            div.secret role="status" {
                p { strong { "Keep these codes somewhere safe now: they are shown only once." } " Each one works once in place of the app's code." }
                ul.codes #recovery-codes { @for code in &c.recovery_codes { li { code { (code) } } } }
                p { button.small type="button" data-copy="recovery-codes" hidden { "Copy" } }
            }
        }
    }
}

/// `POST /app/account/security/totp`: a new pending authenticator, its secret shown once.
pub async fn start(
    State(app): State<AppState>,
    GatedPosted { person, .. }: GatedPosted,
) -> Response {
    match mfa::start(&app, person.account_id).await {
        Ok(e) => render(&app, &person, Shown::Enrolment(&e), html! {}).await,
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/account/security/totp/confirm`: the first code turns the app on; the recovery
/// codes are shown once, and this session counts as having completed MFA.
pub async fn confirm(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    GatedPosted { mut person, fields }: GatedPosted,
) -> Response {
    let code = fields.get("code").unwrap_or_default();
    let confirmed = mfa::confirm(&app, person.account_id, code, &client_subject(&ip)).await;
    match confirmed {
        Ok(c) => {
            if let Err(e) = sessions::mark_mfa(&app, &person.caller).await {
                return redirect_with(&app, BACK, "bad", &layout::refusal_text(&e));
            }
            // The session counts as MFA from now on (this request's caller was read before).
            if let Credential::Session { mfa, .. } = &mut person.caller.credential {
                *mfa = true;
            }
            let ok = layout::notice("ok", "Two-factor authentication is on.");
            render(&app, &person, Shown::Codes(&c), ok).await
        }
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/account/security/recovery-codes`: ten new codes, shown once.
pub async fn regenerate(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    GatedPosted { person, fields }: GatedPosted,
) -> Response {
    let code = fields.get("code").unwrap_or_default();
    match mfa::regenerate(&app, person.account_id, code, &client_subject(&ip)).await {
        Ok(c) => {
            let ok = layout::notice(
                "ok",
                "New recovery codes made; the old ones no longer work.",
            );
            render(&app, &person, Shown::Codes(&c), ok).await
        }
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/account/security/totp/disable`: removes the app (a pending enrolment goes
/// without a code).
pub async fn disable(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    GatedPosted { person, fields }: GatedPosted,
) -> Response {
    let code = fields.get("code").unwrap_or_default();
    match mfa::disable(&app, person.account_id, code, &client_subject(&ip)).await {
        Ok(()) => redirect_with(&app, BACK, "ok", "Two-factor authentication is off."),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}
