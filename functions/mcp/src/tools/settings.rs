//! The organization's integrations: webhook endpoints and DNS connections.

use super::{Access, Context, Deleted, NoInput, PageInput, Tool, ToolError};
use mailward_api_types::dns_connections::{
    DnsConnection, DnsConnectionCoverage, DnsConnectionList,
};
use mailward_api_types::webhooks::{
    CreateWebhookEndpointRequest, WebhookEndpointList, WebhookEndpointWithSecret, WebhookEventList,
};
use mailward_services::dns_connections;
use mailward_services::webhooks::endpoints;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `list_webhook_events`.
pub struct ListWebhookEvents;

impl Tool for ListWebhookEvents {
    const NAME: &'static str = "list_webhook_events";
    const DESCRIPTION: &'static str = "The webhook event types Mailward sends, with what each means. Use it to choose enabled_events for create_webhook_endpoint.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("webhooks:read");
    const TITLE: &'static str = "List webhook events";
    type Input = NoInput;
    type Output = WebhookEventList;

    async fn call(ctx: &Context, _: NoInput) -> Result<WebhookEventList, ToolError> {
        ctx.caller()?;
        Ok(endpoints::event_catalogue())
    }
}

/// `list_webhook_endpoints`.
pub struct ListWebhookEndpoints;

impl Tool for ListWebhookEndpoints {
    const NAME: &'static str = "list_webhook_endpoints";
    const DESCRIPTION: &'static str =
        "The organization's webhook endpoints and their state (administrators).";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("webhooks:read");
    const TITLE: &'static str = "List webhook endpoints";
    type Input = PageInput;
    type Output = WebhookEndpointList;

    async fn call(ctx: &Context, page: PageInput) -> Result<WebhookEndpointList, ToolError> {
        Ok(endpoints::list(&ctx.app, ctx.caller()?, page.into()).await?)
    }
}

/// `create_webhook_endpoint`.
pub struct CreateWebhookEndpoint;

impl Tool for CreateWebhookEndpoint {
    const NAME: &'static str = "create_webhook_endpoint";
    const DESCRIPTION: &'static str = "Registers an HTTPS URL to receive signed webhook events (administrators). The answer carries the signing secret once: give it to the person to store.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("webhooks:write");
    const TITLE: &'static str = "Create webhook endpoint";
    const IDEMPOTENT: bool = false;
    const OPEN_WORLD: bool = true;
    type Input = CreateWebhookEndpointRequest;
    type Output = WebhookEndpointWithSecret;

    async fn call(
        ctx: &Context,
        input: CreateWebhookEndpointRequest,
    ) -> Result<WebhookEndpointWithSecret, ToolError> {
        Ok(endpoints::create(&ctx.app, ctx.caller()?, input).await?)
    }
}

/// One webhook endpoint.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointInput {
    /// The webhook endpoint id
    pub endpoint_id: Uuid,
}

/// `delete_webhook_endpoint`.
pub struct DeleteWebhookEndpoint;

impl Tool for DeleteWebhookEndpoint {
    const NAME: &'static str = "delete_webhook_endpoint";
    const DESCRIPTION: &'static str =
        "Deletes a webhook endpoint (administrators); deliveries to it stop.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("webhooks:write");
    const TITLE: &'static str = "Delete webhook endpoint";
    const DESTRUCTIVE: bool = true;
    type Input = EndpointInput;
    type Output = Deleted;

    async fn call(ctx: &Context, a: EndpointInput) -> Result<Deleted, ToolError> {
        endpoints::delete(&ctx.app, ctx.caller()?, a.endpoint_id).await?;
        Ok(Deleted::id(a.endpoint_id))
    }
}

/// `list_dns_connections`.
pub struct ListDnsConnections;

impl Tool for ListDnsConnections {
    const NAME: &'static str = "list_dns_connections";
    const DESCRIPTION: &'static str = "The organization's DNS connections: the DNS hosts (Route 53 so far) whose zones Mailward can read, each with its status and the zones seen at its last read. Credentials are never shown. Use get_dns_connection_coverage to see which domains a connection serves.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "List DNS connections";
    type Input = NoInput;
    type Output = DnsConnectionList;

    async fn call(ctx: &Context, _: NoInput) -> Result<DnsConnectionList, ToolError> {
        Ok(dns_connections::list(&ctx.app, ctx.caller()?).await?)
    }
}

/// `list_mailbox_connections`.
pub struct ListMailboxConnections;

