//! The MCP tools: each one's name, description (written for an agent: when to call it, what
//! comes back, what to do next), input and output schemas, which endpoints serve it, and its
//! call, which goes to the same service as the REST route. A tool whose service does not exist
//! yet is not listed.

use crate::schema::{
    self, Property, boolean, integer, object, one_of, paging, string, strings, uuid,
};
use mailward_api_types::activity::{ActivityList, ActivityParams};
use mailward_api_types::admin::{
    CreateGroupRequest, Group as GroupView, GroupList, ListGroupsParams, UpdateGroupRequest,
};
use mailward_api_types::common::PageParams;
use mailward_api_types::dns_connections::{
    DnsConnection, DnsConnectionCoverage, DnsConnectionList,
};
use mailward_api_types::domains::{
    CreateDomainRequest, Domain as DomainView, DomainList, ListDomainsParams, UpdateDomainRequest,
};
use mailward_api_types::mta_sts::{MtaStsRequest, MtaStsState};
use mailward_api_types::organizations::Organization;
use mailward_api_types::prospecting::{
    CreateProspectingReport, ProspectingReport, ProspectingReportList,
};
use mailward_api_types::records::{DnsRecordsResponse, HostedDmarcResponse, VerifyResponse};
use mailward_api_types::reports::{ReportSummary, SendersParams, SendersView, SummaryParams};
use mailward_api_types::tasks::{
    DomainPlan, ListTasksParams, PreviewRequest, PreviewResponse, Task as TaskView, TaskList,
    UpdateTaskRequest,
};
use mailward_api_types::tools::{AuditParams, IncludeValidation};
use mailward_api_types::webhooks::{
    CreateWebhookEndpointRequest, WebhookEndpointList, WebhookEndpointWithSecret, WebhookEventList,
};
use mailward_audit::AuditResult;
use mailward_http::AppState;
use mailward_services::caller::Caller;
use mailward_services::error::ServiceError;
use mailward_services::{
    activity, audit, dns_connections, domains, groups, organizations, prospecting, reports, tasks,
    tools,
};
use mailward_tasks::TaskStatus;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

/// Which MCP endpoint serves a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `{mcp_url}`: every tool, OAuth tokens only.
    Main,
    /// `{mcp_url}/directory`: the read-only monitoring and diagnosis tools.
    Directory,
    /// `{mcp_url}/public`: `audit_domain` and `validate_spf_include`, no credentials.
    Public,
}

/// A tool's definition.
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// For the agent.
    pub description: &'static str,
    /// Whether it changes anything (viewers cannot call it; absent from the directory).
    pub writes: bool,
    /// Served by the directory endpoint.
    pub directory: bool,
    /// Served by the public endpoint.
    pub public: bool,
    /// Its input schema.
    pub input: fn() -> Value,
    /// Its output schema.
    pub output: fn() -> Value,
}

impl ToolDef {
    /// Whether `endpoint` serves this tool.
    pub fn served_by(&self, endpoint: Endpoint) -> bool {
        match endpoint {
            Endpoint::Main => true,
            Endpoint::Directory => self.directory,
            Endpoint::Public => self.public,
        }
    }
}

/// A tool error: what the agent reads (`error.code`, `error.message`, `error.param`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(pub Value);

impl ToolError {
    /// An error with a code, a message and the argument to blame.
    pub fn new(code: &str, message: impl Into<String>, param: Option<&str>) -> Self {
        let mut error = json!({"code": code, "message": message.into()});
        if let Some(param) = param {
            error["param"] = Value::String(param.to_owned());
        }
        Self(error)
    }
}

impl From<ServiceError> for ToolError {
    fn from(e: ServiceError) -> Self {
        let mut error = json!({"code": e.code(), "message": e.message()});
        if let Some(param) = e.param_name() {
            error["param"] = Value::String(param.to_owned());
        }
        if let Some(details) = e.details_value() {
            error["details"] = details.clone();
        }
        if let Some(retry) = e.retry_after_secs() {
            error["retry_after_seconds"] = json!(retry);
        }
        Self(error)
    }
}

/// Who calls, on which endpoint.
pub struct Context {
    /// The service state.
    pub app: AppState,
    /// The caller (none on the public endpoint).
    pub caller: Option<Caller>,
}

impl Context {
    fn caller(&self) -> Result<&Caller, ToolError> {
        self.caller.as_ref().ok_or_else(|| {
            ToolError::new(
                "authentication_required",
                "this tool needs a signed-in caller",
                None,
            )
        })
    }
}

