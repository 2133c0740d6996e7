//! Billing on Stripe's hosted pages: the subscription view, Checkout and the billing portal,
//! Stripe's webhook, the quantities reported from the usage line items, dunning. Operations on
//! the kernel (`mailward-app`) and the usage counts of `mailward-services`; the entitlements
//! table is `mailward_domain::billing`.
//!
//! The `Payments` port has two adapters here: [`stripe::Stripe`] (Stripe's API) and
//! [`local::LocalPayments`] (the local stack's test-mode pages, the default of `cargo run`).

pub mod local;
pub mod signature;
pub mod stripe;
mod sync;
mod webhook;

pub use sync::sync_quantities;
pub use webhook::receive;

use mailward_api_types::billing::{
    CheckoutInput, EntitlementsView, HostedPageUrl, InvoiceEstimate, PortalInput, Subscription,
};
use mailward_app::caller::Caller;
use mailward_app::error::{ErrorKind, ServiceError};
use mailward_app::state::AppState;
use mailward_domain::billing::{
    BillingAccount, CheckoutRequest, CustomerRequest, GRACE_DAYS, Payments, PaymentsError, Phase,
    SubscriptionStatus, TRIAL_DAYS,
};
use mailward_domain::model::PricingType;
use mailward_services::usage;
use std::sync::Arc;
use time::Duration;
use uuid::Uuid;

/// The webhook signing secret: the configured one, else (the local stack) one derived from the
/// service's secret key, which the local adapter signs with.
pub fn webhook_secret(config: &mailward_app::config::Config) -> String {
    config
        .billing
        .stripe_webhook_secret
        .clone()
        .unwrap_or_else(|| {
            format!(
                "whsec_local_{}",
                mailward_domain::secrets::hmac_sha256_hex(&config.secret_key, b"stripe-webhook")
            )
        })
}

/// The adapter the configuration asks for: Stripe with a secret key, else the local pages
/// (`local` true) or none.
pub fn adapter(app: &AppState, local: bool) -> Result<Option<Arc<dyn Payments>>, String> {
    let config = &app.config;
    if let Some(key) = &config.billing.stripe_secret_key {
        return Ok(Some(Arc::new(stripe::Stripe::new(
            &config.billing.stripe_api_base,
            key,
        )?)));
    }
    Ok(local.then(|| {
        Arc::new(local::LocalPayments::new(
            Arc::clone(&app.store),
            Arc::clone(&app.clock),
            &config.base_url,
            &webhook_secret(config),
        )) as Arc<dyn Payments>
    }))
}

pub(crate) fn provider(app: &AppState) -> Result<&Arc<dyn Payments>, ServiceError> {
    app.payments.as_ref().ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "billing_unavailable",
            "billing is not configured on this deployment (no Stripe secret key)",
        )
    })
}

pub(crate) fn provider_error(e: PaymentsError) -> ServiceError {
    match e {
        PaymentsError::Refused(m) => ServiceError::internal(m),
        PaymentsError::Unavailable(m) => ServiceError::unavailable(m),
    }
}

/// The price of line item `code` on `plan`: configured, or the local adapter's own.
pub(crate) fn price(
    app: &AppState,
    payments: &dyn Payments,
    plan: PricingType,
    code: &str,
) -> Option<String> {
    app.config
        .billing
        .stripe_prices
        .iter()
        .find(|(p, c, _)| *p == plan && c == code)
        .map(|(_, _, price)| price.clone())
        .or_else(|| {
            (payments.name() == "local").then(|| {
                format!(
                    "price_local_{}_{}",
                    usage::pricing_name(plan),
                    code.to_lowercase()
                )
            })
        })
}

/// The plan a subscription's items bill, from their prices (configured, or the local
/// adapter's own): what a plan change in the billing portal leaves behind, where the
/// subscription's metadata still names the plan bought at checkout.
pub(crate) fn plan_of_items(
    config: &mailward_app::config::Config,
    items: &[mailward_domain::billing::SubscriptionItem],
) -> Option<PricingType> {
    items.iter().find_map(|item| {
        config
            .billing
            .stripe_prices
            .iter()
            .find(|(_, _, price)| *price == item.price)
            .map(|(plan, _, _)| *plan)
            .or_else(|| {
                let rest = item.price.strip_prefix("price_local_")?;
                [PricingType::ItTeams, PricingType::Msp]
                    .into_iter()
                    .find(|p| rest.starts_with(&format!("{}_", usage::pricing_name(*p))))
            })
    })
}

