//! API versions (SPEC §9): `Mailward-Version` (alias `Service-Version`) on every API-key request.

use crate::error::ApiError;
use axum::http::{HeaderMap, StatusCode};
use mailward_api_types::ApiVersion;

/// The request header carrying the version.
pub const VERSION_HEADER: &str = "mailward-version";
/// SPEC.md's neutral name for the same header, accepted as an alias.
pub const VERSION_HEADER_ALIAS: &str = "service-version";

/// Reads the version headers: `Ok(None)` when neither is sent; an error when a value is not an
/// accepted version or the two headers disagree.
pub fn requested_version(headers: &HeaderMap) -> Result<Option<ApiVersion>, ApiError> {
    let mut found: Option<ApiVersion> = None;
    for name in [VERSION_HEADER, VERSION_HEADER_ALIAS] {
        for value in headers.get_all(name) {
            let parsed = value
                .to_str()
                .ok()
                .and_then(ApiVersion::parse)
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "api_version_invalid",
                        "Mailward-Version must be 2025-04-30 or unstable",
                    )
                    .param("Mailward-Version")
                })?;
            if found.is_some_and(|f| f != parsed) {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "api_version_invalid",
                    "Mailward-Version and Service-Version disagree; send one",
                )
                .param("Mailward-Version"));
            }
            found = Some(parsed);
        }
    }
    Ok(found)
}

/// The error for an API-key request without a version header.
pub fn missing_version() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "api_version_missing",
        "API-key requests must send Mailward-Version: 2025-04-30 (or unstable)",
    )
    .param("Mailward-Version")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn reads_either_header_and_refuses_bad_values() {
        assert_eq!(requested_version(&headers(&[])).unwrap(), None);
        assert_eq!(
            requested_version(&headers(&[("mailward-version", "2025-04-30")])).unwrap(),
            Some(ApiVersion::V2025_04_30)
        );
        assert_eq!(
            requested_version(&headers(&[("service-version", "unstable")])).unwrap(),
            Some(ApiVersion::Unstable)
        );
        let bad = requested_version(&headers(&[("mailward-version", "2024-01-01")])).unwrap_err();
        assert_eq!(bad.code, "api_version_invalid");
        let clash = requested_version(&headers(&[
            ("mailward-version", "2025-04-30"),
            ("service-version", "unstable"),
        ]))
        .unwrap_err();
        assert_eq!(clash.code, "api_version_invalid");
    }
}
