//! `mailward`: the local stack. With no subcommand it serves; `mailward token` mints a dashboard
//! session token for an account (the local stand-in for the dashboard's identity provider).

/// mimalloc: report ingestion and the sweep allocate many small short-lived values (parsed
/// fields, rows, encoded items); glibc's allocator spent about a fifth of the ingest CPU in
/// `malloc`/`free`/`malloc_consolidate`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use mailward_local_stack::{LocalStack, Settings, assemble};
use mailward_services::config::{RateLimit, Scope};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `--oauth-redirect-uris`: exact HTTPS callbacks, comma-separated.
#[derive(Debug, Clone)]
struct RedirectUris(Vec<String>);

fn redirect_uris(value: &str) -> Result<RedirectUris, String> {
    mailward_services::config::parse_redirect_uris(value).map(RedirectUris)
}

#[derive(Parser, Debug)]
#[command(
    name = "mailward",
    version,
    about = "Mailward local stack: the whole service in one process on 127.0.0.1"
)]
struct Cli {
    /// Address to listen on.
    #[arg(
        long,
        env = "MAILWARD_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    listen: SocketAddr,
    /// Data directory (database, outgoing mail in outbox/*.eml, secret key).
    #[arg(
        long,
        env = "MAILWARD_DATA_DIR",
        default_value = "./.mailward",
        global = true
    )]
    data_dir: PathBuf,
    /// Public base URL used in links (default: http://<listen>).
    #[arg(long, env = "MAILWARD_BASE_URL", global = true)]
    base_url: Option<String>,
    /// Secret key (at least 32 characters) signing session tokens and keying code hashes
    /// (default: generated once into <data-dir>/secret.key).
    #[arg(
        long,
        env = "MAILWARD_SECRET_KEY",
        hide_env_values = true,
        global = true
    )]
    secret_key: Option<String>,
    /// Sender of outbound mail.
    #[arg(
        long,
        env = "MAILWARD_MAIL_FROM",
        default_value = "Mailward <noreply@mailward.local>",
        global = true
    )]
    mail_from: String,
    /// Rate limit of the global bucket, <limit>/<window seconds>.
    #[arg(long, env = "MAILWARD_RATE_GLOBAL", global = true)]
    rate_global: Option<RateLimit>,
    /// Rate limit of the api_key bucket.
    #[arg(long, env = "MAILWARD_RATE_API_KEY", global = true)]
    rate_api_key: Option<RateLimit>,
    /// Rate limit of the dns bucket.
    #[arg(long, env = "MAILWARD_RATE_DNS", global = true)]
    rate_dns: Option<RateLimit>,
    /// Rate limit of the api_key_dns bucket.
    #[arg(long, env = "MAILWARD_RATE_API_KEY_DNS", global = true)]
    rate_api_key_dns: Option<RateLimit>,
    /// Rate limit of the signup bucket (per client IP).
    #[arg(long, env = "MAILWARD_RATE_SIGNUP", global = true)]
    rate_signup: Option<RateLimit>,
    /// Rate limit of the mcp_oauth bucket (MCP calls, per person).
    #[arg(long, env = "MAILWARD_RATE_MCP_OAUTH", global = true)]
    rate_mcp_oauth: Option<RateLimit>,
    /// Rate limit of the mcp_dns bucket (the public MCP endpoint, per client address).
    #[arg(long, env = "MAILWARD_RATE_MCP_DNS", global = true)]
    rate_mcp_dns: Option<RateLimit>,
    /// Rate limit of the report_upload bucket (TLS reports over HTTPS, per client address and
    /// per domain).
    #[arg(long, env = "MAILWARD_RATE_REPORT_UPLOAD", global = true)]
    rate_report_upload: Option<RateLimit>,
    /// The public client id every MCP connector uses.
    #[arg(long, env = "MAILWARD_OAUTH_CLIENT_ID", global = true)]
    oauth_client_id: Option<String>,
    /// The hosted MCP connectors' HTTPS callbacks, comma-separated and matched exactly (default:
    /// Claude's and ChatGPT's published callbacks; loopback callbacks are always allowed).
    #[arg(long, env = "MAILWARD_OAUTH_REDIRECT_URIS", global = true, value_parser = redirect_uris)]
    oauth_redirect_uris: Option<RedirectUris>,
    /// Signup codes one address may request per hour.
    #[arg(
        long,
        env = "MAILWARD_SIGNUP_CODES_PER_HOUR",
        default_value_t = 5,
        global = true
    )]
    signup_codes_per_hour: u32,
    /// Queue messages are dead-lettered after this many receives.
    #[arg(
        long,
        env = "MAILWARD_MAX_RECEIVES",
        default_value_t = 5,
        global = true
    )]
    max_receives: u32,
    /// Allow webhook deliveries to loopback addresses. For local testing only; never on AWS.
    /// Accepts true/false, 1/0, yes/no, on/off (`--webhook-allow-loopback=0`); a bare flag means
    /// true.
    #[arg(
        long,
        env = "MAILWARD_WEBHOOK_ALLOW_LOOPBACK",
        global = true,
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    webhook_allow_loopback: bool,
    /// Stripe's secret (or restricted) key: billing then runs on Stripe's hosted pages. Without
    /// it, the local stack serves its own test-mode Checkout and portal pages.
    #[arg(
        long,
        env = "MAILWARD_STRIPE_SECRET_KEY",
        global = true,
        hide_env_values = true
    )]
    stripe_secret_key: Option<String>,
    /// The signing secret of the Stripe webhook endpoint (`{base_url}/billing/stripe-webhook`);
    /// the local test-mode pages sign with it too. Default: derived from the secret key.
    #[arg(
        long,
        env = "MAILWARD_STRIPE_WEBHOOK_SECRET",
        global = true,
        hide_env_values = true
    )]
    stripe_webhook_secret: Option<String>,
    /// The bearer token `GET /metrics` asks for (Prometheus's `bearer_token`); without one,
    /// only loopback clients may read it.
    #[arg(
        long,
        env = "MAILWARD_METRICS_TOKEN",
        global = true,
        hide_env_values = true
    )]
    metrics_token: Option<String>,
    /// Mailward staff's addresses, comma-separated: accounts that may sign in to the staff
    /// surface (`POST /staff/session`) with their authenticator app.
    #[arg(long, env = "MAILWARD_STAFF_EMAILS", global = true, default_value = "")]
    staff_emails: String,
    /// Where new support tickets and customers' replies are mailed (locally into the outbox).
    #[arg(long, env = "MAILWARD_SUPPORT_EMAIL", global = true)]
    support_email: Option<String>,
    /// Stripe's API origin (a stand-in's, for tests).
    #[arg(
        long,
        env = "MAILWARD_STRIPE_API_BASE",
        global = true,
        default_value = mailward_services::config::DEFAULT_STRIPE_API_BASE
    )]
    stripe_api_base: String,
    /// Stripe price ids: comma-separated `plan:CODE=price_id` (plan it_teams or msp, CODE a
    /// usage line item such as DOMAIN-ACTIVE-1TO10).
    #[arg(
        long,
        env = "MAILWARD_STRIPE_PRICES",
        global = true,
        default_value = ""
    )]
    stripe_prices: String,
    /// The RDAP bootstrap registry for DNS (RFC 9224) the registrar lookups start from;
    /// `off` turns registrar lookups off.
    #[arg(
        long,
        env = "MAILWARD_RDAP_BOOTSTRAP_URL",
        global = true,
        default_value = mailward_services::config::DEFAULT_RDAP_BOOTSTRAP_URL
    )]
    rdap_bootstrap_url: String,
    /// Let RDAP lookups reach loopback addresses over plain HTTP (a fixture registry). For
    /// local testing only; true/false, 1/0, yes/no, on/off.
    #[arg(
        long,
        env = "MAILWARD_RDAP_ALLOW_LOOPBACK",
        global = true,
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    rdap_allow_loopback: bool,
    /// An extra trusted root certificate (PEM file) for webhook receivers. For local testing only.
    #[arg(long, env = "MAILWARD_EXTRA_CA", global = true)]
    extra_ca: Option<PathBuf>,
    /// DNS servers to ask, comma-separated host:port (default: the system's resolvers).
    #[arg(long, env = "MAILWARD_DNS", global = true)]
    dns: Option<String>,
    /// DNS queries in flight at once, 1 to 4096. Default: half the open-file limit, 512 to 1024
    /// (each query holds one UDP socket; the limit is first raised toward its hard limit). The
    /// sweep uses at most half.
    #[arg(long, env = "MAILWARD_DNS_CONCURRENCY", global = true, value_parser = dns_concurrency)]
    dns_concurrency: Option<usize>,
    /// Port on which the sweep asks a domain's authoritative name servers directly (DNS conflict
    /// detection). 53, as on the internet; a test or lab server on another port needs this,
    /// together with NS records that point at its address.
    #[arg(
        long,
        env = "MAILWARD_NAMESERVER_PORT",
        default_value_t = 53,
        global = true,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    nameserver_port: u16,
    /// Period of the monitoring sweep, in seconds (each domain is re-checked this often).
    #[arg(
        long,
        env = "MAILWARD_SWEEP_INTERVAL",
        default_value_t = 300,
        global = true
    )]
    sweep_interval: u64,
    /// How long after an organization purge's first pass its final pass runs, in seconds (it
    /// removes what jobs already running at the first pass wrote; at most 900).
    #[arg(
        long,
        env = "MAILWARD_PURGE_FINAL_PASS_DELAY",
        default_value_t = mailward_services::config::DEFAULT_PURGE_FINAL_PASS_DELAY_SECS,
        global = true,
        value_parser = clap::value_parser!(u64).range(0..=900)
    )]
    purge_final_pass_delay: u64,
    /// How often the sweep probes each domain's whole DKIM selector catalogue, in seconds (in
    /// between it re-checks only the selectors found before).
    #[arg(
        long,
        env = "MAILWARD_DKIM_FULL_PROBE_INTERVAL",
        default_value_t = 86_400,
        global = true
    )]
    dkim_full_probe_interval: u64,
    /// How long a domain may stay `pending` (monitoring not yet complete) before the sweep marks
    /// it `failed`, in seconds (default 72 hours).
    #[arg(
        long,
        env = "MAILWARD_PENDING_GRACE",
        default_value_t = mailward_services::config::DEFAULT_PENDING_GRACE_SECS,
        global = true
    )]
    pending_grace: u64,
    /// How long a task must hold a state before its event (task.opened, task.completed ...)
    /// fires, in seconds (default four hours).
    #[arg(
        long,
        env = "MAILWARD_TASK_EVENT_DELAY",
        default_value_t = mailward_tasks::stabilise::DEFAULT_WINDOW_SECS,
        global = true
    )]
    task_event_delay: u64,
    /// Probe the MX hosts' TLS certificates with STARTTLS on port 25, about daily per domain
    /// (needs outbound port 25, which many networks block). true/false, 1/0.
    #[arg(
        long,
        env = "MAILWARD_MX_TLS_PROBE",
        global = true,
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    mx_tls_probe: bool,
    /// Run the report mailbox: an SMTP listener on this address (e.g. 127.0.0.1:2525) taking
    /// mail for the report domain's addresses into report ingestion.
    #[arg(long, env = "MAILWARD_SMTP_LISTEN", global = true)]
    smtp_listen: Option<SocketAddr>,
    /// Serve the hosted zone (hosted DMARC records, report authorizations) on this address
    /// (UDP and TCP, e.g. 127.0.0.1:5353): `dig @127.0.0.1 -p 5353 TXT <name>`.
    #[arg(long, env = "MAILWARD_DNS_LISTEN", global = true)]
    dns_listen: Option<SocketAddr>,
    /// Largest message the SMTP listener accepts, in bytes.
    #[arg(long, env = "MAILWARD_SMTP_MAX_BYTES", global = true, default_value_t = mailward_local_stack::DEFAULT_SMTP_MAX_BYTES)]
    smtp_max_bytes: usize,
    /// Public resolvers the sweep compares with authoritative answers, `name=ip[:port]`
    /// comma-separated (e.g. `google=8.8.8.8,cloudflare=1.1.1.1`); none by default.
    #[arg(long, env = "MAILWARD_PUBLIC_RESOLVERS", global = true)]
    public_resolvers: Option<String>,
    /// Log format: text or json.
    #[arg(
        long,
        env = "MAILWARD_LOG_FORMAT",
        default_value = "text",
        global = true
    )]
    log_format: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve (the default).
    Serve,
    /// Evaluate every domain now against the data directory and exit (safe while a server runs
    /// on the same directory: a domain the server is evaluating is evaluated after it). Prints
    /// what was evaluated, with each status, and anything that could not be.
    Sweep {
        /// Only the domains whose scheduled check is due, as the periodic sweep does.
        #[arg(long)]
        due_only: bool,
    },
    /// Run the hosted-record reconciliation once (what the hourly schedule runs: hosted DMARC,
    /// DKIM keys, SPF flattening, MTA-STS, BIMI) against the data directory and exit.
    Reconcile,
    /// Apply the data lifecycle once (what the daily schedule runs): delete what each
    /// organization's plan no longer keeps and raw deliveries past 30 days, then exit.
    Retention,
    /// Write the OpenAPI document of every function's routes (what `GET /swagger.json` serves):
    /// to `functions/api-public/openapi.json` with `--write`, else to standard output.
    Openapi {
        /// Write the committed file instead of printing.
        #[arg(long)]
        write: bool,
    },
    /// Print a dashboard session token (JWT) for an account that belongs to an organization.
    Token {
        /// The account's email.
        #[arg(long)]
        email: String,
        /// The organization id (default: the account's only organization).
        #[arg(long)]
        org: Option<uuid::Uuid>,
        /// Mark the sign-in as having completed MFA (amr contains "mfa").
        #[arg(long)]
        mfa: bool,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: i64,
    },
    /// Import report files and folders (.eml, .xml, .xml.gz, .gz, .zip, .json, .json.gz,
    /// mbox): one JSON line per report on standard output (`file`, `kind`, `status`
    /// imported|duplicate|unattributed|refused, `reason`, `reporter`, `report_id`,
    /// `policy_domain`, `begin`, `end`, `records`, `messages`), then one summary line.
    Import {
        /// The organization the reports are for: each is imported into that organization's
        /// domain that watches its policy domain (or a name above it), and into no other
        /// organization's; a report for none of its domains is `unattributed`.
        #[arg(long)]
        org: uuid::Uuid,
        /// Files or folders (folders are walked recursively).
        #[arg(required_unless_present = "imap")]
        paths: Vec<PathBuf>,
        /// Read a mailbox instead: `imaps://user@host[:port]/MAILBOX` (user percent-encoded,
        /// e.g. `reports%40example.com`; `imap://` only on loopback). The password comes from
        /// `MAILWARD_IMAP_PASSWORD` or a prompt. Resumable: a later run starts after the last
        /// message read. The mailbox is opened read-only and left unchanged.
        #[arg(long, conflicts_with = "paths")]
        imap: Option<String>,
        /// Move each message read as a report (imported, duplicate or unattributed) to this
        /// folder once it is stored; other mail stays where it is.
        #[arg(long, requires = "imap")]
        imap_move_to: Option<String>,
        /// Also trust this CA (PEM file) for the IMAP server's certificate.
        #[arg(long, requires = "imap")]
        imap_ca: Option<PathBuf>,
    },
    /// The IP ownership data (IPinfo Lite, CC BY-SA 4.0, with parsedmarc's reverse-DNS map)
    /// that says who owns each sending address.
    Ipdata {
        #[command(subcommand)]
        action: IpdataCommand,
    },
    /// Start signing MCP access tokens with a new ES256 key. The previous key stays in the JWKS
    /// and keeps verifying until the tokens it signed expired (15 minutes).
    OauthRotateKey,
    /// Answer a support ticket as Mailward support staff (the organization sees it as an
    /// unread reply).
    SupportReply {
        /// The organization id.
        #[arg(long)]
        org: uuid::Uuid,
        /// The ticket id.
        #[arg(long)]
        ticket: uuid::Uuid,
        /// The reply.
        #[arg(long)]
        body: String,
        /// Close the ticket with this reply.
        #[arg(long)]
        close: bool,
    },
}

