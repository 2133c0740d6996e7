//! Settings shared by every entry point (Lambda functions, the local stack, the CLI): one
//! [`Config`], filled from flags or the environment, read by the services and the HTTP layer.

use std::collections::HashMap;

/// The time a webhook receiver has to answer (SPEC §6.4): the default of the outbound client.
pub const RECEIVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A rate-limit scope (SPEC §7.6, §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Every request, keyed by API key, session subject or client IP.
    Global,
    /// Endpoints that resolve DNS during the request, per client.
    Dns,
    /// Every API-key request, per key.
    ApiKey,
    /// DNS endpoints called with an API key, per key (stricter).
    ApiKeyDns,
    /// Headless signup, per client IP.
    Signup,
    /// Every sign-in step (codes sent and tried, the authorization pages), per client address
    /// (IPv6 per /64).
    Signin,
    /// Adding members and inviting people, per caller: addresses cannot be tried in bulk.
    Invite,
    /// MCP calls with an OAuth access token, per subject.
    McpOauth,
    /// DNS tools of the MCP endpoints, per person (per client address on the public endpoint),
    /// counted besides `dns`.
    McpDns,
    /// TLS reports uploaded over HTTPS (`POST /tlsrpt/{token}`), per client address and per
    /// domain.
    ReportUpload,
}

impl Scope {
    /// Every scope, for configuration listings.
    pub const ALL: [Scope; 10] = [
        Scope::Global,
        Scope::Dns,
        Scope::ApiKey,
        Scope::ApiKeyDns,
        Scope::Signup,
        Scope::Signin,
        Scope::Invite,
        Scope::McpOauth,
        Scope::McpDns,
        Scope::ReportUpload,
    ];

    /// The wire name used in 429 bodies and settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Dns => "dns",
            Scope::ApiKey => "api_key",
            Scope::ApiKeyDns => "api_key_dns",
            Scope::Signup => "signup",
            Scope::Signin => "signin",
            Scope::Invite => "invite",
            Scope::McpOauth => "mcp_oauth",
            Scope::McpDns => "mcp_dns",
            Scope::ReportUpload => "report_upload",
        }
    }

    /// The environment variable that overrides this scope's limit.
    pub fn env_var(self) -> String {
        format!("MAILWARD_RATE_{}", self.as_str().to_ascii_uppercase())
    }

    fn default_limit(self) -> RateLimit {
        match self {
            Scope::Global => RateLimit {
                limit: 1200,
                window_secs: 60,
            },
            Scope::Dns => RateLimit {
                limit: 120,
                window_secs: 60,
            },
            Scope::ApiKey => RateLimit {
                limit: 600,
                window_secs: 60,
            },
            Scope::ApiKeyDns => RateLimit {
                limit: 60,
                window_secs: 60,
            },
            Scope::Signup => RateLimit {
                limit: 10,
                window_secs: 3600,
            },
            Scope::Signin => RateLimit {
                limit: 30,
                window_secs: 600,
            },
            Scope::Invite => RateLimit {
                limit: 30,
                window_secs: 3600,
            },
            Scope::McpOauth => RateLimit {
                limit: 600,
                window_secs: 60,
            },
            // Sized like `dns` (SPEC §4.10), counted apart from it.
            Scope::McpDns => RateLimit {
                limit: 120,
                window_secs: 60,
            },
            // A receiver sends a domain a report or two a day; a burst of retries fits.
            Scope::ReportUpload => RateLimit {
                limit: 30,
                window_secs: 60,
            },
        }
    }
}

/// One bucket's size: `limit` requests per fixed window of `window_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per window.
    pub limit: u32,
    /// Window length in seconds.
    pub window_secs: u32,
}

impl std::str::FromStr for RateLimit {
    type Err = String;

