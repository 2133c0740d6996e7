//! The quantities of a subscription's items: each priced usage line item's quantity, from the
//! same counts as `GET /usage`, so the invoice lines equal the line items. Reported after every
//! billing event, with the daily reminders, and a minute after domains are added or removed or
//! change between active and inactive in the sweep (`mailward_services::usage::quantities_changed`).

use crate::{price, provider, provider_error};
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_domain::billing::{QuantityChange, SubscriptionStatus};
use mailward_services::usage;
use uuid::Uuid;

/// Pauses the subscription's collection while the organization is suspended, resumes it after.
async fn keep_paused(
    payments: &dyn mailward_domain::billing::Payments,
    latest: &mailward_domain::billing::ProviderSubscription,
    organization: &mailward_domain::model::Organization,
) -> Result<(), ServiceError> {
    let suspension = &organization.suspension;
    if latest.collection_paused == suspension.is_some() {
        return Ok(());
    }
    let sub = &latest.id;
    // One key per suspension (its time) and per lifting (the organization's last change), so a
    // retried job repeats the same request and a later one is a new request.
    let key = match suspension {
        Some(s) => format!("mailward-pause-{sub}-{}", s.at.unix_timestamp()),
        None => format!(
            "mailward-resume-{sub}-{}",
            organization.updated_at.unix_timestamp()
        ),
    };
    payments
        .pause_collection(sub, suspension.is_some(), &key)
        .await
        .map_err(provider_error)?;
    tracing::info!(org.id = %organization.id, paused = suspension.is_some(), "subscription collection changed");
    Ok(())
}

/// Reports the organization's quantities to its subscription (nothing without one, or when
/// they already match), and keeps its collection paused while Mailward staff suspend the
/// organization (Stripe's `pause_collection`, invoices voided) and resumed after: a suspended
/// organization is not billed. Answers how many items changed.
pub async fn sync_quantities(app: &AppState, org: Uuid) -> Result<usize, ServiceError> {
    let store = app.store.as_ref();
    let Some(organization) = mailward_store::orgs::get(store, org).await? else {
        return Ok(0);
    };
    let suspension = organization.value.suspension.clone();
    let Some(found) = mailward_store::billing::get(store, org).await? else {
        return Ok(0);
    };
    let account = found.value;
    let (Some(sub), Some(plan)) = (account.subscription_id.clone(), account.plan) else {
        return Ok(0);
    };
    if matches!(
        account.status,
        SubscriptionStatus::Canceled | SubscriptionStatus::None
    ) {
        return Ok(0);
    }
    let payments = provider(app)?;
    let latest = payments
        .subscription(&sub)
        .await
        .map_err(provider_error)?
        .ok_or_else(|| ServiceError::unavailable(format!("subscription {sub} not found")))?;
    keep_paused(payments.as_ref(), &latest, &organization.value).await?;
    // A suspended organization is not billed for what it holds meanwhile.
    if suspension.is_some() {
        return Ok(0);
    }
    let mut changes = Vec::new();
    for item in usage::billable(app, org).await? {
        let Some(price) = price(app, payments.as_ref(), plan, &item.code) else {
            continue;
        };
        match latest.items.iter().find(|i| i.price == price) {
            Some(existing) if existing.quantity == item.quantity => {}
            Some(existing) => changes.push(QuantityChange {
                item: Some(existing.id.clone()),
                price,
                quantity: item.quantity,
            }),
            None if item.quantity > 0 => changes.push(QuantityChange {
                item: None,
                price,
                quantity: item.quantity,
            }),
            None => {}
        }
    }
    if !changes.is_empty() {
        // The same changes retried (a redelivered job) reuse their key.
        let fingerprint: String = changes
            .iter()
            .map(|c| format!("{}={};", c.price, c.quantity))
            .collect();
        let key = format!(
            "mailward-quantities-{sub}-{}",
            &mailward_domain::secrets::sha256_hex(fingerprint.as_bytes())[..16]
        );
        payments
            .set_quantities(&sub, &changes, &key)
            .await
            .map_err(provider_error)?;
    }
    let refreshed = payments.subscription(&sub).await.map_err(provider_error)?;
    record_items(app, org, refreshed).await?;
    Ok(changes.len())
}

/// Keeps the subscription's items as the provider now has them on the billing record.
async fn record_items(
    app: &AppState,
    org: Uuid,
    refreshed: Option<mailward_domain::billing::ProviderSubscription>,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let now = app.clock.now();
    for _ in 0..5 {
        let Some(found) = mailward_store::billing::get(store, org).await? else {
            return Ok(());
        };
        let mut account = found.value;
        if let Some(r) = &refreshed
            && account.subscription_id.as_deref() == Some(r.id.as_str())
        {
            account.items = r.items.clone();
        }
        account.quantities_synced_at = Some(now);
        match mailward_store::billing::put(store, org, &account, Some(found.version)).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
