//! Bulk add (SPEC §4.1): many domains in one call, each entry independent: read, checked and
//! stored on its own through the same path as a single add, so one bad or failing entry never
//! takes the others down.

use super::create_one;
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::domains::{
    BulkDomain, BulkEntry, BulkRequest, BulkResponse, CreateDomainRequest, MAX_BULK,
};
use mailward_domain::domain::Domain;
use serde_json::Value;
use uuid::Uuid;

/// Fields a bulk entry may carry.
const BULK_ENTRY_FIELDS: [&str; 2] = ["url", "group_id"];

/// Reads one bulk entry. Its failures are the ones a single add would answer for the same
/// object (`parameter_invalid_or_missing` naming the field), plus `invalid_entry` for an entry
/// that is not an object.
fn parse_bulk_entry(entry: &Value) -> Result<BulkDomain, ServiceError> {
    let Some(fields) = entry.as_object() else {
        return Err(ServiceError::new(
            ErrorKind::Invalid,
            "invalid_entry",
            "an entry must be an object with `url` and optional `group_id`",
        ));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !BULK_ENTRY_FIELDS.contains(&k.as_str()))
    {
        return Err(ServiceError::invalid(
            unknown.clone(),
            format!("unknown field `{unknown}`, expected `url` or `group_id`"),
        ));
    }
    let url = match fields.get("url") {
        Some(Value::String(url)) => url.clone(),
        Some(_) => return Err(ServiceError::invalid("url", "url must be a string")),
        None => return Err(ServiceError::invalid("url", "missing field `url`")),
    };
    let bad_group = || ServiceError::invalid("group_id", "group_id must be a UUID or null");
    let group_id = match fields.get("group_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(raw)) => Some(Uuid::parse_str(raw).map_err(|_| bad_group())?),
        Some(_) => return Err(bad_group()),
    };
    Ok(BulkDomain { url, group_id })
}

/// The result of one entry. A server-side failure (storage) is logged and reported as
/// `internal_error`, so the other entries, created or not, are still reported.
fn bulk_entry(
    app: &AppState,
    url: Option<String>,
    outcome: &Result<Domain, ServiceError>,
) -> BulkEntry {
    match outcome {
        Ok(domain) => BulkEntry {
            url,
            result: "created".into(),
            domain: Some(app.domain_view(domain)),
            reason: None,
            param: None,
        },
        Err(e) => {
            let (reason, param) = if e.kind().is_client_error() {
                (
                    format!("{}: {}", e.code(), e.message()),
                    e.param_name().map(str::to_owned),
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

/// Adds up to [`MAX_BULK`] domains; one result per entry, in request order. Each created domain
/// emits `domain.created`, and all of them are queued for evaluation.
pub async fn create_many(
    app: &AppState,
    caller: &Caller,
    input: BulkRequest,
) -> Result<BulkResponse, ServiceError> {
    caller.require_write()?;
    if input.domains.is_empty() || input.domains.len() > MAX_BULK {
        return Err(ServiceError::invalid(
            "domains",
            format!("domains must hold 1 to {MAX_BULK} entries"),
        ));
    }
    let mut results = Vec::with_capacity(input.domains.len());
    let mut created = Vec::new();
    let mut failed_count = 0u32;
    let mut cap = super::DomainCap::load(app, caller.org_id).await?;
    for entry in &input.domains {
        let url = entry.get("url").and_then(Value::as_str).map(str::to_owned);
        let outcome = match parse_bulk_entry(entry) {
            Ok(parsed) => {
                let request = CreateDomainRequest {
                    url: parsed.url,
                    group_id: parsed.group_id,
                    use_stored_scan: false,
                };
                match cap.take() {
                    Ok(()) => {
                        let made = create_one(app, caller, request).await;
                        if made.is_err() {
                            cap.give_back();
                        }
                        made
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        match &outcome {
            Ok(domain) => created.push((domain.org_id, domain.id)),
            Err(_) => failed_count += 1,
        }
        results.push(bulk_entry(app, url, &outcome));
    }
    crate::evaluation::evaluate_soon(app, &created).await;
    if !created.is_empty() {
        crate::usage::quantities_changed(app, caller.org_id).await;
    }
    Ok(BulkResponse {
        created_count: u32::try_from(created.len()).unwrap_or(u32::MAX),
        failed_count,
        results,
    })
}
