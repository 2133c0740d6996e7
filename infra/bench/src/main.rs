//! `mailward-bench`: the numbers the README reports.
//!
//! - `http`: starts the local stack in-process (embedded adapters, a temporary data directory),
//!   signs up through the API, then sends an authenticated GET (`GET /api-keys` with a session
//!   token: credential resolution, membership and organization reads, two rate-limit hits (in
//!   memory in the local process) and a partition query per request) from concurrent clients, and prints requests per second and
//!   p50/p99/max latency. Client and server share the machine, so the figures are conservative.
//! - `lambda-init`: starts a function's bootstrap binary against a fake Lambda Runtime API and
//!   measures the time from process start to its first `GET /runtime/invocation/next`, i.e. the
//!   init phase of our own code (configuration, SDK clients, router). Repeated; prints p50/p99.
//! - `audits`: twenty audits at once against one alone through a DNS server adding latency
//!   (see [`audits`]).
//! - `pages`: the web application's pages for an organization with 500 domains and a year of
//!   reports (see [`pages`]).
//! - `ingest`, `ingest-big`: DMARC aggregate report ingestion against parsedmarc, and the peak
//!   memory of one large report (see [`ingest`]).

/// mimalloc: report ingestion and the sweep allocate many small short-lived values (parsed
/// fields, rows, encoded items); glibc's allocator spent about a fifth of the ingest CPU in
/// `malloc`/`free`/`malloc_consolidate`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod audits;
mod ingest;
mod msp;
mod pages;

