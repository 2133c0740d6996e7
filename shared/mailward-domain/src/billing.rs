//! Billing: what an organization has paid for, and what that entitles it to.
//!
//! This module owns the one table of plans and entitlements ([`entitlements`]) that retention,
//! domain caps, the agent add-on and the usage line items read. The plan chosen at signup
//! (`Organization::pricing_type`) is only the plan offered at checkout: until a subscription
//! is paid (or trialing), an organization has the free entitlements.
//!
//! The [`Payments`] port is the payment provider: Stripe's API in production, the local
//! stack's own test-mode pages by default (`mailward_billing::local`).

use crate::model::PricingType;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// Days of the trial a paid subscription starts with at checkout (Stripe's subscription trial).
pub const TRIAL_DAYS: i64 = 14;

/// Days a `past_due` subscription keeps its paid entitlements before falling back to free.
pub const GRACE_DAYS: i64 = 7;

/// Days the paid retention window is kept after paid entitlements end, so resubscribing
/// restores the data.
pub const RETENTION_HOLD_DAYS: i64 = 30;

/// A subscription's state, as Stripe names it (`none`: no subscription).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SubscriptionStatus {
    /// No subscription (never subscribed, or checkout not completed).
    #[default]
    None,
    /// In the trial that starts at checkout.
    Trialing,
    /// Paid and current.
    Active,
    /// An invoice failed; paid entitlements hold for [`GRACE_DAYS`].
    PastDue,
    /// Ended (cancelled, or unpaid for good).
    Canceled,
}

impl SubscriptionStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionStatus::None => "none",
            SubscriptionStatus::Trialing => "trialing",
            SubscriptionStatus::Active => "active",
            SubscriptionStatus::PastDue => "past_due",
            SubscriptionStatus::Canceled => "canceled",
        }
    }

    /// Stripe's subscription `status` mapped onto ours: `incomplete` has not been paid yet
    /// (none), `unpaid` is past due, `incomplete_expired` and `paused` no longer bill
    /// (canceled). Unknown values read as canceled, never as paid.
    pub fn from_stripe(status: &str) -> Self {
        match status {
            "trialing" => SubscriptionStatus::Trialing,
            "active" => SubscriptionStatus::Active,
            "past_due" | "unpaid" => SubscriptionStatus::PastDue,
            "incomplete" => SubscriptionStatus::None,
            _ => SubscriptionStatus::Canceled,
        }
    }
}

/// One item of a subscription: the line-item code it bills, its price and quantity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionItem {
    /// The provider's item id (`si_…`).
    pub id: String,
    /// The provider's price id.
    pub price: String,
    /// How many units the item bills.
    pub quantity: u64,
}

/// A subscription as the provider holds it: what the webhook reads back (never the event's
/// own copy, which may be stale when events arrive out of order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderSubscription {
    /// `sub_…`.
    pub id: String,
    /// `cus_…`.
    pub customer: String,
    /// Its state.
    pub status: SubscriptionStatus,
    /// The plan it was bought for (from its metadata).
    pub plan: Option<PricingType>,
    /// The organization it belongs to (from its metadata).
    pub org_id: Option<Uuid>,
    /// When the trial ends, if it has one.
    pub trial_end: Option<OffsetDateTime>,
    /// The current billing period.
    pub current_period_start: Option<OffsetDateTime>,
    /// The current billing period's end.
    pub current_period_end: Option<OffsetDateTime>,
    /// Set to end at the period's end.
    pub cancel_at_period_end: bool,
    /// Its items.
    pub items: Vec<SubscriptionItem>,
    /// Collection paused (Stripe's `pause_collection`): no invoice is charged meanwhile.
    #[serde(default)]
    pub collection_paused: bool,
}

/// An organization's billing record: its customer at the provider and its subscription's last
/// known state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BillingAccount {
    /// The provider's customer (`cus_…`), created at the first checkout.
    pub customer_id: Option<String>,
    /// The subscription, once checkout completed.
    pub subscription_id: Option<String>,
    /// The plan paid for.
    pub plan: Option<PricingType>,
    /// The subscription's state.
    pub status: SubscriptionStatus,
    /// When the trial ends (or ended).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub trial_end: Option<OffsetDateTime>,
    /// The current period.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub current_period_start: Option<OffsetDateTime>,
    /// The current period's end.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub current_period_end: Option<OffsetDateTime>,
    /// Ends at the period's end.
    #[serde(default)]
    pub cancel_at_period_end: bool,
    /// Since when an invoice is unpaid (set on the first `past_due`, cleared on payment).
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub past_due_since: Option<OffsetDateTime>,
    /// When paid entitlements last ended (cancellation or the grace period's end), for the
    /// retention hold.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub paid_until: Option<OffsetDateTime>,
    /// The subscription's items.
    #[serde(default)]
    pub items: Vec<SubscriptionItem>,
    /// Whether a trial was ever granted (one trial per organization).
    #[serde(default)]
    pub trial_used: bool,
    /// When quantities were last reported to the provider.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub quantities_synced_at: Option<OffsetDateTime>,
}

