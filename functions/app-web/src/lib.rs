//! The `app-web` function: the web application under `/app/` (and `/`, which redirects to
//! it). Server-rendered HTML from the same operations as the REST routes and MCP tools, with
//! a small script layer for copy buttons; every page reads and every form posts without it.
//! The routes are plain axum routes, not OpenAPI operations: the pages are not part of the
//! API document. See ARCHITECTURE.md ("The web application").

mod alert_rules;
mod assets;
mod audit;
mod billing;
mod charts;
mod dns;
mod domain;
mod domains;
mod groups;
mod history;
mod hosting;
mod integrations;
mod layout;
mod org_settings;
mod organization;
mod people;
mod posted;
mod prospecting;
mod security;
mod session;
mod settings;
mod signin;
mod signup;
mod sso;
mod support;
mod tasks;

use axum::routing::{get, post};
use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    Routes::new()
        .route("/", get(signin::root))
        .route("/app", get(signin::root))
        .route("/app/", get(signin::home))
        .route("/app/assets/{name}", get(assets::serve))
        .route(
            "/app/sign-in",
            get(signin::sign_in_page).post(signin::start),
        )
        .route(
            "/app/sign-in/code",
            get(signin::code_page).post(signin::finish),
        )
        .route("/app/sign-up", get(signup::page).post(signup::start))
        .route(
            "/app/sign-up/code",
            get(signup::code_page).post(signup::finish),
        )
        .route("/app/sign-in/sso", get(signin::sso_return))
        .route("/app/sign-out", post(signin::sign_out))
        .route("/app/mfa", post(signin::step_up))
        .route("/app/account/security", get(security::page))
        .route("/app/account/security/totp", post(security::start))
        .route(
            "/app/account/security/totp/confirm",
            post(security::confirm),
        )
        .route(
            "/app/account/security/totp/disable",
            post(security::disable),
        )
        .route(
            "/app/account/security/recovery-codes",
            post(security::regenerate),
        )
        .route(
            "/app/organization/settings",
            get(org_settings::page).post(org_settings::save),
        )
        .route(
            "/app/organization/settings/notifications",
            post(org_settings::save_notifications),
        )
        .route("/app/organization/sso", get(sso::page).post(sso::save))
        .route("/app/organization/sso/verify", post(sso::verify))
        .route("/app/organization/sso/delete", post(sso::delete))
        .route(
            "/app/organizations",
            get(signin::organizations).post(signin::switch),
        )
        .route("/app/audit", get(audit::page))
        .route("/app/reports/{id}", get(prospecting::public))
        .route(
            "/app/prospecting",
            get(prospecting::list).post(prospecting::create),
        )
        .route("/app/prospecting/{id}/delete", post(prospecting::delete))
        .route("/app/domains", get(domains::list).post(domains::add))
        .route("/app/domains/{id}", get(domain::page))
        .route("/app/domains/{id}/verify", post(domain::verify))
        .route("/app/domains/{id}/settings", post(settings::save))
        .route("/app/domains/{id}/delete", post(settings::delete))
        .route("/app/domains/{id}/publish", post(dns::publish))
        .route("/app/organization/dns", get(dns::page).post(dns::create))
        .route("/app/organization/dns/{id}/delete", post(dns::delete))
        .route("/app/domains/{id}/hosting/{record}", post(hosting::save))
        .route(
            "/app/domains/{id}/hosting/dkim/{key}/delete",
            post(hosting::delete_key),
        )
        .route("/app/domains/{id}/senders/{source}", post(domain::sender))
        .route("/app/support", get(support::list).post(support::open))
        .route(
            "/app/support/{id}",
            get(support::ticket).post(support::reply),
        )
        .route("/app/tasks", get(tasks::list))
        .route("/app/tasks/{id}", post(tasks::update))
        .route("/app/organization", get(organization::page))
        .route(
            "/app/organization/people",
            get(people::page).post(people::invite),
        )
        .route("/app/organization/people/{id}/remove", post(people::remove))
        .route(
            "/app/organization/invitations/{id}/{action}",
            post(people::invitation),
        )
        .route("/app/organization/activity", get(people::activity_log))
        .route("/app/organization/integrations", get(integrations::page))
        .route(
            "/app/organization/groups",
            get(groups::page).post(groups::create),
        )
        .route("/app/organization/groups/{id}/delete", post(groups::delete))
        .route("/app/organization/alert-rules", post(alert_rules::create))
        .route(
            "/app/organization/alert-rules/{id}/{action}",
            post(alert_rules::change),
        )
        .route("/app/organization/billing", get(billing::page))
        .route(
            "/app/organization/billing/checkout",
            post(billing::checkout),
        )
        .route("/app/organization/billing/portal", post(billing::portal))
        .route(
            "/app/organization/integrations/webhooks",
            post(integrations::create_hook),
        )
        .route(
            "/app/organization/integrations/webhooks/{id}/{action}",
            post(integrations::change_hook),
        )
        .route(
            "/app/organization/integrations/connections/{id}/revoke",
            post(integrations::revoke),
        )
        .route("/app/organization/api-keys", post(organization::create))
        .route(
            "/app/organization/api-keys/{id}/rotate",
            post(organization::rotate),
        )
        .route(
            "/app/organization/api-keys/{id}/delete",
            post(organization::delete),
        )
}
