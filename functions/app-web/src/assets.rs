//! The stylesheet and the script, embedded in the binary and served under names that carry a
//! hash of their content, so browsers may keep them for a year: a new build is a new name.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

struct Asset {
    stem: &'static str,
    ext: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

const ASSETS: [Asset; 2] = [
    Asset {
        stem: "app",
        ext: "css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../assets/app.css"),
    },
    Asset {
        stem: "app",
        ext: "js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../assets/app.js"),
    },
];

/// Each asset's served file name (`app.<12 hex of its SHA-256>.css`), computed once.
fn names() -> &'static [String; 2] {
    static NAMES: OnceLock<[String; 2]> = OnceLock::new();
    NAMES.get_or_init(|| {
        ASSETS.each_ref().map(|a| {
            let digest = Sha256::digest(a.body);
            let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
            format!("{}.{hex}.{}", a.stem, a.ext)
        })
    })
}

/// The stylesheet's path.
pub fn css() -> String {
    format!("/app/assets/{}", names()[0])
}

/// The script's path.
pub fn js() -> String {
    format!("/app/assets/{}", names()[1])
}

/// `GET /app/assets/{name}`: an asset by its hashed name, cacheable for a year.
pub async fn serve(Path(name): Path<String>) -> Response {
    let Some(i) = names().iter().position(|n| *n == name) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let asset = &ASSETS[i];
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        asset.body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_content_hash() {
        assert!(css().starts_with("/app/assets/app.") && css().ends_with(".css"));
        assert_eq!(css().len(), "/app/assets/app.".len() + 12 + 4);
        assert_ne!(css(), js());
    }
}
