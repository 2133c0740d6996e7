//! [`HickoryResolver`]: the port over our own DNS exchange ([`crate::transport`], on
//! hickory-proto's wire format), with retries, a concurrency bound, the cache, CNAME chasing and
//! direct questions to one named server.

use crate::cache::Cache;
use crate::convert::{
    canonical, canonical_name, hickory_type, is_retryable, query_name, record_data,
};
use crate::settings::{ResolverSettings, SetupError};
use crate::transport::{Timing, exchange};
use async_trait::async_trait;
use futures::future::{BoxFuture, FutureExt, Shared};
use hickory_resolver::proto::op::{Message, Query, ResponseCode};
use hickory_resolver::proto::rr::RData;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// Longest CNAME chain followed and reported.
const MAX_CHAIN: usize = 16;

/// Longest per-attempt timeout honoured.
const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// The production [`DnsResolver`]: cheap to clone (one shared state), safe to use from many
/// tasks at once.
#[derive(Clone)]
pub struct HickoryResolver {
    inner: Arc<Inner>,
}

struct Inner {
    settings: ResolverSettings,
    /// The servers asked, in order: the settings' or the system's.
    upstream: Vec<SocketAddr>,
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
            .field("upstream", &self.inner.upstream)
            .finish_non_exhaustive()
    }
}

