//! [`FixtureServer`]: the running server, its live edits, faults and query statistics.

use crate::FixtureError;
use crate::faults::{Fault, Scope};
use crate::handler::{FixtureHandler, QueryLog, State};
use crate::nsd::Nsd;
use crate::proxy::Proxy;
use crate::rdata::{absolute, hickory_type, to_rdata};
use crate::zone::Zone;
use hickory_server::Server;
use hickory_server::proto::rr::LowerName;
use hickory_server::zone_handler::Catalog;
use mailward_dns::{HickoryResolver, ResolverSettings};
use mailward_domain::dns::{RecordData, RecordType};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::{TcpListener, UdpSocket};

/// How many random ports to try before giving up on finding one free for both UDP and TCP.
const BIND_TRIES: usize = 20;

/// Which server answers: the in-process one, or a real NSD behind the fault-injecting relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// hickory-server in this process: fast, for unit and engine tests.
    InProcess,
    /// NSD (a separate process) behind a relay on the fixture's address that logs queries and
    /// injects the faults; what customers' servers look like on the wire.
    Nsd,
}

impl Backend {
    /// `MAILWARD_TEST_DNS=nsd` runs every fixture on NSD (the suite's real-server pass); anything
    /// else, or nothing, runs them in process.
    pub fn from_env() -> Self {
        match std::env::var("MAILWARD_TEST_DNS").as_deref() {
            Ok("nsd") => Backend::Nsd,
            _ => Backend::InProcess,
        }
    }
}

/// An authoritative DNS server running on the current tokio runtime; stops when dropped.
pub struct FixtureServer {
    addr: SocketAddr,
    state: Arc<State>,
    zones: Mutex<Vec<Zone>>,
    running: Running,
}

enum Running {
    InProcess(Server<FixtureHandler>),
    Nsd {
        nsd: Mutex<Nsd>,
        upstream: Arc<Mutex<SocketAddr>>,
        _proxy: Proxy,
    },
}

impl std::fmt::Debug for FixtureServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixtureServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not turn every later call into a second panic.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn build_catalog(zones: &[Zone]) -> Result<Catalog, FixtureError> {
    let mut catalog = Catalog::new();
    for zone in zones {
        let handler = zone.handler()?;
        catalog.upsert(LowerName::from(zone.origin_name()), vec![Arc::new(handler)]);
    }
    Ok(catalog)
}

async fn bind(ip: IpAddr) -> Result<(UdpSocket, TcpListener), FixtureError> {
    let mut last = None;
    for _ in 0..BIND_TRIES {
        let udp = UdpSocket::bind((ip, 0)).await?;
        let port = udp.local_addr()?.port();
        match TcpListener::bind((ip, port)).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .map(FixtureError::Io)
        .unwrap_or_else(|| FixtureError::Invalid("no free port".into())))
}

