//! The `api-webhooks` function: `/webhook-endpoints*`, `/webhook-events`, and the alert rules
//! and alerts (`/alert-rules*`, `/alerts`) that share their delivery machinery.

pub mod alerts;
pub mod webhooks;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    webhooks::routes().merge(alerts::routes())
}
