//! The `api-public` function: `/health-check`, `/signup`, `/signup/verify` and `/swagger.json`,
//! plus the JSON 404 for unknown paths (it owns API Gateway's `$default` route).

pub mod health;
pub mod openapi;
pub mod signup;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    health::routes()
        .merge(signup::routes())
        .merge(openapi::routes())
}
