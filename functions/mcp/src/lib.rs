//! The `mcp` function: the MCP endpoints for AI agents (`/mcp`, `/mcp/directory`,
//! `/mcp/public`), their tools over the same services as the REST routes, and the discovery
//! documents (`/.well-known/oauth-protected-resource*`, `/.well-known/mcp*`).

pub mod discovery;
pub mod schema;
pub mod server;
pub mod tools;
pub mod transport;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    transport::routes().merge(discovery::routes())
}
