//! The public base URL of links in error bodies.

use mailward_services::Config;

/// The public base URL for links (errors, the OAuth and MCP discovery documents, mail): the
/// configured one, never the request's `Host`, which a client chooses. The setting is required:
/// the Lambdas refuse to start without it (the template derives it from the HTTP API's own URL
/// when `BaseUrl` is empty), the local stack defaults it to its listen address.
pub fn base_url(config: &Config) -> String {
    config.base_url.trim_end_matches('/').to_owned()
}
