//! One-click unsubscribe (RFC 8058): a signed link per organization and switch, so the link in a
//! mail turns exactly that switch off and cannot be forged for another organization.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::notifications::Switch;
use mailward_domain::secrets::{constant_time_eq, hmac_sha256, hmac_sha256_hex};
use mailward_store::orgs;
use uuid::Uuid;

fn signature(state: &AppState, org: Uuid, switch: Switch) -> String {
    let key = hmac_sha256(&state.config.secret_key, b"mailward/unsubscribe/v1");
    hmac_sha256_hex(&key, format!("{org}.{}", switch.as_str()).as_bytes())[..32].to_owned()
}

/// The token of a link: `<organization>.<switch>.<signature>`.
pub fn token(state: &AppState, org: Uuid, switch: Switch) -> String {
    format!(
        "{org}.{}.{}",
        switch.as_str(),
        signature(state, org, switch)
    )
}

/// The link put in a mail.
pub fn url(state: &AppState, org: Uuid, switch: Switch) -> String {
    format!(
        "{}/notifications/unsubscribe?token={}",
        state.config.base_url.trim_end_matches('/'),
        token(state, org, switch)
    )
}

/// Checks a token: the organization and switch it names when its signature holds.
pub fn verify(state: &AppState, token: &str) -> Result<(Uuid, Switch), ServiceError> {
    let invalid = || ServiceError::invalid("token", "the unsubscribe link is not valid");
    let mut parts = token.trim().splitn(3, '.');
    let (Some(org), Some(switch), Some(sig)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid());
    };
    let org: Uuid = org.parse().map_err(|_| invalid())?;
    let switch = Switch::parse(switch).ok_or_else(invalid)?;
    if !constant_time_eq(sig.as_bytes(), signature(state, org, switch).as_bytes()) {
        return Err(invalid());
    }
    Ok((org, switch))
}

/// What an unsubscribe did.
#[derive(Debug, Clone)]
pub struct Unsubscribed {
    /// The organization's name.
    pub organization: String,
    /// The switch now off.
    pub switch: Switch,
}

/// Turns the link's switch off (idempotent: a second click changes nothing).
pub async fn apply(state: &AppState, token: &str) -> Result<Unsubscribed, ServiceError> {
    let (org_id, switch) = verify(state, token)?;
    let store = state.store.as_ref();
    for _ in 0..5 {
        let Some(current) = orgs::get(store, org_id).await? else {
            return Err(ServiceError::invalid(
                "token",
                "the organization of this link no longer exists",
            ));
        };
        let mut next = current.value.clone();
        switch.disable(&mut next.email_notifications);
        if next == current.value {
            return Ok(Unsubscribed {
                organization: next.name,
                switch,
            });
        }
        match orgs::save(store, &next, current.version, Vec::new()).await {
            Ok(_) => {
                tracing::info!(org.id = %org_id, switch = switch.as_str(), "notification switched off by its unsubscribe link");
                return Ok(Unsubscribed {
                    organization: next.name,
                    switch,
                });
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the organization kept changing; try the link again",
    ))
}
