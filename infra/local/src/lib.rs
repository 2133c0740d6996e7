//! The local stack: one process that serves every function's router on one port and runs the
//! queue workers and periodic chores beside it, on the embedded adapters (SQLite file, durable
//! queue table, `.eml` outbox). Black-box tests start it in-process with [`LocalStack::start`].

pub mod billing_pages;
pub mod dns_server;
pub mod imap;
pub mod ipdata;
pub mod smtp;
pub mod uploads;

use anyhow::Context as _;
use mailward_domain::queue::Queue;
use mailward_domain::queue::QueueName;
use mailward_domain::store::ItemStore;
use mailward_domain::{Clock, SystemClock};
use mailward_local::{Database, DirObjectStore, EmbeddedQueue, EmbeddedStore, FileMailer};
use mailward_services::config::{RateLimit, Scope};
use mailward_services::{AppState, Config};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Settings of the local stack (the binary fills them from flags and environment).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Data directory: `mailward.db`, `outbox/`, `secret.key`.
    pub data_dir: PathBuf,
    /// Public base URL; defaults to `http://<listen>`.
    pub base_url: Option<String>,
    /// The MCP connector's client id (default `mailward-mcp`).
    pub oauth_client_id: Option<String>,
    /// The hosted connectors' HTTPS callbacks (`None`: the default list).
    pub oauth_redirect_uris: Option<Vec<String>>,
    /// Secret key; defaults to one generated once and kept in `<data-dir>/secret.key`.
    pub secret_key: Option<String>,
    /// Sender address of outbound mail.
    pub mail_from: String,
    /// Queue messages are dead-lettered after this many receives.
    pub max_receives: u32,
    /// Pause between queue polls when a queue is empty.
    pub poll_interval: Duration,
    /// Rate-limit overrides per scope (others keep their defaults).
    pub rate_limits: Vec<(Scope, RateLimit)>,
    /// Signup codes one address may request per hour.
    pub signup_codes_per_hour: u32,
    /// Allow webhook deliveries to loopback addresses (local tests only).
    pub webhook_allow_loopback: bool,
    /// Stripe's keys, API origin and prices (no secret key: the local test-mode pages).
    pub billing: mailward_services::config::BillingConfig,
    /// The bearer token `GET /metrics` asks for; `None`: loopback clients only.
    pub metrics_token: Option<String>,
    /// Mailward staff's addresses (`/staff/...`).
    pub staff_emails: Vec<String>,
    /// Where new tickets and customers' replies are mailed.
    pub support_email: Option<String>,
    /// The AWS account taken as Mailward's own (DNS connections refuse roles in it; tests).
    pub aws_account_id: Option<String>,
    /// See `Config::role_trust_probe` (off only against moto, whose STS admits any external id).
    pub role_trust_probe: bool,
    /// Extra trusted root certificate (PEM file) for webhook receivers (local tests only).
    pub extra_ca: Option<PathBuf>,
    /// Time a webhook receiver has to answer.
    pub webhook_timeout: Duration,
    /// The RDAP bootstrap registry for DNS the registrar lookups start from; `None` turns them
    /// off (the black-box tests' default, which point it at a fixture server where they need it).
    pub rdap_bootstrap_url: Option<String>,
    /// Let RDAP lookups reach loopback over plain HTTP (local tests only).
    pub rdap_allow_loopback: bool,
    /// The Microsoft Graph API mailbox connections read (tests: a stand-in).
    pub graph_url: Option<String>,
    /// PagerDuty's Events API v2 endpoint (tests: a receiver on loopback).
    pub pagerduty_url: Option<String>,
    /// DNS servers (`host:port`, comma-separated); `None` means the system's.
    pub dns: Option<String>,
    /// Longest time the resolver caches an answer (`None`: the resolver's default; tests that
    /// move the clock past DNS edits turn caching off with zero).
    pub dns_cache_ttl_cap: Option<Duration>,
    /// Queries in flight through the resolver at once (`--dns-concurrency`); `None`: the
    /// resolver's default.
    pub dns_concurrency: Option<usize>,
    /// Period of the monitoring sweep (also each domain's re-check interval); `None` disables
    /// the periodic sweep (tests run it explicitly).
    pub sweep_interval: Option<Duration>,
    /// Delay of an organization purge's final pass (`None`: the configuration's, 15 minutes or
    /// `MAILWARD_PURGE_FINAL_PASS_DELAY`).
    pub purge_final_pass_delay: Option<Duration>,
    /// Period of the hosted-record reconciliation (`None`: not scheduled; tests run it).
    pub reconcile_interval: Option<Duration>,
    /// Period of the data lifecycle (`mailward_workers::retention`; daily, `None`: not
    /// scheduled; tests run it).
    pub retention_interval: Option<Duration>,
    /// How often the sweep probes each domain's whole DKIM selector catalogue.
    pub dkim_full_probe_interval: Duration,
    /// Run the outbox publisher (tests that inspect the outbox turn it off).
    pub publish_outbox: bool,
    /// Public resolvers the sweep compares with authoritative answers (`name=ip[:port]`, comma
    /// separated); none by default.
    pub public_resolvers: Option<String>,
    /// Port authoritative nameservers are asked on (53; test setups use a fixture's port).
    pub nameserver_port: u16,
    /// Per-address nameserver ports (test setups with several fixture servers).
    pub nameserver_ports: Vec<(std::net::IpAddr, u16)>,
    /// How long a domain may stay `pending` before the sweep marks it `failed`.
    pub pending_grace: Duration,
    /// How long a task must hold a state before its event fires.
    pub task_event_delay: Duration,
    /// Probe the MX hosts' TLS certificates (STARTTLS) about daily.
    pub mx_tls_probe: bool,
    /// The SMTP port of that probe (25; tests use a fixture's).
    pub mx_tls_port: u16,
    /// Queue an evaluation of every newly added domain at once (tests that script the sweep
    /// turn it off).
    pub evaluate_new_domains: bool,
    /// Where the report mailbox's SMTP listener listens (none: no listener).
    pub smtp_listen: Option<SocketAddr>,
    /// Largest message the SMTP listener accepts, in bytes.
    pub smtp_max_bytes: usize,
    /// SMTP sessions served at once (tests lower it).
    pub smtp_max_sessions: usize,
    /// Where the authoritative DNS server of the hosted zone listens (none: no server).
    pub dns_listen: Option<SocketAddr>,
    /// Other adapters for the store and queue ports (the black-box tests run the whole service
    /// on DynamoDB and SQS this way); `None` keeps the embedded SQLite ones.
    pub ports: Option<Ports>,
    /// Wraps whichever store and queue were chosen (embedded or `ports`) before the service
    /// uses them: the fault tests put a failing layer (throttling, an outage) in front.
    pub wrap_ports: Option<PortWrapper>,
    /// Another adapter for the hosted zone (tests inject a failing one); `None` keeps the
    /// records in the item store.
    pub zone: Option<ZoneOverride>,
    /// Another DNS-connections provider (tests point Route 53 at moto); `None` uses Route 53
    /// with the environment's AWS settings where the build has it.
    pub dns_hosts: Option<DnsHostsOverride>,
    /// Another MTA-STS policy-front provider (tests use ACM and CloudFront in moto, or a
    /// scripted one); `None` serves the policy hosts from this process over HTTP.
    pub fronts: Option<FrontsOverride>,
    /// Another object store (the AWS pass of the black-box tests uses S3 in moto); `None`
    /// keeps objects under `<data-dir>/objects`, uploaded through this process's `/uploads`.
    pub objects: Option<ObjectsOverride>,
    /// Another mailer (the AWS pass of the black-box tests sends through SES in moto); `None`
    /// writes each mail to `<data-dir>/outbox`.
    pub mailer: Option<MailerOverride>,
}

