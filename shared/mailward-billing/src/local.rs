//! The local adapter of the `Payments` port, the default of `cargo run`: a test-mode stand-in
//! for Stripe kept in the item store. Its Checkout and portal "hosted pages" are served by the
//! local stack (`/billing/local/*`, see `infra/local`); paying, cancelling or failing a payment
//! there produces the events Stripe would send, in Stripe's shape, signed with the same
//! webhook secret, and POSTs them to the same `/billing/stripe-webhook` route. No card data is
//! asked for: these pages are test mode.

use crate::signature;
use async_trait::async_trait;
use mailward_domain::Clock;
use mailward_domain::billing::{
    CheckoutRequest, CustomerRequest, HostedPage, Payments, PaymentsError, ProviderSubscription,
    QuantityChange, SubscriptionItem, SubscriptionStatus, TRIAL_DAYS,
};
use mailward_domain::model::PricingType;
use mailward_domain::secrets::random_bytes;
use mailward_domain::store::{Condition, Item, ItemStore};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};

/// A Checkout Session of the local pages: the request it was created with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LocalCheckout {
    /// `cs_local_…`.
    pub id: String,
    /// What it subscribes to, and where it sends the person.
    pub request: CheckoutRequest,
    /// The subscription created by paying.
    pub subscription: Option<String>,
}

/// A billing-portal session of the local pages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LocalPortal {
    /// `bps_local_…`.
    pub id: String,
    /// The customer.
    pub customer: String,
    /// Back to the service.
    pub return_url: String,
}

/// What a person does on the local portal page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortalAction {
    /// Cancel the subscription now (`customer.subscription.deleted`).
    Cancel,
    /// Test mode: the next invoice fails (`invoice.payment_failed`, past due).
    FailPayment,
    /// Test mode: the open invoice is paid (`invoice.paid`, active).
    PayInvoice,
}

/// The local adapter.
pub struct LocalPayments {
    store: Arc<dyn ItemStore>,
    clock: Arc<dyn Clock>,
    base_url: String,
    webhook_secret: String,
    http: reqwest::Client,
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}_local_{}", hex::encode(random_bytes(12)))
}

fn unavailable(e: impl std::fmt::Display) -> PaymentsError {
    PaymentsError::Unavailable(e.to_string())
}

fn ts(t: Option<OffsetDateTime>) -> Value {
    t.map_or(Value::Null, |t| json!(t.unix_timestamp()))
}

fn plan_name(plan: Option<PricingType>) -> Value {
    match plan {
        Some(PricingType::ItTeams) => json!("it_teams"),
        Some(PricingType::Msp) => json!("msp"),
        Some(PricingType::Free) => json!("free"),
        None => Value::Null,
    }
}

/// A subscription in Stripe's JSON shape (API 2025-03-31 and later: the period on each item).
pub fn stripe_json(s: &ProviderSubscription) -> Value {
    let status = match s.status {
        SubscriptionStatus::None => "incomplete",
        other => other.as_str(),
    };
    let items: Vec<Value> = s
        .items
        .iter()
        .map(|i| {
            json!({"id": i.id, "object": "subscription_item", "price": {"id": i.price, "object": "price"},
                "quantity": i.quantity, "subscription": s.id,
                "current_period_start": ts(s.current_period_start),
                "current_period_end": ts(s.current_period_end)})
        })
        .collect();
    json!({
        "id": s.id, "object": "subscription", "customer": s.customer, "status": status,
        "livemode": false, "trial_end": ts(s.trial_end),
        "cancel_at_period_end": s.cancel_at_period_end,
        "metadata": {"org_id": s.org_id.map(|o| o.to_string()), "plan": plan_name(s.plan)},
        "items": {"object": "list", "data": items, "has_more": false},
    })
}

impl LocalPayments {
    /// The adapter over `store`, delivering events to `{base_url}/billing/stripe-webhook`
    /// signed with `webhook_secret`.
    pub fn new(
        store: Arc<dyn ItemStore>,
        clock: Arc<dyn Clock>,
        base_url: &str,
        webhook_secret: &str,
    ) -> Self {
        Self {
            store,
            clock,
            base_url: base_url.trim_end_matches('/').to_owned(),
            webhook_secret: webhook_secret.to_owned(),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .unwrap_or_default(),
        }
    }

    async fn load<T: for<'de> Deserialize<'de>>(
        &self,
        id: &str,
    ) -> Result<Option<T>, PaymentsError> {
        let pk = mailward_store::keys::local_pay_pk(id);
        match self
            .store
            .get(&pk, "LOCALPAY", true)
            .await
            .map_err(unavailable)?
        {
            Some(item) => Ok(Some(mailward_store::decode(&item).map_err(unavailable)?)),
            None => Ok(None),
        }
    }

