//! Single sign-on: the organization's OpenID Connect provider (issuer, client, the sealed
//! secret's last four characters, the redirect URI to register), the email domains it covers
//! with the TXT record proving each, set, verified and removed. The same operations as
//! `GET`/`POST`/`DELETE /sso` and `POST /sso/verify`: administrators of the whole organization
//! only.

use crate::layout::word;
use crate::layout::{self, Nav, csrf};
use crate::organization::subnav;
use crate::posted::Posted;
use crate::session::{Fields, Person, redirect_with};
use axum::extract::{Query, State};
use axum::response::Response;
use mailward_api_types::admin::RoleView;
use mailward_api_types::identity::{SsoConnectionRequest, SsoConnectionView};
use mailward_http::{AppState, links};
use mailward_oauth::sso;
use mailward_services::ErrorKind;
use maud::{Markup, html};
use serde::Deserialize;

const BACK: &str = "/app/organization/sso";

#[derive(Debug, Default, Deserialize)]
pub struct SsoQuery {
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/organization/sso`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<SsoQuery>,
) -> Response {
    let current = if person.is_admin() {
        match sso::get(&app, &person.caller, &links::base_url(&app.config)).await {
            Ok(view) => Some(view),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return layout::service_failure(&person, e),
        }
    } else {
        None
    };
    let body = html! {
        h1 { "Single sign-on" }
        (subnav(&person, BACK))
        (layout::flash(&app, &q.n, &q.ns))
        @if !person.is_admin() {
            section.card { p { "Only administrators of the whole organization manage single sign-on." } }
        } @else {
            @match &current {
                Some(view) => (connection(&person, view)),
                None => section.card #connection aria-labelledby="conn-h" {
                    h2 #conn-h { "OpenID Connect provider" }
                    p { "None yet: members sign in with the code Mailward emails them. Connect your identity provider (Google Workspace, Microsoft Entra ID, Okta or any OpenID Connect provider) below." }
                    p { "Register this redirect URI at the provider: " code { (sso::redirect_uri(&links::base_url(&app.config))) } }
                },
            }
            (form(&person, current.as_ref()))
        }
    };
    layout::page(&person, Nav::Organization, "Single sign-on", body)
}

fn connection(person: &Person, view: &SsoConnectionView) -> Markup {
    let yes = |b: bool| if b { "yes" } else { "no" };
    html! {
        section.card #connection aria-labelledby="conn-h" {
            h2 #conn-h { "OpenID Connect provider" }
            dl.facts {
                dt { "Issuer" } dd { code { (view.issuer) } }
                dt { "Client id" } dd { code { (view.client_id) } }
                dt { "Client secret" } dd { "ends in " code { "…" (view.client_secret_last_four) } }
                dt { "Redirect URI to register" } dd {
                    code #redirect-uri { (view.redirect_uri) } " "
                    button.small type="button" data-copy="redirect-uri" hidden { "Copy" }
                }
                dt { "Provider" } dd { (view.provider) }
                dt { "Emailed codes refused for verified domains" } dd { (yes(view.enforced)) }
                dt { "New people join as" } dd { (view.jit_role.as_ref().map_or("nobody: members only".to_owned(), word)) }
                dt { "Provider's MFA accepted" } dd { (yes(view.trust_provider_mfa)) }
            }
            h3 #domains-h { "Email domains" }
            @if view.domains.is_empty() {
                p { "No domain yet: sign-ins are routed to the provider by the address's domain once it is verified." }
            } @else {
                p { "Publish each TXT record at your DNS host, then verify." }
                table.responsive aria-labelledby="domains-h" {
                    thead { tr { th scope="col" { "Domain" } th scope="col" { "TXT name" } th scope="col" { "TXT value" } th scope="col" { "Status" } } }
                    tbody { @for d in &view.domains { tr {
                        td data-label="Domain" { (d.name) }
                        td data-label="TXT name" { code { (d.txt_name) } }
                        td data-label="TXT value" { code { (d.txt_value) } }
                        td data-label="Status" {
                            @if d.verified { span.badge.ok { "verified" } } @else { span.badge.warn { "not verified" } }
                        }
                    } } }
                }
            }
            div.row.actions {
                @if view.domains.iter().any(|d| !d.verified) {
                    form method="post" action={ (BACK) "/verify" } {
                        (csrf(&person.csrf))
                        button type="submit" { "Verify domains" }
                    }
                }
                form method="post" action={ (BACK) "/delete" } data-confirm="Remove single sign-on? Members sign in with emailed codes again." {
                    (csrf(&person.csrf))
                    button.danger type="submit" { "Remove single sign-on" }
                }
            }
        }
    }
}

fn form(person: &Person, current: Option<&SsoConnectionView>) -> Markup {
    let domains = current.map_or_else(String::new, |c| {
        c.domains
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    });
    let role = current.and_then(|c| c.jit_role);
    let secret_hint = if current.is_some() {
        "Leave empty to keep the stored secret."
    } else {
        "Stored sealed; never shown again."
    };
    html! {
        section.card #configure aria-labelledby="configure-h" {
            h2 #configure-h { @if current.is_some() { "Change the provider" } @else { "Connect a provider" } }
            form method="post" action=(BACK) {
                (csrf(&person.csrf))
                div.fields {
                    div {
                        label for="issuer" { "Issuer URL" }
                        input #issuer type="text" inputmode="url" name="issuer" required maxlength="512"
                            value=[current.map(|c| c.issuer.as_str())] aria-describedby="issuer-hint";
                        p.hint #issuer-hint { "https, as the provider's discovery document names it." }
                    }
                    div {
                        label for="client_id" { "Client id" }
                        input #client_id type="text" name="client_id" required maxlength="256"
                            value=[current.map(|c| c.client_id.as_str())];
                    }
                    div {
                        label for="client_secret" { "Client secret" }
                        input #client_secret type="password" name="client_secret" maxlength="1024"
                            autocomplete="off" required[current.is_none()] aria-describedby="secret-hint";
                        p.hint #secret-hint { (secret_hint) }
                    }
                    div {
                        label for="jit_role" { "People of a verified domain who are not members" }
                        select #jit_role name="jit_role" {
                            option value="" selected[role.is_none()] { "Cannot sign in" }
                            option value="viewer" selected[role == Some(RoleView::Viewer)] { "Join as viewers" }
                            option value="editor" selected[role == Some(RoleView::Editor)] { "Join as editors" }
                            option value="admin" selected[role == Some(RoleView::Admin)] { "Join as administrators" }
                        }
                    }
                }
                label for="sso-domains" { "Email domains, one per line" }
                textarea #sso-domains name="domains" rows="3" aria-describedby="domains-hint" { (domains) }
                p.hint #domains-hint { "At most 20. A domain kept keeps its proof; a new one needs its TXT record." }
                fieldset {
                    legend { "Options" }
                    div.check {
                        input #enforced type="checkbox" name="enforced" value="on" checked[current.is_some_and(|c| c.enforced)];
                        label for="enforced" { "Refuse emailed codes for the verified domains" }
                    }
                    div.check {
                        input #trust_provider_mfa type="checkbox" name="trust_provider_mfa" value="on" checked[current.is_some_and(|c| c.trust_provider_mfa)];
                        label for="trust_provider_mfa" { "Accept the provider's MFA for the organization's requirement" }
                    }
                }
                p { button type="submit" { "Save single sign-on" } }
            }
        }
    }
}

fn lines(fields: &Fields, name: &str) -> Vec<String> {
    fields
        .get(name)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `POST /app/organization/sso`: creates or changes the connection.
pub async fn save(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let jit_role = match fields.get("jit_role") {
        None => None,
        Some("viewer") => Some(RoleView::Viewer),
        Some("editor") => Some(RoleView::Editor),
        Some("admin") => Some(RoleView::Admin),
        Some(_) => return redirect_with(&app, BACK, "bad", "Unknown role (field: jit_role)."),
    };
    let input = SsoConnectionRequest {
        issuer: Some(fields.get("issuer").unwrap_or_default().to_owned()),
        client_id: Some(fields.get("client_id").unwrap_or_default().to_owned()),
        client_secret: fields.get("client_secret").map(str::to_owned),
        domains: Some(lines(&fields, "domains")),
        enforced: Some(fields.get("enforced").is_some()),
        jit_role: Some(jit_role),
        trust_provider_mfa: Some(fields.get("trust_provider_mfa").is_some()),
        mfa_acr_values: None,
    };
    let base = links::base_url(&app.config);
    match sso::save(&app, &person.caller, &base, input).await {
        Ok(_) => redirect_with(&app, BACK, "ok", "Single sign-on saved."),
        Err(e) => redirect_with(
            &app,
            &format!("{BACK}#configure"),
            "bad",
            &layout::refusal_text(&e),
        ),
    }
}

/// `POST /app/organization/sso/verify`: looks for the domains' TXT proofs.
pub async fn verify(State(app): State<AppState>, Posted { person, .. }: Posted) -> Response {
    let base = links::base_url(&app.config);
    match sso::verify(&app, &person.caller, &base).await {
        Ok(view) => {
            let verified = view.domains.iter().filter(|d| d.verified).count();
            let text = format!("{verified} of {} domains verified.", view.domains.len());
            let kind = if verified == view.domains.len() {
                "ok"
            } else {
                "bad"
            };
            redirect_with(&app, BACK, kind, &text)
        }
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/sso/delete`: removes the connection.
pub async fn delete(State(app): State<AppState>, Posted { person, .. }: Posted) -> Response {
    match sso::delete(&app, &person.caller).await {
        Ok(()) => redirect_with(
            &app,
            BACK,
            "ok",
            "Single sign-on removed: members sign in with emailed codes again.",
        ),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}