#[derive(Parser)]
#[command(name = "mailward-bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Authenticated GET throughput and latency on the local stack.
    Http {
        /// Total requests.
        #[arg(long, default_value_t = 20_000)]
        requests: usize,
        /// Concurrent clients.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
    /// Webhook deliveries per second from the local stack to a loopback HTTPS receiver.
    Webhooks {
        /// Events to deliver (one endpoint, so one delivery each).
        #[arg(long, default_value_t = 2_000)]
        events: usize,
    },
    /// A monitoring sweep of many domains against a DNS server with injected latency.
    Sweep {
        /// Domains to sweep.
        #[arg(long, default_value_t = 2_000)]
        domains: usize,
        /// Latency the DNS server adds to every answer, in milliseconds.
        #[arg(long, default_value_t = 20)]
        latency_ms: u64,
        /// Serve the domains from NSD (Debian's `nsd`, a real authoritative server) behind the
        /// fixture's relay, which adds the latency: one parent zone holding every domain's
        /// records, instead of a zone per domain in the in-process server.
        #[arg(long)]
        nsd: bool,
    },
    /// Twenty audits started at once against one alone, through a DNS server with injected
    /// latency.
    Audits {
        /// Audits started at once.
        #[arg(long, default_value_t = 20)]
        domains: usize,
        /// Latency the DNS server adds to every answer, in milliseconds.
        #[arg(long, default_value_t = 20)]
        latency_ms: u64,
        /// Rounds (the median is reported).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// The resolver's in-flight bound (default: the resolver's default).
        #[arg(long)]
        dns_concurrency: Option<usize>,
        /// Serve the zones from NSD (a real authoritative server, Debian's `nsd`) behind the
        /// fixture's relay, which adds the latency, instead of the in-process server.
        #[arg(long)]
        nsd: bool,
    },
    /// DMARC aggregate ingestion (parse, aggregate, store) of a generated corpus, against
    /// parsedmarc's parser on the same files.
    Ingest {
        /// Records in the corpus (reports of 50,000 records, every fifth gzip-compressed).
        #[arg(long, default_value_t = 1_000_000)]
        records: usize,
        /// Keep the corpus in this directory (default: a temporary one).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Files ingested at once.
        #[arg(long, default_value_t = 2)]
        concurrency: usize,
        /// Skip the parsedmarc comparison.
        #[arg(long)]
        no_parsedmarc: bool,
        /// Times the Mailward side is measured (the median run is reported; every run is
        /// listed).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Also report the figure with the sender enrichment on (the IP data's cache
        /// directory, e.g. target/ipdata-cache; downloaded when missing).
        #[arg(long)]
        enrichment: Option<PathBuf>,
        /// The other shape: one report of `--records` (100,000 unless given) records, each
        /// from its own address, imported by the whole `mailward import` process (`--mailward`)
        /// and timed from its start to its exit.
        #[arg(long)]
        distinct_sources: bool,
        /// The `mailward` binary `--distinct-sources` runs.
        #[arg(long, default_value = "target/release/mailward")]
        mailward: PathBuf,
    },
    /// Peak memory of importing one large aggregate report.
    IngestBig {
        /// Records in the report.
        #[arg(long, default_value_t = 100_000)]
        records: usize,
        /// Deliver it gzip-compressed.
        #[arg(long)]
        gzip: bool,
        /// Keep the report in this directory (default: a temporary one).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// The cost of the sender enrichment (who owns each address): loading the IP data and
    /// looking up distinct addresses, beside the ingest figure it is compared with.
    Ipdata {
        /// Distinct addresses looked up.
        #[arg(long, default_value_t = 1_000_000)]
        lookups: usize,
        /// Where the pinned parsedmarc package is kept (downloaded when missing).
        #[arg(long, default_value = "target/ipdata-cache")]
        cache: PathBuf,
    },
    /// The web application's pages for an organization with many domains and a year of
    /// reports.
    Pages {
        /// Domains of the organization.
        #[arg(long, default_value_t = 500)]
        domains: usize,
        /// Days of reports per domain.
        #[arg(long, default_value_t = 365)]
        days: usize,
        /// Requests per page.
        #[arg(long, default_value_t = 200)]
        requests: usize,
    },
    /// Reads of a big MSP organization (many domains in groups, a year of reports for some)
    /// at p99 with concurrent clients, and each read's DynamoDB requests and units.
    Msp {
        /// Domains of the organization.
        #[arg(long, default_value_t = 10_000)]
        domains: usize,
        /// Groups the domains are spread over.
        #[arg(long, default_value_t = 200)]
        groups: usize,
        /// Domains with a year of daily reports.
        #[arg(long, default_value_t = 1_000)]
        report_domains: usize,
        /// Days of reports each.
        #[arg(long, default_value_t = 365)]
        days: usize,
        /// Requests per route.
        #[arg(long, default_value_t = 2_000)]
        requests: usize,
        /// Clients at once.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
        /// Rounds of measurement over the same seeded data (the median p99 is printed too).
        #[arg(long, default_value_t = 1)]
        rounds: usize,
    },
    /// Init time of a Lambda bootstrap binary.
    LambdaInit {
        /// Path to the function binary (e.g. target/release/api-public).
        binary: PathBuf,
        /// Runs.
        #[arg(long, default_value_t = 20)]
        runs: usize,
        /// A program to start the binary with, and its arguments, split on whitespace: for an
        /// arm64 bootstrap on an x86_64 machine, `"qemu-aarch64 -L /usr/aarch64-linux-gnu"`
        /// (emulated: the time says the binary starts, not how fast it starts on Graviton).
        #[arg(long)]
        runner: Option<String>,
    },
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Http {
            requests,
            concurrency,
        } => http(requests, concurrency).await,
        Command::Webhooks { events } => webhooks(events).await,
        Command::Audits {
            domains,
            latency_ms,
            rounds,
            dns_concurrency,
            nsd,
        } => audits::run(domains, latency_ms, rounds, dns_concurrency, nsd).await,
        Command::Sweep {
            domains,
            latency_ms,
            nsd,
        } => sweep(domains, latency_ms, nsd).await,
        Command::Ingest {
            records,
            dir,
            no_parsedmarc,
            runs,
            distinct_sources: true,
            mailward,
            ..
        } => {
            ingest::distinct_sources(ingest::DistinctOptions {
                // The default corpus size is the other shape's.
                records: if records == 1_000_000 {
                    100_000
                } else {
                    records
                },
                runs,
                mailward,
                parsedmarc: !no_parsedmarc,
                dir,
            })
            .await
        }
        Command::Ingest {
            records,
            dir,
            concurrency,
            no_parsedmarc,
            runs,
            enrichment,
            ..
        } => {
            ingest::run(ingest::Options {
                records,
                dir,
                concurrency,
                parsedmarc: !no_parsedmarc,
                runs,
                enrichment,
            })
            .await
        }
        Command::IngestBig { records, gzip, dir } => ingest::big(records, gzip, dir).await,
        Command::Pages {
            domains,
            days,
            requests,
        } => pages::run(domains, days, requests).await,
        Command::Msp {
            domains,
            groups,
            report_domains,
            days,
            requests,
            concurrency,
            rounds,
        } => {
            msp::run(msp::Shape {
                domains,
                groups,
                report_domains,
                days,
                requests,
                concurrency,
                rounds,
            })
            .await?;
            // The stack's background loops (the sweep over 10,000 domains) keep blocking
            // store calls running, which the runtime's shutdown would wait for: the figures
            // are printed, so the process ends here.
            std::process::exit(0)
        }
        Command::LambdaInit {
            binary,
            runs,
            runner,
        } => lambda_init(binary, runs, runner.as_deref()).await,
        Command::Ipdata { lookups, cache } => ipdata(lookups, &cache).await,
    }
}