/// Where an organization stands in billing at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Free entitlements: never paid, cancelled, or past the grace period.
    Free,
    /// In the checkout trial: paid entitlements, billed nothing.
    Trial,
    /// Paid (including past due within the grace period).
    Paid,
}

/// What an organization may use now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entitlements {
    /// The plan whose entitlements apply (`Free` unless paid or trialing).
    pub plan: PricingType,
    /// Free, trial or paid.
    pub phase: Phase,
    /// Days of aggregate-report data kept and readable.
    pub retention_days: i64,
    /// Domains the organization may hold; those above it (after a downgrade) stay readable
    /// and are not swept.
    pub domain_cap: u64,
    /// Whether agents may propose changes (the AGENT-ADDON line item).
    pub agent_addon: bool,
}

/// The one table of plans: retention, domain cap and the agent add-on of each plan's
/// entitlements. `msp` is sized so that an organization of 10,000 domains fits.
pub fn plan_table(plan: PricingType) -> (i64, u64, bool) {
    match plan {
        PricingType::Free => (30, 50, false),
        PricingType::ItTeams => (365, 1_000, true),
        PricingType::Msp => (365, 25_000, true),
    }
}

fn of_plan(plan: PricingType, phase: Phase) -> Entitlements {
    let (retention_days, domain_cap, agent_addon) = plan_table(plan);
    Entitlements {
        plan,
        phase,
        retention_days,
        domain_cap,
        agent_addon,
    }
}

impl BillingAccount {
    /// The phase at `now`: a trial whose end passed bills (Stripe moves the subscription to
    /// `active` then); a `past_due` subscription keeps paying entitlements for [`GRACE_DAYS`].
    pub fn phase(&self, now: OffsetDateTime) -> Phase {
        if self.plan.is_none_or(|p| p == PricingType::Free) {
            return Phase::Free;
        }
        match self.status {
            SubscriptionStatus::Trialing if self.trial_end.is_none_or(|end| now < end) => {
                Phase::Trial
            }
            SubscriptionStatus::Trialing | SubscriptionStatus::Active => Phase::Paid,
            SubscriptionStatus::PastDue => {
                let since = self.past_due_since.unwrap_or(now);
                if now < since + Duration::days(GRACE_DAYS) {
                    Phase::Paid
                } else {
                    Phase::Free
                }
            }
            SubscriptionStatus::None | SubscriptionStatus::Canceled => Phase::Free,
        }
    }

    /// When paid entitlements ended, if they did: the recorded end, or the grace period's end
    /// of a `past_due` subscription past it.
    fn paid_ended_at(&self, now: OffsetDateTime) -> Option<OffsetDateTime> {
        if self.phase(now) != Phase::Free {
            return None;
        }
        match (self.status, self.past_due_since) {
            (SubscriptionStatus::PastDue, Some(since)) => Some(since + Duration::days(GRACE_DAYS)),
            _ => self.paid_until,
        }
    }
}

/// The entitlements of an organization with billing record `account` at `now` (the one rule
/// every gate reads). Never paid: free. Paid or trialing: the plan's. Lapsed: free, except
/// that the paid retention window is kept for [`RETENTION_HOLD_DAYS`] after paid
/// entitlements ended, so resubscribing restores the data.
pub fn entitlements(account: Option<&BillingAccount>, now: OffsetDateTime) -> Entitlements {
    let Some(account) = account else {
        return of_plan(PricingType::Free, Phase::Free);
    };
    let phase = account.phase(now);
    match (phase, account.plan) {
        (Phase::Trial | Phase::Paid, Some(plan)) => of_plan(plan, phase),
        _ => {
            let mut free = of_plan(PricingType::Free, Phase::Free);
            if let (Some(ended), Some(plan)) = (account.paid_ended_at(now), account.plan)
                && now < ended + Duration::days(RETENTION_HOLD_DAYS)
            {
                free.retention_days = plan_table(plan).0;
            }
            free
        }
    }
}

/// A hosted page the person opens (Checkout or the billing portal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedPage {
    /// The provider's session id (`cs_…`, `bps_…`).
    pub id: String,
    /// Where to send the person.
    pub url: String,
}

/// A Checkout Session to create, in `subscription` mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutRequest {
    /// The organization (`client_reference_id` and the subscription's metadata).
    pub org_id: Uuid,
    /// The customer.
    pub customer: String,
    /// The plan bought.
    pub plan: PricingType,
    /// `(price id, quantity)` per item.
    pub items: Vec<(String, u64)>,
    /// Trial days, when the organization has not had a trial.
    pub trial_days: Option<i64>,
    /// Where the provider sends the person after paying.
    pub success_url: String,
    /// Where the provider sends the person when they give up.
    pub cancel_url: String,
    /// The idempotency key of the create.
    pub idempotency_key: String,
}

