//! The `api-public` function: `/health-check`, `/signup`, `/signup/verify`, `/swagger.json` and
//! the reference page `/docs`, the unsubscribe link of notification mail, the hosted MTA-STS
//! policies (`/.well-known/mta-sts.txt`), the hosted BIMI files (`/bimi/*`), the operator's
//! `/metrics`,
//! plus the JSON 404 for unknown paths (it owns API Gateway's `$default` route).

pub mod bimi_assets;
pub mod docs;
pub mod health;
pub mod metrics;
pub mod mta_sts_policy;
pub mod openapi;
pub mod signup;
pub mod unsubscribe;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    health::routes()
        .merge(signup::routes())
        .merge(openapi::routes())
        .merge(docs::routes())
        .merge(unsubscribe::routes())
        .merge(mta_sts_policy::routes())
        .merge(bimi_assets::routes())
        .merge(metrics::routes())
}