async fn ipdata(lookups: usize, cache: &std::path::Path) -> anyhow::Result<()> {
    let files = mailward_local_stack::ipdata::fetch(cache).await?;
    let started = Instant::now();
    let cpu = ingest::cpu_time();
    let data = mailward_ipdata::IpData::new(files.mmdb, Some(&files.map))?;
    let load = (started.elapsed(), ingest::cpu_time() - cpu);
    // Distinct addresses spread over the IPv4 space (a multiplicative walk), as a report of
    // many senders has them.
    let started = Instant::now();
    let cpu = ingest::cpu_time();
    let addresses = (0..lookups as u64).map(|i| {
        std::net::IpAddr::from(std::net::Ipv4Addr::from(
            (i.wrapping_mul(2_654_435_761) % (1 << 32)) as u32,
        ))
    });
    let known = data
        .owners(addresses)
        .iter()
        .filter(|o| o.as_ref().is_some_and(|o| o.asn.is_some()))
        .count();
    let (wall, cpu) = (started.elapsed(), ingest::cpu_time() - cpu);
    println!(
        "ipdata: loaded in {:.2} s ({:.2} s CPU); {lookups} distinct addresses looked up in {:.3} s CPU ({:.0} per CPU second, {:.0} ns each; {known} with an AS); wall {:.3} s",
        load.0.as_secs_f64(),
        load.1.as_secs_f64(),
        cpu.as_secs_f64(),
        lookups as f64 / cpu.as_secs_f64().max(1e-9),
        cpu.as_secs_f64() * 1e9 / lookups.max(1) as f64,
        wall.as_secs_f64(),
    );
    Ok(())
}

