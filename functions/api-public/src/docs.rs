//! `GET /docs`: the API reference a developer lands on (the links in 401 and 404 bodies lead
//! here), rendered in the browser by Redoc from the served OpenAPI document. The Redoc bundle is
//! served by this function too (`/docs/redoc.standalone.js`), so the page works offline and on
//! the local stack; nothing loads from a CDN.

use axum::http::header;
use axum::response::IntoResponse;
use mailward_http::Routes;

/// The Redoc standalone bundle (npm `redoc`, MIT; see `assets/redoc/SOURCES.md`).
const REDOC_JS: &[u8] = include_bytes!("../assets/redoc/redoc.standalone.js");

/// The page: Redoc reading `/swagger.json`. Relative URLs, so it works behind any base path.
const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Mailward API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc-container"></div>
<script src="docs/redoc.standalone.js"></script>
<script>{INIT}</script>
</body>
</html>
"##;

/// The page's inline script (its SHA-256 is in the page's Content-Security-Policy).
const INIT: &str = r##"
Redoc.init("swagger.json", {
  hideDownloadButton: false,
  expandResponses: "200,201",
  requiredPropsFirst: true,
  sortPropsAlphabetically: false,
  pathInMiddlePanel: true,
  theme: { typography: { fontFamily: "system-ui, -apple-system, Segoe UI, sans-serif" } }
}, document.getElementById("redoc-container"));
"##;

/// The page and its Content-Security-Policy: scripts from the service and the one inline script
/// by its hash; Redoc's inline styles, its search worker (a blob) and data-URI fonts and images.
fn page_and_policy() -> &'static (String, String) {
    static PAGE_AND_POLICY: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    PAGE_AND_POLICY.get_or_init(|| {
        use base64::Engine as _;
        let hash = base64::engine::general_purpose::STANDARD
            .encode(mailward_domain::secrets::sha256_bytes(INIT.as_bytes()));
        let policy = format!(
            "default-src 'none'; script-src 'self' 'sha256-{hash}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        );
        (PAGE.replace("{INIT}", INIT), policy)
    })
}

/// The API reference page.
#[utoipa::path(get, path = "/docs", tag = "meta",
    description = "The API reference for people: this document rendered by Redoc (served by the \
service itself, no CDN), with the sections on authentication, versioning, errors, rate limits, \
pagination, webhook signatures and a quick start. No credentials needed.",
    responses((status = 200, description = "An HTML page", content_type = "text/html")))]
pub async fn docs_page() -> impl IntoResponse {
    let (page, policy) = page_and_policy();
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::CONTENT_SECURITY_POLICY, policy.as_str()),
        ],
        page.as_str(),
    )
}

/// The Redoc bundle the page loads.
#[utoipa::path(get, path = "/docs/redoc.standalone.js", tag = "meta",
    description = "The Redoc bundle the reference page runs (npm `redoc` 2.5.4, MIT).",
    responses((status = 200, description = "JavaScript", content_type = "text/javascript")))]
pub async fn docs_script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        REDOC_JS,
    )
}

/// `details.documentation` of a 401 points at the authentication section.
#[utoipa::path(get, path = "/docs/authentication", tag = "meta",
    description = "Redirects (302) to the authentication section of `/docs`.",
    responses((status = 302, description = "To /docs#section/Authentication")))]
pub async fn docs_authentication() -> impl IntoResponse {
    // 302, as documented (`Redirect::to` would answer 303).
    (
        axum::http::StatusCode::FOUND,
        [(
            axum::http::header::LOCATION,
            "../docs#section/Authentication",
        )],
    )
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(docs_page))
        .routes(utoipa_axum::routes!(docs_script))
        .routes(utoipa_axum::routes!(docs_authentication))
}