#[derive(Subcommand, Debug)]
enum IpdataCommand {
    /// Install an IPinfo Lite MMDB file (e.g. a newer `ipinfo_lite.mmdb` from ipinfo.io) into
    /// the data directory's object storage, where the service reads it.
    Update {
        /// The MMDB file.
        file: PathBuf,
        /// parsedmarc's `base_reverse_dns_map.csv` to install with it (the one installed
        /// before stays otherwise).
        #[arg(long)]
        map: Option<PathBuf>,
    },
    /// Download the files pinned by this version (parsedmarc 11.1.0's package on PyPI, checked
    /// against its SHA-256), keep the package under `<data-dir>/ipdata-cache/`, and install them.
    Fetch,
}

/// Parses `--dns-concurrency` with the resolver's own rule, so the message names the range.
fn dns_concurrency(value: &str) -> Result<usize, String> {
    mailward_dns::parse_concurrency(value).map_err(|e| e.to_string())
}

fn init_tracing(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing(&cli.log_format);
    let mut settings = Settings::new(cli.data_dir.clone());
    settings.listen = cli.listen;
    settings.base_url = cli.base_url.clone();
    settings.secret_key = cli.secret_key.clone();
    settings.mail_from = cli.mail_from.clone();
    settings.max_receives = cli.max_receives;
    settings.signup_codes_per_hour = cli.signup_codes_per_hour;
    settings.webhook_allow_loopback = cli.webhook_allow_loopback;
    settings.billing = mailward_services::config::BillingConfig {
        stripe_secret_key: cli
            .stripe_secret_key
            .clone()
            .filter(|k| !k.trim().is_empty()),
        stripe_webhook_secret: cli
            .stripe_webhook_secret
            .clone()
            .filter(|k| !k.trim().is_empty()),
        stripe_api_base: cli.stripe_api_base.trim_end_matches('/').to_owned(),
        stripe_prices: mailward_services::config::parse_stripe_prices(&cli.stripe_prices)
            .map_err(anyhow::Error::msg)?,
    };
    settings.metrics_token = cli.metrics_token.clone().filter(|t| !t.trim().is_empty());
    settings.staff_emails = mailward_services::config::parse_staff_emails(&cli.staff_emails);
    settings.support_email = cli.support_email.clone().filter(|e| e.contains('@'));
    settings.extra_ca = cli.extra_ca.clone();
    settings.rdap_bootstrap_url =
        mailward_services::config::parse_rdap_bootstrap_url(&cli.rdap_bootstrap_url);
    settings.rdap_allow_loopback = cli.rdap_allow_loopback;
    settings.dns = cli.dns.clone();
    settings.dns_concurrency = cli.dns_concurrency;
    settings.nameserver_port = cli.nameserver_port;
    settings.public_resolvers = cli.public_resolvers.clone();
    settings.sweep_interval = Some(Duration::from_secs(cli.sweep_interval.max(1)));
    settings.purge_final_pass_delay = Some(Duration::from_secs(cli.purge_final_pass_delay));
    settings.dkim_full_probe_interval = Duration::from_secs(cli.dkim_full_probe_interval.max(1));
    settings.pending_grace = Duration::from_secs(cli.pending_grace);
    settings.task_event_delay = Duration::from_secs(cli.task_event_delay);
    settings.mx_tls_probe = cli.mx_tls_probe;
    settings.smtp_listen = cli.smtp_listen;
    settings.dns_listen = cli.dns_listen;
    settings.smtp_max_bytes = cli.smtp_max_bytes;
    settings.oauth_client_id = cli.oauth_client_id.clone();
    settings.oauth_redirect_uris = cli.oauth_redirect_uris.clone().map(|u| u.0);
    for (scope, limit) in [
        (Scope::Global, cli.rate_global),
        (Scope::ApiKey, cli.rate_api_key),
        (Scope::Dns, cli.rate_dns),
        (Scope::ApiKeyDns, cli.rate_api_key_dns),
        (Scope::Signup, cli.rate_signup),
        (Scope::McpOauth, cli.rate_mcp_oauth),
        (Scope::McpDns, cli.rate_mcp_dns),
        (Scope::ReportUpload, cli.rate_report_upload),
    ] {
        if let Some(limit) = limit {
            settings.rate_limits.push((scope, limit));
        }
    }
    match cli.command {
        None | Some(Command::Serve) => serve(settings).await,
        Some(Command::Sweep { due_only }) => sweep(settings, due_only).await,
        Some(Command::Reconcile) => reconcile(settings).await,
        Some(Command::Retention) => retention(settings).await,
        Some(Command::Ipdata { action }) => ipdata(settings, action).await,
        Some(Command::Openapi { write }) => openapi(write),
        Some(Command::Token {
            email,
            org,
            mfa,
            ttl,
        }) => token(settings, &email, org, mfa, ttl).await,
        Some(Command::Import {
            org,
            paths,
            imap: Some(url),
            imap_move_to,
            imap_ca,
        }) => {
            let _ = paths;
            let imap = ImapImport {
                url: &url,
                move_to: imap_move_to.as_deref(),
                ca: imap_ca.as_deref(),
            };
            import_imap(settings, org, imap).await
        }
        Some(Command::Import { org, paths, .. }) => import(settings, org, &paths).await,
        Some(Command::SupportReply {
            org,
            ticket,
            body,
            close,
        }) => support_reply(settings, org, ticket, &body, close).await,
        Some(Command::OauthRotateKey) => oauth_rotate_key(settings).await,
    }
}

