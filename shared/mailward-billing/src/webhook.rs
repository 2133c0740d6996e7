//! `POST /billing/stripe-webhook`: Stripe's events, verified (`Stripe-Signature`), processed
//! once per event id, and tolerant of any order: an event only names the subscription, whose
//! latest state is read back from the provider before it is recorded.
//!
//! Handled: `checkout.session.completed`, `customer.subscription.created|updated|deleted`,
//! `invoice.paid`, `invoice.payment_failed` (which also mails the administrators, under their
//! `billing_notices` switch). Other types are acknowledged and ignored.

use crate::{provider, provider_error, signature, stripe::id_of};
use mailward_api_types::billing::WebhookReceipt;
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::state::AppState;
use mailward_domain::billing::{
    BillingAccount, GRACE_DAYS, ProviderSubscription, SubscriptionStatus,
};
use mailward_domain::mailer::OutboundEmail;
use mailward_domain::model::Role;
use mailward_domain::notifications::Switch;
use mailward_store::billing as stored;
use serde_json::Value;
use time::Duration;

fn bad_signature(e: signature::SignatureError) -> ServiceError {
    ServiceError::new(ErrorKind::Invalid, "invalid_signature", e.to_string())
        .param("Stripe-Signature")
}

/// Verifies and processes one delivery.
pub async fn receive(
    app: &AppState,
    body: &[u8],
    header: Option<&str>,
) -> Result<WebhookReceipt, ServiceError> {
    let secret = crate::webhook_secret(&app.config);
    let header = header.ok_or_else(|| bad_signature(signature::SignatureError::Malformed))?;
    signature::verify(body, header, &secret, app.clock.unix()).map_err(bad_signature)?;
    let event: Value = serde_json::from_slice(body)
        .map_err(|_| ServiceError::invalid("body", "the event is not a JSON object"))?;
    let (Some(id), Some(kind)) = (event["id"].as_str(), event["type"].as_str()) else {
        return Err(ServiceError::invalid("body", "the event has no id or type"));
    };
    let store = app.store.as_ref();
    if stored::event_seen(store, id).await? {
        return Ok(WebhookReceipt {
            received: true,
            duplicate: true,
        });
    }
    let object = &event["data"]["object"];
    let payments = provider(app)?;
    let subscription = match kind {
        "checkout.session.completed" => match id_of(&object["subscription"]) {
            Some(sub) => Some(sub),
            None => match object["id"].as_str() {
                Some(session) => payments
                    .checkout_subscription(session)
                    .await
                    .map_err(provider_error)?,
                None => None,
            },
        },
        "customer.subscription.created"
        | "customer.subscription.updated"
        | "customer.subscription.deleted" => id_of(&object["id"]),
        "invoice.paid" | "invoice.payment_failed" => id_of(&object["subscription"])
            .or_else(|| id_of(&object["parent"]["subscription_details"]["subscription"])),
        _ => None,
    };
    if let Some(sub) = subscription {
        let latest = payments.subscription(&sub).await.map_err(provider_error)?;
        if let Some(mut latest) = latest {
            // A plan changed in the portal shows in the items' prices, not in the metadata.
            latest.plan = crate::plan_of_items(&app.config, &latest.items).or(latest.plan);
            let org = record(app, &latest).await?;
            if let Some(org) = org {
                if kind == "invoice.payment_failed" {
                    dun(app, org, id).await?;
                }
                if latest.status != SubscriptionStatus::Canceled
                    && let Err(e) = crate::sync::sync_quantities(app, org).await
                {
                    // The daily report retries; the event itself is recorded.
                    tracing::warn!(org.id = %org, error = %e, "quantities not reported after a billing event");
                }
            }
        }
    }
    stored::mark_event(store, id, app.clock.unix()).await?;
    Ok(WebhookReceipt {
        received: true,
        duplicate: false,
    })
}

