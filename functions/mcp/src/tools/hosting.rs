//! Records Mailward hosts for a domain: DMARC behind a CNAME, the MTA-STS policy.

use super::{Access, Context, DomainInput, Tool, ToolError};
use mailward_api_types::mta_sts::{MtaStsRequest, MtaStsState};
use mailward_api_types::records::HostedDmarcResponse;
use mailward_domain::mta_sts::StsMode;
use mailward_services::domains::hosting;
use serde::Deserialize;
use utoipa::ToSchema;

/// `enable_hosted_dmarc`.
pub struct EnableHostedDmarc;

impl Tool for EnableHostedDmarc {
    const NAME: &'static str = "enable_hosted_dmarc";
    const DESCRIPTION: &'static str = "Turns on hosted DMARC for a domain (by id or name): Mailward serves the DMARC record built from the domain's dmarc_options behind a CNAME. The answer's `record` is the CNAME the person must publish at _dmarc.<domain>, and any DMARC TXT there must be deleted (`instructions`). `hosted_dmarc_active` is true once live DNS shows the CNAME; until then managed_dns_status.dmarc is syncing. Safe to call again.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Enable hosted DMARC";
    const DNS: bool = true;
    type Input = DomainInput;
    type Output = HostedDmarcResponse;

    async fn call(ctx: &Context, a: DomainInput) -> Result<HostedDmarcResponse, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(hosting::dmarc::enable(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `get_mta_sts`.
pub struct GetMtaSts;

impl Tool for GetMtaSts {
    const NAME: &'static str = "get_mta_sts";
    const DESCRIPTION: &'static str = "A domain's hosted MTA-STS (by id or name): whether Mailward hosts its policy, the policy (mode, max_age, the MX hosts, its id and text), the URL senders fetch, the two CNAMEs the person must publish (`records`) and whether live DNS shows them (`status`).";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("domains:read");
    const TITLE: &'static str = "Get MTA-STS";
    type Input = DomainInput;
    type Output = MtaStsState;

    async fn call(ctx: &Context, a: DomainInput) -> Result<MtaStsState, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(hosting::mta_sts::get(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `enable_mta_sts`.
pub struct EnableMtaSts;

/// The domain and the policy (the body of `POST /domains/{id}/mta-sts`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnableMtaStsInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// testing (default: senders report failures but deliver), enforce, or none
    #[schema(inline)]
    pub mode: Option<StsMode>,
    /// Seconds senders cache the policy (default 86400)
    #[schema(minimum = 86400, maximum = 31557600)]
    pub max_age: Option<u64>,
}

impl Tool for EnableMtaSts {
    const NAME: &'static str = "enable_mta_sts";
    const DESCRIPTION: &'static str = "Turns on hosted MTA-STS for a domain (by id or name), or changes its policy when already on: Mailward builds the policy from the domain's live MX hosts and serves it with its id; the person publishes the two CNAMEs in `records` (`_mta-sts` and `mta-sts`). Start with mode testing (the default) and a TLS-RPT record, move to enforce once reports show no failures. Fails with mta_sts_no_mx when the domain has no MX.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Enable MTA-STS";
    const DNS: bool = true;
    type Input = EnableMtaStsInput;
    type Output = MtaStsState;

    async fn call(ctx: &Context, a: EnableMtaStsInput) -> Result<MtaStsState, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        let input = MtaStsRequest {
            mode: a.mode,
            max_age: a.max_age,
        };
        Ok(hosting::mta_sts::enable(&ctx.app, ctx.caller()?, id, input).await?)
    }
}

/// `disable_mta_sts`.
pub struct DisableMtaSts;

impl Tool for DisableMtaSts {
    const NAME: &'static str = "disable_mta_sts";
    const DESCRIPTION: &'static str = "Turns hosted MTA-STS off for a domain (by id or name). The policy is served as mode none until its old max_age has passed (RFC 8461's way to withdraw a policy), then removed; the CNAMEs can be deleted after `retiring_until`. Safe to call again.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("domains:write");
    const TITLE: &'static str = "Disable MTA-STS";
    const DESTRUCTIVE: bool = true;
    type Input = DomainInput;
    type Output = MtaStsState;

    async fn call(ctx: &Context, a: DomainInput) -> Result<MtaStsState, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(hosting::mta_sts::disable(&ctx.app, ctx.caller()?, id).await?)
    }
}