/// Files under `paths`, folders walked recursively, in a stable order.
fn files_under(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    while let Some(path) = stack.pop() {
        let meta =
            std::fs::metadata(&path).with_context(|| format!("reading {}", path.display()))?;
        if meta.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&path)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .collect();
            entries.sort();
            stack.extend(entries.into_iter().rev());
        } else {
            out.push(path);
        }
    }
    Ok(out)
}

/// The messages of an mbox file (split on `From ` lines), or the file itself.
fn messages_of(bytes: &[u8]) -> Vec<&[u8]> {
    if !bytes.starts_with(b"From ") {
        return vec![bytes];
    }
    let mut starts = vec![0];
    for (i, w) in bytes.windows(6).enumerate() {
        if w == b"\nFrom " {
            starts.push(i + 1);
        }
    }
    starts.push(bytes.len());
    starts
        .windows(2)
        .map(|w| {
            let chunk = &bytes[w[0]..w[1]];
            // Drop the mbox separator line itself.
            match chunk.iter().position(|b| *b == b'\n') {
                Some(nl) => &chunk[nl + 1..],
                None => &chunk[chunk.len()..],
            }
        })
        .filter(|m| !m.is_empty())
        .collect()
}

/// Largest file `mailward import` reads.
const MAX_IMPORT_FILE: u64 = 512 * 1024 * 1024;