/// A mailer to run the stack with.
#[derive(Clone)]
pub struct MailerOverride(pub Arc<dyn mailward_domain::mailer::Mailer>);

impl std::fmt::Debug for MailerOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MailerOverride")
    }
}

/// An object store to run the stack with.
#[derive(Clone)]
pub struct ObjectsOverride(pub Arc<dyn mailward_domain::objects::ObjectStore>);

impl std::fmt::Debug for ObjectsOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ObjectsOverride")
    }
}

/// An MTA-STS policy-front provider to run the stack with.
#[derive(Clone)]
pub struct FrontsOverride(pub Arc<dyn mailward_domain::policy_fronts::PolicyFronts>);

impl std::fmt::Debug for FrontsOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontsOverride").finish_non_exhaustive()
    }
}

/// A DNS-connections provider to run the stack with.
#[derive(Clone)]
pub struct DnsHostsOverride(pub Arc<dyn mailward_domain::dns_connections::DnsHosts>);

impl std::fmt::Debug for DnsHostsOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DnsHostsOverride").finish_non_exhaustive()
    }
}

/// A hosted-zone adapter to run the stack with.
#[derive(Clone)]
pub struct ZoneOverride(pub Arc<dyn mailward_domain::hosted_zone::HostedZone>);

impl std::fmt::Debug for ZoneOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoneOverride").finish_non_exhaustive()
    }
}

