//! The `api-auth` function: the OAuth 2.1 authorization server of the MCP endpoints
//! (`/oauth/*`, `/.well-known/oauth-authorization-server`): sign-in pages, the token and
//! revocation endpoints, the JWKS, the refusal of client registration, a person's connections
//! and dashboard sessions from the same sign-in, and a person's sessions and authenticator app.

pub mod authorize;
pub mod connections;
pub mod identity;
pub mod metadata;
mod pages;
pub mod session;
pub mod sso;
pub mod token;

use mailward_http::Routes;

/// This function's routes.
pub fn routes() -> Routes {
    metadata::routes()
        .merge(authorize::routes())
        .merge(token::routes())
        .merge(connections::routes())
        .merge(session::routes())
        .merge(identity::routes())
        .merge(sso::routes())
}