/// The outcome lines of an import and their counts, for the closing summary line.
#[derive(Default)]
struct Tally {
    counts: std::collections::BTreeMap<&'static str, u64>,
}

impl Tally {
    /// Prints one JSON line per outcome, named `name`, and counts them.
    fn print(
        &mut self,
        name: &str,
        outcomes: Vec<mailward_workers::ingest::Outcome>,
    ) -> anyhow::Result<()> {
        use std::io::Write as _;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for mut outcome in outcomes {
            outcome.file = Some(name.to_owned());
            *self.counts.entry(status_word(outcome.status)).or_default() += 1;
            writeln!(out, "{}", serde_json::to_string(&outcome)?)?;
        }
        Ok(())
    }

    /// The summary line: `unit` (`files` or `messages`) read, then the outcomes by status.
    fn summary(&self, unit: &str, read: usize) {
        let count = |k: &str| self.counts.get(k).copied().unwrap_or(0);
        let summary = serde_json::json!({
            "summary": {
                unit: read,
                "imported": count("imported"),
                "duplicate": count("duplicate"),
                "unattributed": count("unattributed"),
                "refused": count("refused"),
            }
        });
        println!("{summary}");
    }
}

fn status_word(status: mailward_workers::ingest::Status) -> &'static str {
    use mailward_workers::ingest::Status;
    match status {
        Status::Imported => "imported",
        Status::Duplicate => "duplicate",
        Status::Unattributed => "unattributed",
        Status::Refused => "refused",
    }
}

