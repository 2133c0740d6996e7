//! Records Mailward hosts for a domain: `POST /domains/{id}/hosted-dmarc`.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::records::HostedDmarcResponse;
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::PathId;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::hosting::dmarc as hosted;

/// Turns hosted DMARC on.
#[utoipa::path(post, path = "/domains/{id}/hosted-dmarc", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Editors, administrators or read-write keys; no body. Mailward serves the \
domain's DMARC record (built from the current `dmarc_options`, republished whenever they change) \
at `<owner>._dmarc.<hosted zone>` (`<owner>` is the first 12 hex digits of the domain id, a dot, \
then the domain: every name Mailward serves for a domain is under it, so two organizations \
watching the same name never overwrite each other's records), and the customer publishes `_dmarc.<domain>` as a CNAME to it \
(`record`) and deletes any DMARC TXT at that host (`instructions`). Idempotent: calling again \
republishes and answers the same. Nothing is stored unless publishing succeeds (503 \
`publish_failed` otherwise). `hosted_dmarc_active` is true only when live DNS already shows the \
CNAME; `managed_dns_status.dmarc` is `syncing` until then, and the monitoring sweep (and the hourly reconciliation) move it to `ready`, or \
`error` with `dmarc_error_reason` `drift` (a working CNAME removed), `record_conflict` (a TXT \
where the CNAME belongs), `setup_timeout` (no CNAME within the pending window) or \
`publish_failed`, emitting `domain.hosted_record.ready|error` with `data.record` = dmarc. From \
then on the records guidance and verification plan the CNAME, and a TXT in its place is \
`dmarc_record_added_as_txt_not_cname`. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = HostedDmarcResponse), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn enable_hosted_dmarc(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
) -> Result<axum::Json<HostedDmarcResponse>, ApiError> {
    Ok(axum::Json(hosted::enable(&app, &principal, id).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(enable_hosted_dmarc))
}
