//! The HTTP client for customer-supplied URLs (DESIGN.md §7): HTTPS only, no redirects, a time
//! limit, and a DNS resolver that refuses private, loopback, link-local and metadata addresses.
//! reqwest connects only to the addresses this resolver returns, so the check holds at connect
//! time and a DNS-rebinding answer cannot slip past it.

use mailward_domain::dns::{DnsResolver, RecordType};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Whether an address may be contacted. Loopback only when `allow_loopback` (local tests).
pub fn ip_allowed(ip: IpAddr, allow_loopback: bool) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_allowed(v4, allow_loopback),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_allowed(v4, allow_loopback);
            }
            if v6.is_loopback() {
                return allow_loopback;
            }
            let first = v6.segments()[0];
            !(v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local (incl. fd00:ec2::254 metadata)
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first == 0x0064 && v6.segments()[1] == 0xff9b) // NAT64 can reach private v4
                || first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

fn v4_allowed(ip: Ipv4Addr, allow_loopback: bool) -> bool {
    if ip.is_loopback() {
        return allow_loopback;
    }
    let o = ip.octets();
    !(ip.is_private()
        || ip.is_link_local() // 169.254/16, including the 169.254.169.254 metadata service
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // carrier-grade NAT 100.64/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18/15
        || o[0] >= 240)
}

/// An address was refused by the outbound policy.
#[derive(Debug, thiserror::Error)]
#[error("refused: {0} resolves only to private, loopback, link-local or reserved addresses")]
pub struct Refused(pub String);

/// A host with no A or AAAA record (or whose lookup failed).
#[derive(Debug, thiserror::Error)]
#[error("failed to lookup address: {0} has no A or AAAA record")]
pub struct NoAddress(pub String);

/// Resolves through the service's own DNS port (the configured servers, or the test fixture),
/// never the operating system's resolver, and keeps only allowed addresses.
struct GuardedResolver {
    allow_loopback: bool,
    dns: Arc<dyn DnsResolver>,
}

