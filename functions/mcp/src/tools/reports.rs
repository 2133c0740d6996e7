//! What DMARC reports say about a domain, and the prospecting reports written for prospects.

use super::{Access, Context, Deleted, PageInput, Tool, ToolError};
use mailward_api_types::failure_reports::{FailureReportList, ListFailureReportsParams};
use mailward_api_types::prospecting::{
    CreateProspectingReport as CreateProspectingRequest, ProspectingReport, ProspectingReportList,
};
use mailward_api_types::reports::{ReportSummary, SendersParams, SendersView, SummaryParams};
use mailward_api_types::sender_requirements::SenderRequirementsView;
use mailward_services::{prospecting, reports, sender_requirements};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// A report window.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
pub enum Period {
    /// The last seven days.
    #[serde(rename = "last_7_days")]
    Week,
    /// The last fourteen days.
    #[serde(rename = "last_14_days")]
    Fortnight,
    /// The last thirty days.
    #[serde(rename = "last_30_days")]
    Month,
}

impl Period {
    /// The query word the report views take.
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Week => "last_7_days",
            Period::Fortnight => "last_14_days",
            Period::Month => "last_30_days",
        }
    }
}

/// `get_dmarc_summary`.
pub struct GetDmarcSummary;

/// The domain and the window.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// The window (default last_7_days)
    #[schema(inline)]
    pub period: Option<Period>,
}

impl Tool for GetDmarcSummary {
    const NAME: &'static str = "get_dmarc_summary";
    const DESCRIPTION: &'static str = "The domain's DMARC aggregate-report summary for a window: messages, DMARC pass rate, SPF and DKIM alignment, quarantined and rejected volume, per day. Use it to judge whether the policy can be tightened.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("dmarc_reports:read");
    const TITLE: &'static str = "Get DMARC summary";
    const UNTRUSTED: &'static [&'static str] = &[
        "probe_tasks[].description",
        "probe_tasks[].source_alias",
        "probe_tasks[].sending_domain",
    ];
    type Input = SummaryInput;
    type Output = ReportSummary;

    async fn call(ctx: &Context, a: SummaryInput) -> Result<ReportSummary, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        let params = SummaryParams {
            period: a.period.map(|p| p.as_str().to_owned()),
        };
        Ok(reports::views::summary(&ctx.app, ctx.caller()?, id, &params).await?)
    }
}

/// `list_dmarc_senders`.
pub struct ListDmarcSenders;

/// The domain, the window and how many senders.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendersInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// The window (default last_7_days)
    #[schema(inline)]
    pub period: Option<Period>,
    /// At most this many senders
    #[schema(minimum = 1, maximum = 20)]
    pub limit: Option<u32>,
}

impl Tool for ListDmarcSenders {
    const NAME: &'static str = "list_dmarc_senders";
    const DESCRIPTION: &'static str = "Who sends mail as the domain, from its DMARC reports: each sender (service or IP range) with volume and SPF/DKIM/DMARC pass rates. Senders failing authentication must be fixed before p=reject.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("dmarc_reports:read");
    const TITLE: &'static str = "List DMARC senders";
    const UNTRUSTED: &'static [&'static str] = &[
        "senders[].source_ip",
        "senders[].header_from",
        "senders[].envelope_from",
        "senders[].dkim_signers",
        // A reverse-DNS name is whatever the address's owner wrote.
        "senders[].network.ptr",
    ];
    type Input = SendersInput;
    type Output = SendersView;

    async fn call(ctx: &Context, a: SendersInput) -> Result<SendersView, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        let params = SendersParams {
            period: a.period.map(|p| p.as_str().to_owned()),
            limit: a.limit,
        };
        Ok(reports::views::senders(&ctx.app, ctx.caller()?, id, &params).await?)
    }
}

/// `get_sender_requirements`.
pub struct GetSenderRequirements;

/// The domain.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequirementsInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
}

impl Tool for GetSenderRequirements {
    const NAME: &'static str = "get_sender_requirements";
    const DESCRIPTION: &'static str = "Gmail's, Yahoo's and Outlook.com's published sender requirements for the domain (SPF, DKIM, DMARC with alignment, reverse DNS, TLS, one-click unsubscribe, spam rate), each pass, fail or unknown with its evidence: live DNS, the aggregate reports that provider sent in the last 30 days (the domain's own mail only), the reverse DNS of its sending addresses, the organization's latest header analysis, and spam rates the organization supplied. Unknown means no evidence, never a guess. Failing ones carry the provider's rejection codes (e.g. 5.7.26, 5.7.515) and their meet_sender_requirement task.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("dmarc_reports:read");
    const TITLE: &'static str = "Get sender requirements";
    const UNTRUSTED: &'static [&'static str] = &[
        // Record texts, reverse-DNS names and header fields are whatever their owners wrote.
        "providers[].requirements[].evidence[].detail",
    ];
    type Input = RequirementsInput;
    type Output = SenderRequirementsView;

    async fn call(
        ctx: &Context,
        a: RequirementsInput,
    ) -> Result<SenderRequirementsView, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        Ok(sender_requirements::get(&ctx.app, ctx.caller()?, id).await?)
    }
}

