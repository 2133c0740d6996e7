//! [`HickoryResolver`]: the port over hickory-resolver, with retries, a concurrency bound, the
//! cache, and direct questions to one named server.

use crate::cache::Cache;
use crate::convert::{
    canonical, canonical_name, hickory_type, is_retryable, map_error, query_name, record_data,
};
use crate::settings::{ResolverSettings, SetupError};
use async_trait::async_trait;
use futures::future::{BoxFuture, FutureExt, Shared};
use hickory_resolver::Resolver;
use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
    ServerOrderingStrategy,
};
use hickory_resolver::lookup::Lookup;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::{RData, RecordType as HickoryType};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

type Upstream = Resolver<TokioRuntimeProvider>;

/// Longest CNAME chain reported (hickory itself stops chasing at 8).
const MAX_CHAIN: usize = 16;

/// Longest per-attempt timeout honoured.
const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// Per-server resolvers kept for [`HickoryResolver::ask_server`].
const MAX_DIRECT: usize = 256;

/// The production [`DnsResolver`]: cheap to clone (one shared state), safe to use from many
/// tasks at once.
#[derive(Clone)]
pub struct HickoryResolver {
    inner: Arc<Inner>,
}

struct Inner {
    settings: ResolverSettings,
    upstream: Upstream,
    direct: Mutex<HashMap<SocketAddr, Upstream>>,
    permits: Semaphore,
    cache: Cache,
    flights: Mutex<HashMap<(String, RecordType), Flight>>,
}

/// A query in flight, shared by every caller asking the same name and type meanwhile.
type Flight = Shared<BoxFuture<'static, Result<Answer, DnsError>>>;

