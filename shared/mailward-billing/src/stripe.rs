//! The Stripe adapter of the `Payments` port: a small typed client over reqwest (form-encoded
//! requests, JSON answers) for the five calls billing makes. Every request pins
//! [`API_VERSION`] (`Stripe-Version`), every create sends an `Idempotency-Key`, and the secret
//! key goes only into the `Authorization` header (never logged: errors carry Stripe's message,
//! not the request).
//!
//! The form fields each request sends are checked in the tests against the parameters that
//! Stripe's own Python library (generated from Stripe's OpenAPI description) declares for that
//! call at this API version (`tests/billing/check_stripe_requests.py`).

use async_trait::async_trait;
use mailward_domain::billing::{
    CheckoutRequest, CustomerRequest, HostedPage, Payments, PaymentsError, ProviderSubscription,
    QuantityChange, SubscriptionItem, SubscriptionStatus,
};
use mailward_domain::model::PricingType;
use serde_json::Value;
use std::time::Duration;
use time::OffsetDateTime;

/// The Stripe API version every request pins (the version of `stripe` 16.1 for Python, whose
/// parameter declarations the tests check requests against).
pub const API_VERSION: &str = "2026-10-28.endive";

/// The Stripe client.
pub struct Stripe {
    http: reqwest::Client,
    base: String,
    secret_key: String,
}

impl Stripe {
    /// A client of `base` (`https://api.stripe.com`) with `secret_key`.
    pub fn new(base: &str, secret_key: &str) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .user_agent("Mailward/1")
            .build()
            .map_err(|e| format!("building the Stripe client: {e}"))?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            secret_key: secret_key.to_owned(),
        })
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        form: Option<&[(String, String)]>,
        idempotency_key: Option<&str>,
    ) -> Result<Option<Value>, PaymentsError> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.secret_key)
            .header("Stripe-Version", API_VERSION);
        if let Some(key) = idempotency_key {
            req = req.header("Idempotency-Key", key);
        }
        if let Some(fields) = form {
            let body = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(fields.iter())
                .finish();
            req = req
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body);
        }
        let res = req
            .send()
            .await
            .map_err(|e| PaymentsError::Unavailable(format!("{path}: {}", e.without_url())))?;
        let status = res.status();
        let body: Value = res
            .json()
            .await
            .map_err(|e| PaymentsError::Unavailable(format!("{path}: unreadable answer: {e}")))?;
        if status.is_success() {
            return Ok(Some(body));
        }
        let message = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no message")
            .to_owned();
        match status.as_u16() {
            404 => Ok(None),
            429 | 500.. => Err(PaymentsError::Unavailable(format!(
                "{path}: {status}: {message}"
            ))),
            _ => Err(PaymentsError::Refused(format!(
                "{path}: {status}: {message}"
            ))),
        }
    }

    async fn create(
        &self,
        path: &str,
        form: &[(String, String)],
        key: &str,
    ) -> Result<Value, PaymentsError> {
        self.call(reqwest::Method::POST, path, Some(form), Some(key))
            .await?
            .ok_or_else(|| PaymentsError::Refused(format!("{path}: 404")))
    }
}

fn pair(k: impl Into<String>, v: impl Into<String>) -> (String, String) {
    (k.into(), v.into())
}

fn plan_name(plan: PricingType) -> &'static str {
    match plan {
        PricingType::Free => "free",
        PricingType::ItTeams => "it_teams",
        PricingType::Msp => "msp",
    }
}

fn hosted(value: &Value) -> Result<HostedPage, PaymentsError> {
    match (value["id"].as_str(), value["url"].as_str()) {
        (Some(id), Some(url)) => Ok(HostedPage {
            id: id.to_owned(),
            url: url.to_owned(),
        }),
        _ => Err(PaymentsError::Unavailable(
            "session without id or url".into(),
        )),
    }
}

/// The form fields of a Checkout Session create.
pub fn checkout_form(req: &CheckoutRequest) -> Vec<(String, String)> {
    let org = req.org_id.to_string();
    let plan = plan_name(req.plan);
    let mut form = vec![
        pair("mode", "subscription"),
        pair("customer", &req.customer),
        pair("client_reference_id", &org),
        pair("success_url", &req.success_url),
        pair("cancel_url", &req.cancel_url),
        pair("metadata[org_id]", &org),
        pair("metadata[plan]", plan),
        pair("subscription_data[metadata][org_id]", &org),
        pair("subscription_data[metadata][plan]", plan),
    ];
    for (i, (price, quantity)) in req.items.iter().enumerate() {
        form.push(pair(format!("line_items[{i}][price]"), price));
        form.push(pair(
            format!("line_items[{i}][quantity]"),
            quantity.to_string(),
        ));
    }
    if let Some(days) = req.trial_days {
        form.push(pair(
            "subscription_data[trial_period_days]",
            days.to_string(),
        ));
    }
    form
}