/// The organization an import is for, once it is known to exist.
async fn import_delivery(
    state: &mailward_services::AppState,
    org: uuid::Uuid,
) -> anyhow::Result<mailward_workers::ingest::Delivery> {
    mailward_store::orgs::get(state.store.as_ref(), org)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no organization {org} (--org)"))?;
    Ok(mailward_workers::ingest::Delivery::import_for(org))
}

async fn import(settings: Settings, org: uuid::Uuid, paths: &[PathBuf]) -> anyhow::Result<()> {
    use mailward_workers::ingest;
    use std::io::IsTerminal as _;
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let delivery = import_delivery(&assembled.state, org).await?;
    let files = files_under(paths)?;
    let limits = mailward_reports::Limits::default();
    let progress = std::io::stderr().is_terminal();
    let mut tally = Tally::default();
    // One buffer for every file: each is read into it, its messages handed on as slices of it
    // (kept raw without a copy), and the buffer taken back once ingestion let go of it.
    let mut buffer = Vec::new();
    for (n, file) in files.iter().enumerate() {
        if progress {
            eprint!("\r\x1b[K[{}/{}] {}", n + 1, files.len(), file.display());
        }
        let name = file.display().to_string();
        let size = std::fs::metadata(file)?.len();
        let outcomes = if size > MAX_IMPORT_FILE {
            vec![ingest::Outcome::refused_file(format!(
                "the file is larger than {MAX_IMPORT_FILE} bytes"
            ))]
        } else {
            std::fs::File::open(file)
                .and_then(|mut f| ingest::read_reusing(&mut buffer, &mut f, size))
                .with_context(|| format!("reading {name}"))?;
            let bytes = bytes::Bytes::from(std::mem::take(&mut buffer));
            let mut all = Vec::new();
            for message in messages_of(&bytes) {
                all.extend(
                    ingest::ingest_shared(
                        &assembled.state,
                        bytes.slice_ref(message),
                        &delivery,
                        &limits,
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
                );
            }
            buffer = bytes.try_into_mut().map(Vec::from).unwrap_or_default();
            all
        };
        tally.print(&name, outcomes)?;
    }
    if progress {
        eprintln!();
    }
    tally.summary("files", files.len());
    Ok(())
}

/// Messages fetched from the server at a time.
const IMAP_BATCH: usize = 25;

/// `mailward import --imap`: the same parsing, identity and output as the file import, for the
/// messages of a mailbox not read by an earlier run.
/// Where `mailward import --imap` reads.
struct ImapImport<'a> {
    url: &'a str,
    move_to: Option<&'a str>,
    ca: Option<&'a std::path::Path>,
}