/// Parses a tool's arguments; a failure names the argument.
pub fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let named = ["missing field `", "unknown field `"]
            .iter()
            .find_map(|p| message.split(p).nth(1))
            .and_then(|rest| rest.split('`').next())
            .map(str::to_owned);
        let param = named.or((path != ".").then_some(path));
        ToolError::new(
            "invalid_arguments",
            format!("the arguments do not match the tool's input schema: {message}"),
            param.as_deref(),
        )
    })
}

fn output<T: Serialize>(value: T) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::new("internal_error", format!("could not encode: {e}"), None))
}

/// Resolves a domain argument (an id or a name) among the domains the caller sees.
async fn domain_id(ctx: &Context, raw: &str) -> Result<Uuid, ToolError> {
    if let Ok(id) = Uuid::parse_str(raw.trim()) {
        return Ok(id);
    }
    let name = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    domains::visible(&ctx.app, ctx.caller()?)
        .await?
        .into_iter()
        .find(|d| d.url == name)
        .map(|d| d.id)
        .ok_or_else(|| {
            ToolError::new(
                "resource_not_found",
                format!("no domain named {name:?} in this organization; list_domains shows them"),
                Some("domain"),
            )
        })
}

/// What `get_account` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountView {
    /// The signed-in person's account id.
    pub account_id: Uuid,
    /// Their role in the organization.
    pub role: String,
    /// The groups they are limited to (empty: every domain).
    pub groups: Vec<Uuid>,
    /// The organization the token is scoped to.
    pub organization: Organization,
}

/// An empty result of a deletion.
#[derive(Debug, Serialize, ToSchema)]
pub struct Deleted {
    /// Always true.
    pub deleted: bool,
    /// What was deleted.
    pub id: Uuid,
}

fn empty() -> Value {
    object(vec![])
}

fn domain_only() -> Value {
    object(vec![("domain", schema::domain(), true)])
}

fn task_only() -> Value {
    object(vec![(
        "task_id",
        uuid("The task id (from list_tasks)"),
        true,
    )])
}

fn deleted() -> Value {
    schema::of::<Deleted>()
}

fn list_domains_input() -> Value {
    let mut props: Vec<Property> = vec![
        (
            "monitoring_status",
            one_of(
                "Only domains in this monitoring state",
                &["none", "pending", "setup", "drifted", "failed"],
            ),
            false,
        ),
        (
            "dmarc_policy",
            one_of(
                "Only domains publishing this DMARC policy",
                &["none", "quarantine", "reject"],
            ),
            false,
        ),
        (
            "is_parked",
            boolean("Only parked (true) or unparked (false) domains"),
            false,
        ),
        ("group_id", uuid("Only domains of this group"), false),
        (
            "sort",
            string("Sort field, e.g. url, created_at, score, last_14_days_volume"),
            false,
        ),
        ("order", one_of("Sort order", &["asc", "desc"]), false),
    ];
    props.extend(paging());
    object(props)
}

fn get_domain_input() -> Value {
    object(vec![
        ("domain", schema::domain(), true),
        (
            "expand",
            strings("Related objects to include, e.g. [\"group\"]"),
            false,
        ),
    ])
}

fn create_domain_input() -> Value {
    object(vec![
        (
            "url",
            string("The domain name to add, e.g. example.com"),
            true,
        ),
        ("group_id", uuid("Put it in this group"), false),
    ])
}

fn update_domain_input() -> Value {
    object(vec![
        ("domain", schema::domain(), true),
        ("changes", schema::of::<UpdateDomainRequest>(), true),
    ])
}

fn connection_only() -> Value {
    object(vec![(
        "connection_id",
        uuid("The DNS connection id (from list_dns_connections)"),
        true,
    )])
}

fn enable_mta_sts_input() -> Value {
    object(vec![
        ("domain", schema::domain(), true),
        (
            "mode",
            one_of(
                "testing (default: senders report failures but deliver), enforce, or none",
                &["testing", "enforce", "none"],
            ),
            false,
        ),
        (
            "max_age",
            json!({"type": "integer", "minimum": 86400, "maximum": 31557600, "description": "Seconds senders cache the policy (default 86400)"}),
            false,
        ),
    ])
}

fn verify_input() -> Value {
    object(vec![
        ("domain", schema::domain(), true),
        (
            "only",
            one_of("Verify one record kind only", &["spf", "dkim"]),
            false,
        ),
    ])
}

fn preview_input() -> Value {
    object(vec![
        ("domain", schema::domain(), true),
        ("changes", schema::of::<PreviewRequest>(), true),
    ])
}

fn list_tasks_input() -> Value {
    let mut props: Vec<Property> = vec![
        (
            "statuses",
            string(
                "Comma-separated statuses: open, snoozed, pending, done, dismissed, canceled (default: open)",
            ),
            false,
        ),
        ("domain", schema::domain(), false),
        (
            "sort",
            string("Sort field, e.g. priority, created_at"),
            false,
        ),
        ("order", one_of("Sort order", &["asc", "desc"]), false),
    ];
    props.extend(paging());
    object(props)
}

