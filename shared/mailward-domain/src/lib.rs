//! Mailward's pure core.
//!
//! This crate owns the model (organizations, accounts, API keys, signup challenges), the rules that
//! need no I/O (email and name validation, secret hashing) and the *ports*: the traits that the
//! storage, queue, clock, mailer and DNS adapters implement. It must not depend on an async
//! runtime, an HTTP stack, the AWS SDK or a database crate; adapters live in `mailward-local` and
//! `mailward-aws`, and handlers only ever see these traits.

pub mod admin;
pub mod alerts;
pub mod billing;
pub mod candidates;
pub mod certificates;
pub mod clock;
pub mod conflicts;
pub mod diff;
pub mod dkim_keys;
pub mod dns;
pub mod dns_connections;
pub mod dns_providers;
pub mod domain;
pub mod domain_list;
pub mod email;
pub mod events;
pub mod failure_reports;
pub mod hosted_spf;
pub mod hosted_zone;
pub mod html;
pub mod identity;
pub mod mailboxes;
pub mod mailer;
pub mod model;
pub mod mta_sts;
pub mod names;
pub mod notifications;
pub mod oauth;
pub mod objects;
pub mod policy_fronts;
pub mod purpose;
pub mod queue;
pub mod rate_limits;
pub mod reports;
pub mod scheduled_reports;
pub mod scim;
pub mod secrets;
pub mod sender_requirements;
pub mod senders;
pub mod snapshots;
pub mod sources;
pub mod store;
pub mod tls_reports;
pub mod webhooks;

pub use clock::{Clock, ManualClock, SystemClock};
