//! The hickory-resolver adapter of the [`DnsResolver`](mailward_domain::dns::DnsResolver) port.
//!
//! [`HickoryResolver`] talks to configurable upstream servers (or the system's, from
//! `/etc/resolv.conf`), with a per-query timeout, retries, TCP fallback for truncated answers,
//! bounded concurrency and a short positive/negative cache. [`Budgeted`] caps the queries one
//! request may make and [`Deadline`] the time it may spend; [`HickoryResolver::ask_server`] asks one named server directly, so callers can
//! compare authoritative nameservers with public resolvers.
//!
//! Outcomes are mapped exactly: NXDOMAIN is `Err(NxDomain)`, NOERROR without records of the type
//! is `Ok` with no records, SERVFAIL, REFUSED and timeouts are their own errors.

#![warn(missing_docs)]

mod budget;
mod cache;
mod convert;
mod deadline;
mod resolver;
mod settings;
pub mod stats;
mod transport;

pub use budget::{Budgeted, REQUEST_IN_FLIGHT};
pub use deadline::Deadline;
pub use resolver::{Fresh, HickoryResolver};
pub use settings::{
    DEFAULT_MAX_CONCURRENCY, MAX_CONCURRENCY, ROOMY_MAX_CONCURRENCY, ResolverSettings, SetupError,
    concurrency_for_open_files, default_concurrency, parse_concurrency, parse_server_list,
    raise_open_file_limit,
};
