//! Test support: an authoritative DNS server run in-process (hickory-server) on a loopback
//! address, serving zones built in code or loaded from zone files, with live edits and failure
//! injection (latency, timeout, SERVFAIL, REFUSED, forced truncation).
//!
//! ```no_run
//! # async fn demo() -> Result<(), mailward_dns_fixture::FixtureError> {
//! use mailward_dns_fixture::{FixtureServer, Zone};
//! let zone = Zone::new("example.test").txt("_dmarc", "v=DMARC1; p=none").mx("@", 10, "mx1");
//! let server = FixtureServer::start(vec![zone]).await?;
//! let resolver = server.resolver()?;
//! # Ok(()) }
//! ```
//!
//! No test using it touches the internet: servers bind 127.0.0.1 (or 127.0.0.2, 127.0.0.3 ... to
//! play several nameservers) on a random port, UDP and TCP on the same port.

#![warn(missing_docs)]

mod error;
mod faults;
mod handler;
mod nsd;
mod proxy;
mod rdata;
mod server;
mod zone;
mod zonefile;

pub use error::FixtureError;
pub use faults::{Fault, Scope};
pub use handler::{QueryLog, Transport};
pub use nsd::nsd_binary;
pub use server::{Backend, FixtureServer};
pub use zone::{Zone, fixture_zones_dir};
