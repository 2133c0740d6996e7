//! The `api-domains` function: `/domains*`: CRUD, bulk, records guidance (`dns-records`),
//! verification, SPF diagnostics, DNS snapshots, the rollout plan, the change preview, hosted
//! DMARC, hosted DKIM keys and hosted MTA-STS; and
//! `/groups*`, the groups domains belong to.

pub mod bimi;
pub mod bulk;
pub mod dkim_keys;
pub mod domains;
pub mod groups;
pub mod hosted;
pub mod mta_sts;
pub mod plan;
pub mod records;
pub mod snapshots;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    domains::routes()
        .merge(bulk::routes())
        .merge(records::routes())
        .merge(snapshots::routes())
        .merge(plan::routes())
        .merge(groups::routes())
        .merge(hosted::routes())
        .merge(dkim_keys::routes())
        .merge(mta_sts::routes())
        .merge(bimi::routes())
}