/// A store and a queue to run the stack on instead of the embedded ones.
#[derive(Clone)]
pub struct Ports {
    /// The item store.
    pub store: Arc<dyn ItemStore>,
    /// The queue.
    pub queue: Arc<dyn Queue>,
}

/// A layer put in front of the store and queue ports ([`Settings::wrap_ports`]).
#[derive(Clone)]
pub struct PortWrapper(pub Arc<dyn Fn(Ports) -> Ports + Send + Sync>);

impl std::fmt::Debug for PortWrapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PortWrapper")
    }
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ports").finish_non_exhaustive()
    }
}

impl Settings {
    /// Defaults for a data directory.
    pub fn new(data_dir: PathBuf) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir,
            base_url: None,
            oauth_client_id: None,
            oauth_redirect_uris: None,
            secret_key: None,
            mail_from: "Mailward <noreply@mailward.local>".into(),
            max_receives: 5,
            poll_interval: Duration::from_millis(200),
            rate_limits: Vec::new(),
            signup_codes_per_hour: 5,
            webhook_allow_loopback: false,
            metrics_token: None,
            staff_emails: Vec::new(),
            support_email: None,
            billing: mailward_services::config::BillingConfig {
                stripe_api_base: mailward_services::config::DEFAULT_STRIPE_API_BASE.into(),
                ..Default::default()
            },
            aws_account_id: None,
            role_trust_probe: true,
            extra_ca: None,
            webhook_timeout: Duration::from_secs(10),
            rdap_bootstrap_url: Some(
                mailward_services::config::DEFAULT_RDAP_BOOTSTRAP_URL.to_owned(),
            ),
            rdap_allow_loopback: false,
            graph_url: None,
            pagerduty_url: None,
            dns: None,
            dns_cache_ttl_cap: None,
            dns_concurrency: None,
            sweep_interval: Some(Duration::from_secs(300)),
            purge_final_pass_delay: None,
            reconcile_interval: Some(Duration::from_secs(
                mailward_workers::reconcile::PERIOD_SECS,
            )),
            retention_interval: Some(Duration::from_secs(86_400)),
            dkim_full_probe_interval: Duration::from_secs(86_400),
            publish_outbox: true,
            public_resolvers: None,
            nameserver_port: 53,
            nameserver_ports: Vec::new(),
            pending_grace: Duration::from_secs(
                mailward_services::config::DEFAULT_PENDING_GRACE_SECS,
            ),
            task_event_delay: Duration::from_secs(mailward_tasks::stabilise::DEFAULT_WINDOW_SECS),
            mx_tls_probe: false,
            mx_tls_port: 25,
            evaluate_new_domains: true,
            smtp_listen: None,
            smtp_max_bytes: DEFAULT_SMTP_MAX_BYTES,
            smtp_max_sessions: smtp::DEFAULT_MAX_SESSIONS,
            dns_listen: None,
            ports: None,
            wrap_ports: None,
            zone: None,
            dns_hosts: None,
            fronts: None,
            objects: None,
            mailer: None,
        }
    }
}

/// The SMTP listener's default message cap (25 MiB: real aggregate reports arrive compressed
/// and far smaller).
pub const DEFAULT_SMTP_MAX_BYTES: usize = 25 * 1024 * 1024;