impl Tool for ListMailboxConnections {
    const NAME: &'static str = "list_mailbox_connections";
    const DESCRIPTION: &'static str = "The organization's connected report mailboxes (an extension): IMAP servers or Microsoft 365 mailboxes (Graph) that Mailward reads on a schedule to import the reports they hold, each with its status (pending, active, credentials_refused, error, paused), the last error, when it was last read and is read next, and how many reports the polls imported, found duplicate or could not attribute. Secrets are never shown.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "List report mailboxes";
    type Input = NoInput;
    type Output = mailward_api_types::mailboxes::MailboxConnectionList;

    async fn call(
        ctx: &Context,
        _: NoInput,
    ) -> Result<mailward_api_types::mailboxes::MailboxConnectionList, ToolError> {
        Ok(mailward_services::mailboxes::list(&ctx.app, ctx.caller()?).await?)
    }
}

/// One DNS connection.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionInput {
    /// The DNS connection id (from list_dns_connections)
    pub connection_id: Uuid,
}

/// `get_dns_connection`.
pub struct GetDnsConnection;

impl Tool for GetDnsConnection {
    const NAME: &'static str = "get_dns_connection";
    const DESCRIPTION: &'static str = "One DNS connection: provider, label, kind of credentials with a hint, status of the last read and the zones seen then.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get DNS connection";
    type Input = ConnectionInput;
    type Output = DnsConnection;

    async fn call(ctx: &Context, a: ConnectionInput) -> Result<DnsConnection, ToolError> {
        Ok(dns_connections::get(&ctx.app, ctx.caller()?, a.connection_id).await?)
    }
}

/// `get_dns_connection_coverage`.
pub struct GetDnsConnectionCoverage;

impl Tool for GetDnsConnectionCoverage {
    const NAME: &'static str = "get_dns_connection_coverage";
    const DESCRIPTION: &'static str = "Reads a DNS connection's zones now and says which of the organization's domains they serve (`covered`, with the serving zone) and which they do not (`uncovered`): the domains whose records could be read or published through this connection.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get DNS connection coverage";
    const OPEN_WORLD: bool = true;
    type Input = ConnectionInput;
    type Output = DnsConnectionCoverage;

    async fn call(ctx: &Context, a: ConnectionInput) -> Result<DnsConnectionCoverage, ToolError> {
        Ok(dns_connections::coverage(&ctx.app, ctx.caller()?, a.connection_id).await?)
    }
}

/// `list_alert_rules`.
pub struct ListAlertRules;

impl Tool for ListAlertRules {
    const NAME: &'static str = "list_alert_rules";
    const DESCRIPTION: &'static str = "The organization's alert rules (an extension): each rule's scope (all domains, groups, listed domains), condition with its parameters (monitoring_problem, score_below, dmarc_pass_rate_below, new_unknown_sender, sender_failure_rate_above, tls_failure_rate_above, hosted_record_error, certificate_expiring, dns_conflict), destinations (email, slack, teams, pagerduty, webhook_endpoint; secrets never shown), repeat interval and how many of its alerts are open.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "List alert rules";
    type Input = NoInput;
    type Output = mailward_api_types::alerts::AlertRuleList;

    async fn call(
        ctx: &Context,
        _: NoInput,
    ) -> Result<mailward_api_types::alerts::AlertRuleList, ToolError> {
        Ok(mailward_services::alerts::list(&ctx.app, ctx.caller()?).await?)
    }
}

/// Which alerts to list.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertsInput {
    /// open or resolved; both when omitted
    #[schema(value_type = Option<mailward_api_types::alerts::AlertStatusName>)]
    pub status: Option<String>,
    /// Alerts of this domain
    pub domain_id: Option<Uuid>,
    /// Alerts of this rule
    pub rule_id: Option<Uuid>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

/// `list_alerts`.
pub struct ListAlerts;

impl Tool for ListAlerts {
    const NAME: &'static str = "list_alerts";
    const DESCRIPTION: &'static str = "Alerts raised by the organization's alert rules (an extension), newest first: open ones and those resolved in the last 90 days, each with its domain, what it is about, severity, a one-line summary, the figures behind it, when it opened, was last notified and resolved, and the latest delivery attempts to Slack, Teams and PagerDuty. Filter by status (open, resolved), domain_id and rule_id.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "List alerts";
    type Input = AlertsInput;
    type Output = mailward_api_types::alerts::AlertList;

    async fn call(
        ctx: &Context,
        a: AlertsInput,
    ) -> Result<mailward_api_types::alerts::AlertList, ToolError> {
        let filters = mailward_api_types::alerts::AlertFilters {
            status: a.status,
            domain_id: a.domain_id,
            rule_id: a.rule_id,
        };
        let page = mailward_api_types::PageParams {
            page: a.page,
            per_page: a.per_page,
        };
        Ok(mailward_services::alerts::list_alerts(&ctx.app, ctx.caller()?, &filters, page).await?)
    }
}