    /// Parses `<limit>/<window seconds>`, e.g. `600/60`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (limit, window) = s
            .split_once('/')
            .ok_or_else(|| format!("expected <limit>/<window seconds>, got {s:?}"))?;
        let limit: u32 = limit
            .trim()
            .parse()
            .map_err(|_| format!("bad limit in {s:?}"))?;
        let window_secs: u32 = window
            .trim()
            .trim_end_matches('s')
            .parse()
            .map_err(|_| format!("bad window in {s:?}"))?;
        if limit == 0 || window_secs == 0 {
            return Err(format!("limit and window must be positive in {s:?}"));
        }
        Ok(Self { limit, window_secs })
    }
}

/// Everything the HTTP layer needs to know about its deployment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Public base URL (used in links of error bodies and emails).
    pub base_url: String,
    /// The authorization server's issuer URL (`{auth_url}`); the base URL when unset.
    pub auth_url: Option<String>,
    /// The one public OAuth client every MCP connector uses (SPEC §5 rule 7).
    pub oauth_client_id: String,
    /// The HTTPS callbacks of hosted connectors the authorization server redirects to, matched
    /// exactly (`MAILWARD_OAUTH_REDIRECT_URIS`, comma-separated; default
    /// [`DEFAULT_OAUTH_REDIRECT_URIS`]). Loopback callbacks are always allowed.
    pub oauth_redirect_uris: Vec<String>,
    /// Secret key material: signs dashboard JWTs and keys the signup-code hashes.
    pub secret_key: Vec<u8>,
    /// Rate limits per scope.
    pub rate_limits: HashMap<Scope, RateLimit>,
    /// Signup codes one address may request per hour (SPEC §8.2: "a small number").
    pub signup_codes_per_address_per_hour: u32,
    /// Trust `X-Forwarded-For` (the last hop) for the client IP: true behind API Gateway.
    pub trust_proxy: bool,
    /// Where new tickets and customers' replies are mailed (`MAILWARD_SUPPORT_EMAIL`,
    /// `--support-email`); none: they are not mailed.
    pub support_email: Option<String>,
    /// The addresses of Mailward staff (`MAILWARD_STAFF_EMAILS`, `--staff-emails`): accounts
    /// that may sign in to the staff surface (`/staff/...`) with their authenticator app.
    pub staff_emails: Vec<String>,
    /// The bearer token `GET /metrics` asks for (`MAILWARD_METRICS_TOKEN`, `--metrics-token`);
    /// without one, only loopback clients may read it.
    pub metrics_token: Option<String>,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Rules for requests to customer-supplied URLs (webhooks, MTA-STS policies).
    pub outbound: crate::outbound::client::OutboundPolicy,
    /// The zone Mailward's hosted DMARC records live in (CNAME targets), when configured.
    pub hosted_dmarc_suffix: Option<String>,
    /// The host of Mailward's aggregate-report addresses (`rua+<domain id>@<report_domain>`).
    pub report_domain: String,
    /// The zone where Mailward hosts delegated records (BIMI, MTA-STS, DMARC CNAME targets).
    pub hosted_zone: String,
    /// The AWS account Mailward runs in (`MAILWARD_AWS_ACCOUNT_ID`): DNS connections refuse a
    /// role in it, and its ARNs are kept out of error text. None locally.
    pub aws_account_id: Option<String>,
    /// Whether a role connection is refused when its role also admits an external id that is
    /// not the organization's (`MAILWARD_ROLE_TRUST_PROBE`, default true): such a trust policy
    /// would serve any organization that names the role. Off only against an emulator whose
    /// STS evaluates no trust policy (moto).
    pub role_trust_probe: bool,
    /// How long after an organization purge's first pass its final pass runs
    /// (`MAILWARD_PURGE_FINAL_PASS_DELAY`, default 900: longer than any queued job runs, the
    /// most SQS can delay a message). The smoke test shortens it on the local stack.
    pub purge_final_pass_delay_secs: u64,
    /// How often each domain is re-evaluated by the sweep.
    pub sweep_interval_secs: u64,
    /// How often the sweep probes a domain's whole DKIM selector catalogue; in between it
    /// re-checks only the selectors found last time (one or two queries each instead of ~75).
    pub dkim_full_probe_interval_secs: u64,
    /// DNS queries the sweep may hold in flight, all of its domains together: a share of the
    /// resolver's bound, so API audits and tools always find free slots while a sweep runs.
    pub sweep_dns_in_flight: usize,
    /// Public resolvers the sweep compares with the authoritative answers (`name=ip[:port]`).
    pub public_resolvers: Vec<(String, std::net::SocketAddr)>,
    /// Port to ask authoritative nameservers on (53; test setups point it at a fixture).
    pub nameserver_port: u16,
    /// Per-address nameserver ports (test setups with several fixture servers).
    pub nameserver_ports: Vec<(std::net::IpAddr, u16)>,
    /// How long a domain may stay `pending` (a record published but monitoring not yet
    /// complete) before the sweep marks it `failed`.
    pub pending_grace_secs: u64,
    /// How long a task must hold a state before its event fires (SPEC §6.5: four hours).
    pub task_event_delay_secs: u64,
    /// Probe MX hosts' TLS certificates (STARTTLS) once a day per domain: only where outbound
    /// port 25 is open (not on AWS Lambda).
    pub mx_tls_probe: bool,
    /// The SMTP port the probe connects to (25; tests point it at a fixture).
    pub mx_tls_port: u16,
    /// Evaluate a newly added domain at once through a queued job, instead of waiting for the
    /// next sweep period (on in every deployment; tests that script the sweep turn it off).
    pub evaluate_new_domains: bool,
    /// The RDAP bootstrap registry for DNS (RFC 9224) the registrar lookups start from
    /// (`MAILWARD_RDAP_BOOTSTRAP_URL`, default [`DEFAULT_RDAP_BOOTSTRAP_URL`]); `None` turns
    /// registrar lookups off.
    pub rdap_bootstrap_url: Option<String>,
    /// Let RDAP lookups reach loopback addresses over plain HTTP (local tests only: a fixture
    /// server); elsewhere they are HTTPS to public addresses alone.
    pub rdap_allow_loopback: bool,
    /// The Microsoft Graph API that `microsoft_graph` mailbox connections read
    /// (`MAILWARD_GRAPH_URL`, default `https://graph.microsoft.com/v1.0`; a national cloud's,
    /// or a test's stand-in).
    pub graph_url: String,
    /// PagerDuty's Events API v2 endpoint alert rules' `pagerduty` destinations post to
    /// (`MAILWARD_PAGERDUTY_URL`, default `https://events.pagerduty.com/v2/enqueue`; the EU
    /// service region's, or a test's receiver).
    pub pagerduty_url: String,
    /// The payment provider's settings (Stripe's keys and prices).
    pub billing: BillingConfig,
}