async fn import_imap(
    settings: Settings,
    org: uuid::Uuid,
    imap: ImapImport<'_>,
) -> anyhow::Result<()> {
    let ImapImport { url, move_to, ca } = imap;
    use mailward_local_stack::imap::{Cursor, Fetched, ImapUrl, MAX_MESSAGE_BYTES};
    use mailward_workers::ingest::{self, Status};
    use std::io::IsTerminal as _;
    let url = ImapUrl::parse(url)?;
    let password = match std::env::var("MAILWARD_IMAP_PASSWORD") {
        Ok(p) => p,
        Err(_) if std::io::stdin().is_terminal() => {
            rpassword::prompt_password(format!("IMAP password for {}: ", url.user))
                .context("reading the password")?
        }
        Err(_) => anyhow::bail!(
            "set MAILWARD_IMAP_PASSWORD (no terminal to ask for the IMAP password on)"
        ),
    };
    let extra_ca = ca
        .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
        .transpose()?;
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let delivery = import_delivery(&assembled.state, org).await?;
    let mut mailbox =
        mailward_local_stack::imap::open(&url, &password, extra_ca.as_deref(), move_to.is_some())
            .await?;
    if let Some(folder) = move_to {
        mailbox.ensure_folder(folder).await?;
    }
    let cursor_path = Cursor::path(&settings.data_dir, &url);
    let mut cursor = Cursor::load(&cursor_path)?;
    if cursor.uid_validity != mailbox.uid_validity() {
        // A new mailbox, or the server renumbered it: read it all again (duplicates are known).
        cursor = Cursor {
            uid_validity: mailbox.uid_validity(),
            last_uid: 0,
        };
    }
    let uids = mailbox.uids_after(cursor.last_uid).await?;
    let limits = mailward_reports::Limits::default();
    let progress = std::io::stderr().is_terminal();
    let mut tally = Tally::default();
    let mut read = 0;
    for batch in uids.chunks(IMAP_BATCH) {
        let mut processed = Vec::new();
        for (uid, fetched) in mailbox.fetch(batch).await? {
            read += 1;
            if progress {
                eprint!("\r\x1b[K[{read}/{}] UID {uid}", uids.len());
            }
            let outcomes = match fetched {
                Fetched::TooLarge(size) => vec![ingest::Outcome::refused_file(format!(
                    "the message is {size} bytes, larger than {MAX_MESSAGE_BYTES}"
                ))],
                Fetched::Message(bytes) => {
                    ingest::ingest(&assembled.state, bytes, &delivery, &limits)
                        .await
                        .map_err(|e| anyhow::anyhow!("{e}"))?
                }
            };
            let is_report =
                !outcomes.is_empty() && outcomes.iter().all(|o| o.status != Status::Refused);
            if is_report {
                processed.push(uid);
            }
            tally.print(&url.message_name(uid), outcomes)?;
        }
        if let Some(folder) = move_to {
            mailbox.move_to(&processed, folder).await?;
        }
        // Saved after each batch: an interrupted import resumes after what it stored.
        cursor.last_uid = batch.iter().copied().max().unwrap_or(cursor.last_uid);
        cursor.save(&cursor_path)?;
    }
    mailbox.logout().await;
    if progress {
        eprintln!();
    }
    tally.summary("messages", read);
    Ok(())
}