impl HickoryResolver {
    /// Builds a resolver; with no servers in `settings`, the system's are read from
    /// `/etc/resolv.conf` (the only time that file is read).
    pub fn new(settings: ResolverSettings) -> Result<Self, SetupError> {
        let upstream = if settings.servers.is_empty() {
            system_servers()?
        } else {
            settings.servers.clone()
        };
        Ok(Self {
            inner: Arc::new(Inner {
                permits: Semaphore::new(settings.max_concurrency.clamp(1, Semaphore::MAX_PERMITS)),
                cache: Cache::new(settings.cache_ttl_cap, settings.cache_capacity),
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
            crate::stats::queried(&outcome);
            self.inner.cache.put(&key, record_type, &outcome, ttl);
            return outcome;
        }
        if let Some(cached) = self.inner.cache.get(&key, record_type) {
            crate::stats::cache_hit();
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
            crate::stats::queried(&outcome);
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
        self.query(&[server], name, record_type).await.0
    }

    /// Forgets every cached outcome.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// One lookup with retries under a concurrency permit: the outcome and the TTL to cache it
    /// for. `servers` are asked in order within each attempt.
    async fn query(
        &self,
        servers: &[SocketAddr],
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
        let timing = Timing {
            timeout: effective_timeout(settings),
            retransmit: settings.retransmit_after,
            edns_payload_len: settings.edns_payload_len,
        };
        let query = Query::query(qname, hickory_type(record_type));
        let mut last = (Err(DnsError::Timeout), None);
        for _ in 0..settings.attempts.max(1) {
            last = match ask_servers(servers, &query, timing).await {
                Ok(message) => {
                    let first = convert(&canonical(name), record_type, &message);
                    chase(servers, record_type, first, timing).await
                }
                Err(e) => (Err(e), None),
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

/// The servers of `/etc/resolv.conf`, each on its configured port.
fn system_servers() -> Result<Vec<SocketAddr>, SetupError> {
    let (config, _) = hickory_resolver::system_conf::read_system_conf()
        .map_err(|e| SetupError::System(e.to_string()))?;
    let mut servers: Vec<SocketAddr> = Vec::new();
    for server in config.name_servers() {
        let port = server.connections.first().map_or(53, |c| c.port);
        let addr = SocketAddr::new(server.ip, port);
        if !servers.contains(&addr) {
            servers.push(addr);
        }
    }
    if servers.is_empty() {
        return Err(SetupError::NoServers);
    }
    Ok(servers)
}

/// Asks each server in turn until one gives an answer that settles the question (NOERROR or
/// NXDOMAIN). A server that fails, refuses or answers SERVFAIL passes the question on; when none
/// settles it, the failure reported is the most telling one (a server's own answer code over
/// silence).
async fn ask_servers(
    servers: &[SocketAddr],
    query: &Query,
    timing: Timing,
) -> Result<Message, DnsError> {
    let mut failure: Option<DnsError> = None;
    for server in servers {
        let outcome = exchange(*server, query, timing).await;
        let error = match outcome {
            Ok(message)
                if matches!(
                    message.metadata.response_code,
                    ResponseCode::NoError | ResponseCode::NXDomain
                ) =>
            {
                return Ok(message);
            }
            Ok(message) => map_code(message.metadata.response_code),
            Err(e) => e,
        };
        failure = Some(match failure {
            Some(previous) if !answered(&error) && answered(&previous) => previous,
            _ => error,
        });
    }
    Err(failure.unwrap_or(DnsError::Timeout))
}

/// True for failures a server said itself (as opposed to silence or the network).
fn answered(error: &DnsError) -> bool {
    matches!(error, DnsError::ServFail | DnsError::Refused)
}

fn map_code(code: ResponseCode) -> DnsError {
    match code {
        ResponseCode::NXDomain => DnsError::NxDomain,
        ResponseCode::ServFail => DnsError::ServFail,
        ResponseCode::Refused => DnsError::Refused,
        other => DnsError::Other(format!("response code {other}")),
    }
}

/// What one answer says: the outcome, its TTL, and the name to ask next when the answer stops at
/// a CNAME without the records asked for (an authoritative server does not follow a CNAME
/// into a zone it does not serve, as a recursive resolver would).
struct Converted {
    outcome: Result<Answer, DnsError>,
    ttl: Option<u32>,
    next: Option<String>,
}

/// Converts an answer to `qname`: the records of the asked type along the CNAME chain from the
/// query name, the chain, the smallest TTL (or the negative TTL of an empty answer).
fn convert(qname: &str, record_type: RecordType, message: &Message) -> Converted {
    match message.metadata.response_code {
        ResponseCode::NoError => {}
        code => {
            return Converted {
                outcome: Err(map_code(code)),
                ttl: None,
                next: None,
            };
        }
    }
    let wanted = hickory_type(record_type);
    let mut aliases = HashMap::new();
    if record_type != RecordType::Cname {
        for record in &message.answers {
            if let RData::CNAME(target) = &record.data {
                aliases.insert(canonical_name(&record.name), canonical_name(&target.0));
            }
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
    let mut records = Vec::new();
    let mut ttl: Option<u32> = None;
    for record in &message.answers {
        if record.record_type() != wanted {
            continue;
        }
        let owner = canonical_name(&record.name);
        if owner != qname && !cname_chain.contains(&owner) {
            continue; // not on the path from the question: not ours to believe
        }
        if let Some(data) = record_data(record) {
            records.push(data);
            ttl = Some(ttl.map_or(record.ttl, |t| t.min(record.ttl)));
        }
    }
    // An empty answer is final when it carries the SOA of the zone holding the end of the chain
    // (a negative answer for that name); otherwise the chain was cut where the server's zones end.
    let next = (records.is_empty() && !cname_chain.is_empty())
        .then(|| current.clone())
        .filter(|end| !negative_for(message, end));
    if record_type == RecordType::Mx {
        records.sort_by(|a, b| mx_key(a).cmp(&mx_key(b)));
    }
    // The answer's TTL is its records'; an empty answer is cached for the negative TTL.
    let cache_ttl = if records.is_empty() {
        negative_ttl(message)
    } else {
        ttl
    };
    Converted {
        outcome: Ok(Answer {
            records,
            cname_chain,
            ttl,
        }),
        ttl: cache_ttl,
        next,
    }
}

/// The negative TTL of an empty answer (RFC 2308 §5): the smaller of the SOA record's TTL and
/// its MINIMUM field.
fn negative_ttl(message: &Message) -> Option<u32> {
    message
        .authorities
        .iter()
        .find_map(|record| match &record.data {
            RData::SOA(soa) => Some(record.ttl.min(soa.minimum)),
            _ => None,
        })
}

/// True when `message` holds an SOA whose zone contains `name`: a negative answer for it.
fn negative_for(message: &Message, name: &str) -> bool {
    message.authorities.iter().any(|record| {
        matches!(record.data, RData::SOA(_)) && {
            let zone = canonical_name(&record.name);
            zone.is_empty() || name == zone || name.ends_with(&format!(".{zone}"))
        }
    })
}

/// Follows a CNAME chain the first answer left unfinished, asking for the chain's end until the
/// records come, a negative answer ends it, or the chain would loop or grow past [`MAX_CHAIN`].
/// The chain reported is the whole chain from the query name.
async fn chase(
    servers: &[SocketAddr],
    record_type: RecordType,
    first: Converted,
    timing: Timing,
) -> (Result<Answer, DnsError>, Option<u32>) {
    let Converted {
        outcome,
        mut ttl,
        mut next,
    } = first;
    let Ok(mut answer) = outcome else {
        return (outcome, ttl);
    };
    while let Some(target) = next.take() {
        if answer.cname_chain.len() >= MAX_CHAIN {
            break;
        }
        let Ok(qname) = query_name(&target) else {
            break;
        };
        let query = Query::query(qname, hickory_type(record_type));
        let message = match ask_servers(servers, &query, timing).await {
            Ok(message) => message,
            Err(e) => return (Err(e), None),
        };
        let step = convert(&target, record_type, &message);
        let part = match step.outcome {
            Ok(part) => part,
            Err(e) => return (Err(e), None),
        };
        if part
            .cname_chain
            .iter()
            .any(|n| answer.cname_chain.contains(n))
        {
            break; // a loop: keep the chain as far as it went, with no records
        }
        answer.cname_chain.extend(part.cname_chain);
        answer.records = part.records;
        answer.ttl = part.ttl;
        ttl = step.ttl;
        next = step.next;
    }
    (Ok(answer), ttl)
}

/// The per-attempt timeout, bounded.
fn effective_timeout(settings: &ResolverSettings) -> Duration {
    settings
        .timeout
        .clamp(Duration::from_millis(1), MAX_TIMEOUT)
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
