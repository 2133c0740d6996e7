//! The application state every operation receives: the ports and the configuration. Built once
//! per process (a Lambda cold start, the local stack, the CLI) and cheap to clone.

use crate::config::Config;
use mailward_domain::Clock;
use mailward_domain::dns::DnsResolver;
use mailward_domain::mailer::Mailer;
use mailward_domain::queue::Queue;
use mailward_domain::store::ItemStore;
use std::sync::{Arc, OnceLock};

/// Ports and settings, shared by every request. Cheap to clone.
#[derive(Clone)]
pub struct AppState(pub Arc<App>);

/// What [`AppState`] holds. Operations never know which adapters are behind the ports.
pub struct App {
    /// Item store (SQLite or DynamoDB).
    pub store: Arc<dyn ItemStore>,
    /// Queue (embedded or SQS).
    pub queue: Arc<dyn Queue>,
    /// Outbound mail (file outbox or SES).
    pub mailer: Arc<dyn Mailer>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// DNS (hickory against the configured or system servers).
    pub resolver: Arc<dyn DnsResolver>,
    /// Settings.
    pub config: Config,
    /// Asks one named DNS server directly (conflict detection); `None` where the adapter cannot.
    pub direct_dns: Option<Arc<dyn mailward_conflicts::DirectDns>>,
    /// Object storage (a directory or S3); `None` where none is configured, and then the
    /// operations that need it answer 503.
    pub objects: Option<Arc<dyn mailward_domain::objects::ObjectStore>>,
    /// The records Mailward serves itself (hosted DMARC, report authorizations): the item
    /// store by default (served by the local stack's embedded DNS server), Route 53 on AWS.
    pub zone: Arc<dyn mailward_domain::hosted_zone::HostedZone>,
    /// Customers' DNS hosts (DNS connections): Route 53 where the build links it; `None`
    /// and the DNS-connection operations answer 503.
    pub dns_hosts: Option<Arc<dyn mailward_domain::dns_connections::DnsHosts>>,
    /// HTTPS fronts for hosted MTA-STS policy hosts: ACM and CloudFront on AWS; the process
    /// itself (plain HTTP by `Host`) by default.
    pub fronts: Arc<dyn mailward_domain::policy_fronts::PolicyFronts>,
    /// Rate-limit counters (in memory in the local process, the shared store on AWS).
    pub rate_counter: Arc<dyn mailward_domain::rate_limits::RateCounter>,
    /// The payment provider (Stripe, or the local test-mode pages); `None` where none is
    /// configured, and then the billing operations answer 503.
    pub payments: Option<Arc<dyn mailward_domain::billing::Payments>>,
    /// The outbound HTTP client, built on first use from `config.outbound`.
    outbound: OnceLock<Result<reqwest::Client, String>>,
    /// The sweep's DNS lane, sized by `config.sweep_dns_in_flight` on first use.
    sweep_dns_lane: OnceLock<tokio::sync::Semaphore>,
    /// The RDAP client, the bootstrap registry read and the lookups' in-flight bound.
    rdap: crate::outbound::rdap::Rdap,
    /// The IP ownership data this process holds (see `ipdata`).
    ip_data: crate::ipdata::Cache,
}

impl AppState {
    /// Bundles the ports and settings.
    pub fn new(
        store: Arc<dyn ItemStore>,
        queue: Arc<dyn Queue>,
        mailer: Arc<dyn Mailer>,
        clock: Arc<dyn Clock>,
        resolver: Arc<dyn DnsResolver>,
        config: Config,
    ) -> Self {
        // Every write of a list card counts on the organization's card counter, so each
        // process's copy of the cards stays exact (`mailward_store::card_cache`).
        let store: Arc<dyn ItemStore> =
            Arc::new(mailward_store::card_cache::CardVersions::new(store));
        Self(Arc::new(App {
            rate_counter: Arc::new(mailward_store::rate_limits::StoreRateCounter::new(
                Arc::clone(&store),
            )),
            zone: Arc::new(mailward_store::hosted_zone::StoreZone::new(Arc::clone(
                &store,
            ))),
            store,
            queue,
            mailer,
            clock,
            resolver,
            direct_dns: None,
            objects: None,
            fronts: Arc::new(mailward_domain::policy_fronts::DirectFronts),
            dns_hosts: None,
            payments: None,
            config,
            outbound: OnceLock::new(),
            sweep_dns_lane: OnceLock::new(),
            rdap: crate::outbound::rdap::Rdap::default(),
            ip_data: crate::ipdata::Cache::default(),
        }))
    }

