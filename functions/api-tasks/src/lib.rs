//! The `api-tasks` function: `/tasks*`, the remediation tasks of every domain.

pub mod tasks;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    tasks::routes()
}
