//! The `api-reports` function: what a domain's aggregate reports say
//! (`/domains/{id}/reports/*`), who sends as the domain (`/domains/{id}/sources*`), the organization's report data
//! (`/report-data/*`), SMTP TLS reports (`/domains/{id}/tls-reports*`, and their HTTPS delivery), failure reports
//! (`/domains/{id}/failure-reports*`) and prospecting reports
//! (`/prospecting-reports*`, except the public PDF download, which is `api-report-pdf`'s).

pub mod data;
pub mod export;
pub mod failures;
pub mod prospecting;
pub mod requirements;
pub mod sources;
pub mod summary;
pub mod tls;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    summary::routes()
        .merge(sources::routes())
        .merge(data::routes())
        .merge(tls::routes())
        .merge(failures::routes())
        .merge(export::routes())
        .merge(prospecting::routes())
        .merge(requirements::routes())
}
