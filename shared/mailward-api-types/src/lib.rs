//! The JSON the API speaks (SPEC.md sections 2 and 4), with OpenAPI schemas.
//!
//! Why a crate of its own: a resource has one wire shape whichever way it is reached (a REST
//! route, an MCP tool, a webhook event's `data.object`, the CLI), so the shapes live here and
//! every caller converts model types through them. Model types are never serialized to clients.
//! The crate knows nothing of axum or the store.

pub mod activity;
pub mod admin;
pub mod alerts;
pub mod api_keys;
pub mod billing;
pub mod bimi;
pub mod common;
pub mod constraints;
pub mod dkim_keys;
pub mod dns_connections;
pub mod domains;
pub mod failure_reports;
pub mod identity;
pub mod mailboxes;
pub mod mta_sts;
pub mod notifications;
pub mod oauth;
pub mod organizations;
pub mod prospecting;
pub mod records;
pub mod report_data;
pub mod reports;
pub mod scheduled_reports;
pub mod sender_requirements;
pub mod senders;
pub mod signup;
pub mod snapshots;
pub mod sources;
pub mod staff;
pub mod support;
pub mod tasks;
pub mod tls_reports;
pub mod tools;
pub mod webhooks;

pub use common::{
    ApiVersion, EmptyBody, ErrorBody, Health, PageInfo, PageParams, RateLimitBody, ThrottledBody,
};
