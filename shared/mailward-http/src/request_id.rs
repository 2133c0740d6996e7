//! The id of the request being served, kept for the task that serves it: set by the middleware,
//! read by the error mapping (5xx bodies carry it) and the logs.

tokio::task_local! {
    pub(crate) static REQUEST_ID: String;
}

/// The id of the request being served on this task, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}
