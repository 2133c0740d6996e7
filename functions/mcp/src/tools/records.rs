//! What a domain should publish, whether it does, and what a change would do.

use super::{Access, Context, DomainInput, Tool, ToolError};
use mailward_api_types::records::{DnsRecordsResponse, SpfDiagnostics, VerifyResponse};
use mailward_api_types::tasks::{DomainPlan, PreviewRequest, PreviewResponse};
use mailward_plan::Purpose;
use mailward_services::domains;
use serde::Deserialize;
use utoipa::ToSchema;

/// `verify_domain`.
pub struct VerifyDomain;

/// The record kinds `verify_domain` can check alone.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerifyOnly {
    /// The SPF record.
    Spf,
    /// The DKIM records.
    Dkim,
}

/// The domain, and optionally one record kind.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// Verify one record kind only
    #[schema(inline)]
    pub only: Option<VerifyOnly>,
}

impl Tool for VerifyDomain {
    const NAME: &'static str = "verify_domain";
    const DESCRIPTION: &'static str = "Checks in live DNS whether the records get_dns_records asked for are published, record by record, and stores what it confirmed. Call it after the person published records. `only` limits it to spf or dkim.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Verify domain";
    const DNS: bool = true;
    type Input = VerifyInput;
    type Output = VerifyResponse;

    async fn call(ctx: &Context, a: VerifyInput) -> Result<VerifyResponse, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        let only = a.only.map(|o| match o {
            VerifyOnly::Spf => Purpose::Spf,
            VerifyOnly::Dkim => Purpose::Dkim,
        });
        Ok(domains::records::verify(&ctx.app, ctx.caller()?, id, only).await?)
    }
}

/// `get_dns_records`.
pub struct GetDnsRecords;

impl Tool for GetDnsRecords {
    const NAME: &'static str = "get_dns_records";
    const DESCRIPTION: &'static str = "The exact DNS records to publish for a domain (DMARC, SPF, DKIM, MTA-STS, TLS-RPT, BIMI), each with its host, type, value and whether live DNS already matches. Give these to the person or their DNS provider, then call verify_domain.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get DNS records";
    const DNS: bool = true;
    type Input = DomainInput;
    type Output = DnsRecordsResponse;

    async fn call(ctx: &Context, a: DomainInput) -> Result<DnsRecordsResponse, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::records::dns_records(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `get_domain_plan`.
pub struct GetDomainPlan;

impl Tool for GetDomainPlan {
    const NAME: &'static str = "get_domain_plan";
    const DESCRIPTION: &'static str = "The domain's path to DMARC enforcement: the current stage, what blocks the next one (senders failing, missing records), and the open tasks in order. Use it to tell the person what to do next.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get domain plan";
    type Input = DomainInput;
    type Output = DomainPlan;

    async fn call(ctx: &Context, a: DomainInput) -> Result<DomainPlan, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::plan::plan(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `get_spf`.
pub struct GetSpf;

impl Tool for GetSpf {
    const NAME: &'static str = "get_spf";
    const DESCRIPTION: &'static str = "SPF diagnostics of a domain from live DNS: the record, its lookup count against the limit of ten, includes, errors and warnings.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get SPF";
    const DNS: bool = true;
    type Input = DomainInput;
    type Output = SpfDiagnostics;

    async fn call(ctx: &Context, a: DomainInput) -> Result<SpfDiagnostics, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::spf::diagnostics(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `preview_dns_change`.
pub struct PreviewDnsChange;

/// The domain and the proposed records (the body of `POST /domains/{id}/preview`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// The proposed records.
    pub changes: PreviewRequest,
}

impl Tool for PreviewDnsChange {
    const NAME: &'static str = "preview_dns_change";
    const DESCRIPTION: &'static str = "Previews DNS changes before anyone publishes them: give the records you propose in `changes` (dmarc, spf, dkim, mta_sts, tls_rpt, bimi); the answer says what each would change, what would break (senders that would fail, lookup limits) and the score after. Nothing is changed.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Preview DNS change";
    const DNS: bool = true;
    type Input = PreviewInput;
    type Output = PreviewResponse;

    async fn call(ctx: &Context, a: PreviewInput) -> Result<PreviewResponse, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(domains::preview::preview(&ctx.app, ctx.caller()?, id, a.changes).await?)
    }
}
