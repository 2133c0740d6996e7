//! A domain's registrar over RDAP: the bootstrap registry for DNS (RFC 9224, IANA's `dns.json`
//! by default, `Config::rdap_bootstrap_url`) names the service of the domain's TLD, whose
//! domain answer (RFC 9083) names the registrar. Parsing is `mailward_rdap`'s; this is the I/O.
//!
//! Bounds, so a slow or hostile registry never holds up a sweep: each request has
//! [`REQUEST_TIMEOUT`] and a whole lookup [`LOOKUP_TIMEOUT`]; at most [`IN_FLIGHT`] lookups run
//! at once per process (one more is not queued: it is not tried, and the next pass tries it);
//! answers are capped in size; redirects (RFC 7480 §5.2) are followed three times at most, each
//! target checked again. Requests go through the guarded resolver of the outbound client:
//! public HTTPS addresses only, plain HTTP to loopback only when `rdap_allow_loopback` (tests).
//!
//! The bootstrap registry is read once per [`BOOTSTRAP_TTL`] per process and shared by every
//! lookup (one fetch for a sweep of thousands of domains, the others waiting for it); when it
//! cannot be read, lookups are not tried (nothing recorded on the domains) and the fetch is
//! tried again after [`BOOTSTRAP_RETRY`], a stale copy serving meanwhile.

use crate::config::Config;
use crate::outbound::client::{build_for_registries, check_registry_url};
use mailward_domain::dns::DnsResolver;
use mailward_rdap::bootstrap::{domain_url, preferred};
use mailward_rdap::{Bootstrap, Lookup, registrar_of};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Time limit of one request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Time limit of one lookup (every name asked, redirects included).
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a bootstrap registry read is used before it is read again.
pub const BOOTSTRAP_TTL: Duration = Duration::from_secs(24 * 3600);
/// How long after a failed read of the bootstrap registry the next read is tried.
pub const BOOTSTRAP_RETRY: Duration = Duration::from_secs(600);
/// Registrar lookups in flight at once per process (registries rate-limit).
pub const IN_FLIGHT: usize = 8;
/// Largest bootstrap registry read (IANA's is about 40 KiB).
pub const MAX_BOOTSTRAP_BYTES: usize = 1024 * 1024;
/// Largest domain answer read (a few KiB, more with many notices).
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;
const MAX_REDIRECTS: usize = 3;

/// What the process keeps for RDAP: the client, the bootstrap registry, the in-flight bound.
pub struct Rdap {
    client: OnceLock<Result<reqwest::Client, String>>,
    bootstrap: tokio::sync::Mutex<Option<Cached>>,
    lane: tokio::sync::Semaphore,
}

struct Cached {
    url: String,
    registry: Option<Arc<Bootstrap>>,
    refresh_at: Instant,
}

impl Default for Rdap {
    fn default() -> Self {
        Self {
            client: OnceLock::new(),
            bootstrap: tokio::sync::Mutex::new(None),
            lane: tokio::sync::Semaphore::new(IN_FLIGHT),
        }
    }
}

impl Rdap {
    /// Looks up the registrar of the first of `names` a registry knows (`mailward_rdap::
    /// lookup_names`: the registered name, then a shorter guess), under `config`'s bootstrap
    /// URL and loopback allowance, resolving through `dns` (the service's own DNS port).
    pub async fn lookup_registrar(
        &self,
        config: &Config,
        dns: &Arc<dyn DnsResolver>,
        names: &[String],
    ) -> Lookup {
        let Some(bootstrap_url) = config.rdap_bootstrap_url.as_deref() else {
            return Lookup::NotTried;
        };
        let Ok(_slot) = self.lane.try_acquire() else {
            return Lookup::NotTried;
        };
        let allow_loopback = config.rdap_allow_loopback;
        let built = self
            .client
            .get_or_init(|| build_for_registries(REQUEST_TIMEOUT, allow_loopback, Arc::clone(dns)));
        let client = match built {
            Ok(client) => Client {
                http: client.clone(),
                allow_loopback,
            },
            Err(error) => {
                tracing::warn!(%error, "no RDAP client; registrar lookups wait");
                return Lookup::NotTried;
            }
        };
        let Some(registry) = self.bootstrap(&client, bootstrap_url).await else {
            return Lookup::NotTried;
        };
        match tokio::time::timeout(LOOKUP_TIMEOUT, client.ask(&registry, names)).await {
            Ok(lookup) => lookup,
            Err(_) => Lookup::Failed("no answer within the time limit".into()),
        }
    }

