//! DNS conflict detection for one domain (SPEC §2.2 `DnsConflict`).
//!
//! [`detect`] examines the names Mailward cares about — `_dmarc.<domain>`, the apex TXT (SPF),
//! `default._bimi.<domain>`, `_mta-sts.<domain>`, `<selector>._domainkey.<domain>` and every
//! expected managed delegation — and reports each [`ConflictKind`] it finds, with the violated
//! clause, the consequence, a remediation a customer can act on, the verbatim records and what
//! every authoritative nameserver and configured public resolver answered.
//!
//! Authoritative nameservers and public resolvers are asked directly through the [`DirectDns`]
//! port (implemented here for [`mailward_dns::HickoryResolver`] via `ask_server`). The work is
//! bounded: a fixed number of labels (DKIM selectors are capped), of nameservers and of
//! resolvers, two questions per label and server, and every question under a timeout.
//!
//! The crate does no storage and no HTTP: occurrence counts and detection times
//! (`occurrence_count`, `first_detected_at`, `last_detected_at`) are the caller's.

#![warn(missing_docs)]

mod detect;
mod model;

pub use detect::{
    ConflictInput, DEFAULT_MAX_CNAME_CHAIN, DEFAULT_QUERY_TIMEOUT, Detection, MAX_DKIM_SELECTORS,
    MAX_NAMESERVERS, MAX_PUBLIC_RESOLVERS, detect, detect_with_coverage,
};
pub use model::{Conflict, ConflictKind, NameserverAnswer, Protocol, ResolverAnswer};

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, RecordType};
use std::net::SocketAddr;

/// Asks one named server directly (no cache, no other upstream): how authoritative nameservers
/// and public resolvers are compared.
#[async_trait]
pub trait DirectDns: Send + Sync {
    /// Asks `server` for `name`/`record_type`. NODATA is `Ok` with no records, NXDOMAIN is
    /// `Err(DnsError::NxDomain)`, no answer in time is `Err(DnsError::Timeout)`.
    async fn ask(
        &self,
        server: SocketAddr,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError>;
}

#[async_trait]
impl DirectDns for mailward_dns::HickoryResolver {
    async fn ask(
        &self,
        server: SocketAddr,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        self.ask_server(server, name, record_type).await
    }
}