    /// Adds the direct-query DNS capability (call before the state is shared).
    pub fn with_direct_dns(mut self, direct: Arc<dyn mailward_conflicts::DirectDns>) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.direct_dns = Some(direct);
        }
        self
    }

    /// Replaces the rate-limit counters (call before the state is shared); the default counts
    /// in the item store, which every instance shares.
    pub fn with_rate_counter(
        mut self,
        counter: Arc<dyn mailward_domain::rate_limits::RateCounter>,
    ) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.rate_counter = counter;
        }
        self
    }

    /// Replaces the hosted zone (call before the state is shared).
    pub fn with_zone(mut self, zone: Arc<dyn mailward_domain::hosted_zone::HostedZone>) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.zone = zone;
        }
        self
    }

    /// Adds the DNS-connections provider (call before the state is shared).
    pub fn with_dns_hosts(
        mut self,
        hosts: Arc<dyn mailward_domain::dns_connections::DnsHosts>,
    ) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.dns_hosts = Some(hosts);
        }
        self
    }

    /// Replaces the MTA-STS policy fronts (call before the state is shared).
    pub fn with_fronts(
        mut self,
        fronts: Arc<dyn mailward_domain::policy_fronts::PolicyFronts>,
    ) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.fronts = fronts;
        }
        self
    }

    /// Adds the payment provider (call before the state is shared).
    pub fn with_payments(mut self, payments: Arc<dyn mailward_domain::billing::Payments>) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.payments = Some(payments);
        }
        self
    }

    /// Adds object storage (call before the state is shared).
    pub fn with_objects(mut self, objects: Arc<dyn mailward_domain::objects::ObjectStore>) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.0) {
            app.objects = Some(objects);
        }
        self
    }

    /// The wire shape of a stored domain under this deployment's zones.
    pub fn domain_view(
        &self,
        domain: &mailward_domain::domain::Domain,
    ) -> mailward_api_types::domains::Domain {
        mailward_api_types::domains::domain_view(domain, self.config.zones())
    }

    /// The slots the sweep's DNS queries share (see `Config::sweep_dns_in_flight`).
    pub fn sweep_dns_lane(&self) -> &tokio::sync::Semaphore {
        self.0
            .sweep_dns_lane
            .get_or_init(|| tokio::sync::Semaphore::new(self.config.sweep_dns_in_flight.max(1)))
    }

    /// The IP ownership data, when object storage holds it (see `ipdata`).
    pub async fn ip_data(&self) -> Option<Arc<mailward_ipdata::IpData>> {
        self.0.ip_data.get(self.0.objects.as_deref()).await
    }

    /// Drops the IP data this process holds, so the next use reads the stored files.
    pub async fn forget_ip_data(&self) {
        self.0.ip_data.forget().await;
    }

    /// What the registrar lookups keep in this process (see `outbound::rdap`).
    pub fn rdap(&self) -> &crate::outbound::rdap::Rdap {
        &self.0.rdap
    }

    /// The client for customer-supplied URLs (see `outbound::client`), built on first use.
    pub fn outbound_client(&self) -> Result<reqwest::Client, String> {
        self.0
            .outbound
            .get_or_init(|| {
                crate::outbound::client::build(&self.config.outbound, Arc::clone(&self.resolver))
            })
            .clone()
    }
}

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}
