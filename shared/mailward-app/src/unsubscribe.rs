//! One-click unsubscribe (RFC 8058): a signed link per organization and switch, so the link in a
//! mail turns exactly that switch off and cannot be forged for another organization. Mail to
//! addresses a person listed (an alert rule's email destination, a scheduled report's
//! recipients, often outside the organization) carries a link signed for that address and that
//! rule or report: it takes the address off that list alone, never the switch of the whole
//! organization.

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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

fn recipient_signature(
    state: &AppState,
    org: Uuid,
    switch: Switch,
    list: Uuid,
    to: &str,
) -> String {
    let key = hmac_sha256(
        &state.config.secret_key,
        b"mailward/unsubscribe-recipient/v1",
    );
    let message = format!("{org}.{}.{list}.{to}", switch.as_str());
    hmac_sha256_hex(&key, message.as_bytes())[..32].to_owned()
}

/// The link of mail to `to` as one of the addresses of `list` (an alert rule, a scheduled
/// report): it takes `to` off that list.
pub fn recipient_url(state: &AppState, org: Uuid, switch: Switch, list: Uuid, to: &str) -> String {
    format!(
        "{}/notifications/unsubscribe?token={org}.{}.{list}.{}.{}",
        state.config.base_url.trim_end_matches('/'),
        switch.as_str(),
        hex(to.as_bytes()),
        recipient_signature(state, org, switch, list, to)
    )
}

/// What a valid token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub org: Uuid,
    pub switch: Switch,
    /// The list and the address, for a link that takes one address off one list.
    pub recipient: Option<(Uuid, String)>,
}

/// Checks a token: the organization and switch it names when its signature holds.
pub fn verify(state: &AppState, token: &str) -> Result<(Uuid, Switch), ServiceError> {
    let link = verify_link(state, token)?;
    Ok((link.org, link.switch))
}

/// Checks a token of either form.
pub fn verify_link(state: &AppState, token: &str) -> Result<Link, ServiceError> {
    let invalid = || ServiceError::invalid("token", "the unsubscribe link is not valid");
    let parts: Vec<&str> = token.trim().split('.').collect();
    let (org, switch) = match parts.as_slice() {
        [org, switch, ..] => (
            org.parse::<Uuid>().map_err(|_| invalid())?,
            Switch::parse(switch).ok_or_else(invalid)?,
        ),
        _ => return Err(invalid()),
    };
    match parts.as_slice() {
        [_, _, sig]
            if constant_time_eq(sig.as_bytes(), signature(state, org, switch).as_bytes()) =>
        {
            Ok(Link {
                org,
                switch,
                recipient: None,
            })
        }
        [_, _, list, to, sig] => {
            let list: Uuid = list.parse().map_err(|_| invalid())?;
            let to = unhex(to).ok_or_else(invalid)?;
            let expected = recipient_signature(state, org, switch, list, &to);
            if !constant_time_eq(sig.as_bytes(), expected.as_bytes()) {
                return Err(invalid());
            }
            Ok(Link {
                org,
                switch,
                recipient: Some((list, to)),
            })
        }
        _ => Err(invalid()),
    }
}

/// What an unsubscribe did.
#[derive(Debug, Clone)]
pub struct Unsubscribed {
    /// The organization's name.
    pub organization: String,
    /// The switch now off (or, with `recipient`, the mail the address no longer receives).
    pub switch: Switch,
    /// The address taken off its list, for a recipient's link.
    pub recipient: Option<String>,
}

/// Takes `to` off `list` (an alert rule's email destinations, a scheduled report's recipients);
/// idempotent, and quiet when the list is gone.
async fn remove_recipient(
    state: &AppState,
    org: Uuid,
    switch: Switch,
    (list, to): (Uuid, &str),
) -> Result<(), ServiceError> {
    let store = state.store.as_ref();
    for _ in 0..5 {
        let op = match switch {
            Switch::Alerts => {
                let Some(rule) = mailward_store::alerts::rule(store, org, list).await? else {
                    return Ok(());
                };
                let mut next = rule.value.clone();
                for d in &mut next.destinations {
                    d.emails.retain(|e| !e.eq_ignore_ascii_case(to));
                }
                next.destinations.retain(|d| {
                    d.kind != mailward_domain::alerts::DestinationKind::Email
                        || !d.emails.is_empty()
                });
                if next == rule.value {
                    return Ok(());
                }
                mailward_store::alerts::rule_op(&next, Some(rule.version))?
            }
            Switch::ScheduledReports => {
                let Some(report) = mailward_store::scheduled_reports::get(store, org, list).await?
                else {
                    return Ok(());
                };
                let mut next = report.value.clone();
                next.recipients.retain(|e| !e.eq_ignore_ascii_case(to));
                if next.recipients.is_empty() {
                    next.enabled = false;
                }
                if next == report.value {
                    return Ok(());
                }
                mailward_store::scheduled_reports::put_op(&next, Some(report.version))?
            }
            _ => return Ok(()),
        };
        match store.transact(vec![op]).await {
            Ok(()) => {
                tracing::info!(org.id = %org, switch = switch.as_str(), "a recipient left a list by its unsubscribe link");
                return Ok(());
            }
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the list kept changing; try the link again",
    ))
}

/// Turns the link's switch off (idempotent: a second click changes nothing).
pub async fn apply(state: &AppState, token: &str) -> Result<Unsubscribed, ServiceError> {
    let link = verify_link(state, token)?;
    let (org_id, switch) = (link.org, link.switch);
    let store = state.store.as_ref();
    if let Some((list, to)) = &link.recipient {
        remove_recipient(state, org_id, switch, (*list, to)).await?;
        let organization = orgs::get(store, org_id)
            .await?
            .map(|o| o.value.name)
            .unwrap_or_default();
        return Ok(Unsubscribed {
            organization,
            switch,
            recipient: Some(to.clone()),
        });
    }
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
                recipient: None,
            });
        }
        match orgs::save(store, &next, current.version, Vec::new()).await {
            Ok(_) => {
                tracing::info!(org.id = %org_id, switch = switch.as_str(), "notification switched off by its unsubscribe link");
                return Ok(Unsubscribed {
                    organization: next.name,
                    switch,
                    recipient: None,
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