fn period_input(with_limit: bool) -> Value {
    let mut props: Vec<Property> = vec![
        ("domain", schema::domain(), true),
        (
            "period",
            one_of(
                "The window (default last_14_days)",
                &["last_7_days", "last_14_days", "last_30_days"],
            ),
            false,
        ),
    ];
    if with_limit {
        props.push(("limit", integer("At most this many senders", 1, 20), false));
    }
    object(props)
}

fn list_groups_input() -> Value {
    let mut props: Vec<Property> = vec![
        ("sort", string("Sort field: name or created_at"), false),
        ("order", one_of("Sort order", &["asc", "desc"]), false),
    ];
    props.extend(paging());
    object(props)
}

fn update_group_input() -> Value {
    object(vec![
        ("group_id", uuid("The group id"), true),
        ("changes", schema::of::<UpdateGroupRequest>(), true),
    ])
}

fn group_only() -> Value {
    object(vec![("group_id", uuid("The group id"), true)])
}

fn report_only() -> Value {
    object(vec![("report_id", uuid("The prospecting report id"), true)])
}

fn endpoint_only() -> Value {
    object(vec![("endpoint_id", uuid("The webhook endpoint id"), true)])
}

fn activity_input() -> Value {
    let mut props: Vec<Property> = vec![
        (
            "actor_type",
            one_of("Who acted", &["USER", "API_KEY", "SERVICE_STAFF", "SYSTEM"]),
            false,
        ),
        (
            "action",
            string("One action (see list_activity_log_actions)"),
            false,
        ),
        ("target_id", uuid("Entries about this object"), false),
        (
            "target_type",
            string("Entries about this kind of object, e.g. domain"),
            false,
        ),
        ("since", string("From this time (RFC 3339)"), false),
        ("until", string("Up to this time (RFC 3339)"), false),
    ];
    props.extend(paging());
    object(props)
}

fn audit_input() -> Value {
    object(vec![
        (
            "domain",
            string("Any domain name, e.g. example.com (it need not be in the account)"),
            true,
        ),
        (
            "refresh",
            boolean("Bypass the ten-minute cache and ask DNS afresh"),
            false,
        ),
    ])
}

fn include_input() -> Value {
    object(vec![(
        "domain",
        string("The SPF include domain to check, e.g. _spf.example.com"),
        true,
    )])
}