/// `list_failure_reports`.
pub struct ListFailureReports;

/// The domain, an optional Auth-Failure kind and a page.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureReportsInput {
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: String,
    /// Only this Auth-Failure (dmarc, dkim, spf, bodyhash, revoked, signature)
    pub auth_failure: Option<String>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl Tool for ListFailureReports {
    const NAME: &'static str = "list_failure_reports";
    const DESCRIPTION: &'static str = "The domain's DMARC failure reports (RFC 9991), newest first: per message that failed, the source IP, the failing mechanism (auth_failure), the envelope and DKIM domains and the delivery result, with `unread` listing what a reporter left out. Headers are not listed (open header_analysis_path in the API for them). Kept 7 days free, 30 days paid.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("dmarc_reports:read");
    const TITLE: &'static str = "List failure reports";
    const UNTRUSTED: &'static [&'static str] = &[
        "data[].original_mail_from",
        "data[].original_rcpt_to",
        "data[].dkim_domain",
        "data[].dkim_selector",
        "data[].dkim_identity",
        "data[].spf_dns",
        "data[].user_agent",
        "data[].delivery_result",
        "data[].arrival_date",
        "data[].feedback_type",
        "data[].auth_failure",
    ];
    type Input = FailureReportsInput;
    type Output = FailureReportList;

    async fn call(ctx: &Context, a: FailureReportsInput) -> Result<FailureReportList, ToolError> {
        let id = ctx.domain_id(&a.domain).await?;
        let params = ListFailureReportsParams {
            auth_failure: a.auth_failure,
            source_ip: None,
            page: a.page,
            per_page: a.per_page,
        };
        Ok(reports::failures::list(&ctx.app, ctx.caller()?, id, params).await?)
    }
}

/// `create_prospecting_report`.
pub struct CreateProspectingReport;

impl Tool for CreateProspectingReport {
    const NAME: &'static str = "create_prospecting_report";
    const DESCRIPTION: &'static str = "Audits 1 to 10 domains from live DNS (they need not be in the account) and stores a report written for a prospect, in English or French, with a public PDF link (`url`) that works for 90 days: share that link. The answer also carries the content: per-domain findings (pass|warn|fail|error), risk words, authorised sending services with their DKIM state, a potential-loss estimate and a plan timed to `deadline_weeks`. Names that are not domains, or whose nameservers answer nothing usable, are listed in `report.skipped_domains`. Editors and administrators.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("prospecting:write");
    const TITLE: &'static str = "Create prospecting report";
    const IDEMPOTENT: bool = false;
    const DNS: bool = true;
    type Input = CreateProspectingRequest;
    type Output = ProspectingReport;

    async fn call(
        ctx: &Context,
        input: CreateProspectingRequest,
    ) -> Result<ProspectingReport, ToolError> {
        Ok(prospecting::create(&ctx.app, ctx.caller()?, input).await?)
    }
}

/// `list_prospecting_reports`.
pub struct ListProspectingReports;

impl Tool for ListProspectingReports {
    const NAME: &'static str = "list_prospecting_reports";
    const DESCRIPTION: &'static str = "The organization's prospecting reports, newest first, without their content (each with its public `url` and `expires_at`). Call get_prospecting_report for one report's findings.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("prospecting:read");
    const TITLE: &'static str = "List prospecting reports";
    type Input = PageInput;
    type Output = ProspectingReportList;

    async fn call(ctx: &Context, page: PageInput) -> Result<ProspectingReportList, ToolError> {
        Ok(prospecting::list(&ctx.app, ctx.caller()?, page.into()).await?)
    }
}

/// One prospecting report.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportInput {
    /// The prospecting report id
    pub report_id: Uuid,
}

/// `get_prospecting_report`.
pub struct GetProspectingReport;

impl Tool for GetProspectingReport {
    const NAME: &'static str = "get_prospecting_report";
    const DESCRIPTION: &'static str = "One prospecting report with its content: the cover, each domain's findings and sending services, the potential loss and the plan.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("prospecting:read");
    const TITLE: &'static str = "Get prospecting report";
    type Input = ReportInput;
    type Output = ProspectingReport;

    async fn call(ctx: &Context, a: ReportInput) -> Result<ProspectingReport, ToolError> {
        Ok(prospecting::get(&ctx.app, ctx.caller()?, a.report_id).await?)
    }
}

/// `delete_prospecting_report`.
pub struct DeleteProspectingReport;

impl Tool for DeleteProspectingReport {
    const NAME: &'static str = "delete_prospecting_report";
    const DESCRIPTION: &'static str = "Deletes a prospecting report; its public link stops working at once. Editors and administrators; a member limited to groups deletes only their own.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("prospecting:write");
    const TITLE: &'static str = "Delete prospecting report";
    const DESTRUCTIVE: bool = true;
    type Input = ReportInput;
    type Output = Deleted;

    async fn call(ctx: &Context, a: ReportInput) -> Result<Deleted, ToolError> {
        prospecting::delete(&ctx.app, ctx.caller()?, a.report_id).await?;
        Ok(Deleted::id(a.report_id))
    }
}
