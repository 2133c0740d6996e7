//! The tools that read any domain's public DNS: no account needed.

use super::{Access, Context, Tool, ToolError};
use mailward_api_types::tools::{AuditParams, IncludeValidation};
use mailward_audit::AuditResult;
use mailward_services::{audit, tools};
use serde::Deserialize;
use utoipa::ToSchema;

/// `audit_domain`.
pub struct AuditDomain;

/// The domain to audit.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditInput {
    /// Any domain name, e.g. example.com (it need not be in the account)
    pub domain: String,
    /// Bypass the ten-minute cache and ask DNS afresh (signed-in callers; the public endpoint
    /// answers from the cache)
    #[serde(default)]
    pub refresh: bool,
}

impl Tool for AuditDomain {
    const NAME: &'static str = "audit_domain";
    const DESCRIPTION: &'static str = "Audits any domain's email authentication from live DNS (DMARC, SPF, DKIM, BIMI, MTA-STS, TLS-RPT, MX): a score, a grade and findings with what to fix. The domain need not be in the account. Results are cached ten minutes unless refresh is true. Next: create_domain to monitor it.";
    const ACCESS: Access = Access::Public;
    const SCOPE: Option<&'static str> = None;
    const TITLE: &'static str = "Audit domain";
    const DNS: bool = true;
    type Input = AuditInput;
    type Output = AuditResult;

    async fn call(ctx: &Context, a: AuditInput) -> Result<AuditResult, ToolError> {
        let params = AuditParams {
            domain: a.domain,
            email: None,
            store_scan: false,
            refresh: a.refresh,
        };
        Ok(audit::audit(&ctx.app, ctx.caller.as_ref(), &params, None).await?)
    }
}

/// `validate_spf_include`.
pub struct ValidateSpfInclude;

/// The include to check.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IncludeInput {
    /// The SPF include domain to check, e.g. _spf.example.com
    pub domain: String,
}

impl Tool for ValidateSpfInclude {
    const NAME: &'static str = "validate_spf_include";
    const DESCRIPTION: &'static str = "Checks that an SPF include domain (a provider's, e.g. _spf.google.com) exists, parses, and how many DNS lookups it costs against SPF's limit of ten. Use it before adding an include to a domain's SPF record.";
    const ACCESS: Access = Access::Public;
    const SCOPE: Option<&'static str> = None;
    const TITLE: &'static str = "Validate SPF include";
    const DNS: bool = true;
    type Input = IncludeInput;
    type Output = IncludeValidation;

    async fn call(ctx: &Context, a: IncludeInput) -> Result<IncludeValidation, ToolError> {
        Ok(tools::validate_include(&ctx.app, &a.domain).await?)
    }
}
