//! The `api-webhooks` function: `/webhook-endpoints*` and `/webhook-events`.

pub mod webhooks;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    webhooks::routes()
}
