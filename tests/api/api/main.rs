//! Black-box tests over HTTP against the local stack. One module per route group.

mod activity;
mod admin;
mod api_keys;
mod audit;
mod audit_matrix;
mod common;
mod conventions;
mod domains;
mod failures;
mod header_analysis;
mod mcp;
mod notifications;
mod oauth;
mod openapi;
mod organizations;
mod prospecting;
mod report_data;
mod reports;
mod senders;
mod signup;
mod support;
mod sweep;
mod tasks;
mod tls_reports;
mod tools;
mod webhooks;