/// Stripe's settings. The secret key and the webhook secret are never printed (`Debug`
/// redacts them) nor logged.
#[derive(Clone, Default)]
pub struct BillingConfig {
    /// Stripe's secret key (`sk_…`, `rk_…`): with it, billing runs on Stripe; without it, on
    /// the local test-mode pages (the local stack) or not at all (AWS: 503).
    pub stripe_secret_key: Option<String>,
    /// The webhook endpoint's signing secret (`whsec_…`), which the local adapter signs with
    /// too. Unset: derived from the service's secret key (local stack only).
    pub stripe_webhook_secret: Option<String>,
    /// Stripe's API origin (`https://api.stripe.com`; a stand-in's in tests).
    pub stripe_api_base: String,
    /// Stripe price id per `(plan, line-item code)`: `it_teams:DOMAIN-ACTIVE-1TO10=price_…`.
    pub stripe_prices: Vec<(mailward_domain::model::PricingType, String, String)>,
}

impl std::fmt::Debug for BillingConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BillingConfig")
            .field(
                "stripe_secret_key",
                &self.stripe_secret_key.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "stripe_webhook_secret",
                &self.stripe_webhook_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("stripe_api_base", &self.stripe_api_base)
            .field("stripe_prices", &self.stripe_prices)
            .finish()
    }
}

