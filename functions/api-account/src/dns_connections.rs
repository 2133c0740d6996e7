//! DNS connections: `/dns-connections`, `/dns-connections/{id}` and
//! `/dns-connections/{id}/coverage`.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::dns_connections::{
    CreateDnsConnection, DnsConnection, DnsConnectionCoverage, DnsConnectionList, DnsPublishResult,
    PublishDnsRecords,
};
use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_http::dns_quota::DnsQuota;
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::dns_connections;

/// The organization's DNS connections.
#[utoipa::path(get, path = "/dns-connections", tag = "organizations",
    description = "Every DNS connection of the organization, oldest first (at most 20): the \
provider, a label, what kind of credentials (`keys` or `role`) with a hint (the access key's \
last four characters, or the role ARN), the status of the last read and the zones seen then. \
Credentials are stored encrypted and never answered. Any member or key reads. `external_id` is \
the organization's own external id, which Mailward sends whenever it assumes a connection's role.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsConnectionList)))]
pub async fn list_dns_connections(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<DnsConnectionList>, ApiError> {
    Ok(axum::Json(dns_connections::list(&app, &principal).await?))
}

/// Connects a DNS host.
#[utoipa::path(post, path = "/dns-connections", tag = "organizations",
    request_body = CreateDnsConnection,
    description = "Administrators (or read-write keys of an administrator). Connects the \
organization's DNS host so Mailward can read its zones: `provider` route53 with either an IAM \
user's `access_key_id` and `secret_access_key` (the user needs `route53:ListHostedZones`), or a \
`role_arn` in the account that hosts the zones, which Mailward's role assumes (STS AssumeRole) \
always with the organization's own external id, the `external_id` of `GET /dns-connections`: \
make the role's trust policy require it, so no other organization can name the role: Mailward \
also tries once with a foreign external id, and a role it can assume that way is refused (422 \
`role_trust_too_broad` naming `credentials.role_arn`, nothing stored). An \
external id is never taken from input (400 naming `credentials.external_id`), and a role in \
Mailward's own AWS account is refused (400 naming `credentials.role_arn`); Mailward's own ARNs \
are kept out of error text. Administrators not limited to groups. The credentials are checked by \
reading the zones before anything is stored: refused credentials or a role that cannot be \
assumed answer 422 `dns_connection_failed` with the provider's reason; a provider that does not \
answer, 503 `dns_provider_unavailable`. Malformed fields answer 400 naming them (`provider`, \
`name`, `credentials.access_key_id`, `credentials.role_arn`, or \
`credentials` when neither or both kinds are given). 201 with the connection and its zones.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = DnsConnection), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn create_dns_connection(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateDnsConnection>,
) -> Result<(StatusCode, axum::Json<DnsConnection>), ApiError> {
    Ok((
        StatusCode::CREATED,
        axum::Json(dns_connections::create(&app, &principal, body).await?),
    ))
}

/// One DNS connection.
#[utoipa::path(get, path = "/dns-connections/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "DNS connection id")),
    description = "One connection with the zones seen at its last read.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsConnection), (status = 404, body = ErrorBody)))]
pub async fn get_dns_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<DnsConnection>, ApiError> {
    Ok(axum::Json(
        dns_connections::get(&app, &principal, id).await?,
    ))
}

/// Removes a DNS connection.
#[utoipa::path(delete, path = "/dns-connections/{id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "DNS connection id")),
    description = "Administrators. Deletes the connection and its stored credentials (revoke \
them at the provider too).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_dns_connection(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    dns_connections::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Which of the organization's domains a connection's zones serve.
#[utoipa::path(get, path = "/dns-connections/{id}/coverage", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "DNS connection id")),
    description = "Reads the connection's zones again (the connection keeps them, or the \
failure as `status` error) and splits the caller's domains (a member limited to groups sees \
their groups' domains) into `covered`, each with the zone serving it (the longest public zone \
that is the domain or a parent of it; private zones serve no public name), and `uncovered`. \
422 `dns_connection_failed` when the provider now refuses the credentials, 503 \
`dns_provider_unavailable` when it does not answer.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsConnectionCoverage), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn get_dns_connection_coverage(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<DnsConnectionCoverage>, ApiError> {
    Ok(axum::Json(
        dns_connections::coverage(&app, &principal, id).await?,
    ))
}

/// Publishes a domain's planned records through a connection.
#[utoipa::path(post, path = "/dns-connections/{id}/publish", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "DNS connection id")),
    request_body = PublishDnsRecords,
    description = "Editors, administrators or read-write keys. Writes the records the records guidance (`GET /domains/{id}/dns-records`) asks the domain to create or change into the connection's public zone that serves it (the longest one), with the connection's credentials: a TXT set keeps the values of other kinds at its name (a verification token stays when the SPF record is replaced) and drops those the guidance deletes; a CNAME replaces the TXT standing where it belongs. Records already published are left alone. Each record set's outcome is in `record_sets` (`published`, or `failed` with the provider's reason; the others are still written). 422 `domain_not_covered` (param `domain_id`) when no zone of the connection serves the domain; 404 for a connection or domain the caller cannot see. It reads the records guidance from live DNS, so it counts in the DNS buckets (`dns`, and `api_key_dns` for API keys; 429 over them).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsPublishResult), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = RateLimitBody), (status = 503, body = ErrorBody)))]
pub async fn publish_dns_records(
    State(app): State<AppState>,
    principal: Principal,
    _quota: DnsQuota,
    PathId(id): PathId,
    Json(body): Json<PublishDnsRecords>,
) -> Result<axum::Json<DnsPublishResult>, ApiError> {
    Ok(axum::Json(
        dns_connections::publish(&app, &principal, id, body).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(
            list_dns_connections,
            create_dns_connection
        ))
        .routes(utoipa_axum::routes!(
            get_dns_connection,
            delete_dns_connection
        ))
        .routes(utoipa_axum::routes!(get_dns_connection_coverage))
        .routes(utoipa_axum::routes!(publish_dns_records))
}
