//! The organization's domains.

use super::{Access, Context, Deleted, DomainInput, Order, Tool, ToolError};
use mailward_api_types::domains::{
    CreateDomainRequest, Domain as DomainView, DomainList, ListDomainsParams, UpdateDomainRequest,
};
use mailward_domain::domain::{MonitoringStatus, Policy};
use mailward_services::domains;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `list_domains`.
pub struct ListDomains;

/// Filters, order and page of the domain list.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDomainsInput {
    /// Only domains in this monitoring state
    #[schema(inline)]
    pub monitoring_status: Option<MonitoringStatus>,
    /// Only domains publishing this DMARC policy
    #[schema(inline)]
    pub dmarc_policy: Option<Policy>,
    /// Only parked (true) or unparked (false) domains
    pub is_parked: Option<bool>,
    /// Only domains of this group
    pub group_id: Option<Uuid>,
    /// Sort field, e.g. url, created_at, score, last_14_days_volume
    pub sort: Option<String>,
    /// Sort order
    #[schema(inline)]
    pub order: Option<Order>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl Tool for ListDomains {
    const NAME: &'static str = "list_domains";
    const DESCRIPTION: &'static str = "Lists the organization's domains with their monitoring status, DMARC policy, score and 14-day report figures, filtered and sorted. Next: get_domain, get_dns_records or get_domain_plan for one of them.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "List domains";
    type Input = ListDomainsInput;
    type Output = DomainList;

    async fn call(ctx: &Context, a: ListDomainsInput) -> Result<DomainList, ToolError> {
        let params = ListDomainsParams {
            page: a.page,
            per_page: a.per_page,
            monitoring_status: a.monitoring_status.map(|s| s.as_str().to_owned()),
            dmarc_policy: a.dmarc_policy.map(|p| p.as_str().to_owned()),
            is_parked: a.is_parked,
            group_id: a.group_id,
            sort: a.sort,
            order: a.order.map(|o| o.as_str().to_owned()),
            ..ListDomainsParams::default()
        };
        Ok(domains::list(&ctx.app, ctx.caller()?, &params).await?)
    }
}

/// `get_domain`.
pub struct GetDomain;

/// One domain, with related objects.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDomainInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// Related objects to include, e.g. ["group"]
    #[serde(default)]
    pub expand: Vec<String>,
}

impl Tool for GetDomain {
    const NAME: &'static str = "get_domain";
    const DESCRIPTION: &'static str = "One domain by id or name: monitoring status and failure reason, DMARC/SPF options, score, report figures. Next: get_dns_records to see what to publish, or get_domain_plan for the road to p=reject.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get domain";
    type Input = GetDomainInput;
    type Output = DomainView;

    async fn call(ctx: &Context, a: GetDomainInput) -> Result<DomainView, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::get(&ctx.app, ctx.caller()?, id, &a.expand).await?)
    }
}

/// `create_domain`.
pub struct CreateDomain;

/// The domain to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDomainInput {
    /// The domain name to add, e.g. example.com
    pub url: String,
    /// Put it in this group
    pub group_id: Option<Uuid>,
}

impl Tool for CreateDomain {
    const NAME: &'static str = "create_domain";
    const DESCRIPTION: &'static str = "Adds a domain to monitoring. Mailward then expects the DMARC record that sends its reports to Mailward; get_dns_records says exactly what to publish, verify_domain checks it. Fails with domain_exists when it is already in the organization.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Create domain";
    const IDEMPOTENT: bool = false;
    type Input = CreateDomainInput;
    type Output = DomainView;

    async fn call(ctx: &Context, a: CreateDomainInput) -> Result<DomainView, ToolError> {
        let input = CreateDomainRequest {
            url: a.url,
            group_id: a.group_id,
            use_stored_scan: false,
        };
        Ok(domains::create(&ctx.app, ctx.caller()?, input).await?)
    }
}

/// `update_domain`.
pub struct UpdateDomain;

/// A domain and the settings that change (the body of `POST /domains/{id}`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDomainInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// What changes.
    pub changes: UpdateDomainRequest,
}

impl Tool for UpdateDomain {
    const NAME: &'static str = "update_domain";
    const DESCRIPTION: &'static str = "Changes a domain's settings: its group, parking, DMARC options (policy, pct, rua), SPF options, target SPF, BIMI options. Send only what changes in `changes`. Changing DMARC options changes the records get_dns_records asks for.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Update domain";
    const DESTRUCTIVE: bool = true;
    type Input = UpdateDomainInput;
    type Output = DomainView;

    async fn call(ctx: &Context, a: UpdateDomainInput) -> Result<DomainView, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::update(&ctx.app, ctx.caller()?, id, a.changes).await?)
    }
}

/// `delete_domain`.
pub struct DeleteDomain;

impl Tool for DeleteDomain {
    const NAME: &'static str = "delete_domain";
    const DESCRIPTION: &'static str = "Removes a domain from monitoring, with its tasks and report data. It cannot be undone; confirm with the person first.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Delete domain";
    const DESTRUCTIVE: bool = true;
    type Input = DomainInput;
    type Output = Deleted;

    async fn call(ctx: &Context, a: DomainInput) -> Result<Deleted, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        domains::delete(&ctx.app, ctx.caller()?, id).await?;
        Ok(Deleted::id(id))
    }
}