/// Records the subscription's latest state on its organization; answers the organization.
async fn record(
    app: &AppState,
    latest: &ProviderSubscription,
) -> Result<Option<uuid::Uuid>, ServiceError> {
    let Some(org) = latest.org_id else {
        tracing::warn!(subscription = %latest.id, "a subscription without metadata.org_id: ignored");
        return Ok(None);
    };
    let store = app.store.as_ref();
    if mailward_store::orgs::get(store, org).await?.is_none() {
        return Ok(None);
    }
    for _ in 0..5 {
        let found = stored::get(store, org).await?;
        let version = found.as_ref().map(|v| v.version);
        let mut account = found.map(|v| v.value).unwrap_or_default();
        if account
            .customer_id
            .as_deref()
            .is_some_and(|c| c != latest.customer)
        {
            tracing::warn!(org.id = %org, subscription = %latest.id, "subscription of another customer: ignored");
            return Ok(None);
        }
        // A newer subscription replaces an ended one, never the reverse.
        if let Some(current) = &account.subscription_id
            && current != &latest.id
            && latest.status == SubscriptionStatus::Canceled
        {
            return Ok(Some(org));
        }
        apply(&mut account, latest, app.clock.now());
        match stored::put(store, org, &account, version).await {
            Ok(()) => return Ok(Some(org)),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::unavailable(
        "the billing record kept changing",
    ))
}

/// Folds the provider's state into the record.
fn apply(account: &mut BillingAccount, latest: &ProviderSubscription, now: time::OffsetDateTime) {
    let was_paying = account.phase(now) != mailward_domain::billing::Phase::Free;
    account.customer_id = Some(latest.customer.clone());
    account.subscription_id = Some(latest.id.clone());
    if latest.plan.is_some() {
        account.plan = latest.plan;
    }
    account.status = latest.status;
    account.trial_end = latest.trial_end;
    account.trial_used |= latest.trial_end.is_some();
    account.current_period_start = latest.current_period_start;
    account.current_period_end = latest.current_period_end;
    account.cancel_at_period_end = latest.cancel_at_period_end;
    account.items = latest.items.clone();
    match latest.status {
        SubscriptionStatus::PastDue => {
            account.past_due_since.get_or_insert(now);
        }
        SubscriptionStatus::Trialing | SubscriptionStatus::Active => {
            account.past_due_since = None;
            account.paid_until = None;
        }
        SubscriptionStatus::Canceled | SubscriptionStatus::None => {
            // Paid entitlements ended now, or at the grace period's end when an unpaid
            // subscription is cancelled after it (Stripe cancels once its retries fail).
            let ended = match account.past_due_since.take() {
                Some(since) => Some((since + Duration::days(GRACE_DAYS)).min(now)),
                None => was_paying.then_some(now),
            };
            account.paid_until = ended.or(account.paid_until);
        }
    }
}

/// Tells the administrators a payment failed, once per event, under `billing_notices`.
async fn dun(app: &AppState, org_id: uuid::Uuid, event: &str) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let Some(org) = mailward_store::orgs::get(store, org_id).await? else {
        return Ok(());
    };
    if !org.value.email_notifications.billing_notices {
        return Ok(());
    }
    let base = app.config.base_url.trim_end_matches('/');
    let grace = mailward_domain::billing::GRACE_DAYS;
    for member in mailward_store::accounts::members_of(store, org_id).await? {
        if !member.roles.contains(&Role::Admin) || member.email.is_empty() {
            continue;
        }
        let occurrence = format!("billing:payment_failed:{event}");
        if !mailward_store::notifications::claim(
            store,
            org_id,
            &occurrence,
            &member.email,
            app.clock.unix(),
        )
        .await?
        {
            continue;
        }
        let text = format!(
            "The payment of {name}'s latest Mailward invoice failed, and the subscription is past due.\n\n\
             Update the payment method in the billing portal (POST {base}/billing/portal, or start_billing_portal from your assistant). \
             If the invoice is still unpaid {grace} days after the failure, the organization falls back to the free plan's entitlements \
             (30 days of reports, the free domain cap, no agent proposals); paying restores them.\n\n\
             The subscription: {base}/billing/subscription\n",
            name = org.value.name
        );
        let email = OutboundEmail {
            attachments: Vec::new(),
            to: member.email.clone(),
            subject: format!("Mailward: the payment for {} failed", org.value.name),
            text,
            html: None,
            unsubscribe_url: Some(mailward_app::unsubscribe::url(
                app,
                org_id,
                Switch::BillingNotices,
            )),
        };
        if let Err(e) = app.mailer.send(email).await {
            mailward_store::notifications::release(store, org_id, &occurrence, &member.email)
                .await?;
            return Err(ServiceError::unavailable(e));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_domain::billing::{Phase, RETENTION_HOLD_DAYS, entitlements};
    use mailward_domain::model::PricingType;

    fn provider(status: SubscriptionStatus) -> ProviderSubscription {
        ProviderSubscription {
            id: "sub_1".into(),
            customer: "cus_1".into(),
            status,
            plan: Some(PricingType::Msp),
            org_id: None,
            trial_end: None,
            current_period_start: None,
            current_period_end: None,
            cancel_at_period_end: false,
            items: Vec::new(),
            collection_paused: false,
        }
    }

    #[test]
    fn a_cancellation_after_the_grace_period_holds_retention_from_the_grace_end() {
        let start = time::OffsetDateTime::now_utc();
        let mut account = BillingAccount::default();
        apply(&mut account, &provider(SubscriptionStatus::Active), start);
        apply(&mut account, &provider(SubscriptionStatus::PastDue), start);
        // Stripe gives up three weeks later and cancels.
        let canceled = start + Duration::days(21);
        apply(
            &mut account,
            &provider(SubscriptionStatus::Canceled),
            canceled,
        );
        assert_eq!(account.paid_until, Some(start + Duration::days(GRACE_DAYS)));
        assert_eq!(account.past_due_since, None);
        let hold_end = start + Duration::days(GRACE_DAYS + RETENTION_HOLD_DAYS);
        let e = entitlements(Some(&account), hold_end - Duration::days(1));
        assert_eq!((e.phase, e.retention_days), (Phase::Free, 365));
        assert_eq!(entitlements(Some(&account), hold_end).retention_days, 30);
        // Cancelled while paid: the hold counts from the cancellation.
        let mut paid = BillingAccount::default();
        apply(&mut paid, &provider(SubscriptionStatus::Active), start);
        apply(&mut paid, &provider(SubscriptionStatus::Canceled), canceled);
        assert_eq!(paid.paid_until, Some(canceled));
    }
}
