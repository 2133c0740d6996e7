//! Billing (an extension of SPEC §4 behind its three MCP tools `get_subscription`,
//! `start_checkout`, `start_billing_portal`): the subscription, and the hosted pages a person
//! opens to pay or manage it.

use crate::admin::UsageLineItem;
use crate::organizations::PricingTypeView;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// What the organization's plan entitles it to now.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EntitlementsView {
    /// Days of aggregate-report data kept and readable (30 free, 365 paid; the paid window
    /// is kept 30 days after a downgrade).
    pub retention_days: i64,
    /// Domains the organization may hold. Above it (after a downgrade) domains stay readable
    /// but the newest ones beyond the cap are not swept until the count fits.
    pub domain_cap: u64,
    /// Whether agents may propose changes (the AGENT-ADDON line item).
    pub agent_addon: bool,
}

/// The next invoice, estimated from the usage line items.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct InvoiceEstimate {
    /// When it is due: the trial's or the period's end.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    /// What it will bill: the line items of `GET /usage` as the paid plan counts them now.
    pub line_items: Vec<UsageLineItem>,
}

/// `GET /billing/subscription`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Subscription {
    /// The plan whose entitlements apply: `free` until a checkout completes (the plan chosen at
    /// signup is only the one offered), and again after cancellation or the grace period.
    pub plan: PricingTypeView,
    /// The plan offered at checkout (chosen at signup, or the plan last paid for).
    pub offered_plan: PricingTypeView,
    /// none, trialing, active, past_due or canceled.
    pub status: String,
    /// The trial's end (the trial starts at checkout).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub trial_end: Option<OffsetDateTime>,
    /// The current billing period.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub current_period_start: Option<OffsetDateTime>,
    /// The current billing period's end.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub current_period_end: Option<OffsetDateTime>,
    /// The subscription ends at the period's end.
    pub cancel_at_period_end: bool,
    /// While past due: when the paid entitlements end unless the invoice is paid.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub grace_period_end: Option<OffsetDateTime>,
    /// What the organization may use now.
    pub entitlements: EntitlementsView,
    /// The quantities now: `GET /usage`'s line items.
    pub quantities: Vec<UsageLineItem>,
    /// The next invoice, when a subscription bills.
    pub next_invoice: Option<InvoiceEstimate>,
    /// The payment provider: `stripe`, or `local` (the local stack's test-mode pages).
    pub provider: String,
}

/// `POST /billing/checkout`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutInput {
    /// it_teams or msp.
    pub plan: PricingTypeView,
    /// Where the hosted page sends the person back: an absolute URL on this service's origin.
    #[schema(max_length = 2048)]
    pub return_url: Option<String>,
}

/// `POST /billing/portal`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PortalInput {
    /// Where the portal sends the person back: an absolute URL on this service's origin.
    #[schema(max_length = 2048)]
    pub return_url: Option<String>,
}

/// A hosted page to open.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct HostedPageUrl {
    /// Open it in a browser; it is the payment provider's, and card data never reaches
    /// Mailward.
    pub url: String,
}

/// `POST /billing/stripe-webhook`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WebhookReceipt {
    /// Always true once the signature verified.
    pub received: bool,
    /// The event was processed before (a redelivery); nothing was done again.
    pub duplicate: bool,
}
