//! The background processes: what runs off the request path, on a schedule or a queue.
//!
//! - [`sweep`]: the monitoring sweep's coordination and batches (one domain's evaluation is an
//!   operation of `mailward-services`);
//! - [`reconcile`]: the hourly reconciliation of hosted records;
//! - [`purge`]: an organization's deletion, everything of it in the store, the bucket and the
//!   payment provider;
//! - [`retention`]: the daily data lifecycle (what each plan no longer keeps is deleted);
//! - [`ingest`] and [`identify`]: report ingestion (the SMTP mailbox, SES, `mailward import`) and
//!   sender identification;
//! - [`notifications`]: the mails of `settings.email_notifications`, the daily digest and
//!   reminders;
//! - [`webhooks`]: the outbox publisher and signed delivery;
//! - [`scheduled_reports`]: the weekly or monthly PDF report by mail;
//! - [`alerts`]: alert notifications to Slack, Teams, PagerDuty and mail, and a rule's first
//!   evaluation;
//! - [`jobs`]: the registry of every job type (one line each) and the queue worker's loop.
//!
//! No `api-*` function, no MCP endpoint and not `mailward-http` depends on this crate
//! (`tests/check-layout`): an API Lambda links none of it.

pub mod alerts;
pub mod exports;
pub mod failures;
pub mod identify;
pub mod ingest;
pub mod jobs;
pub mod mailboxes;
pub mod notifications;
pub mod purge;
pub mod reconcile;
pub mod retention;
pub mod scheduled_reports;
pub mod sweep;
pub mod webhooks;
