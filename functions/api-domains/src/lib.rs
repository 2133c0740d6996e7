//! The `api-domains` function: `/domains*`: CRUD, bulk, records guidance (`dns-records`),
//! verification, SPF diagnostics and DNS snapshots.

pub mod bulk;
pub mod domains;
pub mod records;
pub mod snapshots;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    domains::routes()
        .merge(bulk::routes())
        .merge(records::routes())
        .merge(snapshots::routes())
}