async fn http(requests: usize, concurrency: usize) -> anyhow::Result<()> {
    use mailward_services::config::Scope;
    let dir = tempfile::tempdir()?;
    let mut settings = mailward_local_stack::Settings::new(dir.path().to_path_buf());
    settings.listen = "127.0.0.1:0".parse()?;
    for scope in [Scope::Global, Scope::ApiKey] {
        settings
            .rate_limits
            .push((scope, "1000000000/60".parse().map_err(anyhow::Error::msg)?));
    }
    let stack = mailward_local_stack::LocalStack::start(settings).await?;
    let base = format!("http://{}", stack.addr);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()?;

    let started: serde_json::Value = client
        .post(format!("{base}/signup"))
        .json(&serde_json::json!({"email": "bench@example.com", "organization_name": "Bench Org"}))
        .send()
        .await?
        .json()
        .await?;
    let outbox = dir.path().join("outbox");
    let mail_path = std::fs::read_dir(&outbox)?
        .next()
        .context("no signup mail")??
        .path();
    let mail = std::fs::read_to_string(mail_path)?;
    let at = mail.find("code is ").context("no code")? + 8;
    let code = &mail[at..at + 6];
    let verified: serde_json::Value = client
        .post(format!("{base}/signup/verify"))
        .json(&serde_json::json!({"signup_id": started["signup_id"], "code": code}))
        .send()
        .await?
        .json()
        .await?;
    let org: uuid_like::Id = verified["organization"]["id"]
        .as_str()
        .context("org id")?
        .parse()?;
    let account =
        mailward_store::accounts::get_by_email(stack.state.store.as_ref(), "bench@example.com")
            .await?
            .context("account")?
            .value;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = mailward_http::auth::mint_session_token(
        &stack.state.config.secret_key,
        &mailward_http::auth::SessionClaims {
            sub: account.id,
            org: org.0,
            role: mailward_domain::model::Role::Admin,
            amr: vec!["pwd".into()],
            iss: mailward_http::auth::JWT_ISSUER.into(),
            aud: mailward_http::auth::JWT_AUDIENCE.into(),
            iat: now,
            exp: now + 3600,
            sid: None,
        },
    )?;
    let url = Arc::new(format!("{base}/api-keys"));
    let token = Arc::new(token);

    // Warm up.
    for _ in 0..200 {
        client
            .get(url.as_str())
            .bearer_auth(token.as_str())
            .send()
            .await?
            .error_for_status()?;
    }
    let per_client = requests / concurrency.max(1);
    let wall = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, url, token) = (client.clone(), Arc::clone(&url), Arc::clone(&token));
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    let t = Instant::now();
                    let res = client
                        .get(url.as_str())
                        .bearer_auth(token.as_str())
                        .send()
                        .await?;
                    anyhow::ensure!(res.status() == 200, "status {}", res.status());
                    res.bytes().await?;
                    latencies.push(t.elapsed());
                }
                Ok::<_, anyhow::Error>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(requests);
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = wall.elapsed();
    latencies.sort_unstable();
    println!(
        "GET /api-keys (session), {} requests, {} clients: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        latencies.len(),
        concurrency,
        latencies.len() as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 0.50)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap_or(&Duration::ZERO)),
    );
    stack.stop().await;
    Ok(())
}

async fn webhooks(events: usize) -> anyhow::Result<()> {
    use mailward_api_tests::TestApp;
    use mailward_api_tests::receiver::Receiver;
    use mailward_store::outbox::OutboxEvent;
    let certs = tempfile::tempdir()?;
    let receiver = Receiver::start(certs.path()).await;
    let ca = receiver.ca_path.clone();
    let app = TestApp::start_with(|s| {
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca);
        s.poll_interval = Duration::from_millis(5);
    })
    .await;
    let org = app.sign_up("bench@example.com", "Bench Org").await;
    let res = app
        .with_key(reqwest::Method::POST, "/webhook-endpoints", &org.key)
        .json(&serde_json::json!({"url": receiver.url("/hook")}))
        .send()
        .await?;
    anyhow::ensure!(
        res.status() == 201,
        "endpoint creation failed: {}",
        res.status()
    );
    let org_id: uuid_like::Id = org.org_id.parse()?;
    let store = app.stack.state.store.clone();
    let started = Instant::now();
    for chunk in (0..events).collect::<Vec<_>>().chunks(50) {
        let mut ops = Vec::new();
        for i in chunk {
            let event = OutboxEvent::new(
                "organization.updated",
                org_id.0,
                time::OffsetDateTime::now_utc(),
                serde_json::json!({"id": org.org_id, "name": format!("Bench {i}")}),
                None,
            );
            ops.push(event.write_op()?);
        }
        store.transact(ops).await?;
    }
    let got = receiver.wait_for(events, Duration::from_secs(600)).await;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        got.len() >= events,
        "only {} of {events} deliveries arrived",
        got.len()
    );
    println!(
        "webhooks: {events} events published and delivered over HTTPS to a loopback receiver in {:.2} s: {:.0} deliveries/s",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}

/// A `/proc/self/status` figure in KiB (`VmHWM:`, `VmRSS:`), 0 when unreadable.
fn status_kib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).map(str::to_owned))
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
}

/// The RSS high-water mark in MiB.
fn peak_rss_mib() -> f64 {
    status_kib("VmHWM:") / 1024.0
}

