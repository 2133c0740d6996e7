//! Usage (SPEC §2.12, §4.2): the domain counts and line items a bill is made of.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::admin::{Usage, UsageParams};
use mailward_http::extract::Query;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::usage;

/// The organization's usage.
#[utoipa::path(get, path = "/usage", tag = "usage", params(UsageParams),
    description = "Counts now: `active_domains` (monitoring established: status setup or \
drifted), `inactive_domains` (none, pending or failed), `parked_domains` (flagged parked, \
whatever their status), and `pricing_type`: the plan paid for (`free` until a checkout \
completes, whatever was chosen at signup; see GET /billing/subscription). `expand[]`: \
`line_items` (`{code, quantity}`, quantities above 0 only, derived from the subscription's \
state: DOMAIN-ACTIVE-FREE without a paid subscription; DOMAIN-ACTIVE-TRIAL during the 14-day \
trial that starts at checkout; then graduated tiers DOMAIN-ACTIVE-1TO10 (first 10), -11TO100 \
(next 90), -101TO1000 (next 900), -1001PLUS (the rest); DOMAIN-INACTIVE; DOMAIN-PARKED; \
AGENT-ADDON, the active domains on which agent proposals are enabled, on plans with the agent \
add-on; the subscription's item quantities are these counts), `domains` (`id`, `url`, \
`state` active|inactive|parked), `organizations` (the organizations created from this one with \
POST /organizations, with their counts), `aligned_messages` (messages passing DMARC aligned; 0 \
until aggregate reports are ingested). Members limited to groups get 403.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Usage), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn get_usage(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<UsageParams>,
) -> Result<axum::Json<Usage>, ApiError> {
    Ok(axum::Json(
        usage::usage(&app, &principal, &params.expand).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(get_usage))
}
