//! The public base URL of links in error bodies.

use axum::http::{HeaderMap, header};
use mailward_services::Config;

/// The public base URL for links: the configured one, or (when none is configured, as behind
/// API Gateway without a custom domain) `https://<Host>` of the request itself.
pub fn base_url(config: &Config, headers: &HeaderMap) -> String {
    if !config.base_url.is_empty() {
        return config.base_url.trim_end_matches('/').to_owned();
    }
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .map_or_else(String::new, |host| format!("https://{host}"))
}
