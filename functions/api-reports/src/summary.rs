//! The DMARC summary of a domain and its senders (SPEC §2.12, §4.1).

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::reports::{
    EnforcementImpact, ImpactParams, ReportSummary, SendersParams, SendersView, SummaryParams,
};
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::{impact, views};

/// The DMARC summary of a domain.
#[utoipa::path(get, path = "/domains/{id}/reports/summary", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), SummaryParams),
    description = "From the domain's imported aggregate reports over `period` (last_7_days, \
last_14_days or last_30_days; default last_7_days), a window ending yesterday (UTC) and starting no \
earlier than the plan keeps data (free 30 days, paid plans 365). Pass shares are 0-100 with two \
decimals (0 without volume); `spf_pass_pct` and `dkim_pass_pct` are the aligned results. `totals` \
splits the volume: `forwarded` (overridden by the receiver as forwarded, trusted_forwarder or \
mailing_list), `undetermined` (no readable DMARC evaluation), `compliant` (passed), \
`non_compliant` (failed, from a source that also sent passing mail in the window: a known sender \
misconfigured) and `unknown` (failed, from a source never seen passing). `previous_period` is \
the same number of days just before; `delta` is window minus previous. `stored` repeats the \
domain's 14-day figures. `recommendation.status`: `at_maximum` at p=reject; \
`advance_recommended` when the window holds at least 100 messages and the next policy up would \
stop no mail of legitimate senders over the last 30 days (the enforcement impact's \
`legitimate_affected` is 0: what still fails comes from unidentified sources, the mail \
enforcement is meant to stop); `hold` otherwise, with the reason. `probe_tasks` lists \
at most 10 open or pending sender tasks (most severe first) and `probe_tasks_total` counts them. \
`next_action.code`: wait_for_reports, fix_failing_senders, advance_policy or keep_monitoring.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ReportSummary), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn report_summary(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<SummaryParams>,
) -> Result<axum::Json<ReportSummary>, ApiError> {
    Ok(axum::Json(
        views::summary(&app, &principal, id, &params).await?,
    ))
}

/// The senders of a domain.
#[utoipa::path(get, path = "/domains/{id}/reports/senders", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), SendersParams),
    description = "The sending IPs of the domain's aggregate reports over `period` (as the \
summary), highest volume first, at most `limit` (1-20, default 20). `total_volume` and \
`sender_count` cover every sender of the window; `truncated` says whether more exist than listed. \
Each entry: `source_ip`, `volume`, `share_pct` of the window, aligned pass shares, the \
`header_from` and `envelope_from` domains and DKIM signers (`domain/selector`) seen, and \
`last_seen` (YYYY-MM-DD).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SendersView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn report_senders(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<SendersParams>,
) -> Result<axum::Json<SendersView>, ApiError> {
    Ok(axum::Json(
        views::senders(&app, &principal, id, &params).await?,
    ))
}

/// What a stricter policy would do now.
#[utoipa::path(get, path = "/domains/{id}/reports/enforcement-impact", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ImpactParams),
    description = "Beyond the SPEC. From the last 30 days of aggregate reports (ending yesterday, \
clamped to retention): which senders, and what share of legitimate mail, `policy` (quarantine or \
reject; default the next policy up from the published one) would quarantine or reject if it were \
published now, and why (`reasons`: spf_not_aligned, dkim_not_aligned). Affected mail failed \
DMARC and was not forwarded; forwarded mail is counted apart (`forwarded`: receivers decide it \
through their forwarding overrides). A sender is `legitimate` when confirmed, recognised in the \
catalogue and not discarded, or seen passing DMARC in the window; everything else failing is \
`unknown_affected`, the mail enforcement is meant to stop. Senders are the domain's \
DomainSources matched by source IP (an address no sender lists stands alone, `sender_id` \
null); at most 20 are listed, legitimate first, then by affected messages (`truncated` says \
more exist). `safe` is true when there is report data and no legitimate mail is affected. The \
policy is assumed to apply to all failing mail (no `pct` sampling, as in RFC 9989), subdomains \
included. The summary's recommendation reads the same figure.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = EnforcementImpact), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn enforcement_impact(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<ImpactParams>,
) -> Result<axum::Json<EnforcementImpact>, ApiError> {
    Ok(axum::Json(
        impact::enforcement_impact(&app, &principal, id, &params).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(report_summary))
        .routes(utoipa_axum::routes!(report_senders))
        .routes(utoipa_axum::routes!(enforcement_impact))
}
