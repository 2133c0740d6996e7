//! The `api-reports` function: what a domain's aggregate reports say
//! (`/domains/{id}/reports/*`), who sends as the domain (`/domains/{id}/sources*`), and the organization's report data
//! (`/report-data/*`).

pub mod data;
pub mod sources;
pub mod summary;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    summary::routes()
        .merge(sources::routes())
        .merge(data::routes())
}
