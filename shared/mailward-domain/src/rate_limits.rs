//! The rate-limit counter port: how many requests a subject made in one fixed window.
//!
//! Why a port of its own rather than the item store: the single local process can count in
//! memory (no write per request through the one SQLite writer), while Lambda instances must share
//! one count per bucket in DynamoDB. The HTTP layer only ever sees this trait.

use crate::store::StoreError;
use async_trait::async_trait;

/// The rate-limit subject of a client address: `ip:<address>`, an IPv6 address cut to its /64
/// (one subscriber's prefix: a client rotating through the addresses of its prefix is one
/// subject).
pub fn client_subject(ip: &str) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Ok(std::net::IpAddr::V6(v6)) => format!(
            "ip:{}",
            v6.to_ipv4_mapped()
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED)
        ),
        _ => format!("ip:{ip}"),
    }
}

/// One fixed window of one bucket: `[start, end)` in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First second of the window.
    pub start: i64,
    /// First second after the window.
    pub end: i64,
}

/// Counts requests per bucket (`scope`), subject and window.
#[async_trait]
pub trait RateCounter: Send + Sync {
    /// Counts one request of `subject` in `scope` during `window` and returns the count so far
    /// (this request included). Counts of earlier windows are forgotten.
    async fn hit(&self, scope: &str, subject: &str, window: Window) -> Result<i64, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_one_subject_per_64() {
        assert_eq!(
            client_subject("2001:db8:1:2:3:4:5:6"),
            "ip:2001:db8:1:2::/64"
        );
        assert_eq!(
            client_subject("2001:db8:1:2:ffff::1"),
            "ip:2001:db8:1:2::/64"
        );
        assert_ne!(
            client_subject("2001:db8:1:3::1"),
            client_subject("2001:db8:1:2::1")
        );
        assert_eq!(client_subject("192.0.2.7"), "ip:192.0.2.7");
        assert_eq!(client_subject("::ffff:192.0.2.7"), "ip:192.0.2.7");
        assert_eq!(client_subject("unknown"), "ip:unknown");
    }
}
