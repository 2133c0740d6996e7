//! `POST /domains/bulk` (SPEC §4.1): many domains in one request, each entry independent: read,
//! checked and stored on its own through the same path as `POST /domains`, so one bad or failing
//! entry never takes the others down.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::Json;
use crate::routes::domains::{CreateDomainRequest, create_one};
use crate::state::AppState;
use crate::views::ErrorBody;
use crate::views_domain::{self, domain_view};
use axum::extract::State;
use axum::http::StatusCode;
use mailward_domain::domain::Domain;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Most entries one bulk request may carry.
pub const MAX_BULK: usize = 500;

/// One bulk entry as documented. Entries are read one by one from JSON (see
/// [`parse_bulk_entry`]), so a malformed entry fails alone.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BulkDomain {
    /// The domain name.
    pub url: String,
    /// A group of the organization, or null.
    pub group_id: Option<Uuid>,
}

/// `POST /domains/bulk` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    /// 1 to 500 entries `{url, group_id}`, each checked on its own.
    #[schema(value_type = Vec<BulkDomain>)]
    pub domains: Vec<serde_json::Value>,
}

/// One bulk result, in request order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BulkEntry {
    /// The submitted `url`, echoed; null when the entry had no string `url`.
    pub url: Option<String>,
    /// `created` or `failed`.
    pub result: String,
    /// The created domain, or null.
    pub domain: Option<views_domain::Domain>,
    /// Why it failed, as `<code>: <message>` (codes in the route description), or null.
    pub reason: Option<String>,
    /// The entry field to blame for a failure (`url`, `group_id` or an unknown key), or null.
    pub param: Option<String>,
}

/// `POST /domains/bulk` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BulkResponse {
    /// How many were created.
    pub created_count: u32,
    /// How many failed.
    pub failed_count: u32,
    /// One entry per submitted domain, in request order.
    pub results: Vec<BulkEntry>,
}

/// Fields a bulk entry may carry.
const BULK_ENTRY_FIELDS: [&str; 2] = ["url", "group_id"];

/// Reads one bulk entry. Its failures are the ones `POST /domains` would answer for the same
/// object (400 `parameter_invalid_or_missing` naming the field), plus `invalid_entry` for an
/// entry that is not an object.
fn parse_bulk_entry(entry: &serde_json::Value) -> Result<BulkDomain, ApiError> {
    use serde_json::Value;
    let Some(fields) = entry.as_object() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_entry",
            "an entry must be an object with `url` and optional `group_id`",
        ));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !BULK_ENTRY_FIELDS.contains(&k.as_str()))
    {
        return Err(ApiError::invalid_param(
            unknown.clone(),
            format!("unknown field `{unknown}`, expected `url` or `group_id`"),
        ));
    }
    let url = match fields.get("url") {
        Some(Value::String(url)) => url.clone(),
        Some(_) => return Err(ApiError::invalid_param("url", "url must be a string")),
        None => return Err(ApiError::invalid_param("url", "missing field `url`")),
    };
    let bad_group = || ApiError::invalid_param("group_id", "group_id must be a UUID or null");
    let group_id = match fields.get("group_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(raw)) => Some(Uuid::parse_str(raw).map_err(|_| bad_group())?),
        Some(_) => return Err(bad_group()),
    };
    Ok(BulkDomain { url, group_id })
}

/// The result of one bulk entry. A server-side failure (storage) is logged and reported as
/// `internal_error` so the other entries, created or not, are still reported.
fn bulk_entry(
    url: Option<String>,
    outcome: Result<Domain, ApiError>,
    state: &AppState,
) -> BulkEntry {
    match outcome {
        Ok(domain) => BulkEntry {
            url,
            result: "created".into(),
            domain: Some(domain_view(&domain, &state.config)),
            reason: None,
            param: None,
        },
        Err(e) => {
            let (reason, param) = if e.status.is_client_error() {
                (
                    format!("{}: {}", e.code, e.message),
                    e.param.map(Into::into),
                )
            } else {
                tracing::error!(url = url.as_deref(), error = ?e, "bulk domain entry failed");
                (
                    "internal_error: storing this entry failed; retry it".to_owned(),
                    None,
                )
            };
            BulkEntry {
                url,
                result: "failed".into(),
                domain: None,
                reason: Some(reason),
                param,
            }
        }
    }
}

/// Adds many domains; always 200, entries independent.
#[utoipa::path(post, path = "/domains/bulk", tag = "domains", request_body = BulkRequest,
    description = "Editors, administrators or read-write keys. A body that is not JSON, lacks \
`domains`, carries another key, or whose `domains` is not an array of 1 to 500 entries answers 400 \
naming the field. Otherwise the answer is 200 even when every entry failed: one result per entry, \
in request order. Entries are independent: each is checked and stored on its own, so a malformed \
entry or a storage failure affects only that entry. `url` echoes the submitted string (null when \
the entry had none); `reason` is `<code>: <message>` with code `invalid_entry` (the entry is not a \
JSON object), `parameter_invalid_or_missing` (`param` names the entry field: `url` missing, not a \
string or not a domain name; `group_id` not a UUID string or null, or naming no group of the \
organization; any key other than `url` and `group_id`), `domain_exists` (already watched, also \
earlier in the same request) or `internal_error` (storing this entry failed; retry it). Each \
created domain emits `domain.created`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = BulkResponse), (status = 400, body = ErrorBody)))]
pub async fn bulk_create_domains(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<BulkRequest>,
) -> Result<axum::Json<BulkResponse>, ApiError> {
    principal.require_write()?;
    if body.domains.is_empty() || body.domains.len() > MAX_BULK {
        return Err(ApiError::invalid_param(
            "domains",
            format!("domains must hold 1 to {MAX_BULK} entries"),
        ));
    }
    let mut results = Vec::with_capacity(body.domains.len());
    let (mut created_count, mut failed_count) = (0u32, 0u32);
    for entry in &body.domains {
        let url = entry
            .get("url")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let outcome = match parse_bulk_entry(entry) {
            Ok(parsed) => {
                let request = CreateDomainRequest {
                    url: parsed.url,
                    group_id: parsed.group_id,
                    use_stored_scan: false,
                };
                create_one(&state, &principal, request).await
            }
            Err(e) => Err(e),
        };
        if outcome.is_ok() {
            created_count += 1;
        } else {
            failed_count += 1;
        }
        results.push(bulk_entry(url, outcome, &state));
    }
    Ok(axum::Json(BulkResponse {
        created_count,
        failed_count,
        results,
    }))
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(bulk_create_domains))
}