fn plan_view(plan: PricingType) -> mailward_api_types::organizations::PricingTypeView {
    plan.into()
}

/// A return URL on the service's own origin (`param` names the field), or the default.
fn return_url(app: &AppState, raw: Option<&str>) -> Result<String, ServiceError> {
    let base = app.config.base_url.trim_end_matches('/');
    let Some(raw) = raw else {
        return Ok(format!("{base}/"));
    };
    let ours = url::Url::parse(base).ok().map(|u| u.origin());
    match url::Url::parse(raw) {
        Ok(u) if Some(u.origin()) == ours && raw.len() <= 2048 => Ok(u.to_string()),
        _ => Err(ServiceError::invalid(
            "return_url",
            format!("return_url must be an absolute URL on this service's origin ({base})"),
        )),
    }
}

async fn load(
    app: &AppState,
    org: Uuid,
) -> Result<(Option<BillingAccount>, Option<u64>), ServiceError> {
    let found = mailward_store::billing::get(app.store.as_ref(), org).await?;
    Ok(match found {
        Some(v) => (Some(v.value), Some(v.version)),
        None => (None, None),
    })
}

/// `GET /billing/subscription`, `get_subscription`.
pub async fn subscription(app: &AppState, caller: &Caller) -> Result<Subscription, ServiceError> {
    caller.require_session_org_admin()?;
    let org = mailward_store::orgs::get(app.store.as_ref(), caller.org_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?
        .value;
    let (ent, account) = usage::entitlements(app, caller.org_id).await?;
    let account = account.unwrap_or_default();
    let quantities = usage::current_line_items(app, &org).await?;
    let now = app.clock.now();
    let due = match ent.phase {
        Phase::Trial => account.trial_end,
        Phase::Paid
            if account.status != SubscriptionStatus::Canceled && !account.cancel_at_period_end =>
        {
            account.current_period_end.filter(|end| *end > now)
        }
        _ => None,
    };
    let next_invoice = match due {
        Some(at) => Some(InvoiceEstimate {
            at,
            line_items: usage::billable(app, caller.org_id)
                .await?
                .into_iter()
                .filter(|i| i.quantity > 0)
                .collect(),
        }),
        None => None,
    };
    Ok(Subscription {
        plan: plan_view(ent.plan),
        offered_plan: plan_view(account.plan.unwrap_or(org.pricing_type)),
        status: account.status.as_str().to_owned(),
        trial_end: account.trial_end,
        current_period_start: account.current_period_start,
        current_period_end: account.current_period_end,
        cancel_at_period_end: account.cancel_at_period_end,
        grace_period_end: (account.status == SubscriptionStatus::PastDue)
            .then(|| {
                account
                    .past_due_since
                    .map(|s| s + Duration::days(GRACE_DAYS))
            })
            .flatten(),
        entitlements: EntitlementsView {
            retention_days: ent.retention_days,
            domain_cap: ent.domain_cap,
            agent_addon: ent.agent_addon,
        },
        quantities,
        next_invoice,
        provider: app
            .payments
            .as_ref()
            .map_or("none", |p| p.name())
            .to_owned(),
    })
}

/// The organization's customer at the provider, created (and recorded) on first use.
async fn customer(
    app: &AppState,
    payments: &dyn Payments,
    org_id: Uuid,
) -> Result<(String, BillingAccount), ServiceError> {
    let (account, version) = load(app, org_id).await?;
    let mut account = account.unwrap_or_default();
    if let Some(id) = &account.customer_id {
        return Ok((id.clone(), account));
    }
    let org = mailward_store::orgs::get(app.store.as_ref(), org_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?
        .value;
    let id = payments
        .create_customer(CustomerRequest {
            org_id,
            name: org.name.clone(),
            email: org.email.clone(),
            idempotency_key: format!("mailward-customer-{org_id}"),
        })
        .await
        .map_err(provider_error)?;
    account.customer_id = Some(id.clone());
    mailward_store::billing::put(app.store.as_ref(), org_id, &account, version).await?;
    Ok((id, account))
}

/// `POST /billing/checkout`, `start_checkout`: a Checkout Session in subscription mode for
/// `plan`, with the 14-day trial unless the organization had one.
pub async fn start_checkout(
    app: &AppState,
    caller: &Caller,
    input: &CheckoutInput,
) -> Result<HostedPageUrl, ServiceError> {
    caller.require_session_org_admin()?;
    let plan: PricingType = input.plan.into();
    if plan == PricingType::Free {
        return Err(ServiceError::invalid(
            "plan",
            "plan must be it_teams or msp: the free plan needs no checkout",
        ));
    }
    let back = return_url(app, input.return_url.as_deref())?;
    let payments = provider(app)?;
    let (current, _) = load(app, caller.org_id).await?;
    if let Some(a) = &current
        && matches!(
            a.status,
            SubscriptionStatus::Trialing | SubscriptionStatus::Active | SubscriptionStatus::PastDue
        )
    {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "subscription_exists",
            "the organization already has a subscription: change or cancel it in the billing portal (POST /billing/portal)",
        ));
    }
    let mut items = Vec::new();
    let mut first_price = None;
    for item in usage::billable(app, caller.org_id).await? {
        let Some(price) = price(app, payments.as_ref(), plan, &item.code) else {
            continue;
        };
        first_price.get_or_insert_with(|| price.clone());
        if item.quantity > 0 {
            items.push((price, item.quantity));
        }
    }
    let Some(first_price) = first_price else {
        return Err(ServiceError::new(
            ErrorKind::Unavailable,
            "billing_unavailable",
            "no Stripe price is configured for this plan (MAILWARD_STRIPE_PRICES)",
        ));
    };
    if items.is_empty() {
        // Checkout needs a line; the quantities reported right after checkout set the counts.
        items.push((first_price, 1));
    }
    let (customer, account) = customer(app, payments.as_ref(), caller.org_id).await?;
    let page = payments
        .create_checkout(CheckoutRequest {
            org_id: caller.org_id,
            customer,
            plan,
            items,
            trial_days: (!account.trial_used).then_some(TRIAL_DAYS),
            success_url: back.clone(),
            cancel_url: back,
            idempotency_key: format!("mailward-checkout-{}-{}", caller.org_id, Uuid::new_v4()),
        })
        .await
        .map_err(provider_error)?;
    Ok(HostedPageUrl { url: page.url })
}