async fn ipdata(settings: Settings, action: IpdataCommand) -> anyhow::Result<()> {
    let (mmdb, map) = match action {
        IpdataCommand::Update { file, map } => (
            std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?,
            map.map(|m| {
                std::fs::read_to_string(&m).with_context(|| format!("reading {}", m.display()))
            })
            .transpose()?,
        ),
        IpdataCommand::Fetch => {
            let files =
                mailward_local_stack::ipdata::fetch(&settings.data_dir.join("ipdata-cache"))
                    .await?;
            (files.mmdb, Some(files.map))
        }
    };
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let installed = mailward_services::ipdata::install(&assembled.state, mmdb, map)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let built = time::OffsetDateTime::from_unix_timestamp(i64::try_from(installed.built_at)?)
        .map(|t| t.date().to_string())
        .unwrap_or_default();
    println!(
        "Installed the IP data built on {built} ({} reverse-DNS services named). IP address data: IPinfo Lite (CC BY-SA 4.0, https://ipinfo.io).",
        installed.services
    );
    Ok(())
}

async fn oauth_rotate_key(settings: Settings) -> anyhow::Result<()> {
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let kid = mailward_oauth::signing::rotate(&assembled.state)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("New access-token signing key {kid}; the previous one verifies for 15 more minutes.");
    Ok(())
}

async fn support_reply(
    settings: Settings,
    org: uuid::Uuid,
    ticket: uuid::Uuid,
    body: &str,
    close: bool,
) -> anyhow::Result<()> {
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let message =
        mailward_services::support::staff_reply(&assembled.state, org, ticket, body, &[], close)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("Replied on ticket {ticket} (message {}).", message.id);
    Ok(())
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    let data_dir = settings.data_dir.clone();
    let stack = LocalStack::start(settings).await?;
    println!("Mailward listening on http://{}", stack.addr);
    println!(
        "Open the dashboard: http://{}/app/ (sign in with an account's address; the emailed code is in the outbox below)",
        stack.addr
    );
    if let Some(smtp) = stack.smtp_addr {
        println!("Report mailbox (SMTP) listening on {smtp}");
    }
    if let Some(dns) = stack.dns_addr() {
        println!("Hosted zone (DNS) listening on {dns}");
    }
    println!(
        "Data directory: {} (outgoing mail: {}/outbox/*.eml)",
        data_dir.display(),
        data_dir.display()
    );
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    println!("Shutting down…");
    tokio::time::timeout(Duration::from_secs(10), stack.stop())
        .await
        .ok();
    Ok(())
}

async fn sweep(settings: Settings, due_only: bool) -> anyhow::Result<()> {
    use mailward_services::evaluation::CLAIM_SECS;
    use mailward_workers::sweep::{SweepScope, sweep_by_hand};
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let scope = if due_only {
        SweepScope::Due
    } else {
        SweepScope::All
    };
    // A claim lasts at most CLAIM_SECS; wait that long (and a little) for a running server to
    // finish a domain it is evaluating.
    let wait = Duration::from_secs(u64::try_from(CLAIM_SECS).unwrap_or(300) + 5);
    let report = sweep_by_hand(&assembled.state, scope, wait).await?;
    println!("{}", sweep_summary(&report, due_only));
    if !report.busy.is_empty() {
        anyhow::bail!(
            "{} domain(s) not evaluated: another process still held them",
            report.busy.len()
        );
    }
    Ok(())
}

/// `Evaluated 3 domain(s): 1 setup, 2 pending.` and what was not evaluated, and why.
fn sweep_summary(report: &mailward_workers::sweep::SweepReport, due_only: bool) -> String {
    let mut counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for status in &report.evaluated {
        *counts.entry(status.as_str()).or_default() += 1;
    }
    let mut out = format!(
        "Evaluated {} of {} {}domain(s)",
        report.evaluated.len(),
        report.domains,
        if due_only { "due " } else { "" }
    );
    if !counts.is_empty() {
        let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
        out.push_str(&format!(": {}", parts.join(", ")));
    }
    out.push('.');
    if report.waited > 0 {
        out.push_str(&format!(
            "\n{} of them were being evaluated by another process; evaluated after it finished.",
            report.waited
        ));
    }
    if report.superseded > 0 {
        out.push_str(&format!(
            "\n{} changed while being evaluated and will be evaluated again on the next sweep.",
            report.superseded
        ));
    }
    if report.gone > 0 {
        out.push_str(&format!("\n{} were deleted meanwhile.", report.gone));
    }
    for (id, until) in &report.busy {
        out.push_str(&format!(
            "\nNot evaluated: domain {id} is being evaluated by another process (its claim ends {until})."
        ));
    }
    out
}

async fn reconcile(settings: Settings) -> anyhow::Result<()> {
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let checked = mailward_workers::reconcile::reconcile_now(&assembled.state).await?;
    println!("Reconciled the hosted records of {checked} domain(s).");
    Ok(())
}

