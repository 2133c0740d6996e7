//! The one error every service operation returns. Each edge renders it once: the REST layer as
//! SPEC §7's error body with a status from [`ErrorKind`], an MCP tool as a tool error, the CLI
//! as a message. Library errors (`StoreError`, `QueueError`) are mapped to it here, once.

use mailward_domain::queue::QueueError;
use mailward_domain::store::StoreError;
use serde_json::Value;
use std::borrow::Cow;

/// What kind of failure: decides the HTTP status class, and whether a caller may retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is wrong; `param` names the field (400).
    Invalid,
    /// The caller may not do this (403).
    Forbidden,
    /// Nothing of that kind exists in the caller's organization (404).
    NotFound,
    /// A write lost a race or would duplicate something (409).
    Conflict,
    /// Well-formed input the service refuses on its merits (422).
    Unprocessable,
    /// The resource existed and is gone for good, e.g. an expired public link (410).
    Gone,
    /// Too many attempts; `retry_after_secs` says when to try again (429).
    TooManyRequests,
    /// A backing service is down; retrying later may work (503).
    Unavailable,
    /// The service failed (500).
    Internal,
}

impl ErrorKind {
    /// Whether the caller is to blame (a 4xx), as opposed to the service (a 5xx).
    pub fn is_client_error(self) -> bool {
        !matches!(self, ErrorKind::Unavailable | ErrorKind::Internal)
    }
}

/// A failed operation: a kind, a stable lowercase `code` clients branch on, a message for people,
/// the offending field, optional details, and an internal cause that is logged, never sent.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", .0.code, .0.message)]
pub struct ServiceError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    code: Cow<'static, str>,
    message: Cow<'static, str>,
    param: Option<Cow<'static, str>>,
    details: Option<Value>,
    retry_after_secs: Option<u64>,
    internal: Option<String>,
}

/// The `Retry-After` of a 503 for an unavailable backing service (a throttled table, a queue
/// outage, a full disk): long enough for a throttle to clear, short enough not to stall a
/// client's retry loop.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 5;

impl ServiceError {
    /// A new error of `kind`.
    pub fn new(
        kind: ErrorKind,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self(Box::new(Inner {
            kind,
            code: code.into(),
            message: message.into(),
            param: None,
            details: None,
            retry_after_secs: None,
            internal: None,
        }))
    }

    /// `parameter_invalid_or_missing` naming the field (SPEC §7.7).
    pub fn invalid(
        param: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorKind::Invalid, "parameter_invalid_or_missing", message).param(param)
    }

    /// `resource_not_found`: nothing of that kind in the caller's organization.
    pub fn not_found(what: &'static str) -> Self {
        Self::new(
            ErrorKind::NotFound,
            "resource_not_found",
            format!("no such {what}"),
        )
    }

    /// `forbidden`: the credential may not do this.
    pub fn forbidden(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Forbidden, "forbidden", message)
    }

    /// `conflict`: the resource changed concurrently.
    pub fn conflict(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Conflict, "conflict", message)
    }

    /// `internal_error` with a cause that is logged, never sent.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorKind::Internal,
            "internal_error",
            "the service failed; retry later and quote the request id if it persists",
        )
        .with_internal(cause)
    }

    /// `service_unavailable`: a backing service is down (cause logged, never sent).
    pub fn unavailable(cause: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorKind::Unavailable,
            "service_unavailable",
            "a backing service is unavailable; retry later and quote the request id if it persists",
        )
        .retry_after(UNAVAILABLE_RETRY_AFTER_SECS)
        .with_internal(cause)
    }

    /// Names the offending field.
    pub fn param(mut self, param: impl Into<Cow<'static, str>>) -> Self {
        self.0.param = Some(param.into());
        self
    }

    /// Adds machine-readable details.
    pub fn details(mut self, details: Value) -> Self {
        self.0.details = Some(details);
        self
    }

    /// Says when to try again (a `Retry-After` over HTTP).
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.0.retry_after_secs = Some(secs);
        self
    }

    /// Records an internal cause: logged once where the error is rendered, never sent.
    pub fn with_internal(mut self, cause: impl std::fmt::Display) -> Self {
        self.0.internal = Some(cause.to_string());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        &self.0.code
    }

    /// The message for people.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The offending field, if one is to blame.
    pub fn param_name(&self) -> Option<&str> {
        self.0.param.as_deref()
    }

    /// The details, if any.
    pub fn details_value(&self) -> Option<&Value> {
        self.0.details.as_ref()
    }

    /// Seconds until a retry may succeed, if known.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.0.retry_after_secs
    }

    /// The internal cause, if any (for logs only).
    pub fn internal_cause(&self) -> Option<&str> {
        self.0.internal.as_deref()
    }

    /// Whether this is a lost optimistic race (the store's version check failed).
    pub fn is_conflict(&self) -> bool {
        self.0.kind == ErrorKind::Conflict && self.0.code == "conflict"
    }

    /// Takes the error apart for rendering.
    pub fn into_parts(self) -> ErrorParts {
        let inner = *self.0;
        ErrorParts {
            kind: inner.kind,
            code: inner.code,
            message: inner.message,
            param: inner.param,
            details: inner.details,
            retry_after_secs: inner.retry_after_secs,
            internal: inner.internal,
        }
    }
}

/// Every part of a [`ServiceError`], for the edge that renders it.
#[derive(Debug)]
pub struct ErrorParts {
    /// The kind.
    pub kind: ErrorKind,
    /// The stable code.
    pub code: Cow<'static, str>,
    /// The message for people.
    pub message: Cow<'static, str>,
    /// The offending field.
    pub param: Option<Cow<'static, str>>,
    /// Machine-readable details.
    pub details: Option<Value>,
    /// Seconds until a retry may succeed.
    pub retry_after_secs: Option<u64>,
    /// The cause, for logs only.
    pub internal: Option<String>,
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::ConditionFailed | StoreError::TransactionCanceled { .. } => {
                ServiceError::conflict("the resource changed concurrently; read it again and retry")
            }
            StoreError::Invalid(msg) => {
                ServiceError::internal(format!("invalid store request: {msg}"))
            }
            StoreError::Unavailable(msg) => ServiceError::unavailable(format!("store: {msg}")),
        }
    }
}

impl From<QueueError> for ServiceError {
    fn from(e: QueueError) -> Self {
        ServiceError::unavailable(format!("queue: {e}"))
    }
}

impl From<serde_json::Error> for ServiceError {
    fn from(e: serde_json::Error) -> Self {
        ServiceError::internal(format!("serialization: {e}"))
    }
}

impl mailward_store::optimistic::AsConflict for ServiceError {
    fn is_conflict(&self) -> bool {
        ServiceError::is_conflict(self)
    }
}

/// The result of a service operation.
pub type ServiceResult<T> = Result<T, ServiceError>;