impl std::fmt::Debug for HickoryResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HickoryResolver")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl HickoryResolver {
    /// Builds a resolver; with no servers in `settings`, the system's are read from
    /// `/etc/resolv.conf` (the only time that file is read).
    pub fn new(settings: ResolverSettings) -> Result<Self, SetupError> {
        let upstream = if settings.servers.is_empty() {
            let (config, _) = hickory_resolver::system_conf::read_system_conf()
                .map_err(|e| SetupError::System(e.to_string()))?;
            if config.name_servers().is_empty() {
                return Err(SetupError::NoServers);
            }
            let servers = config.name_servers().to_vec();
            build(ResolverConfig::from_name_servers(servers), &settings)?
        } else {
            build(config_for(&settings.servers), &settings)?
        };
        Ok(Self {
            inner: Arc::new(Inner {
                permits: Semaphore::new(settings.max_concurrency.clamp(1, Semaphore::MAX_PERMITS)),
                cache: Cache::new(settings.cache_ttl_cap, settings.cache_capacity),
                direct: Mutex::new(HashMap::new()),
                flights: Mutex::new(HashMap::new()),
                upstream,
                settings,
            }),
        })
    }

    /// A resolver asking exactly these servers, other settings at their defaults.
    pub fn with_servers(servers: Vec<SocketAddr>) -> Result<Self, SetupError> {
        Self::new(ResolverSettings::with_servers(servers))
    }

    /// The settings this resolver was built with.
    pub fn settings(&self) -> &ResolverSettings {
        &self.inner.settings
    }

    /// A view of this resolver that skips the cache when reading (and refreshes it), for
    /// verification paths where the user just published a record.
    pub fn fresh(&self) -> Fresh<'_> {
        Fresh { resolver: self }
    }

    /// Looks up through the upstream servers; `bypass_cache` skips the cached outcome (a fresh
    /// outcome still replaces it). Concurrent callers asking the same name and type share one
    /// query (audits of one domain started together ask the same names); a caller that bypasses
    /// the cache always gets a query of its own.
    pub async fn lookup_with(
        &self,
        name: &str,
        record_type: RecordType,
        bypass_cache: bool,
    ) -> Result<Answer, DnsError> {
        let key = canonical(name);
        if bypass_cache {
            let (outcome, ttl) = self.query(&self.inner.upstream, name, record_type).await;
            self.inner.cache.put(&key, record_type, &outcome, ttl);
            return outcome;
        }
        if let Some(cached) = self.inner.cache.get(&key, record_type) {
            return cached;
        }
        let flight = {
            let mut flights = self.inner.flights.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(flight) = flights.get(&(key.clone(), record_type)) {
                flight.clone()
            } else {
                let flight = self.start_flight(key.clone(), name.to_owned(), record_type);
                flights.insert((key, record_type), flight.clone());
                flight
            }
        };
        flight.await
    }

    /// Starts the shared query for `key`. It runs as its own task, so it completes (caching its
    /// outcome and leaving the table) even when every caller gave up waiting.
    fn start_flight(&self, key: String, name: String, record_type: RecordType) -> Flight {
        let this = self.clone();
        let task = tokio::spawn(async move {
            let (outcome, ttl) = this.query(&this.inner.upstream, &name, record_type).await;
            this.inner.cache.put(&key, record_type, &outcome, ttl);
            this.inner
                .flights
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&(key, record_type));
            outcome
        });
        async move {
            task.await
                .unwrap_or_else(|e| Err(DnsError::Other(format!("DNS query task failed: {e}"))))
        }
        .boxed()
        .shared()
    }

    /// Asks one named server directly, without the cache: how authoritative nameservers and
    /// public resolvers are compared. Counts against the concurrency bound like any query.
    pub async fn ask_server(
        &self,
        server: SocketAddr,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        let resolver = self.direct_resolver(server)?;
        self.query(&resolver, name, record_type).await.0
    }

    /// Forgets every cached outcome.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    fn direct_resolver(&self, server: SocketAddr) -> Result<Upstream, DnsError> {
        let mut direct = self
            .inner
            .direct
            .lock()
            .map_err(|_| DnsError::Other("resolver state poisoned".into()))?;
        if let Some(resolver) = direct.get(&server) {
            return Ok(resolver.clone());
        }
        let resolver = build(config_for(&[server]), &self.inner.settings)
            .map_err(|e| DnsError::Other(e.to_string()))?;
        if direct.len() >= MAX_DIRECT {
            // A hostile domain listing many nameservers must not grow this without bound.
            direct.clear();
        }
        direct.insert(server, resolver.clone());
        Ok(resolver)
    }

    /// One query with retries under a concurrency permit: the outcome and the TTL to cache it for.
    async fn query(
        &self,
        upstream: &Upstream,
        name: &str,
        record_type: RecordType,
    ) -> (Result<Answer, DnsError>, Option<u32>) {
        let qname = match query_name(name) {
            Ok(q) => q,
            Err(e) => return (Err(e), None),
        };
        let Ok(_permit) = self.inner.permits.acquire().await else {
            return (Err(DnsError::Other("resolver closed".into())), None);
        };
        let settings = &self.inner.settings;
        // hickory enforces the timeout itself; this guard only catches a stuck future.
        let guard = effective_timeout(settings)
            .saturating_mul(2)
            .saturating_add(Duration::from_millis(100));
        let mut last = (Err(DnsError::Timeout), None);
        for _ in 0..settings.attempts.max(1) {
            let lookup = upstream.lookup(qname.clone(), hickory_type(record_type));
            last = match tokio::time::timeout(guard, lookup).await {
                Err(_) => (Err(DnsError::Timeout), None),
                Ok(Ok(lookup)) => {
                    let answer = to_answer(&canonical(name), record_type, &lookup);
                    let ttl = answer.ttl;
                    (Ok(answer), ttl)
                }
                Ok(Err(error)) => match map_error(&error) {
                    Ok(negative_ttl) => {
                        let cname_chain = chase_cnames(upstream, name, record_type).await;
                        let answer = Answer {
                            cname_chain,
                            ..Answer::default()
                        };
                        (Ok(answer), negative_ttl)
                    }
                    Err(e) => (Err(e), None),
                },
            };
            match &last.0 {
                Err(e) if is_retryable(e) => {
                    tracing::debug!(name, ?record_type, error = %e, "DNS query failed, retrying");
                }
                _ => break,
            }
        }
        last
    }
}

/// The CNAME chain from `name` after a NODATA answer. hickory reports NODATA at the end of a
/// chain as a bare error, dropping the chain, so it is rebuilt with CNAME queries (one extra
/// query when there is no chain). Best effort: a failing probe ends the chain.
///
/// Only for TXT and MX, whose callers read the chain of an empty answer (a DMARC, DKIM or SPF
/// name delegated by CNAME to a name without the record). An empty address, NS, PTR or SOA
/// answer is common (every IPv4-only host has no AAAA) and nobody reads its chain, so it costs
/// no extra query.
async fn chase_cnames(upstream: &Upstream, name: &str, record_type: RecordType) -> Vec<String> {
    let mut chain = Vec::new();
    if !matches!(record_type, RecordType::Txt | RecordType::Mx) {
        return chain;
    }
    let mut current = canonical(name);
    while chain.len() < MAX_CHAIN {
        let Ok(qname) = query_name(&current) else {
            break;
        };
        let Ok(lookup) = upstream.lookup(qname, HickoryType::CNAME).await else {
            break;
        };
        let next = lookup.answers().iter().find_map(|r| match &r.data {
            RData::CNAME(target) if canonical_name(&r.name) == current => {
                Some(canonical_name(&target.0))
            }
            _ => None,
        });
        match next {
            Some(next) if !chain.contains(&next) => {
                chain.push(next.clone());
                current = next;
            }
            _ => break,
        }
    }
    chain
}