async fn retention(settings: Settings) -> anyhow::Result<()> {
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock, settings.listen)?;
    let (removed, raw) = mailward_workers::retention::run_now(&assembled.state).await?;
    println!(
        "Removed {} report item(s), {} TLS report(s), {} DNS snapshot(s), {} activity item(s), {} item(s) of deleted domains and {raw} raw deliverie(s); moved {} item(s) into their domain's partition.",
        removed.report_items,
        removed.tls_reports,
        removed.snapshots,
        removed.activity_items,
        removed.gone_items,
        removed.moved_items
    );
    Ok(())
}

/// Where `mailward openapi --write` puts the document, relative to the workspace root.
const OPENAPI_FILE: &str = "functions/api-public/openapi.json";

fn openapi(write: bool) -> anyhow::Result<()> {
    let json = mailward_local_stack::openapi_json();
    if !write {
        use std::io::Write as _;
        // A reader that stops early (`| head`) is not an error.
        return match std::io::stdout().lock().write_all(json.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(()),
        };
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join(OPENAPI_FILE);
    std::fs::write(&path, json).with_context(|| format!("writing {}", path.display()))?;
    println!("Wrote {}", path.display());
    Ok(())
}

async fn token(
    settings: Settings,
    email: &str,
    org: Option<uuid::Uuid>,
    mfa: bool,
    ttl: i64,
) -> anyhow::Result<()> {
    use mailward_http::auth::{JWT_AUDIENCE, JWT_ISSUER, SessionClaims, mint_session_token};
    use mailward_store::accounts;
    let clock: Arc<dyn mailward_domain::Clock> = Arc::new(mailward_domain::SystemClock);
    let assembled = assemble(&settings, clock.clone(), settings.listen)?;
    let state = assembled.state;
    let email = mailward_domain::email::EmailAddress::parse(email)
        .map_err(|_| anyhow::anyhow!("not a valid email"))?;
    let account = accounts::get_by_email(state.store.as_ref(), email.as_str())
        .await?
        .ok_or_else(|| anyhow::anyhow!("no account for {email}; sign up first"))?
        .value;
    let memberships = accounts::memberships_of(state.store.as_ref(), account.id).await?;
    let membership = match org {
        Some(org) => memberships.into_iter().find(|m| m.org_id == org),
        None if memberships.len() == 1 => memberships.into_iter().next(),
        None => anyhow::bail!(
            "{email} belongs to {} organizations; pass --org",
            memberships.len()
        ),
    }
    .ok_or_else(|| anyhow::anyhow!("{email} is not a member of that organization"))?;
    let role = membership
        .roles
        .first()
        .copied()
        .unwrap_or(mailward_domain::model::Role::Viewer);
    let now = clock.unix();
    let claims = SessionClaims {
        sub: account.id,
        org: membership.org_id,
        role,
        amr: if mfa {
            vec!["pwd".into(), "mfa".into()]
        } else {
            vec!["pwd".into()]
        },
        iss: JWT_ISSUER.into(),
        aud: JWT_AUDIENCE.into(),
        iat: now,
        exp: now + ttl.clamp(60, 86_400),
        sid: None,
    };
    println!("{}", mint_session_token(&state.config.secret_key, &claims)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback(args: &[&str]) -> Result<bool, clap::Error> {
        let mut argv = vec!["mailward"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).map(|cli| cli.webhook_allow_loopback)
    }

    #[test]
    fn boolean_settings_read_true_false_one_zero_and_a_bare_flag() {
        // The environment variable goes through the same parser as the flag's value.
        assert!(!loopback(&[]).unwrap());
        assert!(loopback(&["--webhook-allow-loopback"]).unwrap());
        for yes in ["1", "true", "yes", "on"] {
            assert!(
                loopback(&[&format!("--webhook-allow-loopback={yes}")]).unwrap(),
                "{yes}"
            );
        }
        // A bare flag before a subcommand does not swallow it.
        assert!(loopback(&["--webhook-allow-loopback", "sweep"]).unwrap());
        for no in ["0", "false", "no", "off"] {
            assert!(
                !loopback(&[&format!("--webhook-allow-loopback={no}")]).unwrap(),
                "{no}"
            );
        }
        assert!(loopback(&["--webhook-allow-loopback=maybe"]).is_err());
    }

    #[test]
    fn registrar_lookups_start_at_iana_unless_pointed_elsewhere_or_off() {
        let rdap = |args: &[&str]| {
            let mut argv = vec!["mailward"];
            argv.extend_from_slice(args);
            let cli = Cli::try_parse_from(argv).unwrap();
            (
                mailward_services::config::parse_rdap_bootstrap_url(&cli.rdap_bootstrap_url),
                cli.rdap_allow_loopback,
            )
        };
        assert_eq!(
            rdap(&[]),
            (
                Some("https://data.iana.org/rdap/dns.json".to_owned()),
                false
            )
        );
        assert_eq!(rdap(&["--rdap-bootstrap-url", "off"]), (None, false));
        assert_eq!(
            rdap(&[
                "--rdap-bootstrap-url",
                "http://127.0.0.1:8081/dns.json",
                "--rdap-allow-loopback"
            ]),
            (Some("http://127.0.0.1:8081/dns.json".to_owned()), true)
        );
    }
}