async fn sweep(count: usize, latency_ms: u64, nsd: bool) -> anyhow::Result<()> {
    use mailward_api_tests::TestApp;
    use mailward_dns_fixture::{Backend, Fault, FixtureServer, Scope, Zone};
    let app = TestApp::start_with(|s| {
        s.publish_outbox = false;
    })
    .await;
    let setup_started = Instant::now();
    let org = app.sign_up("sweep@example.com", "Sweep Org").await;
    // The MSP plan: a trial's domain cap would leave all but the first few domains unswept.
    app.subscribe(&org, "msp").await;
    let org_id: uuid_like::Id = org.org_id.parse()?;
    let now = time::OffsetDateTime::now_utc();
    // The domains first (their ids give their report addresses), then their zones, built in one
    // go: live edits rebuild the fixture's catalog each time.
    let domains: Vec<mailward_domain::domain::Domain> = (0..count)
        .map(|i| {
            mailward_domain::domain::Domain::new(
                uuid::Uuid::new_v4(),
                org_id.0,
                format!("d{i}.bench.test"),
                now - time::Duration::seconds(1),
            )
        })
        .collect();
    let state = app.stack.state.clone();
    // One zone per domain, as in real DNS (and a negative answer from a zone of 30,000 records
    // costs the fixture's in-memory handler a scan of them all).
    let mut parent = Zone::new("bench.test")
        .mx("@", 10, "mx.bench.test.")
        .a("mx", "192.0.2.1");
    let mut zones = vec![Zone::new("test")];
    for domain in &domains {
        let rua = domain.monitoring_email(&state.config.report_domain);
        let dmarc = format!("v=DMARC1; p=none; rua=mailto:{rua}");
        if nsd {
            // NSD: every domain's records in the parent zone (NSD indexes them; one zone file of
            // 300,000 records loads in seconds, 100,000 zone files would not).
            let label = domain.url.trim_end_matches(".bench.test");
            parent = parent
                .txt(label, "v=spf1 mx -all")
                .mx(label, 10, "mx.bench.test.")
                .txt(&format!("_dmarc.{label}"), &dmarc);
        } else {
            zones.push(
                Zone::new(&domain.url)
                    .txt("@", "v=spf1 mx -all")
                    .mx("@", 10, "mx.bench.test.")
                    .txt("_dmarc", &dmarc),
            );
        }
    }
    zones.push(parent);
    let backend = if nsd {
        Backend::Nsd
    } else {
        Backend::InProcess
    };
    let localhost = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let dns = FixtureServer::start_with(backend, localhost, zones)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    dns.set_query_log(false);
    let zone_built = setup_started.elapsed();
    // Four writes a domain (the item, its list card, the name claim and the name index): 25
    // domains fill one transaction.
    for chunk in domains.chunks(25) {
        let mut ops = Vec::new();
        for domain in chunk {
            ops.extend(mailward_store::domains::create_ops(domain)?);
        }
        state.store.transact(ops).await?;
    }
    println!(
        "setup: {count} domains, fixture zone in {:.1} s, stored in {:.1} s",
        zone_built.as_secs_f64(),
        (setup_started.elapsed() - zone_built).as_secs_f64()
    );
    // The stack was started before the fixture existed: sweep with a resolver pointed at it.
    let resolver = std::sync::Arc::new(
        mailward_dns::HickoryResolver::new(dns.settings()).map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    dns.inject(
        Scope::Global,
        Fault::Latency(Duration::from_millis(latency_ms)),
    );
    // Pass 1 is a cold sweep (every domain probes the whole DKIM selector catalogue); pass 2
    // comes one interval later, when only the selectors found before are re-checked.
    let clock = std::sync::Arc::new(mailward_domain::ManualClock::new(
        time::OffsetDateTime::now_utc(),
    ));
    for pass in ["cold (full DKIM probe)", "steady state"] {
        let sweep_state = mailward_http::AppState::new(
            state.store.clone(),
            state.queue.clone(),
            state.mailer.clone(),
            clock.clone(),
            resolver.clone(),
            state.config.clone(),
        );
        // A real interval outlives most cached answers; start each pass with none.
        resolver.clear_cache();
        dns.reset_stats();
        let started = Instant::now();
        let swept = mailward_workers::sweep::sweep_now(&sweep_state).await?;
        let elapsed = started.elapsed();
        let setup = mailward_store::domains::list(state.store.as_ref(), org_id.0)
            .await?
            .iter()
            .filter(|d| d.monitoring_status == mailward_domain::domain::MonitoringStatus::Setup)
            .count();
        println!(
            "sweep, {pass}: {swept} domains ({setup} in setup) through {} adding {latency_ms} ms per answer: {:.1} s, {:.0} domains/s, {} DNS queries ({:.0} per domain), peak RSS {:.0} MiB (this process)",
            if nsd {
                "NSD behind the fixture's relay"
            } else {
                "the in-process DNS fixture"
            },
            elapsed.as_secs_f64(),
            swept as f64 / elapsed.as_secs_f64(),
            dns.query_count(),
            dns.query_count() as f64 / swept.max(1) as f64,
            peak_rss_mib()
        );
        clock.advance(time::Duration::seconds(
            i64::try_from(state.config.sweep_interval_secs).unwrap_or(300) + 1,
        ));
    }
    Ok(())
}

/// A tiny UUID parse without pulling the uuid crate's features here.
mod uuid_like {
    /// An organization id.
    pub struct Id(pub mailward_domain::model::OrgId);

    impl std::str::FromStr for Id {
        type Err = anyhow::Error;

        fn from_str(s: &str) -> Result<Self, Self::Err> {
            Ok(Id(serde_json::from_value(serde_json::Value::String(
                s.to_owned(),
            ))?))
        }
    }
}

async fn lambda_init(binary: PathBuf, runs: usize, runner: Option<&str>) -> anyhow::Result<()> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let runner: Vec<&str> = runner.unwrap_or_default().split_whitespace().collect();
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let started = Instant::now();
        let mut command = match runner.split_first() {
            Some((program, args)) => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).arg(&binary);
                command
            }
            None => tokio::process::Command::new(&binary),
        };
        let mut child = command
            .env_clear()
            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", "bench")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "bench")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", "bench")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "bench")
            .env("AWS_SECRET_ACCESS_KEY", "bench")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("MAILWARD_TABLE", "bench")
            .env(
                "MAILWARD_JOBS_QUEUE_URL",
                "https://sqs.us-east-1.amazonaws.com/1/jobs",
            )
            .env(
                "MAILWARD_JOBS_DLQ_URL",
                "https://sqs.us-east-1.amazonaws.com/1/jobs-dlq",
            )
            .env(
                "MAILWARD_DELIVERIES_QUEUE_URL",
                "https://sqs.us-east-1.amazonaws.com/1/deliveries",
            )
            .env(
                "MAILWARD_DELIVERIES_DLQ_URL",
                "https://sqs.us-east-1.amazonaws.com/1/deliveries-dlq",
            )
            .env("MAILWARD_MAIL_FROM", "bench@example.com")
            .env("MAILWARD_SECRET_KEY", "0123456789abcdef0123456789abcdef")
            .env("MAILWARD_BASE_URL", "https://api.example.com")
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        // Emulated binaries start far slower than native ones.
        let patience = Duration::from_secs(if runner.is_empty() { 10 } else { 60 });
        let (mut socket, _) = tokio::time::timeout(patience, listener.accept())
            .await
            .context("the function never called the Runtime API")??;
        let mut buf = [0u8; 1024];
        let n = socket.read(&mut buf).await?;
        let elapsed = started.elapsed();
        let request = String::from_utf8_lossy(&buf[..n]);
        anyhow::ensure!(
            request.contains("/runtime/invocation/next"),
            "unexpected first request: {request}"
        );
        let _ = socket.shutdown().await;
        let _ = child.kill().await;
        samples.push(elapsed);
    }
    samples.sort_unstable();
    println!(
        "{}: init (process start to first invocation/next), {} runs: p50 {:.1} ms, p99 {:.1} ms, min {:.1} ms",
        binary.display(),
        samples.len(),
        ms(percentile(&samples, 0.50)),
        ms(percentile(&samples, 0.99)),
        ms(samples[0]),
    );
    Ok(())
}
