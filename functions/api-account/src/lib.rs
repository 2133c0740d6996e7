//! The `api-account` function: the organization and its people: `/api-keys*`,
//! `/organizations*`, `/members*`, `/invitations*`, `/usage`, `/billing/*` (an extension), `/activity-log*`, `/support/*`, `/dns-connections*`, and SCIM provisioning (`/scim/v2/*`, `/scim-tokens*`).

pub mod activity;
pub mod api_keys;
pub mod billing;
pub mod dns_connections;
pub mod exports;
pub mod invitations;
pub mod mailboxes;
pub mod members;
pub mod organizations;
pub mod report_settings;
pub mod scim;
pub mod staff;
pub mod support;
pub mod usage;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    api_keys::routes()
        .merge(organizations::routes())
        .merge(members::routes())
        .merge(invitations::routes())
        .merge(usage::routes())
        .merge(billing::routes())
        .merge(activity::routes())
        .merge(support::routes())
        .merge(dns_connections::routes())
        .merge(mailboxes::routes())
        .merge(report_settings::routes())
        .merge(scim::routes())
        .merge(staff::routes())
        .merge(exports::routes())
}
