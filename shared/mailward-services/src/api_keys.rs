//! API keys (SPEC §5.4): listed and created by a signed-in administrator; rotated or deleted by
//! an administrator or with a read-write key. A rotated or deleted key is refused at once.

use crate::activity::{self, Change};
use crate::caller::{Caller, Credential};
use crate::error::ServiceError;
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::api_keys::{ApiKey, ApiKeyList, ApiKeyWithSecret, CreateApiKeyRequest};
use mailward_store::api_keys;
use uuid::Uuid;

/// Longest key name, in characters.
pub const MAX_NAME_CHARS: usize = 100;

fn validate_name(raw: &str) -> Result<String, ServiceError> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(
            "name",
            "name must be 1 to 100 printable characters",
        ));
    }
    Ok(name.to_owned())
}

/// The organization's keys (never the keys themselves), oldest first.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    page: PageParams,
) -> Result<ApiKeyList, ServiceError> {
    caller.require_session_admin()?;
    let keys = api_keys::list(app.store.as_ref(), caller.org_id).await?;
    let (keys, page_info) = paginate(page, keys)?;
    Ok(ApiKeyList {
        data: keys.iter().map(ApiKey::from).collect(),
        page_info,
    })
}

/// Creates a key; the answer is the only time the key is shown. Only a signed-in
/// administrator may, so a leaked key cannot mint more keys.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: CreateApiKeyRequest,
) -> Result<ApiKeyWithSecret, ServiceError> {
    let account = caller.require_session_org_admin()?;
    let name = validate_name(&input.name)?;
    let key = api_keys::generate(
        caller.org_id,
        name,
        input.access.into(),
        Some(account),
        app.clock.now(),
    );
    let mut ops = api_keys::create_ops(&key.meta)?;
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "api_key.created",
            "api_key",
            Some(key.meta.id),
            format!("created API key {} ({:?})", key.meta.name, key.meta.access),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(ApiKeyWithSecret {
        api_key: ApiKey::from(&key.meta),
        key: key.secret,
    })
}

/// Replaces a key's secret; the old secret is refused from the next request on.
pub async fn rotate(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<ApiKeyWithSecret, ServiceError> {
    caller.require_org_admin()?;
    let current = api_keys::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("API key"))?;
    let entry = activity::ops(
        app,
        caller,
        Change::new(
            "api_key.rotated",
            "api_key",
            Some(id),
            format!("rotated API key {}", current.value.name),
        ),
    )?;
    let rotated = api_keys::rotate(app.store.as_ref(), current, app.clock.now(), entry).await?;
    Ok(ApiKeyWithSecret {
        api_key: ApiKey::from(&rotated.meta),
        key: rotated.secret,
    })
}

/// Deletes a key (a key may delete itself); it is refused from the next request on.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let current = api_keys::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("API key"))?;
    let mut ops = api_keys::delete_ops(&current.value, Some(current.version));
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "api_key.deleted",
            "api_key",
            Some(id),
            format!("deleted API key {}", current.value.name),
        ),
    )?);
    app.store.transact(ops).await?;
    if matches!(caller.credential, Credential::ApiKey { key_id, .. } if key_id == id) {
        tracing::info!(api_key.id = %id, "an API key deleted itself");
    }
    Ok(())
}
