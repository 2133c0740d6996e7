//! Mailward's operations: what the service does, independent of how it is reached.
//!
//! Every operation takes the application state, the caller (its organization comes from the
//! credential, never from input) and typed input from `mailward-api-types`, and returns typed
//! output or a [`ServiceError`]. The REST handlers in `functions/api-*`, the MCP tools and the
//! `mailward` CLI all call these functions, never each other. One domain's evaluation (the
//! sweep's unit of work) is an operation too; the background processes that run them on a
//! schedule or a queue are `mailward-workers`.
//!
//! This crate knows nothing of axum, utoipa's routers or the AWS SDK: it reaches the world only
//! through the ports in [`state::App`] (store, queue, mailer, clock, DNS) and the one outbound
//! HTTP client for customer URLs. What every operation shares (state, configuration, the caller,
//! errors, the access guard, activity entries, the job contract) is the kernel, `mailward-app`,
//! re-exported here.

pub mod alerts;
pub mod api_keys;
pub mod audit;
pub mod dns_connections;
pub mod domains;
pub mod evaluation;
pub mod exports;
pub mod groups;
pub mod header_analysis;
pub mod invitations;
pub mod ipdata;
pub mod mailboxes;
pub mod members;
pub mod organizations;
pub mod ownership;
pub(crate) mod people;
pub mod prospecting;
pub mod reports;
pub mod scim;
pub mod sender_requirements;
pub mod signup;
pub mod sources;
pub mod support;
pub mod tasks;
pub mod tools;
pub mod usage;
pub mod webhooks;

// The kernel, re-exported: operations and their callers keep one import root.
pub use mailward_app::{
    App, AppState, Caller, Config, Credential, ErrorKind, Permission, ServiceError, ServiceResult,
    access, activity, caller, config, error, html, job, metrics, outbound, pagination, secret_box,
    state, unsubscribe,
};