/// Reads the secret key from `<data-dir>/secret.key`, creating it (64 random hex chars) once,
/// readable by its owner alone (0600; an existing file is narrowed to that).
pub fn load_or_create_secret(data_dir: &Path) -> anyhow::Result<Vec<u8>> {
    let path = data_dir.join("secret.key");
    if let Ok(existing) = std::fs::read_to_string(&path) {
        let trimmed = existing.trim();
        if trimmed.len() >= 32 {
            owner_only(&path, 0o600)?;
            return Ok(trimmed.as_bytes().to_vec());
        }
    }
    let secret = hex::encode(mailward_domain::secrets::random_bytes(32));
    write_private(&path, secret.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(secret.into_bytes())
}

/// Writes `bytes` to a file only its owner may read or write (0600 from its creation, so it is
/// never readable by others, even for a moment).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    owner_only(path, 0o600)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Narrows `path` to `mode` (the owner's bits only) on Unix.
fn owner_only(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// The assembled application on embedded adapters.
pub struct Assembled {
    /// Application state (ports and config).
    pub state: AppState,
    /// The database (for the TTL reaper).
    pub db: Database,
    /// The object store (the upload route checks its forms).
    pub objects: Arc<DirObjectStore>,
}

/// Builds the state for a data directory with the given clock.
pub fn assemble(
    settings: &Settings,
    clock: Arc<dyn Clock>,
    listen: SocketAddr,
) -> anyhow::Result<Assembled> {
    std::fs::create_dir_all(&settings.data_dir)
        .with_context(|| format!("creating data directory {}", settings.data_dir.display()))?;

    let db =
        Database::open(&settings.data_dir.join("mailward.db")).context("opening the database")?;
    // The database holds sealed credentials and key digests: its owner's alone (SQLite gives
    // its -wal and -shm files the database file's permissions).
    for file in ["mailward.db", "mailward.db-wal", "mailward.db-shm"] {
        let path = settings.data_dir.join(file);
        if path.exists() {
            owner_only(&path, 0o600).with_context(|| format!("restricting {}", path.display()))?;
        }
    }
    let secret = match &settings.secret_key {
        Some(s) if s.len() >= 32 => s.as_bytes().to_vec(),
        Some(_) => anyhow::bail!("the secret key must be at least 32 characters"),
        None => load_or_create_secret(&settings.data_dir)?,
    };
    let base_url = settings
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{listen}"));
    let objects = Arc::new(DirObjectStore::new(
        settings.data_dir.join("objects"),
        format!("{}/uploads", base_url.trim_end_matches('/')),
        secret.clone(),
        Arc::clone(&clock),
    ));
    let mut config = Config::new(base_url, secret);
    if let Some(client) = &settings.oauth_client_id {
        config.oauth_client_id = client.clone();
    }
    if let Some(uris) = &settings.oauth_redirect_uris {
        config.oauth_redirect_uris = uris.clone();
    }
    config
        .rate_limits
        .extend(settings.rate_limits.iter().copied());
    config.signup_codes_per_address_per_hour = settings.signup_codes_per_hour;
    config.outbound.allow_loopback = settings.webhook_allow_loopback;
    config.billing = settings.billing.clone();
    config.metrics_token = settings.metrics_token.clone();
    config.staff_emails = settings.staff_emails.clone();
    config.support_email = settings.support_email.clone();
    config.aws_account_id.clone_from(&settings.aws_account_id);
    config.role_trust_probe = settings.role_trust_probe;
    if let Some(interval) = settings.sweep_interval {
        config.sweep_interval_secs = interval.as_secs().max(1);
    }
    if let Some(delay) = settings.purge_final_pass_delay {
        config.purge_final_pass_delay_secs = delay.as_secs().min(900);
    }
    config.dkim_full_probe_interval_secs = settings.dkim_full_probe_interval.as_secs().max(1);
    if let Some(list) = &settings.public_resolvers {
        config.public_resolvers =
            mailward_services::config::parse_public_resolvers(list).map_err(anyhow::Error::msg)?;
    }
    config.pending_grace_secs = settings.pending_grace.as_secs();
    config.task_event_delay_secs = settings.task_event_delay.as_secs();
    config.mx_tls_probe = settings.mx_tls_probe;
    config.mx_tls_port = settings.mx_tls_port;
    config.evaluate_new_domains = settings.evaluate_new_domains;
    config.nameserver_port = settings.nameserver_port;
    config.nameserver_ports = settings.nameserver_ports.clone();
    config.outbound.timeout = settings.webhook_timeout;
    config
        .rdap_bootstrap_url
        .clone_from(&settings.rdap_bootstrap_url);
    config.rdap_allow_loopback = settings.rdap_allow_loopback;
    if let Some(url) = &settings.graph_url {
        config.graph_url = url.clone();
    }
    if let Some(url) = &settings.pagerduty_url {
        config.pagerduty_url = url.clone();
    }
    if let Some(path) = &settings.extra_ca {
        config.outbound.extra_ca_pem = Some(
            std::fs::read(path)
                .with_context(|| format!("reading the extra CA {}", path.display()))?,
        );
    }
    let mut dns = match settings.dns.as_deref() {
        Some(list) => mailward_dns::ResolverSettings::from_server_list(list).context("--dns")?,
        None => mailward_dns::ResolverSettings::default(),
    };
    if let Some(cap) = settings.dns_cache_ttl_cap {
        dns.cache_ttl_cap = cap;
    }
    dns.max_concurrency = match settings.dns_concurrency {
        Some(n) => n.clamp(1, mailward_dns::MAX_CONCURRENCY),
        None => mailward_dns::default_concurrency(),
    };
    // The sweep may hold half of the resolver's slots; the rest stay free for API requests.
    config.sweep_dns_in_flight = (dns.max_concurrency / 2).max(1);
    let resolver = Arc::new(
        mailward_dns::HickoryResolver::new(dns)
            .context("setting up DNS (pass --dns host:port to choose servers)")?,
    );
    let direct: Arc<dyn mailward_conflicts::DirectDns> = resolver.clone();
    let (store, queue): (Arc<dyn ItemStore>, Arc<dyn Queue>) = match &settings.ports {
        Some(ports) => (Arc::clone(&ports.store), Arc::clone(&ports.queue)),
        None => (
            Arc::new(EmbeddedStore::new(db.clone(), Arc::clone(&clock))),
            Arc::new(EmbeddedQueue::new(
                db.clone(),
                Arc::clone(&clock),
                settings.max_receives,
            )),
        ),
    };
    let (store, queue) = match &settings.wrap_ports {
        Some(wrap) => {
            let wrapped = (wrap.0)(Ports { store, queue });
            (wrapped.store, wrapped.queue)
        }
        None => (store, queue),
    };
    let mailer: Arc<dyn mailward_domain::mailer::Mailer> = match &settings.mailer {
        Some(other) => Arc::clone(&other.0),
        None => Arc::new(FileMailer::new(
            settings.data_dir.join("outbox"),
            settings.mail_from.clone(),
            Arc::clone(&clock),
        )),
    };
    let mut state = AppState::new(store, queue, mailer, clock, resolver, config)
        .with_direct_dns(direct)
        .with_objects(match &settings.objects {
            Some(other) => Arc::clone(&other.0),
            None => objects.clone(),
        });
    if let Some(zone) = &settings.zone {
        state = state.with_zone(Arc::clone(&zone.0));
    }
    if let Some(fronts) = &settings.fronts {
        state = state.with_fronts(Arc::clone(&fronts.0));
    }
    match &settings.dns_hosts {
        Some(hosts) => state = state.with_dns_hosts(Arc::clone(&hosts.0)),
        #[cfg(feature = "route53-connections")]
        None => {
            state =
                state.with_dns_hosts(Arc::new(mailward_aws::dns_hosts::Route53Hosts::from_env()));
        }
        #[cfg(not(feature = "route53-connections"))]
        None => {}
    }
    // Billing: Stripe with a secret key, else the local test-mode pages.
    if let Some(payments) = mailward_billing::adapter(&state, true).map_err(anyhow::Error::msg)? {
        state = state.with_payments(payments);
    }
    if settings.ports.is_none() {
        // One process: count rate-limit windows in memory, off the single SQLite writer. With
        // injected ports (the AWS adapters under test) the counters stay in the shared store.
        state = state.with_rate_counter(Arc::new(mailward_local::MemoryRateCounter::new()));
    }
    Ok(Assembled { state, db, objects })
}

/// Every function's routes, as the local stack serves them and the OpenAPI document lists them.
pub fn all_routes() -> mailward_http::Routes {
    api_public::routes()
        .merge(api_account::routes())
        .merge(api_webhooks::routes())
        .merge(api_tools::routes())
        .merge(api_domains::routes())
        .merge(api_tasks::routes())
        .merge(api_reports::routes())
        .merge(api_report_pdf::routes())
        .merge(api_auth::routes())
        .merge(mcp::routes())
        .merge(app_web::routes())
}

/// The functions and their routes, as `template.yaml` deploys them: each function's name and
/// its `(METHOD, path)` pairs.
pub fn functions() -> Vec<(&'static str, Vec<(String, String)>)> {
    let groups: [(&str, mailward_http::Routes); 10] = [
        ("ApiPublicFunction", api_public::routes()),
        ("ApiAccountFunction", api_account::routes()),
        ("ApiWebhooksFunction", api_webhooks::routes()),
        ("ApiToolsFunction", api_tools::routes()),
        ("ApiDomainsFunction", api_domains::routes()),
        ("ApiTasksFunction", api_tasks::routes()),
        ("ApiReportsFunction", api_reports::routes()),
        ("ApiReportPdfFunction", api_report_pdf::routes()),
        ("ApiAuthFunction", api_auth::routes()),
        ("McpFunction", mcp::routes()),
    ];
    groups
        .into_iter()
        .map(|(name, routes)| (name, operations(&routes.into_openapi())))
        .collect()
}

/// The `(METHOD, path)` of every operation in a document.
pub fn operations(doc: &utoipa::openapi::OpenApi) -> Vec<(String, String)> {
    let mut ops = Vec::new();
    for (path, item) in &doc.paths.paths {
        for (method, op) in [
            ("GET", &item.get),
            ("POST", &item.post),
            ("PUT", &item.put),
            ("DELETE", &item.delete),
            ("PATCH", &item.patch),
        ] {
            if op.is_some() {
                ops.push((method.to_owned(), path.clone()));
            }
        }
    }
    ops.sort();
    ops
}

/// The OpenAPI document of every served route, as `functions/api-public/openapi.json` must
/// hold it.
pub fn openapi_json() -> String {
    mailward_http::openapi::to_json(&mailward_http::openapi::document(all_routes()))
}

/// Every function's routes on one router, as the local stack serves them.
pub fn router(state: AppState) -> axum::Router {
    mailward_http::finish(all_routes(), state)
}

/// A running local stack.
pub struct LocalStack {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (tests use the ports directly, e.g. to run jobs).
    pub state: AppState,
    /// Where the report mailbox listens, when it does.
    pub smtp_addr: Option<SocketAddr>,
    /// The SQLite database (the fault tests cap its growth as a full disk would).
    pub db: Database,
    /// The hosted zone's DNS server, when it runs (`dns_addr()`).
    zone_server: Option<dns_server::ZoneServer>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl LocalStack {
    /// Starts the server and the background workers with the system clock.
    pub async fn start(settings: Settings) -> anyhow::Result<Self> {
        Self::start_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// Starts the server and workers with a given clock (tests pass a manual clock).
    pub async fn start_with_clock(
        settings: Settings,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .with_context(|| format!("binding {}", settings.listen))?;
        let addr = listener.local_addr()?;
        let Assembled { state, db, objects } = assemble(&settings, clock, addr)?;
        let (shutdown, watcher) = watch::channel(false);
        let mut app = router(state.clone()).merge(uploads::router(objects));
        if state.payments.as_ref().is_some_and(|p| p.name() == "local") {
            app = app.merge(billing_pages::router(&state));
        }
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        let mut server_stop = watcher.clone();
        let server = tokio::spawn(async move {
            let result = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = server_stop.wait_for(|stop| *stop).await;
                })
                .await;
            if let Err(e) = result {
                tracing::error!(error = %e, "HTTP server stopped with an error");
            }
        });
        let mut tasks = vec![server];
        for queue in QueueName::ALL {
            tasks.push(tokio::spawn(queue_worker(
                state.clone(),
                queue,
                settings.poll_interval,
                watcher.clone(),
            )));
        }
        if settings.publish_outbox {
            tasks.push(tokio::spawn(outbox_publisher(
                state.clone(),
                settings.poll_interval,
                watcher.clone(),
            )));
        }
        if let Some(interval) = settings.sweep_interval {
            tasks.push(tokio::spawn(sweep_schedule(
                state.clone(),
                interval,
                watcher.clone(),
            )));
        }
        if let Some(interval) = settings.reconcile_interval {
            let (state, stop) = (state.clone(), watcher.clone());
            tasks.push(tokio::spawn(async move {
                every(interval, stop, "reconciliation", || {
                    mailward_workers::reconcile::coordinate(&state)
                })
                .await
            }));
        }
        if let Some(interval) = settings.retention_interval {
            let (state, stop) = (state.clone(), watcher.clone());
            tasks.push(tokio::spawn(async move {
                every(interval, stop, "retention", || async {
                    mailward_workers::retention::coordinate(&state)
                        .await
                        .map(|(queued, _)| queued)
                })
                .await
            }));
        }
        tasks.push(tokio::spawn(reaper(
            db.clone(),
            state.clock.clone(),
            watcher,
        )));
        let smtp_addr = match settings.smtp_listen {
            Some(at) => {
                let smtp = tokio::net::TcpListener::bind(at)
                    .await
                    .with_context(|| format!("binding the SMTP listener to {at}"))?;
                let bound = smtp.local_addr()?;
                let mailbox = smtp::MailboxSettings {
                    report_domain: state.config.report_domain.clone(),
                    max_message_bytes: settings.smtp_max_bytes,
                    max_sessions: settings.smtp_max_sessions,
                    max_messages: smtp::DEFAULT_MAX_MESSAGES,
                    max_session: smtp::DEFAULT_MAX_SESSION,
                };
                tasks.push(tokio::spawn(smtp::serve(
                    smtp,
                    state.clone(),
                    mailbox,
                    shutdown.subscribe(),
                )));
                Some(bound)
            }
            None => None,
        };
        let zone_server = match settings.dns_listen {
            Some(at) => Some(
                dns_server::ZoneServer::start(
                    at,
                    Arc::clone(&state.zone),
                    vec![
                        state.config.hosted_zone.clone(),
                        state.config.report_domain.clone(),
                    ],
                )
                .await
                .with_context(|| format!("binding the DNS server to {at}"))?,
            ),
            None => None,
        };
        Ok(Self {
            addr,
            state,
            smtp_addr,
            db,
            zone_server,
            shutdown,
            tasks,
        })
    }

    /// Where the hosted zone's DNS server listens (UDP and TCP), when it runs.
    pub fn dns_addr(&self) -> Option<SocketAddr> {
        self.zone_server.as_ref().map(dns_server::ZoneServer::addr)
    }

    /// Stops accepting requests, lets in-flight work finish, and waits for every task.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Drains one queue until shutdown. Visibility 60 s: a job that crashes comes back a minute later.
async fn queue_worker(
    state: AppState,
    queue: QueueName,
    idle: Duration,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        let received = match mailward_workers::jobs::drain_once(&state, queue, 10, 60).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(queue = queue.as_str(), error = %e, "queue worker poll failed");
                0
            }
        };
        if received == 0 {
            tokio::select! {
                _ = tokio::time::sleep(idle) => {}
                _ = stop.changed() => {}
            }
        }
    }
}