    /// Stores an object under `id`, indexed under its customer (the customer's own record
    /// and every object naming one), so that deleting the customer finds them all.
    async fn save<T: Serialize>(&self, id: &str, value: &T) -> Result<(), PaymentsError> {
        let json = serde_json::to_value(value).map_err(unavailable)?;
        let customer = json
            .get("customer")
            .or_else(|| json.pointer("/request/customer"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| id.strip_suffix("_sub").map(str::to_owned))
            .or_else(|| id.starts_with("cus_").then(|| id.to_owned()));
        let data = mailward_store::encode(value).map_err(unavailable)?;
        let mut item = Item::new(mailward_store::keys::local_pay_pk(id), "LOCALPAY", data);
        if let Some(customer) = customer {
            item = item.with_gsi1(
                mailward_store::keys::local_pay_customer_gsi(&customer),
                mailward_store::keys::local_pay_pk(id),
            );
        }
        self.store
            .put(item, Condition::None)
            .await
            .map_err(unavailable)
    }

    /// A Checkout Session, for its page.
    pub async fn checkout(&self, id: &str) -> Result<Option<LocalCheckout>, PaymentsError> {
        self.load(id).await
    }

    /// A portal session and its customer's subscriptions, for its page.
    pub async fn portal(
        &self,
        id: &str,
    ) -> Result<Option<(LocalPortal, Option<ProviderSubscription>)>, PaymentsError> {
        let Some(portal) = self.load::<LocalPortal>(id).await? else {
            return Ok(None);
        };
        let current: Option<String> = self.load(&format!("{}_sub", portal.customer)).await?;
        let sub = match current {
            Some(id) => self.load(&id).await?,
            None => None,
        };
        Ok(Some((portal, sub)))
    }

    /// Pays a Checkout Session: creates its subscription (trialing when the session grants a
    /// trial), completes the session and delivers `customer.subscription.created` and
    /// `checkout.session.completed`. Answers where to send the person.
    pub async fn pay(&self, id: &str) -> Result<Option<String>, PaymentsError> {
        let Some(mut session) = self.load::<LocalCheckout>(id).await? else {
            return Ok(None);
        };
        if session.subscription.is_some() {
            return Ok(Some(session.request.success_url));
        }
        let req = session.request.clone();
        let now = self.clock.now();
        let sub = ProviderSubscription {
            id: new_id("sub"),
            customer: req.customer.clone(),
            status: if req.trial_days.is_some() {
                SubscriptionStatus::Trialing
            } else {
                SubscriptionStatus::Active
            },
            plan: Some(req.plan),
            org_id: Some(req.org_id),
            trial_end: req.trial_days.map(|d| now + Duration::days(d)),
            current_period_start: Some(now),
            current_period_end: Some(now + Duration::days(req.trial_days.unwrap_or(30))),
            cancel_at_period_end: false,
            collection_paused: false,
            items: req
                .items
                .iter()
                .map(|(price, quantity)| SubscriptionItem {
                    id: new_id("si"),
                    price: price.clone(),
                    quantity: *quantity,
                })
                .collect(),
        };
        self.save(&sub.id, &sub).await?;
        self.save(&format!("{}_sub", sub.customer), &sub.id).await?;
        session.subscription = Some(sub.id.clone());
        self.save(&session.id, &session).await?;
        self.deliver("customer.subscription.created", stripe_json(&sub))
            .await?;
        let completed = json!({"id": session.id, "object": "checkout.session", "mode": "subscription",
            "status": "complete", "payment_status": "paid", "customer": req.customer,
            "subscription": sub.id, "client_reference_id": req.org_id.to_string(),
            "metadata": {"org_id": req.org_id.to_string(), "plan": plan_name(Some(req.plan))}});
        self.deliver("checkout.session.completed", completed)
            .await?;
        Ok(Some(req.success_url))
    }

    /// Carries out `action` on the portal session's subscription and delivers its events.
    /// Answers where to send the person (`None`: no such session).
    pub async fn act(
        &self,
        id: &str,
        action: PortalAction,
    ) -> Result<Option<String>, PaymentsError> {
        let Some((portal, Some(mut sub))) = self.portal(id).await? else {
            return Ok(None);
        };
        let now = self.clock.now();
        let invoice = |paid: bool| {
            json!({"id": new_id("in"), "object": "invoice", "customer": sub.customer,
                "status": if paid { "paid" } else { "open" },
                "parent": {"type": "subscription_details",
                    "subscription_details": {"subscription": sub.id}}})
        };
        let (kind, object) = match action {
            PortalAction::Cancel => {
                sub.status = SubscriptionStatus::Canceled;
                ("customer.subscription.deleted", None)
            }
            PortalAction::FailPayment => {
                sub.status = SubscriptionStatus::PastDue;
                ("invoice.payment_failed", Some(invoice(false)))
            }
            PortalAction::PayInvoice => {
                sub.status = SubscriptionStatus::Active;
                sub.trial_end = sub.trial_end.filter(|end| *end <= now);
                ("invoice.paid", Some(invoice(true)))
            }
        };
        self.save(&sub.id, &sub).await?;
        let event_object = object.unwrap_or_else(|| stripe_json(&sub));
        if kind != "customer.subscription.deleted" {
            self.deliver("customer.subscription.updated", stripe_json(&sub))
                .await?;
        }
        self.deliver(kind, event_object).await?;
        Ok(Some(portal.return_url))
    }

    /// Signs and POSTs one event to the webhook route, as Stripe does.
    async fn deliver(&self, kind: &str, object: Value) -> Result<(), PaymentsError> {
        let now = self.clock.now().unix_timestamp();
        let event = json!({"id": new_id("evt"), "object": "event", "api_version": crate::stripe::API_VERSION,
            "created": now, "livemode": false, "type": kind, "data": {"object": object}});
        let body = serde_json::to_vec(&event).map_err(unavailable)?;
        let header = signature::sign(&body, &self.webhook_secret, now);
        let res = self
            .http
            .post(format!("{}/billing/stripe-webhook", self.base_url))
            .header("Content-Type", "application/json")
            .header("Stripe-Signature", header)
            .body(body)
            .send()
            .await
            .map_err(|e| unavailable(format!("delivering {kind}: {}", e.without_url())))?;
        if !res.status().is_success() {
            return Err(unavailable(format!(
                "the webhook route answered {} to {kind}",
                res.status()
            )));
        }
        Ok(())
    }
}

#[async_trait]
impl Payments for LocalPayments {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn delete_customer(&self, customer: &str) -> Result<(), PaymentsError> {
        let index = mailward_store::keys::local_pay_customer_gsi(customer);
        let query =
            mailward_domain::store::Query::partition(index).on(mailward_domain::store::Index::Gsi1);
        let items = mailward_domain::store::query_all(self.store.as_ref(), query)
            .await
            .map_err(unavailable)?;
        let keys = items.into_iter().map(|i| (i.pk, i.sk)).collect();
        mailward_store::retention::delete_all(self.store.as_ref(), keys)
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn create_customer(&self, req: CustomerRequest) -> Result<String, PaymentsError> {
        let id = new_id("cus");
        self.save(
            &id,
            &json!({"org_id": req.org_id, "name": req.name, "email": req.email}),
        )
        .await?;
        Ok(id)
    }

