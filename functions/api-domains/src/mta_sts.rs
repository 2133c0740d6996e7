//! Hosted MTA-STS: `GET/POST/PUT/DELETE /domains/{id}/mta-sts` and `POST …/mta-sts/retry`.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::mta_sts::{MtaStsRequest, MtaStsState};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::{Json, OptionalJson, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::hosting::mta_sts;

/// The domain's MTA-STS state.
#[utoipa::path(get, path = "/domains/{id}/mta-sts", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "The hosted MTA-STS state: whether hosting is on, the policy (`mode`, \
`max_age`, the `mx:` hosts, its `id` and text), where senders fetch it, the two CNAMEs to publish \
and `managed_dns_status.mta_sts`. A domain that never enabled hosting answers `enabled` false, \
`mode` none and no policy.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MtaStsState), (status = 404, body = ErrorBody)))]
pub async fn get_mta_sts(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<MtaStsState>, ApiError> {
    Ok(axum::Json(mta_sts::get(&app, &principal, id).await?))
}

/// Turns hosted MTA-STS on.
#[utoipa::path(post, path = "/domains/{id}/mta-sts", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    request_body(content = Option<MtaStsRequest>, description = "Optional; `mode` defaults to testing, `max_age` to 86400."),
    description = "Editors, administrators or read-write keys. Mailward builds the policy from the \
domain's live MX hosts (read without caches; a domain without MX answers 422 `mta_sts_no_mx` \
unless `mode` is none; DNS failing answers 503 `mx_lookup_failed`), serves it as `text/plain` at \
`https://mta-sts.<domain>/.well-known/mta-sts.txt` and serves the `_mta-sts` TXT with the policy \
`id` at `<owner>._mta-sts.<hosted zone>`. The customer publishes the two CNAMEs of `records`: \
`_mta-sts.<domain>` (so every policy edit gets a new `id` with no DNS change on their side) and \
`mta-sts.<domain>`. `max_age` must be 86400 to 31557600 (400 naming `max_age`). A policy is served \
for the name only once the domain's owner chose it in DNS (tenant trust): several accounts may \
enable hosting for one name, and the name serves the policy of the account whose owner-specific \
`_mta-sts` CNAME target the domain publishes; no certificate is requested before that CNAME is \
seen (at most 100 per account), and retiring a policy never removes another account's. \
When hosting is already on, this changes the policy like PUT. Emits `mta_sts.enabled` (data.object \
is this state). `managed_dns_status.mta_sts` is syncing until live DNS shows both CNAMEs, then \
ready (`domain.hosted_record.ready` with `data.record` mta_sts); error with `drift` when one goes, \
`record_conflict` when a TXT of the customer's own stands at `_mta-sts` (its id would not follow the policy), \
`setup_timeout` when they never appear within the pending window, `publish_failed` when the zone \
refused the TXT. The hourly reconciliation rebuilds the policy with a new id when the MX hosts change \
(`mta_sts.updated`). The records guidance plans both CNAMEs (and, on AWS, the certificate's validation CNAME, purpose `mta_sts_policy`). HTTPS for `mta-sts.<domain>`: on AWS \
a certificate is requested at once (`certificate`, status pending_validation, its DNS validation \
CNAME added to `records`; keep it published, renewals use it), then a CloudFront front is deployed \
and the status is ready only once it serves; a validation not seen within the pending window is \
error `setup_timeout`, a refused certificate `certificate_invalid`, both until \
`POST /domains/{id}/mta-sts/retry`. Locally the stack serves the host itself over HTTP \
(`certificate.status` not_required). Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MtaStsState), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn enable_mta_sts(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
    OptionalJson(body): OptionalJson<MtaStsRequest>,
) -> Result<axum::Json<MtaStsState>, ApiError> {
    Ok(axum::Json(
        mta_sts::enable(&app, &principal, id, body).await?,
    ))
}

/// Changes the hosted policy.
#[utoipa::path(put, path = "/domains/{id}/mta-sts", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    request_body = MtaStsRequest,
    description = "Editors, administrators or read-write keys. Changes `mode` and/or `max_age` \
(absent fields keep their value; `max_age` 86400 to 31557600). The MX hosts are read again; a \
changed policy gets a new `id` (even when it returns to an earlier text) and emits \
`mta_sts.updated`; unchanged values change nothing. 409 `mta_sts_not_enabled` when hosting is \
off. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MtaStsState), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn update_mta_sts(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
    Json(body): Json<MtaStsRequest>,
) -> Result<axum::Json<MtaStsState>, ApiError> {
    Ok(axum::Json(
        mta_sts::update(&app, &principal, id, body).await?,
    ))
}

/// Turns hosted MTA-STS off.
#[utoipa::path(delete, path = "/domains/{id}/mta-sts", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys. Follows RFC 8461 §8.3: the policy \
becomes `mode: none` with a new `id` and stays served until the previous `max_age` has passed \
(`retiring_until`), so senders that cached it learn it is withdrawn; then the hourly reconciliation \
removes the policy and the TXT, and the customer may delete the CNAMEs. Emits \
`mta_sts.disabled`. Idempotent: answers the state when hosting is already off.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MtaStsState), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn disable_mta_sts(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<MtaStsState>, ApiError> {
    Ok(axum::Json(mta_sts::disable(&app, &principal, id).await?))
}

/// Requests a fresh certificate for the policy host after a failed setup.
#[utoipa::path(post, path = "/domains/{id}/mta-sts/retry", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys. On AWS the policy host \
`mta-sts.<domain>` is served by an HTTPS front (a CloudFront distribution) presenting an ACM \
certificate validated by DNS: `certificate.status` is pending_validation until the validation CNAME \
of `records` is published, deploying while the front deploys, then active. A certificate whose \
validation was not seen within the pending window (`setup_timeout`), or that the authority refused \
(`certificate_invalid`), turns `managed_dns_status.mta_sts` to error with that reason and stays \
failed until this call. It requests a new certificate (the old one is taken down) and answers the \
MTA-STS state with status syncing. Refused with 409 and an explanation unless hosting is on \
(`mta_sts_not_enabled`), the state is error (`mta_sts_not_in_error`) and `mta-sts.<domain>` \
CNAMEs to Mailward in live DNS (`mta_sts_cname_missing`); a setup in progress is refused, not \
restarted (`mta_sts_setup_in_progress`). Answers the MTA-STS state unchanged (200) when the \
certificate is already active, or not required (the local stack serves the policy itself over HTTP). \
503 `certificate_request_failed` when the certificate authority does not answer; nothing changes.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = MtaStsState), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn retry_mta_sts(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<MtaStsState>, ApiError> {
    Ok(axum::Json(mta_sts::retry(&app, &principal, id).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(
            get_mta_sts,
            enable_mta_sts,
            update_mta_sts,
            disable_mta_sts
        ))
        .routes(utoipa_axum::routes!(retry_mta_sts))
}