/// Stripe's API origin.
pub const DEFAULT_STRIPE_API_BASE: &str = "https://api.stripe.com";

/// Parses `MAILWARD_STRIPE_PRICES`: comma-separated `plan:CODE=price_id` (plan `it_teams` or
/// `msp`; CODE a usage line-item code).
pub fn parse_stripe_prices(
    value: &str,
) -> Result<Vec<(mailward_domain::model::PricingType, String, String)>, String> {
    use mailward_domain::model::PricingType;
    let mut out = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let bad = || format!("MAILWARD_STRIPE_PRICES: {entry:?} is not plan:CODE=price_id");
        let (key, price) = entry.split_once('=').ok_or_else(bad)?;
        let (plan, code) = key.split_once(':').ok_or_else(bad)?;
        let plan = match plan.trim() {
            "it_teams" => PricingType::ItTeams,
            "msp" => PricingType::Msp,
            _ => return Err(bad()),
        };
        let (code, price) = (code.trim(), price.trim());
        if code.is_empty() || price.is_empty() {
            return Err(bad());
        }
        out.push((plan, code.to_owned(), price.to_owned()));
    }
    Ok(out)
}

/// IANA's bootstrap registry for DNS (RFC 9224).
pub const DEFAULT_RDAP_BOOTSTRAP_URL: &str = "https://data.iana.org/rdap/dns.json";

/// Reads the bootstrap URL setting: empty, `off` or `none` turns registrar lookups off.
pub fn parse_rdap_bootstrap_url(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty() && !matches!(value.to_ascii_lowercase().as_str(), "off" | "none"))
        .then(|| value.to_owned())
}

/// Default of [`Config::pending_grace_secs`]: 72 hours.
pub const DEFAULT_PENDING_GRACE_SECS: u64 = 72 * 3600;

/// Reads a boolean setting: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` (any case).
pub fn parse_bool(name: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(format!(
            "{name}: expected true/false/1/0/yes/no/on/off, got {value:?}"
        )),
    }
}

/// Default delay of an organization purge's final pass: the longest a queued job runs (the
/// worker's 300-second timeout) three times over, and the most SQS can delay a message.
pub const DEFAULT_PURGE_FINAL_PASS_DELAY_SECS: u64 = 900;

/// Reads a duration setting in seconds (`300` or `300s`).
pub fn parse_secs(name: &str, value: &str) -> Result<u64, String> {
    value
        .trim()
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("{name}: bad number of seconds {value:?}"))
}

/// The callbacks the hosted assistants publish for custom connectors: Claude (claude.ai and
/// claude.com) and ChatGPT.
pub const DEFAULT_OAUTH_REDIRECT_URIS: [&str; 3] = [
    "https://claude.ai/api/mcp/auth_callback",
    "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
];

/// Parses a comma-separated list of exact HTTPS callback URLs (empty: none). Each must be an
/// absolute `https` URL with a host, without user information or a fragment.
pub fn parse_redirect_uris(value: &str) -> Result<Vec<String>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let url = url::Url::parse(v)
                .map_err(|e| format!("MAILWARD_OAUTH_REDIRECT_URIS: {v:?} is not a URL: {e}"))?;
            if url.scheme() != "https"
                || url.host_str().is_none_or(str::is_empty)
                || !url.username().is_empty()
                || url.password().is_some()
                || url.fragment().is_some()
            {
                return Err(format!(
                    "MAILWARD_OAUTH_REDIRECT_URIS: {v:?} must be an https URL with a host, no user information and no fragment"
                ));
            }
            Ok(v.to_owned())
        })
        .collect()
}

/// The connector client id when none is configured.
pub const DEFAULT_OAUTH_CLIENT_ID: &str = "mailward-mcp";

/// A comma-separated list of staff addresses, lower-cased, blanks dropped.
pub fn parse_staff_emails(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| e.contains('@'))
        .collect()
}

