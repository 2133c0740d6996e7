//! The `api-tools` function: the DNS-resolving tools (`/tools/*`, `/dns-providers/detect`), the
//! audit and activation scans, and the sending-source catalogue (`/sources*`).

pub mod audit;
pub mod header_analysis;
pub mod sources;
pub mod tools;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    tools::routes()
        .merge(sources::routes())
        .merge(audit::routes())
        .merge(header_analysis::routes())
}