async fn addresses(dns: &dyn DnsResolver, host: &str, allow_loopback: bool) -> Vec<SocketAddr> {
    if allow_loopback && host.eq_ignore_ascii_case("localhost") {
        return vec![SocketAddr::from(([127, 0, 0, 1], 0))];
    }
    let (v4, v6) = tokio::join!(
        dns.lookup(host, RecordType::A),
        dns.lookup(host, RecordType::Aaaa)
    );
    [v4, v6]
        .into_iter()
        .flat_map(|answer| answer.map(|a| a.records).unwrap_or_default())
        .filter_map(|record| record.ip())
        .map(|ip| SocketAddr::new(ip, 0))
        .collect()
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_loopback = self.allow_loopback;
        let dns = Arc::clone(&self.dns);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found = addresses(dns.as_ref(), &host, allow_loopback).await;
            if found.is_empty() {
                return Err(Box::new(NoAddress(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| ip_allowed(a.ip(), allow_loopback))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(Refused(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Settings of the outbound client.
#[derive(Debug, Clone)]
pub struct OutboundPolicy {
    /// Allow loopback targets (local tests only).
    pub allow_loopback: bool,
    /// Extra trusted root certificate (PEM), for a local test CA.
    pub extra_ca_pem: Option<Vec<u8>>,
    /// Whole-request time limit.
    pub timeout: Duration,
}

/// Builds the client: HTTPS only, no redirects, no proxy, the guarded resolver over `dns`, the
/// time limit.
pub fn build(
    policy: &OutboundPolicy,
    dns: Arc<dyn DnsResolver>,
) -> Result<reqwest::Client, String> {
    let mut builder = guarded(policy.timeout, policy.allow_loopback, dns)
        .https_only(true)
        .user_agent("Mailward-Webhooks/1");
    if let Some(pem) = &policy.extra_ca_pem {
        let certs =
            reqwest::Certificate::from_pem_bundle(pem).map_err(|e| format!("extra CA: {e}"))?;
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| format!("building the outbound HTTP client: {e}"))
}

/// The client for public registries (RDAP): the same guarded resolver, no redirects (the caller
/// follows and checks each one), no proxy, the time limit. Plain HTTP is possible only with
/// `allow_loopback` (tests); the caller checks every URL with [`check_registry_url`] first.
pub fn build_for_registries(
    timeout: Duration,
    allow_loopback: bool,
    dns: Arc<dyn DnsResolver>,
) -> Result<reqwest::Client, String> {
    guarded(timeout, allow_loopback, dns)
        .https_only(!allow_loopback)
        .user_agent("Mailward-RDAP/1")
        .build()
        .map_err(|e| format!("building the registry HTTP client: {e}"))
}

fn guarded(
    timeout: Duration,
    allow_loopback: bool,
    dns: Arc<dyn DnsResolver>,
) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .dns_resolver(Arc::new(GuardedResolver {
            allow_loopback,
            dns,
        }))
}

/// [`check_url`] for a registry URL, which also admits plain `http` to a loopback host when
/// `allow_loopback` (a test's fixture server), and nothing else over plain HTTP.
pub fn check_registry_url(raw: &str, allow_loopback: bool) -> Result<url::Url, String> {
    if allow_loopback
        && let Ok(url) = url::Url::parse(raw)
        && url.scheme() == "http"
        && url.username().is_empty()
        && url.password().is_none()
    {
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        if loopback {
            return Ok(url);
        }
    }
    check_url(raw, allow_loopback)
}

/// Checks a URL for the outbound policy before any request: https, a host, no credentials, and an
/// IP-literal host must itself be allowed (literals bypass the resolver).
pub fn check_url(raw: &str, allow_loopback: bool) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|_| "not a valid absolute URL".to_owned())?;
    if url.scheme() != "https" {
        return Err("the URL must use https".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL must not carry credentials".into());
    }
    match url.host() {
        None => return Err("the URL has no host".into()),
        Some(url::Host::Ipv4(ip)) if !ip_allowed(IpAddr::V4(ip), allow_loopback) => {
            return Err("the URL points at a private, loopback or reserved address".into());
        }
        Some(url::Host::Ipv6(ip)) if !ip_allowed(IpAddr::V6(ip), allow_loopback) => {
            return Err("the URL points at a private, loopback or reserved address".into());
        }
        Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") && !allow_loopback => {
            return Err("the URL points at a private, loopback or reserved address".into());
        }
        // A host name of two labels or more whose last label starts with a letter (the
        // documented pattern): nothing else is a name that DNS can resolve.
        Some(url::Host::Domain(d)) if !is_host_name(d) && !d.eq_ignore_ascii_case("localhost") => {
            return Err("the URL's host is not a host name".into());
        }
        _ => {}
    }
    if raw.len() > 2048 {
        return Err("the URL is longer than 2048 characters".into());
    }
    Ok(url)
}

/// Two labels or more, none empty (one trailing dot allowed), the last starting with a letter.
fn is_host_name(host: &str) -> bool {
    let labels: Vec<&str> = host.strip_suffix('.').unwrap_or(host).split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| !l.is_empty())
        && labels
            .last()
            .and_then(|l| l.chars().next())
            .is_some_and(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_must_be_names_ending_in_a_letter_label() {
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        assert!(check_url("https://hooks.example.com./x", false).is_ok());
        assert!(check_url("https://a.b.*/x", false).is_err());
        assert!(check_url("https://a..b.example/x", false).is_err());
        assert!(check_url("https://single/x", false).is_err());
    }

    #[test]
    fn private_and_special_addresses_are_refused() {
        for ip in [
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:10.0.0.1",
            "::",
        ] {
            assert!(!ip_allowed(ip.parse().unwrap(), false), "{ip}");
        }
        assert!(!ip_allowed("127.0.0.1".parse().unwrap(), false));
        assert!(ip_allowed("127.0.0.1".parse().unwrap(), true));
        for ip in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "8.8.8.8",
        ] {
            assert!(ip_allowed(ip.parse().unwrap(), false), "{ip}");
        }
    }

    #[test]
    fn urls_must_be_https_without_credentials_or_private_literals() {
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        assert!(check_url("http://hooks.example.com/x", false).is_err());
        assert!(check_url("https://user:pw@hooks.example.com/x", false).is_err());
        assert!(check_url("https://10.1.2.3/x", false).is_err());
        assert!(check_url("https://[::1]/x", false).is_err());
        assert!(check_url("https://localhost/x", false).is_err());
        assert!(check_url("https://localhost:8443/x", true).is_ok());
        assert!(check_url("not a url", false).is_err());
    }

    #[test]
    fn registry_urls_are_https_unless_a_test_allows_loopback_http() {
        assert!(check_registry_url("https://rdap.example/dns.json", false).is_ok());
        assert!(check_registry_url("http://rdap.example/dns.json", false).is_err());
        assert!(check_registry_url("http://127.0.0.1:8080/dns.json", false).is_err());
        assert!(check_registry_url("http://127.0.0.1:8080/dns.json", true).is_ok());
        assert!(check_registry_url("http://localhost:8080/dns.json", true).is_ok());
        assert!(check_registry_url("http://[::1]:8080/dns.json", true).is_ok());
        // The allowance is for loopback only: plain HTTP elsewhere, or private hosts, stay out.
        assert!(check_registry_url("http://rdap.example/dns.json", true).is_err());
        assert!(check_registry_url("http://10.0.0.1/dns.json", true).is_err());
        assert!(check_registry_url("https://10.0.0.1/dns.json", true).is_err());
        assert!(check_registry_url("http://u:p@127.0.0.1/dns.json", true).is_err());
    }
}
