//! A domain's rollout plan (SPEC §2.9) and the change preview.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::tasks::{DomainPlan, PreviewBody, PreviewRequest, PreviewResponse};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::{plan, preview};

/// The domain's rollout plan.
#[utoipa::path(get, path = "/domains/{id}/plan", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Four stages: `setup` (steps dmarc-setup, spf-setup, mx-setup, dns-conflicts), \
`alignment` (senders-confirm, alignment-spf, alignment-dkim), `enforcement` (dmarc-quarantine, \
dmarc-reject-full, from the policy observed in DNS) and `monitoring` (mta-sts, tls-rpt, \
mx-certificates, ttl; optional step bimi). A step is listed while it has active tasks \
(`in_progress`, with the ids of its open and pending tasks, its most severe priority and the sum \
of their score gains) or before it started (`upcoming`), and leaves the plan when done; a stage \
is `completed` when none of its steps remain, the first with steps left is `current` (its number \
is `current_stage`), later ones `pending`. Before the domain's first evaluation every step is \
upcoming. A parked domain has no steps: stage 1 is current until it is locked down. \
`upcoming_steps` lists the upcoming steps across stages, and is empty for a parked domain and \
when `agent_proposals_enabled` is false (the domain's own setting, else its organization's \
`settings.agent_proposals_enabled`, default true). `scan_findings` is the onboarding scan the \
domain was added with (`use_stored_scan`), each finding linked to today's tasks; null otherwise.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DomainPlan), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_plan(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<DomainPlan>, ApiError> {
    Ok(axum::Json(plan::plan(&app, &principal, id).await?))
}

/// Previews proposed records.
#[utoipa::path(post, path = "/domains/{id}/preview", tag = "domains", request_body = PreviewBody,
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "What the domain would look like with the proposed record values (any of \
`dmarc`, `spf`, `dkim` [{selector, value}], `mta_sts`, `tls_rpt`, `bimi`), without storing \
anything or changing DNS: each value replaces what DNS serves for its purpose (the SPF value \
replaces every v=spf1 record at the domain, the others the record of their kind at their name), \
and everything else is read from live DNS. The answer gives the current and proposed score and \
band, each dimension's verdict, the SPF tree and lookup count, the open tasks the change would \
resolve and the tasks it would open, the records guidance's warnings, and what each proposed \
record's own parser says of it (`records`: an invalid record is reported there, and the audit \
scores it as receivers would treat it), and, when the proposed DMARC record enforces \
(p=quarantine or p=reject), `enforcement_impact`: what that policy would quarantine or reject \
of the last 30 days' reported mail (as `GET /domains/{id}/reports/enforcement-impact`; null \
otherwise). The audit, task derivation and scoring are the \
monitoring sweep's own, so publishing the proposed values gives the score the next pass \
computes. At least one record is required (400 naming `dmarc` otherwise); a value of more than \
4080 bytes or with control characters answers 400 naming it; at most 10 DKIM keys. 422 \
`preview_unavailable` when the domain cannot be audited at all (it does not exist, or its name \
servers do not answer). Resolves DNS, so it counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = PreviewResponse), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn preview_domain(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
    Json(body): Json<PreviewRequest>,
) -> Result<axum::Json<PreviewResponse>, ApiError> {
    Ok(axum::Json(
        preview::preview(&app, &principal, id, body).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(get_plan))
        .routes(utoipa_axum::routes!(preview_domain))
}