impl Config {
    /// Whether `email` belongs to Mailward staff.
    pub fn is_staff(&self, email: &str) -> bool {
        let email = email.trim().to_ascii_lowercase();
        self.staff_emails.contains(&email)
    }
}

/// Applies `MAILWARD_STRIPE_*` to the billing settings.
fn stripe_env_overrides(billing: &mut BillingConfig) -> Result<(), String> {
    if let Ok(value) = std::env::var("MAILWARD_STRIPE_SECRET_KEY")
        && !value.trim().is_empty()
    {
        billing.stripe_secret_key = Some(value.trim().to_owned());
    }
    if let Ok(value) = std::env::var("MAILWARD_STRIPE_WEBHOOK_SECRET")
        && !value.trim().is_empty()
    {
        billing.stripe_webhook_secret = Some(value.trim().to_owned());
    }
    if let Ok(value) = std::env::var("MAILWARD_STRIPE_API_BASE")
        && !value.trim().is_empty()
    {
        billing.stripe_api_base = value.trim().trim_end_matches('/').to_owned();
    }
    if let Ok(value) = std::env::var("MAILWARD_STRIPE_PRICES") {
        billing.stripe_prices = parse_stripe_prices(&value)?;
    }
    Ok(())
}

impl Config {
    /// Settings for tests and the local stack: the given secret, default limits.
    pub fn new(base_url: impl Into<String>, secret_key: Vec<u8>) -> Self {
        Self {
            base_url: base_url.into(),
            auth_url: None,
            oauth_client_id: DEFAULT_OAUTH_CLIENT_ID.into(),
            oauth_redirect_uris: DEFAULT_OAUTH_REDIRECT_URIS
                .iter()
                .map(|u| (*u).to_owned())
                .collect(),
            secret_key,
            rate_limits: Scope::ALL.iter().map(|s| (*s, s.default_limit())).collect(),
            signup_codes_per_address_per_hour: 5,
            trust_proxy: false,
            metrics_token: None,
            staff_emails: Vec::new(),
            support_email: None,
            max_body_bytes: 1024 * 1024,
            outbound: crate::outbound::client::OutboundPolicy {
                allow_loopback: false,
                extra_ca_pem: None,
                timeout: RECEIVER_TIMEOUT,
            },
            hosted_dmarc_suffix: None,
            report_domain: "reports.mailward.local".into(),
            hosted_zone: "hosted.mailward.local".into(),
            aws_account_id: None,
            role_trust_probe: true,
            purge_final_pass_delay_secs: DEFAULT_PURGE_FINAL_PASS_DELAY_SECS,
            sweep_interval_secs: 300,
            dkim_full_probe_interval_secs: 86_400,
            sweep_dns_in_flight: mailward_dns::ResolverSettings::default().max_concurrency / 2,
            public_resolvers: Vec::new(),
            nameserver_port: 53,
            nameserver_ports: Vec::new(),
            pending_grace_secs: DEFAULT_PENDING_GRACE_SECS,
            task_event_delay_secs: mailward_tasks::stabilise::DEFAULT_WINDOW_SECS,
            mx_tls_probe: false,
            mx_tls_port: 25,
            evaluate_new_domains: true,
            rdap_bootstrap_url: Some(DEFAULT_RDAP_BOOTSTRAP_URL.to_owned()),
            rdap_allow_loopback: false,
            graph_url: "https://graph.microsoft.com/v1.0".into(),
            pagerduty_url: "https://events.pagerduty.com/v2/enqueue".into(),
            billing: BillingConfig {
                stripe_api_base: DEFAULT_STRIPE_API_BASE.into(),
                ..Default::default()
            },
        }
    }

    /// `MAILWARD_PURGE_FINAL_PASS_DELAY`, at most 900 seconds (SQS's longest delay).
    fn purge_override(&mut self) -> Result<(), String> {
        if let Ok(value) = std::env::var("MAILWARD_PURGE_FINAL_PASS_DELAY") {
            self.purge_final_pass_delay_secs =
                parse_secs("MAILWARD_PURGE_FINAL_PASS_DELAY", &value)?.min(900);
        }
        Ok(())
    }

