//! The NS lookup: the domain's name servers, and whether the domain exists at all.
//!
//! Why separate: its outcome decides whether the audit can run. NXDOMAIN means the domain does
//! not exist (the audit is an `error`); a failure is only fatal when the other dimensions'
//! first lookups failed too (see [`crate::audit`]).

use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};

/// The NS outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NsOutcome {
    /// Name servers (possibly none: NODATA, e.g. a subdomain without its own zone).
    Hosts(Vec<String>),
    /// NXDOMAIN.
    NoSuchDomain,
    /// SERVFAIL, timeout, REFUSED...
    Failed,
}

/// Asks NS of `domain`.
pub(crate) async fn gather(resolver: &dyn DnsResolver, domain: &str) -> NsOutcome {
    match resolver.lookup(domain, RecordType::Ns).await {
        Ok(answer) => {
            let mut hosts: Vec<String> = answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Ns(h) => Some(h.trim_end_matches('.').to_ascii_lowercase()),
                    _ => None,
                })
                .collect();
            hosts.sort();
            hosts.dedup();
            NsOutcome::Hosts(hosts)
        }
        Err(DnsError::NxDomain) => NsOutcome::NoSuchDomain,
        Err(_) => NsOutcome::Failed,
    }
}
