//! The kernel of the application: what every operation (`mailward-services`) and every
//! background process (`mailward-workers`) shares, and nothing they do.
//!
//! - [`state`]: the ports (store, queue, mailer, clock, DNS, hosted zone, object store…) and the
//!   [`Config`], read once;
//! - [`caller`] and [`access`]: who is asking (the organization comes from the credential, never
//!   from input), what they may do, and which domains they see;
//! - [`error`]: [`ServiceError`], with the field a bad input names; [`pagination`];
//! - [`activity`]: the entries every mutation adds to its own commit;
//! - [`job`]: the contract of a background job (name, queue, payload) and [`job::enqueue`];
//! - [`unsubscribe`]: signed links in mails; [`secret_box`]: encryption at rest; [`html`]: the one
//!   HTML escaper;
//! - [`outbound`]: the one HTTP client for customer URLs (SSRF-safe), MTA-STS and VMC fetches,
//!   the MX STARTTLS probe, the registrar lookups over RDAP.
//!
//! Nothing here knows axum, utoipa's routers, the AWS SDK or SQLite.

pub mod access;
pub mod activity;
pub mod caller;
pub mod config;
pub mod error;
pub mod html;
pub mod ipdata;
pub mod job;
pub mod jobs;
pub mod metrics;
pub mod outbound;
pub mod pagination;
pub mod secret_box;
pub mod state;
pub mod unsubscribe;

pub use caller::{Caller, Credential, Permission};
pub use config::Config;
pub use error::{ErrorKind, ServiceError, ServiceResult};
pub use state::{App, AppState};