    async fn create_checkout(&self, req: CheckoutRequest) -> Result<HostedPage, PaymentsError> {
        let mut request = req;
        request.trial_days = request.trial_days.map(|d| d.clamp(1, TRIAL_DAYS));
        let session = LocalCheckout {
            id: new_id("cs"),
            request,
            subscription: None,
        };
        self.save(&session.id, &session).await?;
        Ok(HostedPage {
            url: format!("{}/billing/local/checkout/{}", self.base_url, session.id),
            id: session.id,
        })
    }

    async fn create_portal(
        &self,
        customer: &str,
        return_url: &str,
        _idempotency_key: &str,
    ) -> Result<HostedPage, PaymentsError> {
        let portal = LocalPortal {
            id: new_id("bps"),
            customer: customer.to_owned(),
            return_url: return_url.to_owned(),
        };
        self.save(&portal.id, &portal).await?;
        Ok(HostedPage {
            url: format!("{}/billing/local/portal/{}", self.base_url, portal.id),
            id: portal.id,
        })
    }

    async fn subscription(&self, id: &str) -> Result<Option<ProviderSubscription>, PaymentsError> {
        self.load(id).await
    }

    async fn checkout_subscription(&self, session: &str) -> Result<Option<String>, PaymentsError> {
        Ok(self
            .load::<LocalCheckout>(session)
            .await?
            .and_then(|s| s.subscription))
    }

    async fn pause_collection(
        &self,
        subscription: &str,
        paused: bool,
        _idempotency_key: &str,
    ) -> Result<(), PaymentsError> {
        let Some(mut sub) = self.load::<ProviderSubscription>(subscription).await? else {
            return Err(PaymentsError::Refused(format!(
                "no subscription {subscription}"
            )));
        };
        sub.collection_paused = paused;
        self.save(&sub.id, &sub).await
    }

    async fn set_quantities(
        &self,
        subscription: &str,
        changes: &[QuantityChange],
        _idempotency_key: &str,
    ) -> Result<(), PaymentsError> {
        let Some(mut sub) = self.load::<ProviderSubscription>(subscription).await? else {
            return Err(PaymentsError::Refused(format!(
                "no subscription {subscription}"
            )));
        };
        for change in changes {
            match sub
                .items
                .iter_mut()
                .find(|i| Some(&i.id) == change.item.as_ref())
            {
                Some(item) => item.quantity = change.quantity,
                None => sub.items.push(SubscriptionItem {
                    id: new_id("si"),
                    price: change.price.clone(),
                    quantity: change.quantity,
                }),
            }
        }
        self.save(&sub.id, &sub).await
    }
}