#[async_trait]
impl Payments for Stripe {
    fn name(&self) -> &'static str {
        "stripe"
    }

    async fn create_customer(&self, req: CustomerRequest) -> Result<String, PaymentsError> {
        let mut form = vec![
            pair("name", &req.name),
            pair("metadata[org_id]", req.org_id.to_string()),
        ];
        if let Some(email) = &req.email {
            form.push(pair("email", email));
        }
        let customer = self
            .create("/v1/customers", &form, &req.idempotency_key)
            .await?;
        customer["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| PaymentsError::Unavailable("customer without id".into()))
    }

    async fn create_checkout(&self, req: CheckoutRequest) -> Result<HostedPage, PaymentsError> {
        let form = checkout_form(&req);
        hosted(
            &self
                .create("/v1/checkout/sessions", &form, &req.idempotency_key)
                .await?,
        )
    }

    async fn create_portal(
        &self,
        customer: &str,
        return_url: &str,
        idempotency_key: &str,
    ) -> Result<HostedPage, PaymentsError> {
        let form = [pair("customer", customer), pair("return_url", return_url)];
        hosted(
            &self
                .create("/v1/billing_portal/sessions", &form, idempotency_key)
                .await?,
        )
    }

    async fn subscription(&self, id: &str) -> Result<Option<ProviderSubscription>, PaymentsError> {
        if !is_id(id) {
            return Ok(None);
        }
        let found = self
            .call(
                reqwest::Method::GET,
                &format!("/v1/subscriptions/{id}"),
                None,
                None,
            )
            .await?;
        Ok(found.as_ref().map(parse_subscription))
    }

    async fn delete_customer(&self, customer: &str) -> Result<(), PaymentsError> {
        if !is_id(customer) {
            return Ok(());
        }
        // Stripe cancels the customer's active subscriptions with it; 404 (already gone)
        // answers `None`, which is done as well.
        let path = format!("/v1/customers/{customer}");
        self.call(reqwest::Method::DELETE, &path, None, None)
            .await
            .map(|_| ())
    }

    async fn pause_collection(
        &self,
        subscription: &str,
        paused: bool,
        idempotency_key: &str,
    ) -> Result<(), PaymentsError> {
        if !is_id(subscription) {
            return Err(PaymentsError::Refused("bad subscription id".into()));
        }
        // An empty value unsets the pause (Stripe's form encoding of `null`).
        let form = if paused {
            [pair("pause_collection[behavior]", "void")]
        } else {
            [pair("pause_collection", "")]
        };
        let path = format!("/v1/subscriptions/{subscription}");
        self.create(&path, &form, idempotency_key).await.map(|_| ())
    }

    async fn checkout_subscription(&self, session: &str) -> Result<Option<String>, PaymentsError> {
        if !is_id(session) {
            return Ok(None);
        }
        let found = self
            .call(
                reqwest::Method::GET,
                &format!("/v1/checkout/sessions/{session}"),
                None,
                None,
            )
            .await?;
        Ok(found.and_then(|s| id_of(&s["subscription"])))
    }

    async fn set_quantities(
        &self,
        subscription: &str,
        changes: &[QuantityChange],
        idempotency_key: &str,
    ) -> Result<(), PaymentsError> {
        for (i, change) in changes.iter().enumerate() {
            let key = format!("{idempotency_key}-{i}");
            let quantity = pair("quantity", change.quantity.to_string());
            match &change.item {
                Some(item) if is_id(item) => {
                    self.create(&format!("/v1/subscription_items/{item}"), &[quantity], &key)
                        .await?;
                }
                Some(_) => return Err(PaymentsError::Refused("bad item id".into())),
                None => {
                    let form = [
                        pair("subscription", subscription),
                        pair("price", &change.price),
                        quantity,
                    ];
                    self.create("/v1/subscription_items", &form, &key).await?;
                }
            }
        }
        Ok(())
    }
}

/// Ids are put in paths: only Stripe's id alphabet.
fn is_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 255 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An id field that may be expanded into an object.
pub fn id_of(value: &Value) -> Option<String> {
    value
        .as_str()
        .or_else(|| value["id"].as_str())
        .map(str::to_owned)
}

fn at(value: &Value) -> Option<OffsetDateTime> {
    value
        .as_i64()
        .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok())
}

fn plan_of(value: &Value) -> Option<PricingType> {
    match value.as_str()? {
        "it_teams" => Some(PricingType::ItTeams),
        "msp" => Some(PricingType::Msp),
        "free" => Some(PricingType::Free),
        _ => None,
    }
}

/// A Stripe subscription object read into the port's shape. The period is the subscription's
/// (API versions before 2025-03-31) or its first item's (since).
pub fn parse_subscription(s: &Value) -> ProviderSubscription {
    let items: Vec<&Value> = s
        .pointer("/items/data")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let period = |field: &str| at(&s[field]).or_else(|| items.first().and_then(|i| at(&i[field])));
    ProviderSubscription {
        id: s["id"].as_str().unwrap_or_default().to_owned(),
        customer: id_of(&s["customer"]).unwrap_or_default(),
        status: SubscriptionStatus::from_stripe(s["status"].as_str().unwrap_or_default()),
        plan: plan_of(&s["metadata"]["plan"]),
        org_id: s["metadata"]["org_id"]
            .as_str()
            .and_then(|v| uuid::Uuid::parse_str(v).ok()),
        trial_end: at(&s["trial_end"]),
        current_period_start: period("current_period_start"),
        current_period_end: period("current_period_end"),
        cancel_at_period_end: s["cancel_at_period_end"].as_bool().unwrap_or(false),
        collection_paused: s["pause_collection"].is_object(),
        items: items
            .iter()
            .filter_map(|i| {
                Some(SubscriptionItem {
                    id: i["id"].as_str()?.to_owned(),
                    price: id_of(&i["price"]).or_else(|| id_of(&i["plan"]))?,
                    quantity: i["quantity"].as_u64().unwrap_or(0),
                })
            })
            .collect(),
    }
}
