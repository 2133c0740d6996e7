//! Webhook endpoints (SPEC §4.9): register, read, change, delete, rotate the signing secret, and
//! read the delivery attempts. Secrets are generated here, sealed at rest and shown once.

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::outbound::client::check_url;
use crate::pagination::paginate;
use crate::secret_box;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::webhooks::{
    CreateWebhookEndpointRequest, SettableStatus, UpdateWebhookEndpointRequest, WebhookDelivery,
    WebhookDeliveryList, WebhookEndpoint as EndpointView, WebhookEndpointList,
    WebhookEndpointWithSecret, WebhookEventList, WebhookEventType,
};
use mailward_domain::events::{CATALOGUE, lookup};
use mailward_domain::secrets::new_webhook_secret;
use mailward_domain::webhooks::{EndpointStatus, WebhookEndpoint};
use mailward_store::api_keys::last_four;
use mailward_store::{Versioned, webhooks};
use serde_json::json;
use uuid::Uuid;

/// Longest endpoint description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;

fn validate_url(app: &AppState, raw: &str) -> Result<String, ServiceError> {
    check_url(raw.trim(), app.config.outbound.allow_loopback)
        .map(|u| u.to_string())
        .map_err(|m| ServiceError::invalid("url", format!("url: {m}")))
}

fn validate_description(raw: Option<String>) -> Result<Option<String>, ServiceError> {
    match raw {
        Some(d) if d.chars().count() > MAX_DESCRIPTION_CHARS => Err(ServiceError::invalid(
            "description",
            format!("description must be at most {MAX_DESCRIPTION_CHARS} characters"),
        )),
        Some(d) if d.trim().is_empty() => Ok(None),
        other => Ok(other),
    }
}

/// Every name must be in the catalogue; the offending names are listed.
fn validate_events(raw: Vec<String>) -> Result<Vec<String>, ServiceError> {
    let unknown: Vec<&str> = raw
        .iter()
        .filter(|e| lookup(e).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(ServiceError::invalid(
            "enabled_events",
            format!(
                "unknown event type {}; see GET /webhook-events",
                unknown.join(", ")
            ),
        )
        .details(json!({ "unknown_events": unknown })));
    }
    let mut events = raw;
    events.sort();
    events.dedup();
    Ok(events)
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<Versioned<WebhookEndpoint>, ServiceError> {
    webhooks::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("webhook endpoint"))
}

fn sealed(app: &AppState, secret: &str) -> Result<String, ServiceError> {
    secret_box::seal(&app.config.secret_key, secret).map_err(ServiceError::internal)
}

/// The event catalogue (public).
pub fn event_catalogue() -> WebhookEventList {
    WebhookEventList {
        data: CATALOGUE
            .iter()
            .map(|e| WebhookEventType {
                event_type: e.name.into(),
                description: e.description.into(),
                object: e.object.into(),
            })
            .collect(),
    }
}

/// An endpoint URL as a caller who may not manage endpoints sees it: the scheme, host and port
/// alone (`https://hooks.example/...`): a receiver's URL often carries its credentials in the
/// userinfo, path or query. It stays a valid URI.
pub fn masked_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(url) => {
            let host = url.host_str().unwrap_or("hidden.invalid");
            match url.port() {
                Some(port) => format!("{}://{host}:{port}/...", url.scheme()),
                None => format!("{}://{host}/...", url.scheme()),
            }
        }
        Err(_) => "https://hidden.invalid/...".to_owned(),
    }
}

/// The endpoint as `caller` sees it: whole for whoever may manage endpoints, the URL masked
/// for everyone else (viewers, editors, read-only keys, members limited to groups).
fn view_for(caller: &Caller, endpoint: &WebhookEndpoint) -> EndpointView {
    let mut view = EndpointView::from(endpoint);
    if caller.require_org_admin().is_err() {
        view.url = masked_url(&view.url);
    }
    view
}

/// The organization's endpoints, oldest first.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    page: PageParams,
) -> Result<WebhookEndpointList, ServiceError> {
    let endpoints = webhooks::list(app.store.as_ref(), caller.org_id).await?;
    let (endpoints, page_info) = paginate(page, endpoints)?;
    Ok(WebhookEndpointList {
        data: endpoints.iter().map(|e| view_for(caller, e)).collect(),
        page_info,
    })
}

