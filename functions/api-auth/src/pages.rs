//! The sign-in pages' HTML: one small self-contained document per step, no script, no external
//! asset, every value escaped.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
pub use mailward_services::html::escape;

/// A page with `status`.
pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:* http://localhost:* http://[::1]:*; frame-ancestors 'none'",
            ),
        ],
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{title} · Mailward</title>\n<style>body{{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}}main{{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:10px;box-shadow:0 1px 4px #0002}}h1{{font-size:1.3rem;margin-top:0}}label{{display:block;margin:.8rem 0 .3rem}}input[type=email],input[type=text]{{width:100%;padding:.55rem;font-size:1rem;box-sizing:border-box}}button{{margin-top:1rem;padding:.55rem 1.1rem;font-size:1rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}}button.secondary{{background:#fff;color:#1d4ed8}}.error{{color:#b42318}}.muted{{color:#667085;font-size:.9rem}}</style></head>\n<body><main>\n<h1>{title}</h1>\n{body}\n</main></body></html>\n",
            title = escape(title)
        ),
    )
        .into_response()
}

/// An error line, when there is one.
pub fn error_line(message: Option<&str>) -> String {
    message.map_or_else(String::new, |m| {
        format!("<p class=\"error\" role=\"alert\">{}</p>\n", escape(m))
    })
}
