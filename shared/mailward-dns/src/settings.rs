//! Resolver settings and the parsing of upstream server lists.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Why a resolver could not be built: kept separate from lookup errors because it is a
/// configuration mistake to report at start-up, not a DNS outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// An entry of a server list is not `ip`, `ip:port` or `[ipv6]:port`.
    #[error("invalid DNS server {0:?}: expected ip or ip:port")]
    InvalidServer(String),
    /// No servers were given and the system configuration could not be read.
    #[error("cannot read the system resolver configuration: {0}")]
    System(String),
    /// The system configuration lists no name servers.
    #[error("no DNS servers configured")]
    NoServers,
    /// The in-flight bound is not a whole number within [`MAX_CONCURRENCY`].
    #[error("invalid DNS concurrency {0:?}: expected a whole number from 1 to 4096")]
    InvalidConcurrency(String),
}

/// The default bound on queries in flight through one resolver. Each UDP query holds a socket
/// of its own (a random source port, resends on the same socket), so the bound also bounds the
/// file descriptors DNS takes: 512 leaves half of the common limit of 1024 (Lambda's, and most
/// shells' soft limit) to everything else. A process that can open more files affords more: see
/// [`concurrency_for_open_files`].
pub const DEFAULT_MAX_CONCURRENCY: usize = 512;

/// The largest default bound, where the open-file limit allows it: twenty audits at once (about
/// 1,600 queries) then wait for slots in two rounds instead of four (`mailward-bench audits`).
pub const ROOMY_MAX_CONCURRENCY: usize = 1024;

/// The in-flight bound a process affords under its soft open-file limit: half of it, at least
/// 64, at most [`ROOMY_MAX_CONCURRENCY`] (1,024 open files give [`DEFAULT_MAX_CONCURRENCY`]).
pub fn concurrency_for_open_files(soft_limit: u64) -> usize {
    usize::try_from(soft_limit / 2)
        .unwrap_or(usize::MAX)
        .clamp(64, ROOMY_MAX_CONCURRENCY)
}

/// Raises this process's soft open-file limit toward its hard limit (16,384 at most), as network
/// servers do, and returns the soft limit now in force (`None` when it cannot be read). On
/// Lambda the hard limit is 1,024, so nothing changes there.
pub fn raise_open_file_limit() -> Option<u64> {
    rlimit::increase_nofile_limit(16_384).ok()
}

/// The default in-flight bound for this process: raises the open-file limit, then
/// [`concurrency_for_open_files`].
pub fn default_concurrency() -> usize {
    raise_open_file_limit().map_or(DEFAULT_MAX_CONCURRENCY, concurrency_for_open_files)
}

/// The first resend of an unanswered UDP query. About what stub resolvers use (unbound starts
/// at 376 ms): above the round trip of any reachable server, far below the attempt's timeout.
pub const DEFAULT_RETRANSMIT: Duration = Duration::from_millis(400);

/// The largest in-flight bound accepted.
pub const MAX_CONCURRENCY: usize = 4096;

/// Parses an in-flight bound (`--dns-concurrency`, `MAILWARD_DNS_CONCURRENCY`).
pub fn parse_concurrency(value: &str) -> Result<usize, SetupError> {
    value
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_CONCURRENCY).contains(n))
        .ok_or_else(|| SetupError::InvalidConcurrency(value.to_owned()))
}

/// How a [`HickoryResolver`](crate::HickoryResolver) reaches DNS; one value so the local stack,
/// Lambda and tests configure it the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverSettings {
    /// Upstream servers, asked in order; empty means the system's (`/etc/resolv.conf`).
    pub servers: Vec<SocketAddr>,
    /// Time allowed for one attempt of one query (all servers together).
    pub timeout: Duration,
    /// Attempts per query: a timeout or network error is retried until this many were made.
    pub attempts: usize,
    /// When an unanswered UDP query is first sent again within an attempt (then after twice
    /// that, and so on until the attempt's timeout): a lost datagram costs this, not the
    /// attempt.
    pub retransmit_after: Duration,
    /// Queries in flight at once through this resolver (the rest wait for a slot).
    pub max_concurrency: usize,
    /// Upper bound on how long an answer (positive or negative) is cached; zero disables caching.
    pub cache_ttl_cap: Duration,
    /// Entries kept in the cache at most.
    pub cache_capacity: usize,
    /// EDNS UDP payload size advertised; larger answers come truncated and are retried over TCP.
    pub edns_payload_len: u16,
}

impl Default for ResolverSettings {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            timeout: Duration::from_secs(2),
            attempts: 2,
            retransmit_after: DEFAULT_RETRANSMIT,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            cache_ttl_cap: Duration::from_secs(30),
            cache_capacity: 10_000,
            edns_payload_len: 1232,
        }
    }
}

impl ResolverSettings {
    /// Settings for the given servers with every other value at its default.
    pub fn with_servers(servers: Vec<SocketAddr>) -> Self {
        Self {
            servers,
            ..Self::default()
        }
    }

    /// Settings from a comma-separated server list (the `--dns` flag's format); an empty or
    /// blank list means the system's servers.
    pub fn from_server_list(list: &str) -> Result<Self, SetupError> {
        Ok(Self::with_servers(parse_server_list(list)?))
    }
}

/// Parses `"1.1.1.1, 127.0.0.1:5353, [::1]:53"`; a missing port is 53. Host names are refused:
/// resolving the resolver's own address would need a resolver.
pub fn parse_server_list(list: &str) -> Result<Vec<SocketAddr>, SetupError> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_server)
        .collect()
}

fn parse_server(entry: &str) -> Result<SocketAddr, SetupError> {
    if let Ok(addr) = entry.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bare = entry
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(entry);
    bare.parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, 53))
        .map_err(|_| SetupError::InvalidServer(entry.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        let parsed = parse_server_list(" 1.1.1.1, 127.0.0.1:5353,[::1]:53 , ::2,,").unwrap();
        let expected: Vec<SocketAddr> = vec![
            "1.1.1.1:53".parse().unwrap(),
            "127.0.0.1:5353".parse().unwrap(),
            "[::1]:53".parse().unwrap(),
            "[::2]:53".parse().unwrap(),
        ];
        assert_eq!(parsed, expected);
        assert!(parse_server_list("").unwrap().is_empty());
        assert_eq!(
            parse_server_list("dns.google:53"),
            Err(SetupError::InvalidServer("dns.google:53".into()))
        );
        assert!(parse_server_list("1.1.1.1:99999").is_err());
    }

    #[test]
    fn the_bound_follows_the_open_file_limit() {
        assert_eq!(concurrency_for_open_files(1024), DEFAULT_MAX_CONCURRENCY);
        assert_eq!(concurrency_for_open_files(2048), ROOMY_MAX_CONCURRENCY);
        assert_eq!(concurrency_for_open_files(1 << 20), ROOMY_MAX_CONCURRENCY);
        assert_eq!(concurrency_for_open_files(256), 128);
        assert_eq!(concurrency_for_open_files(20), 64);
        assert!(default_concurrency() >= 64);
    }

    #[test]
    fn parses_concurrency() {
        assert_eq!(parse_concurrency(" 256 "), Ok(256));
        assert_eq!(parse_concurrency("4096"), Ok(4096));
        for bad in ["0", "4097", "-1", "many", ""] {
            assert_eq!(
                parse_concurrency(bad),
                Err(SetupError::InvalidConcurrency(bad.into())),
                "{bad}"
            );
        }
    }
}
