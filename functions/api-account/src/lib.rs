//! The `api-account` function: `/api-keys*` and `/organizations*`.

pub mod api_keys;
pub mod organizations;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    api_keys::routes().merge(organizations::routes())
}