/// Every tool, in the order `tools/list` shows them.
pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "get_account",
        description: "Who you are acting as: the signed-in person's role and group limits, and the organization the token is scoped to (name, plan, settings). Call it first to learn what you may do: a viewer can only read.",
        writes: false,
        directory: true,
        public: false,
        input: empty,
        output: schema::of::<AccountView>,
    },
    ToolDef {
        name: "audit_domain",
        description: "Audits any domain's email authentication from live DNS (DMARC, SPF, DKIM, BIMI, MTA-STS, TLS-RPT, MX): a score, a grade and findings with what to fix. The domain need not be in the account. Results are cached ten minutes unless refresh is true. Next: create_domain to monitor it.",
        writes: false,
        directory: true,
        public: true,
        input: audit_input,
        output: schema::of::<AuditResult>,
    },
    ToolDef {
        name: "validate_spf_include",
        description: "Checks that an SPF include domain (a provider's, e.g. _spf.google.com) exists, parses, and how many DNS lookups it costs against SPF's limit of ten. Use it before adding an include to a domain's SPF record.",
        writes: false,
        directory: true,
        public: true,
        input: include_input,
        output: schema::of::<IncludeValidation>,
    },
    ToolDef {
        name: "list_domains",
        description: "Lists the organization's domains with their monitoring status, DMARC policy, score and 14-day report figures, filtered and sorted. Next: get_domain, get_dns_records or get_domain_plan for one of them.",
        writes: false,
        directory: true,
        public: false,
        input: list_domains_input,
        output: schema::of::<DomainList>,
    },
    ToolDef {
        name: "get_domain",
        description: "One domain by id or name: monitoring status and failure reason, DMARC/SPF options, score, report figures. Next: get_dns_records to see what to publish, or get_domain_plan for the road to p=reject.",
        writes: false,
        directory: true,
        public: false,
        input: get_domain_input,
        output: schema::of::<DomainView>,
    },
    ToolDef {
        name: "create_domain",
        description: "Adds a domain to monitoring. Mailward then expects the DMARC record that sends its reports to Mailward; get_dns_records says exactly what to publish, verify_domain checks it. Fails with domain_exists when it is already in the organization.",
        writes: true,
        directory: false,
        public: false,
        input: create_domain_input,
        output: schema::of::<DomainView>,
    },
    ToolDef {
        name: "update_domain",
        description: "Changes a domain's settings: its group, parking, DMARC options (policy, pct, rua), SPF options, target SPF, BIMI options. Send only what changes in `changes`. Changing DMARC options changes the records get_dns_records asks for.",
        writes: true,
        directory: false,
        public: false,
        input: update_domain_input,
        output: schema::of::<DomainView>,
    },
    ToolDef {
        name: "delete_domain",
        description: "Removes a domain from monitoring, with its tasks and report data. It cannot be undone; confirm with the person first.",
        writes: true,
        directory: false,
        public: false,
        input: domain_only,
        output: deleted,
    },
    ToolDef {
        name: "verify_domain",
        description: "Checks in live DNS whether the records get_dns_records asked for are published, record by record, and stores what it confirmed. Call it after the person published records. `only` limits it to spf or dkim.",
        writes: true,
        directory: false,
        public: false,
        input: verify_input,
        output: schema::of::<VerifyResponse>,
    },
    ToolDef {
        name: "get_dns_records",
        description: "The exact DNS records to publish for a domain (DMARC, SPF, DKIM, MTA-STS, TLS-RPT, BIMI), each with its host, type, value and whether live DNS already matches. Give these to the person or their DNS provider, then call verify_domain.",
        writes: false,
        directory: true,
        public: false,
        input: domain_only,
        output: schema::of::<DnsRecordsResponse>,
    },
    ToolDef {
        name: "get_domain_plan",
        description: "The domain's path to DMARC enforcement: the current stage, what blocks the next one (senders failing, missing records), and the open tasks in order. Use it to tell the person what to do next.",
        writes: false,
        directory: true,
        public: false,
        input: domain_only,
        output: schema::of::<DomainPlan>,
    },
    ToolDef {
        name: "get_spf",
        description: "SPF diagnostics of a domain from live DNS: the record, its lookup count against the limit of ten, includes, errors and warnings.",
        writes: false,
        directory: true,
        public: false,
        input: domain_only,
        output: schema::of::<mailward_api_types::records::SpfDiagnostics>,
    },
    ToolDef {
        name: "preview_dns_change",
        description: "Previews DNS changes before anyone publishes them: give the records you propose in `changes` (dmarc, spf, dkim, mta_sts, tls_rpt, bimi); the answer says what each would change, what would break (senders that would fail, lookup limits) and the score after. Nothing is changed.",
        writes: false,
        directory: true,
        public: false,
        input: preview_input,
        output: schema::of::<PreviewResponse>,
    },
    ToolDef {
        name: "list_tasks",
        description: "The remediation tasks of the organization (or one domain), most urgent first by default: what to fix, why, and how. Next: get_task for details, complete_task once fixed, dismiss_task when it does not apply.",
        writes: false,
        directory: true,
        public: false,
        input: list_tasks_input,
        output: schema::of::<TaskList>,
    },
    ToolDef {
        name: "get_task",
        description: "One task: its description, priority, the domain, the evidence, and the steps to resolve it.",
        writes: false,
        directory: true,
        public: false,
        input: task_only,
        output: schema::of::<TaskView>,
    },
    ToolDef {
        name: "complete_task",
        description: "Marks a task done after the person fixed what it asked. Mailward checks again at its next sweep and reopens it if the problem is still there.",
        writes: true,
        directory: false,
        public: false,
        input: task_only,
        output: schema::of::<TaskView>,
    },
    ToolDef {
        name: "dismiss_task",
        description: "Dismisses a task that does not apply (the person decided so). It stays dismissed unless its cause changes.",
        writes: true,
        directory: false,
        public: false,
        input: task_only,
        output: schema::of::<TaskView>,
    },
    ToolDef {
        name: "get_dmarc_summary",
        description: "The domain's DMARC aggregate-report summary for a window: messages, DMARC pass rate, SPF and DKIM alignment, quarantined and rejected volume, per day. Use it to judge whether the policy can be tightened.",
        writes: false,
        directory: true,
        public: false,
        input: || period_input(false),
        output: schema::of::<ReportSummary>,
    },
    ToolDef {
        name: "list_dmarc_senders",
        description: "Who sends mail as the domain, from its DMARC reports: each sender (service or IP range) with volume and SPF/DKIM/DMARC pass rates. Senders failing authentication must be fixed before p=reject.",
        writes: false,
        directory: true,
        public: false,
        input: || period_input(true),
        output: schema::of::<SendersView>,
    },
    ToolDef {
        name: "list_groups",
        description: "The organization's groups (for managed-service providers: usually one per customer) with their domain counts.",
        writes: false,
        directory: true,
        public: false,
        input: list_groups_input,
        output: schema::of::<GroupList>,
    },
    ToolDef {
        name: "create_group",
        description: "Creates a group to organize domains (e.g. one per customer). Administrators and editors not limited to groups.",
        writes: true,
        directory: false,
        public: false,
        input: || schema::of::<CreateGroupRequest>(),
        output: schema::of::<GroupView>,
    },
    ToolDef {
        name: "update_group",
        description: "Renames a group or changes its external ids. Send only what changes in `changes`.",
        writes: true,
        directory: false,
        public: false,
        input: update_group_input,
        output: schema::of::<GroupView>,
    },
    ToolDef {
        name: "delete_group",
        description: "Deletes a group; its domains stay, ungrouped. Refused while a member is limited to this group alone.",
        writes: true,
        directory: false,
        public: false,
        input: group_only,
        output: deleted,
    },
    ToolDef {
        name: "list_webhook_events",
        description: "The webhook event types Mailward sends, with what each means. Use it to choose enabled_events for create_webhook_endpoint.",
        writes: false,
        directory: false,
        public: false,
        input: empty,
        output: schema::of::<WebhookEventList>,
    },
    ToolDef {
        name: "list_webhook_endpoints",
        description: "The organization's webhook endpoints and their state (administrators).",
        writes: false,
        directory: false,
        public: false,
        input: || object(paging()),
        output: schema::of::<WebhookEndpointList>,
    },
    ToolDef {
        name: "create_webhook_endpoint",
        description: "Registers an HTTPS URL to receive signed webhook events (administrators). The answer carries the signing secret once: give it to the person to store.",
        writes: true,
        directory: false,
        public: false,
        input: || schema::of::<CreateWebhookEndpointRequest>(),
        output: schema::of::<WebhookEndpointWithSecret>,
    },
    ToolDef {
        name: "delete_webhook_endpoint",
        description: "Deletes a webhook endpoint (administrators); deliveries to it stop.",
        writes: true,
        directory: false,
        public: false,
        input: endpoint_only,
        output: deleted,
    },
    ToolDef {
        name: "enable_hosted_dmarc",
        description: "Turns on hosted DMARC for a domain (by id or name): Mailward serves the DMARC record built from the domain's dmarc_options behind a CNAME. The answer's `record` is the CNAME the person must publish at _dmarc.<domain>, and any DMARC TXT there must be deleted (`instructions`). `hosted_dmarc_active` is true once live DNS shows the CNAME; until then managed_dns_status.dmarc is syncing. Safe to call again.",
        writes: true,
        directory: false,
        public: false,
        input: domain_only,
        output: schema::of::<HostedDmarcResponse>,
    },
    ToolDef {
        name: "get_mta_sts",
        description: "A domain's hosted MTA-STS (by id or name): whether Mailward hosts its policy, the policy (mode, max_age, the MX hosts, its id and text), the URL senders fetch, the two CNAMEs the person must publish (`records`) and whether live DNS shows them (`status`).",
        writes: false,
        directory: false,
        public: false,
        input: domain_only,
        output: schema::of::<MtaStsState>,
    },
    ToolDef {
        name: "enable_mta_sts",
        description: "Turns on hosted MTA-STS for a domain (by id or name), or changes its policy when already on: Mailward builds the policy from the domain's live MX hosts and serves it with its id; the person publishes the two CNAMEs in `records` (`_mta-sts` and `mta-sts`). Start with mode testing (the default) and a TLS-RPT record, move to enforce once reports show no failures. Fails with mta_sts_no_mx when the domain has no MX.",
        writes: true,
        directory: false,
        public: false,
        input: enable_mta_sts_input,
        output: schema::of::<MtaStsState>,
    },
    ToolDef {
        name: "disable_mta_sts",
        description: "Turns hosted MTA-STS off for a domain (by id or name). The policy is served as mode none until its old max_age has passed (RFC 8461's way to withdraw a policy), then removed; the CNAMEs can be deleted after `retiring_until`. Safe to call again.",
        writes: true,
        directory: false,
        public: false,
        input: domain_only,
        output: schema::of::<MtaStsState>,
    },
    ToolDef {
        name: "list_dns_connections",
        description: "The organization's DNS connections: the DNS hosts (Route 53 so far) whose zones Mailward can read, each with its status and the zones seen at its last read. Credentials are never shown. Use get_dns_connection_coverage to see which domains a connection serves.",
        writes: false,
        directory: false,
        public: false,
        input: empty,
        output: schema::of::<DnsConnectionList>,
    },
    ToolDef {
        name: "get_dns_connection",
        description: "One DNS connection: provider, label, kind of credentials with a hint, status of the last read and the zones seen then.",
        writes: false,
        directory: false,
        public: false,
        input: connection_only,
        output: schema::of::<DnsConnection>,
    },
    ToolDef {
        name: "get_dns_connection_coverage",
        description: "Reads a DNS connection's zones now and says which of the organization's domains they serve (`covered`, with the serving zone) and which they do not (`uncovered`): the domains whose records could be read or published through this connection.",
        writes: false,
        directory: false,
        public: false,
        input: connection_only,
        output: schema::of::<DnsConnectionCoverage>,
    },
    ToolDef {
        name: "create_prospecting_report",
        description: "Audits 1 to 10 domains from live DNS (they need not be in the account) and stores a report written for a prospect, in English or French, with a public PDF link (`url`) that works for 90 days: share that link. The answer also carries the content: per-domain findings (pass|warn|fail|error), risk words, authorised sending services with their DKIM state, a potential-loss estimate and a plan timed to `deadline_weeks`. Names that are not domains, or whose nameservers answer nothing usable, are listed in `report.skipped_domains`. Editors and administrators.",
        writes: true,
        directory: false,
        public: false,
        input: || schema::of::<CreateProspectingReport>(),
        output: schema::of::<ProspectingReport>,
    },
    ToolDef {
        name: "list_prospecting_reports",
        description: "The organization's prospecting reports, newest first, without their content (each with its public `url` and `expires_at`). Call get_prospecting_report for one report's findings.",
        writes: false,
        directory: false,
        public: false,
        input: || object(paging()),
        output: schema::of::<ProspectingReportList>,
    },
    ToolDef {
        name: "get_prospecting_report",
        description: "One prospecting report with its content: the cover, each domain's findings and sending services, the potential loss and the plan.",
        writes: false,
        directory: false,
        public: false,
        input: report_only,
        output: schema::of::<ProspectingReport>,
    },
    ToolDef {
        name: "delete_prospecting_report",
        description: "Deletes a prospecting report; its public link stops working at once. Editors and administrators; a member limited to groups deletes only their own.",
        writes: true,
        directory: false,
        public: false,
        input: report_only,
        output: deleted,
    },
    ToolDef {
        name: "list_activity_log",
        description: "Who changed what in the organization, newest first, filtered by actor, action, target and time (administrators not limited to groups).",
        writes: false,
        directory: false,
        public: false,
        input: activity_input,
        output: schema::of::<ActivityList>,
    },
    ToolDef {
        name: "list_activity_log_actions",
        description: "Every action the activity log records, with its meaning: the values list_activity_log's `action` filter takes.",
        writes: false,
        directory: false,
        public: false,
        input: empty,
        output: schema::of::<ActionList>,
    },
];

