//! The one error type at the HTTP edge, rendered as SPEC §7's error body.
//!
//! Operations fail with a `ServiceError`; it becomes an [`ApiError`] here, once, with the status
//! its kind calls for. Internal causes are logged once, where they become a response, and never
//! sent to the client.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_domain::queue::QueueError;
use mailward_domain::store::StoreError;
use mailward_services::{ErrorKind, ServiceError};
use serde_json::{Value, json};
use std::borrow::Cow;

/// Where the API documentation lives, relative to the base URL.
pub const DOCS_PATH: &str = "/docs";
/// Where the OpenAPI document lives, relative to the base URL.
pub const OPENAPI_PATH: &str = "/swagger.json";

/// An error response: status, a lowercase `code` clients branch on, a message for people, the
/// offending field when there is one, and optional details. Rarely used parts live behind one
/// box so `Result<_, ApiError>` stays small.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable lowercase code.
    pub code: Cow<'static, str>,
    /// Human-readable message.
    pub message: Cow<'static, str>,
    /// The offending field, when one is to blame.
    pub param: Option<Cow<'static, str>>,
    extras: Option<Box<Extras>>,
}

#[derive(Debug, Default)]
struct Extras {
    /// Extra machine-readable data.
    details: Option<Value>,
    /// Headers to add (e.g. `WWW-Authenticate`, `Retry-After`).
    headers: Vec<(header::HeaderName, HeaderValue)>,
    /// Cause, logged and never sent.
    internal: Option<String>,
    /// A body that replaces the standard error body (the 429 body of SPEC §7.6 differs).
    raw_body: Option<Value>,
}

impl ApiError {
    /// A new error.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            param: None,
            extras: None,
        }
    }

    fn extras(&mut self) -> &mut Extras {
        self.extras.get_or_insert_with(Box::default)
    }

    /// The details object, if any.
    pub fn details_value(&self) -> Option<&Value> {
        self.extras.as_ref().and_then(|e| e.details.as_ref())
    }

    /// Replaces the whole body (used by the 429 response, whose shape differs).
    pub fn with_raw_body(mut self, body: Value) -> Self {
        self.extras().raw_body = Some(body);
        self
    }

    /// Records an internal cause: logged once, never sent.
    pub fn with_internal(mut self, cause: impl std::fmt::Display) -> Self {
        self.extras().internal = Some(cause.to_string());
        self
    }

    /// Names the offending field.
    pub fn param(mut self, param: impl Into<Cow<'static, str>>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Adds details.
    pub fn details(mut self, details: Value) -> Self {
        self.extras().details = Some(details);
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.extras().headers.push((name, value));
        self
    }

    /// 400 `parameter_invalid_or_missing` naming the field (SPEC §7.7).
    pub fn invalid_param(
        param: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "parameter_invalid_or_missing",
            message,
        )
        .param(param)
    }

    /// 404 for a resource that does not exist in the caller's organization.
    pub fn not_found(what: &'static str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "resource_not_found",
            format!("no such {what}"),
        )
    }

    /// 403 for a credential that may not do this.
    pub fn forbidden(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 409 for a write that lost a race with another write.
    pub fn conflict(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 500 with an internal cause (logged, not sent).
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "the service failed; retry later and quote the request id if it persists",
        )
        .with_internal(cause)
    }

    /// 503 with an internal cause: a backing service is unavailable.
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "service_unavailable",
            "a backing service is unavailable; retry later and quote the request id if it persists",
        )
        .with_internal(cause)
    }

    /// 404 for a path that matches no route (SPEC §7.4).
    pub fn route_not_found(base_url: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "no route matches this method and path",
        )
        .details(json!({
            "documentation": format!("{base_url}{DOCS_PATH}"),
            "openapi": format!("{base_url}{OPENAPI_PATH}"),
        }))
    }
}

/// The status of each kind of service failure.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Invalid => StatusCode::BAD_REQUEST,
        ErrorKind::Forbidden => StatusCode::FORBIDDEN,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorKind::Gone => StatusCode::GONE,
        ErrorKind::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let parts = e.into_parts();
        let mut error = ApiError::new(status_of(parts.kind), parts.code, parts.message);
        error.param = parts.param;
        if let Some(details) = parts.details {
            error = error.details(details);
        }
        if let Some(secs) = parts.retry_after_secs {
            error = error.header(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(cause) = parts.internal {
            error = error.with_internal(cause);
        }
        error
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ServiceError::from(e).into()
    }
}

impl From<QueueError> for ApiError {
    fn from(e: QueueError) -> Self {
        ServiceError::from(e).into()
    }
}

/// Marker put in the response extensions so the logging middleware can report the cause.
#[derive(Clone, Debug)]
pub struct InternalCause(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let extras = self.extras.map(|e| *e).unwrap_or_default();
        let mut details = extras.details;
        if self.status.is_server_error() {
            // A 5xx always carries the request id so a person can quote it.
            if let Some(id) = crate::request_id::current_request_id() {
                let mut map = match details {
                    Some(Value::Object(map)) => map,
                    _ => serde_json::Map::new(),
                };
                map.insert("request_id".into(), Value::String(id));
                details = Some(Value::Object(map));
            }
        }
        let mut response = match extras.raw_body {
            Some(raw) => (self.status, axum::Json(raw)).into_response(),
            None => {
                let body = ErrorBody {
                    code: self.code.into_owned(),
                    message: self.message.into_owned(),
                    param: self.param.map(Cow::into_owned),
                    details,
                };
                (self.status, axum::Json(body)).into_response()
            }
        };
        for (name, value) in extras.headers {
            response.headers_mut().append(name, value);
        }
        if let Some(cause) = extras.internal {
            response.extensions_mut().insert(InternalCause(cause));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_keep_code_param_details_and_retry_after() {
        let e: ApiError = ServiceError::new(ErrorKind::TooManyRequests, "slow_down", "wait")
            .param("email")
            .details(serde_json::json!({"n": 1}))
            .retry_after(30)
            .into();
        assert_eq!(e.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            (e.code.as_ref(), e.param.as_deref()),
            ("slow_down", Some("email"))
        );
        assert_eq!(e.details_value(), Some(&serde_json::json!({"n": 1})));
        let response = e.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "30");
        let conflict: ApiError = StoreError::ConditionFailed.into();
        assert_eq!(conflict.status, StatusCode::CONFLICT);
    }
}
