//! DNS connections: the organization's DNS hosts (Route 53 with an IAM user's keys or a role
//! Mailward assumes), the zones each one serves and which domains they cover, connected and
//! removed by administrators; and, on a domain's page, publishing its planned records through
//! a connection that covers it. The same operations as `/dns-connections`,
//! `/dns-connections/{id}/coverage` and `/dns-connections/{id}/publish`.

use crate::layout::{self, Nav, csrf};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::dns_connections::{
    CreateDnsConnection, DnsConnection, DnsCredentialsInput, PublishDnsRecords,
};
use mailward_http::AppState;
use mailward_services::dns_connections;
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

const BACK: &str = "/app/organization/dns";

#[derive(Debug, Default, Deserialize)]
pub struct DnsQuery {
    n: Option<String>,
    ns: Option<String>,
    /// A connection whose coverage to read (it reads the zones again).
    coverage: Option<Uuid>,
}

/// `GET /app/organization/dns`.
pub async fn page(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<DnsQuery>,
) -> Response {
    let caller = &person.caller;
    let list = match dns_connections::list(&app, caller).await {
        Ok(list) => list,
        Err(e) => return layout::service_failure(&person, e),
    };
    let coverage = match q.coverage {
        Some(id) => Some(dns_connections::coverage(&app, caller, id).await),
        None => None,
    };
    let admin = person.is_admin();
    let body = html! {
        h1 { "DNS connections" }
        (crate::organization::subnav(&person, BACK))
        (layout::flash(&app, &q.n, &q.ns))
        p { "Connect the DNS host of your domains so Mailward can read its zones, say which domains they serve, and publish the records a domain's page asks for." }
        section.card aria-labelledby="conn-h" {
            h2 #conn-h { "Connections" }
            @if list.data.is_empty() { p { "No connection yet." } }
            @for c in &list.data { (connection(&person, c)) }
        }
        @if let Some(coverage) = &coverage {
            section.card #coverage aria-labelledby="coverage-h" {
                h2 #coverage-h { "Coverage" }
                @match coverage {
                    Err(e) => (layout::notice("bad", &layout::refusal_text(e))),
                    Ok(c) => {
                        p { (c.covered_count) " of your " (c.domain_count) " domain(s) are served by this connection's zones." }
                        @if !c.covered.is_empty() {
                            table.responsive {
                                thead { tr { th scope="col" { "Domain" } th scope="col" { "Zone" } th scope="col" { "Zone id" } } }
                                tbody { @for d in &c.covered { tr {
                                    td data-label="Domain" { a href={ "/app/domains/" (d.domain_id) "#records" } { (d.domain) } }
                                    td data-label="Zone" { (d.zone) }
                                    td data-label="Zone id" { code { (d.zone_id) } }
                                } } }
                            }
                        }
                        @if !c.uncovered.is_empty() {
                            p.hint { "Not served: " (c.uncovered.iter().map(|d| d.domain.as_str()).collect::<Vec<_>>().join(", ")) "." }
                        }
                    }
                }
            }
        }
        @if admin {
            form.card method="post" action=(BACK) aria-labelledby="new-conn-h" {
                h2 #new-conn-h { "Connect Route 53" }
                (csrf(&person.csrf))
                label for="conn-name" { "Name" }
                input #conn-name type="text" name="name" required maxlength="100" placeholder="Production DNS";
                p.hint { "Either an IAM user's keys with read access to Route 53 (and write access to publish), or a role Mailward assumes. The credentials are checked by reading the zones, stored encrypted, and never shown again." }
                div.row {
                    div { label for="conn-key" { "Access key id" } input #conn-key type="text" name="access_key_id" autocomplete="off"; }
                    div { label for="conn-secret" { "Secret access key" } input #conn-secret type="password" name="secret_access_key" autocomplete="off"; }
                }
                label for="conn-role" { "or a role ARN" }
                input #conn-role type="text" name="role_arn" placeholder="arn:aws:iam::123456789012:role/mailward-dns";
                p.hint { "The role's trust policy should require the external id " code { (list.external_id) } "." }
                p { button type="submit" { "Connect" } }
            }
        }
    };
    layout::page(&person, Nav::Organization, "DNS connections", body)
}

fn connection(person: &Person, c: &DnsConnection) -> Markup {
    html! {
        h3 { (c.name) " " span class={ "badge " (if c.status == "active" { "ok" } else { "bad" }) } { (c.status) } }
        p.hint { "Route 53, " (c.credential_hint) ". Zones read " (c.checked_at) "." }
        @if let Some(e) = &c.error { (layout::notice("bad", e)) }
        p { (c.zones.len()) " zone(s): " (c.zones.iter().map(|z| z.name.as_str()).collect::<Vec<_>>().join(", ")) }
        div.moves {
            a.button.secondary href={ (BACK) "?coverage=" (c.id) "#coverage" } { "Coverage" }
            @if person.is_admin() {
                form.inline method="post" action={ (BACK) "/" (c.id) "/delete" } data-confirm={ "Remove the connection " (c.name) "? Its stored credentials are deleted." } {
                    (csrf(&person.csrf))
                    button.danger type="submit" aria-label={ "Remove " (c.name) } { "Remove" }
                }
            }
        }
    }
}

/// `POST /app/organization/dns`: connects a DNS host.
pub async fn create(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let text = |name: &str| fields.get(name).map(str::to_owned);
    let input = CreateDnsConnection {
        provider: "route53".into(),
        name: text("name").unwrap_or_default(),
        credentials: DnsCredentialsInput {
            access_key_id: text("access_key_id"),
            secret_access_key: text("secret_access_key"),
            role_arn: text("role_arn"),
        },
    };
    match dns_connections::create(&app, &person.caller, input).await {
        Ok(c) => redirect_with(
            &app,
            &format!("{BACK}?coverage={}", c.id),
            "ok",
            &format!("Connected: {} zone(s) read.", c.zones.len()),
        ),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/dns/{id}/delete`.
pub async fn delete(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, .. }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "DNS connection") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let outcome = dns_connections::delete(&app, &person.caller, id).await;
    layout::back_with(&app, BACK, "Connection removed.", outcome)
}

/// The connections a domain's records card offers to publish through: `(id, name)`.
pub async fn choices(app: &AppState, person: &Person) -> Vec<(Uuid, String)> {
    if !person.can_write() {
        return Vec::new();
    }
    dns_connections::list(app, &person.caller)
        .await
        .map(|l| {
            l.data
                .into_iter()
                .filter(|c| c.status == "active")
                .map(|c| (c.id, c.name))
                .collect()
        })
        .unwrap_or_default()
}

/// The publish form under a domain's records (editors, with at least one connection).
pub fn publish_form(person: &Person, domain: Uuid, choices: &[(Uuid, String)]) -> Markup {
    html! {
        @if !choices.is_empty() {
            form method="post" action={ "/app/domains/" (domain) "/publish" } {
                (csrf(&person.csrf))
                div.row {
                    div {
                        label for="publish-connection" { "Publish these records through" }
                        select #publish-connection name="connection_id" {
                            @for (id, name) in choices { option value=(id) { (name) } }
                        }
                    }
                    div { button type="submit" { "Publish in my DNS" } }
                }
            }
        }
    }
}

/// `POST /app/domains/{id}/publish`: writes the planned records through a connection.
pub async fn publish(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "domain") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let back = format!("/app/domains/{id}#records");
    let Some(connection) = fields.get("connection_id").and_then(|c| c.parse().ok()) else {
        return redirect_with(
            &app,
            &back,
            "bad",
            "Choose a DNS connection (field: connection_id).",
        );
    };
    let input = PublishDnsRecords { domain_id: id };
    match dns_connections::publish(&app, &person.caller, connection, input).await {
        Ok(done) => {
            let failed: Vec<String> = done
                .record_sets
                .iter()
                .filter(|r| r.result != "published")
                .map(|r| {
                    format!(
                        "{} {}: {}",
                        r.record_type,
                        r.host,
                        r.error.as_deref().unwrap_or("failed")
                    )
                })
                .collect();
            if failed.is_empty() {
                let text = format!(
                    "Published {} record set(s) in zone {}. Press Check now once they are live.",
                    done.record_sets.len(),
                    done.zone
                );
                redirect_with(&app, &back, "ok", &text)
            } else {
                redirect_with(&app, &back, "bad", &failed.join("; "))
            }
        }
        Err(e) => redirect_with(&app, &back, "bad", &layout::refusal_text(&e)),
    }
}