/// `POST /billing/portal`, `start_billing_portal`: the provider's billing portal for the
/// organization's customer.
pub async fn open_portal(
    app: &AppState,
    caller: &Caller,
    input: &PortalInput,
) -> Result<HostedPageUrl, ServiceError> {
    caller.require_session_org_admin()?;
    let back = return_url(app, input.return_url.as_deref())?;
    let payments = provider(app)?;
    let (account, _) = load(app, caller.org_id).await?;
    let Some(customer) = account.and_then(|a| a.customer_id) else {
        return Err(ServiceError::new(
            ErrorKind::Conflict,
            "no_subscription",
            "the organization has no billing account yet: start a checkout first (POST /billing/checkout)",
        ));
    };
    let page = payments
        .create_portal(
            &customer,
            &back,
            &format!("mailward-portal-{}-{}", caller.org_id, Uuid::new_v4()),
        )
        .await
        .map_err(provider_error)?;
    Ok(HostedPageUrl { url: page.url })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_domain::billing::SubscriptionItem;

    fn item(price: &str) -> SubscriptionItem {
        SubscriptionItem {
            id: "si_1".into(),
            price: price.into(),
            quantity: 1,
        }
    }

    #[test]
    fn the_plan_comes_from_the_prices_billed() {
        let mut config = mailward_app::config::Config::new("http://127.0.0.1", vec![7; 32]);
        config.billing.stripe_prices = vec![
            (
                PricingType::ItTeams,
                "DOMAIN-ACTIVE-1TO10".into(),
                "price_it".into(),
            ),
            (
                PricingType::Msp,
                "DOMAIN-ACTIVE-1TO10".into(),
                "price_msp".into(),
            ),
        ];
        assert_eq!(
            plan_of_items(&config, &[item("price_other"), item("price_msp")]),
            Some(PricingType::Msp)
        );
        assert_eq!(
            plan_of_items(&config, &[item("price_it")]),
            Some(PricingType::ItTeams)
        );
        assert_eq!(
            plan_of_items(&config, &[item("price_local_msp_domain-inactive")]),
            Some(PricingType::Msp)
        );
        assert_eq!(plan_of_items(&config, &[item("price_unknown")]), None);
    }
}