/// A customer to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomerRequest {
    /// The organization (metadata).
    pub org_id: Uuid,
    /// The organization's name.
    pub name: String,
    /// The billing email, if known.
    pub email: Option<String>,
    /// The idempotency key of the create.
    pub idempotency_key: String,
}

/// A change of one subscription's items: set the quantity of `Some(item id)`, or add a new
/// item of the price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityChange {
    /// The existing item, or `None` to add one.
    pub item: Option<String>,
    /// The price.
    pub price: String,
    /// The new quantity.
    pub quantity: u64,
}

/// Payment-provider failures.
#[derive(Debug, thiserror::Error)]
pub enum PaymentsError {
    /// The provider refused the request (a 4xx): a bug or a misconfiguration, not retried.
    #[error("payment provider refused the request: {0}")]
    Refused(String),
    /// The provider could not be reached or failed (a 5xx, a timeout): retry later.
    #[error("payment provider unavailable: {0}")]
    Unavailable(String),
}

/// The payment provider.
#[async_trait]
pub trait Payments: Send + Sync {
    /// Which adapter (`stripe`, `local`).
    fn name(&self) -> &'static str;

    /// Creates a customer; answers its id.
    async fn create_customer(&self, req: CustomerRequest) -> Result<String, PaymentsError>;

    /// Creates a Checkout Session in `subscription` mode.
    async fn create_checkout(&self, req: CheckoutRequest) -> Result<HostedPage, PaymentsError>;

    /// Creates a billing-portal session for `customer`.
    async fn create_portal(
        &self,
        customer: &str,
        return_url: &str,
        idempotency_key: &str,
    ) -> Result<HostedPage, PaymentsError>;

    /// Reads a subscription's latest state (`None` when the provider has no such one).
    async fn subscription(&self, id: &str) -> Result<Option<ProviderSubscription>, PaymentsError>;

    /// The subscription a completed Checkout Session created, if any.
    async fn checkout_subscription(&self, session: &str) -> Result<Option<String>, PaymentsError>;

    /// Sets item quantities (and adds items) of a subscription.
    async fn set_quantities(
        &self,
        subscription: &str,
        changes: &[QuantityChange],
        idempotency_key: &str,
    ) -> Result<(), PaymentsError>;

    /// Deletes a customer and everything of it the provider keeps, cancelling its
    /// subscriptions at once (an organization's deletion). A customer already gone is done.
    async fn delete_customer(&self, customer: &str) -> Result<(), PaymentsError>;

    /// Pauses the subscription's collection (`paused`: invoices are voided, as Stripe's
    /// `pause_collection[behavior]=void`) or resumes it.
    async fn pause_collection(
        &self,
        subscription: &str,
        paused: bool,
        idempotency_key: &str,
    ) -> Result<(), PaymentsError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paid(status: SubscriptionStatus, now: OffsetDateTime) -> BillingAccount {
        BillingAccount {
            plan: Some(PricingType::Msp),
            status,
            trial_end: Some(now + Duration::days(3)),
            ..Default::default()
        }
    }

    #[test]
    fn the_signup_choice_is_never_an_entitlement() {
        let now = OffsetDateTime::now_utc();
        assert_eq!(entitlements(None, now).plan, PricingType::Free);
        let chosen = BillingAccount {
            plan: Some(PricingType::Msp),
            ..Default::default()
        };
        let e = entitlements(Some(&chosen), now);
        assert_eq!(
            (e.plan, e.retention_days, e.agent_addon),
            (PricingType::Free, 30, false)
        );
    }

    #[test]
    fn trial_then_paid_then_grace_then_free_with_the_retention_hold() {
        let now = OffsetDateTime::now_utc();
        let mut a = paid(SubscriptionStatus::Trialing, now);
        assert_eq!(entitlements(Some(&a), now).phase, Phase::Trial);
        assert_eq!(
            entitlements(Some(&a), now + Duration::days(4)).phase,
            Phase::Paid
        );
        a.status = SubscriptionStatus::PastDue;
        a.past_due_since = Some(now);
        let e = entitlements(Some(&a), now + Duration::days(GRACE_DAYS - 1));
        assert_eq!((e.plan, e.domain_cap), (PricingType::Msp, 25_000));
        let lapsed = entitlements(Some(&a), now + Duration::days(GRACE_DAYS));
        assert_eq!(
            (lapsed.plan, lapsed.retention_days),
            (PricingType::Free, 365)
        );
        let later = entitlements(
            Some(&a),
            now + Duration::days(GRACE_DAYS + RETENTION_HOLD_DAYS),
        );
        assert_eq!(later.retention_days, 30);
        a.status = SubscriptionStatus::Canceled;
        a.past_due_since = None;
        a.paid_until = Some(now);
        assert_eq!(
            entitlements(Some(&a), now + Duration::days(29)).retention_days,
            365
        );
        assert_eq!(
            entitlements(Some(&a), now + Duration::days(30)).retention_days,
            30
        );
        assert!(plan_table(PricingType::Msp).1 >= 10_000);
    }
}
