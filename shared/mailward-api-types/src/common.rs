//! Shapes every route shares: the error bodies, pagination, the health answer and the API
//! version.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Error body of every 4xx and 5xx except 429 (SPEC §7.2).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// Lowercase code to branch on.
    pub code: String,
    /// For a person.
    pub message: String,
    /// The offending field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Extra data: `documentation` and `openapi` links on 401/404, `request_id` on 5xx.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// 429 body (SPEC §7.6).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RateLimitBody {
    /// Always `rate_limit_exceeded`.
    pub error: String,
    /// The bucket that is exhausted: global, dns, api_key, api_key_dns, signup, signin, invite,
    /// mcp_oauth or mcp_dns.
    pub scope: String,
    /// For a person.
    pub message: String,
    /// Requests allowed per window.
    pub limit: u32,
    /// Window length.
    pub window_seconds: u32,
    /// Seconds until the bucket refills.
    pub retry_after_seconds: u32,
}

/// A 429 that answers one of two bodies: a named throttle's error body (SPEC §7.7, e.g.
/// `signup_email_throttled`) or a rate-limit bucket's body (SPEC §7.6).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ThrottledBody {
    /// A bucket is exhausted.
    Bucket(RateLimitBody),
    /// A named throttle.
    Error(ErrorBody),
}

/// Pagination state of a list (SPEC §4 common rules).
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct PageInfo {
    /// Matches across all pages.
    pub total_count: u64,
    /// This page, 1-based.
    pub page: u32,
    /// Page size used.
    pub per_page: u32,
    /// Whether a later page exists.
    pub has_more: bool,
}

/// `GET /health-check` body.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok` when the service answers.
    pub status: String,
}

/// Default page size.
pub const DEFAULT_PER_PAGE: u32 = 25;
/// Largest page number.
pub const MAX_PAGE: u32 = 1_000_000;
/// Largest page size.
pub const MAX_PER_PAGE: u32 = 100;

/// Pagination query parameters (SPEC §4 common rules): 1-based `page`, `per_page` 1 to 100.
#[derive(Debug, Clone, Copy, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// 1-based page number (default 1, at most 1,000,000).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 1000000)]
    pub page: Option<u32>,
    /// Items per page (default 25, 1 to 100).
    #[serde(default, deserialize_with = "crate::constraints::present")]
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

crate::words!(
    /// `order` of a list: `desc` or `asc`.
    pub Order = ["desc", "asc"]
);

/// An accepted API version (SPEC §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    /// The current major version.
    V2025_04_30,
    /// The moving development version.
    Unstable,
}

impl ApiVersion {
    /// The latest stable version (the default for dashboard sessions and agents).
    pub const LATEST: ApiVersion = ApiVersion::V2025_04_30;

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V2025_04_30 => "2025-04-30",
            ApiVersion::Unstable => "unstable",
        }
    }

    /// Parses a wire value.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "2025-04-30" => Some(ApiVersion::V2025_04_30),
            "unstable" => Some(ApiVersion::Unstable),
            _ => None,
        }
    }
}

/// Deserializes a field so an absent field (`None`) differs from an explicit null
/// (`Some(None)`): update bodies clear nullable fields with null. Use with `#[serde(default)]`.
pub fn double_option<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(de).map(Some)
}

/// A body that must be empty or `{}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmptyBody {}