impl FixtureServer {
    /// Starts a server on 127.0.0.1 serving `zones`, on the backend [`Backend::from_env`] picks.
    pub async fn start(zones: Vec<Zone>) -> Result<Self, FixtureError> {
        Self::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), zones).await
    }

    /// Starts a server on `ip` (127.0.0.2, 127.0.0.3 ... for extra "nameservers"), random port,
    /// UDP and TCP on the same port, on the backend [`Backend::from_env`] picks.
    pub async fn start_on(ip: IpAddr, zones: Vec<Zone>) -> Result<Self, FixtureError> {
        Self::start_with(Backend::from_env(), ip, zones).await
    }

    /// Starts NSD serving `zones` on 127.0.0.1, whatever the environment says.
    pub async fn start_nsd(zones: Vec<Zone>) -> Result<Self, FixtureError> {
        Self::start_with(Backend::Nsd, IpAddr::V4(Ipv4Addr::LOCALHOST), zones).await
    }

    /// Starts a server of the given backend.
    pub async fn start_with(
        backend: Backend,
        ip: IpAddr,
        zones: Vec<Zone>,
    ) -> Result<Self, FixtureError> {
        match backend {
            Backend::InProcess => Self::start_in_process(ip, zones).await,
            Backend::Nsd => Self::start_behind_relay(ip, zones).await,
        }
    }

    async fn start_behind_relay(ip: IpAddr, zones: Vec<Zone>) -> Result<Self, FixtureError> {
        for zone in &zones {
            zone.check()?;
        }
        // NSD listens on 127.0.0.1 whatever `ip` the relay answers on.
        let nsd = Nsd::start(IpAddr::V4(Ipv4Addr::LOCALHOST), &zones)?;
        let upstream = Arc::new(Mutex::new(nsd.addr()));
        let state = Arc::new(State::default());
        let proxy = Proxy::start(ip, Arc::clone(&upstream), Arc::clone(&state)).await?;
        Ok(Self {
            addr: proxy.addr(),
            state,
            zones: Mutex::new(zones),
            running: Running::Nsd {
                nsd: Mutex::new(nsd),
                upstream,
                _proxy: proxy,
            },
        })
    }

    async fn start_in_process(ip: IpAddr, zones: Vec<Zone>) -> Result<Self, FixtureError> {
        let catalog = build_catalog(&zones)?;
        let state = Arc::new(State::default());
        *lock_rw(&state) = Arc::new(catalog);
        let (udp, tcp) = bind(ip).await?;
        let addr = udp.local_addr()?;
        // As a real server's: a burst of a thousand queries waits in the socket, not dropped.
        crate::proxy::enlarge_receive_buffer(&udp);
        let mut server = Server::new(FixtureHandler {
            state: Arc::clone(&state),
        });
        server.register_socket(udp);
        server.register_listener(tcp, Duration::from_secs(5), 64);
        Ok(Self {
            addr,
            state,
            zones: Mutex::new(zones),
            running: Running::InProcess(server),
        })
    }

    /// Which server answers.
    pub fn backend(&self) -> Backend {
        match self.running {
            Running::InProcess(_) => Backend::InProcess,
            Running::Nsd { .. } => Backend::Nsd,
        }
    }

    /// The address (UDP and TCP) the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Resolver settings aimed at this server, tuned for tests: 1 s timeout, one attempt, no
    /// cache (so live edits show at once). Adjust and pass to [`HickoryResolver::new`].
    pub fn settings(&self) -> ResolverSettings {
        ResolverSettings {
            timeout: Duration::from_secs(1),
            attempts: 1,
            cache_ttl_cap: Duration::ZERO,
            ..ResolverSettings::with_servers(vec![self.addr])
        }
    }

    /// A resolver using [`settings`](Self::settings).
    pub fn resolver(&self) -> Result<HickoryResolver, FixtureError> {
        Ok(HickoryResolver::new(self.settings())?)
    }

    /// Adds a zone while running.
    pub fn add_zone(&self, zone: Zone) -> Result<(), FixtureError> {
        self.edit(|zones| {
            zones.retain(|z| z.origin_name() != zone.origin_name());
            zones.push(zone);
            Ok(())
        })
    }

    /// Replaces the records of `record_type` at the absolute `name` ("publishes" them); an empty
    /// list removes them. Target names inside `data` are absolute.
    pub fn set(
        &self,
        name: &str,
        record_type: RecordType,
        data: Vec<RecordData>,
    ) -> Result<(), FixtureError> {
        let owner = absolute(name)?;
        let data = data.iter().map(to_rdata).collect::<Result<Vec<_>, _>>()?;
        self.edit_zone(name, |zone| {
            zone.set(&owner, hickory_type(record_type), data);
        })
    }

    /// Replaces the TXT records at `name` with one record holding `value`.
    pub fn set_txt(&self, name: &str, value: &str) -> Result<(), FixtureError> {
        let strings = value.as_bytes().chunks(255).map(<[u8]>::to_vec).collect();
        self.set(name, RecordType::Txt, vec![RecordData::Txt(strings)])
    }

    /// Adds one record at the absolute `name`, keeping the others.
    pub fn add(&self, name: &str, data: RecordData) -> Result<(), FixtureError> {
        let owner = absolute(name)?;
        let data = to_rdata(&data)?;
        self.edit_zone(name, |zone| zone.add(&owner, vec![data]))
    }

    /// Removes the records at `name`: all of them, or only those of one type. Removing every
    /// record makes the name NXDOMAIN (unless names exist below it).
    pub fn remove(&self, name: &str, record_type: Option<RecordType>) -> Result<(), FixtureError> {
        let owner = absolute(name)?;
        self.edit_zone(name, |zone| {
            zone.remove(&owner, record_type.map(hickory_type))
        })
    }

    fn edit_zone(&self, name: &str, change: impl FnOnce(&mut Zone)) -> Result<(), FixtureError> {
        let owner = absolute(name)?;
        self.edit(|zones| {
            let zone = zones
                .iter_mut()
                .filter(|z| z.contains(&owner))
                .max_by_key(|z| z.origin_name().num_labels())
                .ok_or_else(|| FixtureError::NoZone(name.to_owned()))?;
            change(zone);
            Ok(())
        })
    }

    fn edit(
        &self,
        change: impl FnOnce(&mut Vec<Zone>) -> Result<(), FixtureError>,
    ) -> Result<(), FixtureError> {
        let mut zones = lock(&self.zones);
        let mut edited = zones.clone();
        change(&mut edited)?;
        match &self.running {
            Running::InProcess(_) => {
                let catalog = build_catalog(&edited)?;
                *lock_rw(&self.state) = Arc::new(catalog);
            }
            Running::Nsd { nsd, upstream, .. } => {
                let mut nsd = lock(nsd);
                nsd.apply(&edited)?;
                *lock(upstream) = nsd.addr();
            }
        }
        *zones = edited;
        Ok(())
    }

    /// Injects a fault for the scope (faults of a scope accumulate until cleared).
    pub fn inject(&self, scope: Scope, fault: Fault) {
        lock(&self.state.faults).add(scope, fault);
    }

    /// Removes the faults of one scope.
    pub fn clear_faults(&self, scope: Scope) {
        lock(&self.state.faults).clear(scope);
    }

    /// Removes every injected fault.
    pub fn clear_all_faults(&self) {
        lock(&self.state.faults).clear_all();
    }

    /// Every query received so far, in order.
    pub fn queries(&self) -> Vec<QueryLog> {
        lock(&self.state.log).clone()
    }

    /// How many queries were received so far.
    pub fn query_count(&self) -> usize {
        self.state.query_count.load(Ordering::Relaxed)
    }

    /// Turns the per-query log off (counts are still kept): for benchmarks sending millions of
    /// queries, whose memory figure should be the service's.
    pub fn set_query_log(&self, on: bool) {
        self.state.log_off.store(!on, Ordering::Relaxed);
    }

    /// The most queries ever handled at the same time (a concurrency bound shows here).
    pub fn peak_in_flight(&self) -> usize {
        self.state.peak_in_flight.load(Ordering::SeqCst)
    }

    /// Forgets the query log and the in-flight peak.
    pub fn reset_stats(&self) {
        lock(&self.state.log).clear();
        self.state.query_count.store(0, Ordering::Relaxed);
        self.state.peak_in_flight.store(0, Ordering::SeqCst);
    }

    /// Stops the server and waits for its tasks.
    pub async fn shutdown(mut self) {
        if let Running::InProcess(server) = &mut self.running
            && let Err(error) = server.shutdown_gracefully().await
        {
            tracing::debug!(%error, "fixture server shutdown");
        }
    }
}

fn lock_rw(state: &State) -> std::sync::RwLockWriteGuard<'_, Arc<Catalog>> {
    state
        .catalog
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        if let Running::InProcess(server) = &self.running {
            server.shutdown_token().cancel();
        }
    }
}