    /// The bootstrap registry, read again when its time is up (one read at a time).
    async fn bootstrap(&self, client: &Client, url: &str) -> Option<Arc<Bootstrap>> {
        let mut cached = self.bootstrap.lock().await;
        let previous = cached.take().filter(|c| c.url == url);
        if let Some(c) = &previous
            && Instant::now() < c.refresh_at
        {
            let registry = c.registry.clone();
            *cached = previous;
            return registry;
        }
        let previous = previous.and_then(|c| c.registry);
        let fetch = client.get(url, MAX_BOOTSTRAP_BYTES);
        let read = match tokio::time::timeout(LOOKUP_TIMEOUT, fetch).await {
            Ok(Ok(Got::Body(body))) => Bootstrap::parse(&body).and_then(|r| {
                (!r.is_empty())
                    .then_some(r)
                    .ok_or_else(|| "it lists no service".to_owned())
            }),
            Ok(Ok(Got::NotFound)) => Err("HTTP 404".into()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("no answer within the time limit".into()),
        };
        let (registry, wait) = match read {
            Ok(registry) => (Some(Arc::new(registry)), BOOTSTRAP_TTL),
            Err(error) => {
                tracing::warn!(rdap.bootstrap = %url, %error, "could not read the RDAP bootstrap registry; registrar lookups wait");
                (previous, BOOTSTRAP_RETRY)
            }
        };
        *cached = Some(Cached {
            url: url.to_owned(),
            registry: registry.clone(),
            refresh_at: Instant::now() + wait,
        });
        registry
    }
}

/// The registry client with the policy it was built under.
struct Client {
    http: reqwest::Client,
    allow_loopback: bool,
}

enum Got {
    Body(Vec<u8>),
    NotFound,
}

impl Client {
    /// Asks each name's service in turn until one knows the name.
    async fn ask(&self, registry: &Bootstrap, names: &[String]) -> Lookup {
        let mut outcome = Lookup::NoService;
        for name in names {
            let base = registry.base_urls(name).and_then(|urls| {
                preferred(urls)
                    .into_iter()
                    .find(|base| check_registry_url(base, self.allow_loopback).is_ok())
            });
            let Some(base) = base else {
                continue;
            };
            match self.get(&domain_url(base, name), MAX_ANSWER_BYTES).await {
                Ok(Got::Body(body)) => {
                    return registrar_of(&body).map_or_else(Lookup::Failed, Lookup::Answered);
                }
                Ok(Got::NotFound) => {
                    outcome =
                        Lookup::Failed(format!("{name} is unknown to its registry (HTTP 404)"));
                }
                Err(error) => return Lookup::Failed(error),
            }
        }
        outcome
    }

    /// A GET of a registry URL: the body of a 200, `NotFound` for a 404, redirects followed.
    async fn get(&self, url: &str, max_bytes: usize) -> Result<Got, String> {
        let mut url = check_registry_url(url, self.allow_loopback)?;
        for _ in 0..=MAX_REDIRECTS {
            let mut response = self
                .http
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "application/rdap+json, application/json;q=0.9",
                )
                .send()
                .await
                .map_err(|e| describe(&e))?;
            match response.status().as_u16() {
                200 => {}
                404 => return Ok(Got::NotFound),
                301 | 302 | 303 | 307 | 308 => {
                    let location = response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .ok_or("a redirect without a location")?;
                    let next = url.join(location).map_err(|e| format!("redirect: {e}"))?;
                    url = check_registry_url(next.as_str(), self.allow_loopback)?;
                    continue;
                }
                other => return Err(format!("HTTP {other}")),
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
                if body.len() + chunk.len() > max_bytes {
                    return Err(format!("the answer is larger than {max_bytes} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            return Ok(Got::Body(body));
        }
        Err("too many redirects".into())
    }
}

/// A request error with its causes (the outbound policy's refusal among them), bounded.
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".into();
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(300).collect()
}