/// What `list_activity_log_actions` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionList {
    /// The actions.
    pub data: Vec<mailward_api_types::activity::ActivityAction>,
}

/// The definition of `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainArg {
    domain: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetDomainArgs {
    domain: String,
    #[serde(default)]
    expand: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectionArg {
    connection_id: Uuid,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnableMtaStsArgs {
    domain: String,
    mode: Option<mailward_domain::mta_sts::StsMode>,
    max_age: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangesArgs<T> {
    domain: String,
    changes: T,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    domain: String,
    only: Option<mailward_plan::Purpose>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditArgs {
    domain: String,
    #[serde(default)]
    refresh: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListDomainsArgs {
    monitoring_status: Option<String>,
    dmarc_policy: Option<String>,
    is_parked: Option<bool>,
    group_id: Option<Uuid>,
    sort: Option<String>,
    order: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateDomainArgs {
    url: String,
    group_id: Option<Uuid>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArg {
    task_id: Uuid,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListTasksArgs {
    statuses: Option<String>,
    domain: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeriodArgs {
    domain: String,
    period: Option<String>,
    limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListGroupsArgs {
    sort: Option<String>,
    order: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupArg {
    group_id: Uuid,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateGroupArgs {
    group_id: Uuid,
    changes: UpdateGroupRequest,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointArg {
    endpoint_id: Uuid,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportArg {
    report_id: Uuid,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PageArgs {
    page: Option<u32>,
    per_page: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActivityArgs {
    actor_type: Option<String>,
    action: Option<String>,
    target_id: Option<Uuid>,
    target_type: Option<String>,
    since: Option<String>,
    until: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

async fn set_task_status(
    ctx: &Context,
    args: Value,
    status: TaskStatus,
) -> Result<Value, ToolError> {
    let a: TaskArg = parse(args)?;
    let change = UpdateTaskRequest {
        status: Some(status),
        ..UpdateTaskRequest::default()
    };
    output(tasks::update(&ctx.app, ctx.caller()?, a.task_id, change).await?)
}

/// Calls tool `name` with `args` (its definition was found and the endpoint serves it).
pub async fn call(ctx: &Context, name: &str, args: Value) -> Result<Value, ToolError> {
    let app = &ctx.app;
    match name {
        "get_account" => {
            let _: NoArgs = parse(args)?;
            let caller = ctx.caller()?;
            let organization = organizations::get(app, caller, caller.org_id).await?;
            let (account_id, role) = match &caller.credential {
                mailward_services::caller::Credential::Session {
                    account_id, role, ..
                } => (*account_id, *role),
                mailward_services::caller::Credential::ApiKey { .. } => {
                    return Err(ToolError::new("forbidden", "not a person", None));
                }
            };
            output(AccountView {
                account_id,
                role: role.as_str().to_owned(),
                groups: caller.groups.clone().unwrap_or_default(),
                organization,
            })
        }
        "audit_domain" => {
            let a: AuditArgs = parse(args)?;
            let params = AuditParams {
                domain: a.domain,
                email: None,
                store_scan: false,
                refresh: a.refresh,
            };
            output(audit::audit(app, ctx.caller.as_ref(), &params, None).await?)
        }
        "validate_spf_include" => {
            let a: DomainArg = parse(args)?;
            output(tools::validate_include(app, &a.domain).await?)
        }
        "list_domains" => {
            let a: ListDomainsArgs = parse(args)?;
            let params = ListDomainsParams {
                page: a.page,
                per_page: a.per_page,
                monitoring_status: a.monitoring_status,
                dmarc_policy: a.dmarc_policy,
                is_parked: a.is_parked,
                group_id: a.group_id,
                sort: a.sort,
                order: a.order,
                ..ListDomainsParams::default()
            };
            output(domains::list(app, ctx.caller()?, &params).await?)
        }
        "get_domain" => {
            let a: GetDomainArgs = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::get(app, ctx.caller()?, id, &a.expand).await?)
        }
        "create_domain" => {
            let a: CreateDomainArgs = parse(args)?;
            let input = CreateDomainRequest {
                url: a.url,
                group_id: a.group_id,
                use_stored_scan: false,
            };
            output(domains::create(app, ctx.caller()?, input).await?)
        }
        "update_domain" => {
            let a: ChangesArgs<UpdateDomainRequest> = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::update(app, ctx.caller()?, id, a.changes).await?)
        }
        "delete_domain" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            domains::delete(app, ctx.caller()?, id).await?;
            output(Deleted { deleted: true, id })
        }
        "verify_domain" => {
            let a: VerifyArgs = parse(args)?;
            if let Some(only) = a.only
                && !matches!(
                    only,
                    mailward_plan::Purpose::Spf | mailward_plan::Purpose::Dkim
                )
            {
                return Err(ToolError::new(
                    "invalid_arguments",
                    "only is spf or dkim",
                    Some("only"),
                ));
            }
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::records::verify(app, ctx.caller()?, id, a.only).await?)
        }
        "get_dns_records" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::records::dns_records(app, ctx.caller()?, id).await?)
        }
        "get_domain_plan" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::plan::plan(app, ctx.caller()?, id).await?)
        }
        "get_spf" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::spf::diagnostics(app, ctx.caller()?, id).await?)
        }
        "preview_dns_change" => {
            let a: ChangesArgs<PreviewRequest> = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::preview::preview(app, ctx.caller()?, id, a.changes).await?)
        }
        "list_tasks" => {
            let a: ListTasksArgs = parse(args)?;
            let domain = match &a.domain {
                Some(d) => Some(domain_id(ctx, d).await?),
                None => None,
            };
            let params = ListTasksParams {
                statuses: a.statuses,
                domain_id: domain,
                sort: a.sort,
                order: a.order,
                expand: Vec::new(),
                page: a.page,
                per_page: a.per_page,
            };
            output(tasks::list(app, ctx.caller()?, &params).await?)
        }
        "get_task" => {
            let a: TaskArg = parse(args)?;
            output(tasks::get(app, ctx.caller()?, a.task_id, &[]).await?)
        }
        "complete_task" => set_task_status(ctx, args, TaskStatus::Done).await,
        "dismiss_task" => set_task_status(ctx, args, TaskStatus::Dismissed).await,
        "get_dmarc_summary" => {
            let a: PeriodArgs = parse(args)?;
            if a.limit.is_some() {
                return Err(ToolError::new(
                    "invalid_arguments",
                    "unknown field `limit`",
                    Some("limit"),
                ));
            }
            let id = domain_id(ctx, &a.domain).await?;
            let params = SummaryParams { period: a.period };
            output(reports::views::summary(app, ctx.caller()?, id, &params).await?)
        }
        "list_dmarc_senders" => {
            let a: PeriodArgs = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            let params = SendersParams {
                period: a.period,
                limit: a.limit,
            };
            output(reports::views::senders(app, ctx.caller()?, id, &params).await?)
        }
        "list_groups" => {
            let a: ListGroupsArgs = parse(args)?;
            let params = ListGroupsParams {
                sort: a.sort,
                order: a.order,
                page: a.page,
                per_page: a.per_page,
                ..ListGroupsParams::default()
            };
            output(groups::list(app, ctx.caller()?, &params).await?)
        }
        "create_group" => {
            let input: CreateGroupRequest = parse(args)?;
            output(groups::create(app, ctx.caller()?, input).await?)
        }
        "update_group" => {
            let a: UpdateGroupArgs = parse(args)?;
            output(groups::update(app, ctx.caller()?, a.group_id, a.changes).await?)
        }
        "delete_group" => {
            let a: GroupArg = parse(args)?;
            groups::delete(app, ctx.caller()?, a.group_id).await?;
            output(Deleted {
                deleted: true,
                id: a.group_id,
            })
        }
        "list_webhook_events" => {
            let _: NoArgs = parse(args)?;
            ctx.caller()?;
            output(mailward_services::webhooks::endpoints::event_catalogue())
        }
        "list_webhook_endpoints" => {
            let a: PageArgs = parse(args)?;
            let page = PageParams {
                page: a.page,
                per_page: a.per_page,
            };
            output(mailward_services::webhooks::endpoints::list(app, ctx.caller()?, page).await?)
        }
        "create_webhook_endpoint" => {
            let input: CreateWebhookEndpointRequest = parse(args)?;
            output(mailward_services::webhooks::endpoints::create(app, ctx.caller()?, input).await?)
        }
        "delete_webhook_endpoint" => {
            let a: EndpointArg = parse(args)?;
            mailward_services::webhooks::endpoints::delete(app, ctx.caller()?, a.endpoint_id)
                .await?;
            output(Deleted {
                deleted: true,
                id: a.endpoint_id,
            })
        }
        "enable_hosted_dmarc" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::hosting::dmarc::enable(app, ctx.caller()?, id).await?)
        }
        "get_mta_sts" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::hosting::mta_sts::get(app, ctx.caller()?, id).await?)
        }
        "enable_mta_sts" => {
            let a: EnableMtaStsArgs = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            let input = MtaStsRequest {
                mode: a.mode,
                max_age: a.max_age,
            };
            output(domains::hosting::mta_sts::enable(app, ctx.caller()?, id, input).await?)
        }
        "disable_mta_sts" => {
            let a: DomainArg = parse(args)?;
            let id = domain_id(ctx, &a.domain).await?;
            output(domains::hosting::mta_sts::disable(app, ctx.caller()?, id).await?)
        }
        "list_dns_connections" => {
            let _: NoArgs = parse(args)?;
            output(dns_connections::list(app, ctx.caller()?).await?)
        }
        "get_dns_connection" => {
            let a: ConnectionArg = parse(args)?;
            output(dns_connections::get(app, ctx.caller()?, a.connection_id).await?)
        }
        "get_dns_connection_coverage" => {
            let a: ConnectionArg = parse(args)?;
            output(dns_connections::coverage(app, ctx.caller()?, a.connection_id).await?)
        }
        "create_prospecting_report" => {
            let input: CreateProspectingReport = parse(args)?;
            output(prospecting::create(app, ctx.caller()?, input).await?)
        }
        "list_prospecting_reports" => {
            let a: PageArgs = parse(args)?;
            let page = PageParams {
                page: a.page,
                per_page: a.per_page,
            };
            output(prospecting::list(app, ctx.caller()?, page).await?)
        }
        "get_prospecting_report" => {
            let a: ReportArg = parse(args)?;
            output(prospecting::get(app, ctx.caller()?, a.report_id).await?)
        }
        "delete_prospecting_report" => {
            let a: ReportArg = parse(args)?;
            prospecting::delete(app, ctx.caller()?, a.report_id).await?;
            output(Deleted {
                deleted: true,
                id: a.report_id,
            })
        }
        "list_activity_log" => {
            let a: ActivityArgs = parse(args)?;
            let params = ActivityParams {
                actor_type: a.actor_type,
                action: a.action,
                target_id: a.target_id,
                target_type: a.target_type,
                since: a.since,
                until: a.until,
                page: a.page,
                per_page: a.per_page,
            };
            output(activity::list(app, ctx.caller()?, &params).await?)
        }
        "list_activity_log_actions" => {
            let _: NoArgs = parse(args)?;
            ctx.caller()?;
            output(ActionList {
                data: activity::actions(),
            })
        }
        other => Err(ToolError::new(
            "unknown_tool",
            format!("no tool named {other:?}"),
            None,
        )),
    }
}
