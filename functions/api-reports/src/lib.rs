//! The `api-reports` function: what a domain's aggregate reports say (`/domains/{id}/reports/*`) and who sends
//! as the domain (`/domains/{id}/sources*`).

pub mod sources;
pub mod summary;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    summary::routes().merge(sources::routes())
}