/// The hickory configuration for a list of servers: UDP and TCP on each server's port, so a
/// truncated UDP answer is retried over TCP.
fn config_for(servers: &[SocketAddr]) -> ResolverConfig {
    let servers = servers
        .iter()
        .map(|addr| {
            let mut udp = ConnectionConfig::udp();
            udp.port = addr.port();
            let mut tcp = ConnectionConfig::tcp();
            tcp.port = addr.port();
            NameServerConfig::new(addr.ip(), true, vec![udp, tcp])
        })
        .collect();
    ResolverConfig::from_name_servers(servers)
}

/// The per-attempt timeout, bounded: hickory adds it to `Instant::now()`, which would overflow
/// for absurd values.
fn effective_timeout(settings: &ResolverSettings) -> Duration {
    settings
        .timeout
        .clamp(Duration::from_millis(1), MAX_TIMEOUT)
}

fn build(config: ResolverConfig, settings: &ResolverSettings) -> Result<Upstream, SetupError> {
    if config.name_servers().is_empty() {
        return Err(SetupError::NoServers);
    }
    let mut opts = ResolverOpts::default();
    opts.timeout = effective_timeout(settings);
    // Retries are ours (only for timeouts and network errors); hickory would also retry
    // SERVFAIL and REFUSED answers.
    opts.attempts = 0;
    opts.cache_size = 0;
    opts.edns0 = true;
    opts.edns_payload_len = settings.edns_payload_len;
    opts.use_hosts_file = ResolveHosts::Never;
    opts.preserve_intermediates = true;
    opts.ndots = 0;
    opts.server_ordering_strategy = ServerOrderingStrategy::UserProvidedOrder;
    Resolver::builder_with_config(config, TokioRuntimeProvider::default())
        .with_options(opts)
        .build()
        .map_err(|e| SetupError::System(e.to_string()))
}

/// Converts a successful lookup: the records of the asked type, the CNAME chain from the query
/// name, the smallest TTL.
fn to_answer(qname: &str, record_type: RecordType, lookup: &Lookup) -> Answer {
    let wanted = hickory_type(record_type);
    let mut aliases = HashMap::new();
    let mut records = Vec::new();
    let mut ttl: Option<u32> = None;
    for record in lookup.answers() {
        if record.record_type() == wanted {
            if let Some(data) = record_data(record) {
                records.push(data);
                ttl = Some(ttl.map_or(record.ttl, |t| t.min(record.ttl)));
            }
        } else if let RData::CNAME(target) = &record.data {
            aliases.insert(canonical_name(&record.name), canonical_name(&target.0));
        }
    }
    let mut cname_chain = Vec::new();
    let mut current = qname.to_owned();
    while let Some(next) = aliases.remove(&current) {
        if cname_chain.len() >= MAX_CHAIN {
            break;
        }
        cname_chain.push(next.clone());
        current = next;
    }
    if record_type == RecordType::Mx {
        records.sort_by(|a, b| mx_key(a).cmp(&mx_key(b)));
    }
    Answer {
        records,
        cname_chain,
        ttl,
    }
}

fn mx_key(data: &RecordData) -> (u16, &str) {
    match data {
        RecordData::Mx {
            preference,
            exchange,
        } => (*preference, exchange.as_str()),
        _ => (u16::MAX, ""),
    }
}

#[async_trait]
impl DnsResolver for HickoryResolver {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.lookup_with(name, record_type, false).await
    }

    async fn lookup_uncached(
        &self,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        self.lookup_with(name, record_type, true).await
    }
}

/// A [`HickoryResolver`] that never answers from the cache; made by [`HickoryResolver::fresh`].
#[derive(Debug, Clone, Copy)]
pub struct Fresh<'a> {
    resolver: &'a HickoryResolver,
}

#[async_trait]
impl DnsResolver for Fresh<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.resolver.lookup_with(name, record_type, true).await
    }
}