    /// Applies `MAILWARD_RATE_<SCOPE>`, `MAILWARD_SIGNUP_CODES_PER_HOUR`,
    /// `MAILWARD_TRUST_PROXY`, `MAILWARD_RDAP_BOOTSTRAP_URL` and the other settings the
    /// Lambda functions read from the environment.
    pub fn with_env_overrides(mut self) -> Result<Self, String> {
        for scope in Scope::ALL {
            if let Ok(value) = std::env::var(scope.env_var()) {
                self.rate_limits.insert(scope, value.parse()?);
            }
        }
        if let Ok(value) = std::env::var("MAILWARD_SIGNUP_CODES_PER_HOUR") {
            self.signup_codes_per_address_per_hour = value
                .parse()
                .map_err(|_| format!("MAILWARD_SIGNUP_CODES_PER_HOUR: bad number {value:?}"))?;
        }
        if let Ok(value) = std::env::var("MAILWARD_AWS_ACCOUNT_ID")
            && !value.trim().is_empty()
        {
            self.aws_account_id = Some(value.trim().to_owned());
        }
        if let Ok(value) = std::env::var("MAILWARD_ROLE_TRUST_PROBE") {
            self.role_trust_probe = !matches!(value.trim(), "false" | "0" | "off");
        }
        if let Ok(value) = std::env::var("MAILWARD_REPORT_DOMAIN") {
            self.report_domain = value;
        }
        if let Ok(value) = std::env::var("MAILWARD_HOSTED_ZONE") {
            self.hosted_zone = value;
        }
        if let Ok(value) = std::env::var("MAILWARD_DKIM_FULL_PROBE_INTERVAL") {
            self.dkim_full_probe_interval_secs =
                parse_secs("MAILWARD_DKIM_FULL_PROBE_INTERVAL", &value)?;
        }
        self.purge_override()?;
        if let Ok(value) = std::env::var("MAILWARD_SWEEP_INTERVAL") {
            self.sweep_interval_secs = parse_secs("MAILWARD_SWEEP_INTERVAL", &value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_PENDING_GRACE") {
            self.pending_grace_secs = parse_secs("MAILWARD_PENDING_GRACE", &value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_TASK_EVENT_DELAY") {
            self.task_event_delay_secs = parse_secs("MAILWARD_TASK_EVENT_DELAY", &value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_MX_TLS_PROBE") {
            self.mx_tls_probe = parse_bool("MAILWARD_MX_TLS_PROBE", &value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_PUBLIC_RESOLVERS") {
            self.public_resolvers = parse_public_resolvers(&value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_AUTH_URL") {
            self.auth_url = Some(value.trim_end_matches('/').to_owned()).filter(|v| !v.is_empty());
        }
        if let Ok(value) = std::env::var("MAILWARD_OAUTH_CLIENT_ID") {
            self.oauth_client_id = value;
        }
        if let Ok(value) = std::env::var("MAILWARD_OAUTH_REDIRECT_URIS") {
            self.oauth_redirect_uris = parse_redirect_uris(&value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_RDAP_BOOTSTRAP_URL") {
            self.rdap_bootstrap_url = parse_rdap_bootstrap_url(&value);
        }
        if let Some(url) = https_env("MAILWARD_GRAPH_URL")? {
            self.graph_url = url.trim_end_matches('/').to_owned();
        }
        if let Some(url) = https_env("MAILWARD_PAGERDUTY_URL")? {
            self.pagerduty_url = url;
        }
        stripe_env_overrides(&mut self.billing)?;
        if let Ok(value) = std::env::var("MAILWARD_TRUST_PROXY") {
            self.trust_proxy = parse_bool("MAILWARD_TRUST_PROXY", &value)?;
        }
        if let Ok(value) = std::env::var("MAILWARD_SUPPORT_EMAIL") {
            self.support_email = Some(value.trim().to_owned()).filter(|v| v.contains('@'));
        }
        if let Ok(value) = std::env::var("MAILWARD_STAFF_EMAILS") {
            self.staff_emails = parse_staff_emails(&value);
        }
        if let Ok(value) = std::env::var("MAILWARD_METRICS_TOKEN") {
            self.metrics_token = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        }
        Ok(self)
    }

    /// The limit of one scope.
    pub fn limit(&self, scope: Scope) -> RateLimit {
        self.rate_limits
            .get(&scope)
            .copied()
            .unwrap_or_else(|| scope.default_limit())
    }

    /// The monitoring sweep's rules under these settings.
    pub fn sweep_rules(&self) -> mailward_monitoring::SweepRules {
        mailward_monitoring::SweepRules {
            pending_grace: time::Duration::seconds(
                i64::try_from(self.pending_grace_secs).unwrap_or(i64::MAX / 2),
            ),
            ..mailward_monitoring::SweepRules::default()
        }
    }

    /// Where the service's own records live, for the Domain wire shape.
    pub fn zones(&self) -> mailward_api_types::domains::ServiceZones<'_> {
        mailward_api_types::domains::ServiceZones {
            report_domain: &self.report_domain,
            hosted_zone: &self.hosted_zone,
        }
    }
}

/// Parses `google=8.8.8.8,cloudflare=1.1.1.1:53` (port 53 when omitted).
pub fn parse_public_resolvers(list: &str) -> Result<Vec<(String, std::net::SocketAddr)>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|entry| {
            let (name, addr) = entry
                .split_once('=')
                .ok_or_else(|| format!("public resolver {entry:?}: expected name=ip[:port]"))?;
            let addr = addr
                .parse::<std::net::SocketAddr>()
                .or_else(|_| {
                    addr.parse::<std::net::IpAddr>()
                        .map(|ip| std::net::SocketAddr::new(ip, 53))
                })
                .map_err(|_| format!("public resolver {entry:?}: bad address"))?;
            Ok((name.trim().to_owned(), addr))
        })
        .collect()
}

/// An https URL from the environment variable `name`, if set.
fn https_env(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(value) if value.trim().starts_with("https://") => Ok(Some(value.trim().to_owned())),
        Ok(value) => Err(format!("{name} must be an https URL, not {value:?}")),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_exact_https_urls() {
        assert_eq!(
            parse_redirect_uris(" https://a.example/cb , ,https://b.example/x?y=1").unwrap(),
            vec!["https://a.example/cb", "https://b.example/x?y=1"]
        );
        assert_eq!(parse_redirect_uris("").unwrap(), Vec::<String>::new());
        for bad in [
            "http://a.example/cb",
            "https://user@a.example/cb",
            "https://a.example/cb#f",
            "not a url",
            "mailto:a@a.example",
        ] {
            assert!(parse_redirect_uris(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn booleans_read_every_usual_spelling() {
        for yes in ["1", "true", "TRUE", "yes", "on"] {
            assert_eq!(parse_bool("X", yes), Ok(true), "{yes}");
        }
        for no in ["0", "false", "no", "off", ""] {
            assert_eq!(parse_bool("X", no), Ok(false), "{no}");
        }
        assert!(parse_bool("X", "maybe").unwrap_err().contains("X"));
    }

    #[test]
    fn the_rdap_bootstrap_can_be_turned_off() {
        assert_eq!(
            parse_rdap_bootstrap_url(" https://rdap.example/dns.json "),
            Some("https://rdap.example/dns.json".to_owned())
        );
        for off in ["", " ", "off", "OFF", "none"] {
            assert_eq!(parse_rdap_bootstrap_url(off), None, "{off:?}");
        }
    }

    #[test]
    fn seconds_accept_a_trailing_s() {
        assert_eq!(parse_secs("X", "300"), Ok(300));
        assert_eq!(parse_secs("X", "300s"), Ok(300));
        assert!(parse_secs("X", "5m").is_err());
    }
}