/// Publishes outbox events until shutdown (the local stand-in for DynamoDB Streams). A drain
/// reads every outbox shard (32 queries); while nothing comes, the wait between drains doubles
/// from `idle` up to 100 ms (or `idle`, if longer), so an idle stack on DynamoDB (moto in the
/// tests) is not asked 1,600 queries a second.
async fn outbox_publisher(state: AppState, idle: Duration, mut stop: watch::Receiver<bool>) {
    let longest = idle.max(Duration::from_millis(100));
    let mut quiet: u32 = 0;
    loop {
        if *stop.borrow() {
            return;
        }
        let published = match mailward_workers::webhooks::publisher::drain_outbox(&state, 100).await
        {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "outbox publisher failed; retrying");
                0
            }
        };
        if published == 0 {
            let wait = idle.saturating_mul(1 << quiet.min(3)).min(longest);
            quiet = quiet.saturating_add(1);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.changed() => {}
            }
        } else {
            quiet = 0;
        }
    }
}

/// Runs the sweep coordinator on a period (EventBridge's schedule, locally); the batches it
/// enqueues are evaluated by the queue workers.
async fn sweep_schedule(state: AppState, period: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        if let Err(e) = mailward_workers::sweep::coordinate(&state).await {
            tracing::warn!(error = %e, "sweep coordinator failed; retrying next period");
        }
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stop.changed() => return,
        }
    }
}

/// Runs `run` every `period`, the first time a period after start, until stopped: the hourly
/// reconciliation of hosted records and the daily data lifecycle (EventBridge on AWS; the
/// sweep already reconciles hosted DMARC at start).
async fn every<F, Fut>(period: Duration, mut stop: watch::Receiver<bool>, what: &str, run: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stop.changed() => return,
        }
        if let Err(e) = run().await {
            tracing::warn!(error = %e, "{what} coordinator failed; retrying next period");
        }
    }
}

/// Deletes expired items once a minute (DynamoDB's TTL reaper, locally).
async fn reaper(db: Database, clock: Arc<dyn Clock>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(60)) => {}
            _ = stop.changed() => return,
        }
        if let Err(e) = db.reap_expired(clock.unix()).await {
            tracing::warn!(error = %e, "expired-item reaper failed");
        }
    }
}