/// Registers an endpoint pinned to the caller's API version; the answer carries the signing
/// secret, the only time it is shown.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateWebhookEndpointRequest,
) -> Result<WebhookEndpointWithSecret, ServiceError> {
    caller.require_org_admin()?;
    let url = validate_url(app, &input.url)?;
    let description = validate_description(input.description)?;
    let enabled_events = validate_events(input.enabled_events)?;
    let secret = new_webhook_secret();
    let now = app.clock.now();
    let endpoint = WebhookEndpoint {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        url,
        description,
        enabled_events,
        status: EndpointStatus::Enabled,
        sealed_secret: sealed(app, &secret)?,
        secret_last_four: last_four(&secret),
        api_version: caller.version.as_str().into(),
        consecutive_failures: 0,
        enabled_since: Some(now),
        created_at: now,
        updated_at: now,
    };
    let mut ops = vec![webhooks::create_op(&endpoint)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "webhook_endpoint.created",
            "webhook_endpoint",
            Some(endpoint.id),
            format!("registered webhook endpoint {}", endpoint.url),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(WebhookEndpointWithSecret {
        endpoint: EndpointView::from(&endpoint),
        secret,
    })
}

/// One endpoint.
pub async fn get(app: &AppState, caller: &Caller, id: Uuid) -> Result<EndpointView, ServiceError> {
    Ok(view_for(caller, &load(app, caller, id).await?.value))
}

/// Changes an endpoint; `ENABLED` re-enables it and clears its failure counter.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateWebhookEndpointRequest,
) -> Result<EndpointView, ServiceError> {
    caller.require_org_admin()?;
    let current = load(app, caller, id).await?;
    let mut endpoint = current.value.clone();
    if let Some(url) = &input.url {
        endpoint.url = validate_url(app, url)?;
    }
    if let Some(description) = input.description {
        endpoint.description = validate_description(description)?;
    }
    if let Some(events) = input.enabled_events {
        endpoint.enabled_events = validate_events(events)?;
    }
    match input.status {
        Some(SettableStatus::Enabled) => {
            if endpoint.status != EndpointStatus::Enabled {
                endpoint.enabled_since = Some(app.clock.now());
            }
            endpoint.status = EndpointStatus::Enabled;
            endpoint.consecutive_failures = 0;
        }
        Some(SettableStatus::Disabled) => endpoint.status = EndpointStatus::Disabled,
        None => {}
    }
    if endpoint != current.value {
        endpoint.updated_at = app.clock.now();
        let mut ops = vec![webhooks::save_op(&endpoint, current.version)?];
        ops.extend(activity::ops(
            app,
            caller,
            Change::new(
                "webhook_endpoint.updated",
                "webhook_endpoint",
                Some(endpoint.id),
                format!("changed webhook endpoint {}", endpoint.url),
            ),
        )?);
        app.store.transact(ops).await?;
    }
    Ok(EndpointView::from(&endpoint))
}

/// Deletes an endpoint; its delivery attempts stay readable for 30 days.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let entry = activity::ops(
        app,
        caller,
        Change::new(
            "webhook_endpoint.deleted",
            "webhook_endpoint",
            Some(id),
            "deleted a webhook endpoint",
        ),
    )?;
    if !webhooks::delete(
        app.store.as_ref(),
        caller.org_id,
        id,
        app.clock.now(),
        entry,
    )
    .await?
    {
        return Err(ServiceError::not_found("webhook endpoint"));
    }
    Ok(())
}

/// Replaces the signing secret; every attempt from now on is signed with the new one.
pub async fn rotate_secret(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<WebhookEndpointWithSecret, ServiceError> {
    caller.require_org_admin()?;
    let current = load(app, caller, id).await?;
    let mut endpoint = current.value;
    let secret = new_webhook_secret();
    endpoint.sealed_secret = sealed(app, &secret)?;
    endpoint.secret_last_four = last_four(&secret);
    endpoint.updated_at = app.clock.now();
    let mut ops = vec![webhooks::save_op(&endpoint, current.version)?];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "webhook_endpoint.secret_rotated",
            "webhook_endpoint",
            Some(endpoint.id),
            format!("rotated the signing secret of {}", endpoint.url),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(WebhookEndpointWithSecret {
        endpoint: EndpointView::from(&endpoint),
        secret,
    })
}

/// An endpoint's delivery attempts of the last 30 days, newest first. The endpoint must exist
/// or have been deleted within that window; any other id is not found.
pub async fn deliveries(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    page: PageParams,
) -> Result<WebhookDeliveryList, ServiceError> {
    let store = app.store.as_ref();
    if !webhooks::known(store, caller.org_id, id).await? {
        return Err(ServiceError::not_found("webhook endpoint"));
    }
    let attempts = webhooks::list_attempts(store, caller.org_id, id).await?;
    let (attempts, page_info) = paginate(page, attempts)?;
    Ok(WebhookDeliveryList {
        data: attempts
            .iter()
            .map(|a| {
                let mut delivery = WebhookDelivery::from(a);
                if caller.require_org_admin().is_err() {
                    delivery.url = masked_url(&delivery.url);
                }
                delivery
            })
            .collect(),
        page_info,
    })
}
