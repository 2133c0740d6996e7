//! Billing (an extension of SPEC §4: the REST side of the `get_subscription`, `start_checkout`
//! and `start_billing_portal` tools) and Stripe's webhook.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use mailward_api_types::ErrorBody;
use mailward_api_types::billing::{
    CheckoutInput, HostedPageUrl, PortalInput, Subscription, WebhookReceipt,
};
use mailward_http::extract::{Json, parse_json};
use mailward_http::{ApiError, AppState, Principal, Routes};

/// The organization's subscription.
#[utoipa::path(get, path = "/billing/subscription", tag = "billing",
    description = "An extension beyond SPEC §4 (the REST side of the `get_subscription` MCP tool). \
`plan` is the plan whose entitlements apply: `free` until a checkout completes, whatever \
`pricing_type` was chosen at signup (that is `offered_plan`, the plan offered at checkout). \
`status`: none, trialing (the 14-day trial starts at checkout), active, past_due (an invoice \
failed: paid entitlements hold for 7 days, `grace_period_end`, then the free ones apply until \
it is paid) or canceled. `entitlements`: report retention in days (30 free, 365 paid; after a \
downgrade the paid window is kept 30 more days), the domain cap (free 50, it_teams 1,000, msp \
25,000; domains above it after a downgrade stay readable and are not swept until the count \
fits) and whether agents may propose changes (the agent add-on, paid plans). `quantities` are \
GET /usage's line items now; `next_invoice` estimates the next invoice from the line items a \
paid subscription bills (the prices are Stripe's). Dashboard sessions of administrators not \
limited to groups only: API keys and viewers get 403, since billing hands a URL to a person.",
    security(("session" = [])),
    responses((status = 200, body = Subscription), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn get_subscription(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<Subscription>, ApiError> {
    Ok(axum::Json(
        mailward_billing::subscription(&app, &principal).await?,
    ))
}

/// Starts a checkout.
#[utoipa::path(post, path = "/billing/checkout", tag = "billing", request_body = CheckoutInput,
    description = "An extension beyond SPEC §4 (the REST side of `start_checkout`). Answers the \
URL of a hosted Checkout page (Stripe's; on the local stack its own test-mode page) where the \
person subscribes to `plan` (it_teams or msp), with the 14-day trial unless the organization \
had one. Payment happens there: card data never reaches Mailward. The plan becomes active when \
Stripe's event arrives at /billing/stripe-webhook. `return_url` (optional, on this service's \
origin; default the base URL) is where the page sends the person back. 409 \
`subscription_exists` when a subscription is live (use the portal). Dashboard sessions of \
administrators not limited to groups only; 503 `billing_unavailable` where no payment provider \
is configured.",
    security(("session" = [])),
    responses((status = 200, body = HostedPageUrl), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn start_checkout(
    State(app): State<AppState>,
    principal: Principal,
    Json(input): Json<CheckoutInput>,
) -> Result<axum::Json<HostedPageUrl>, ApiError> {
    Ok(axum::Json(
        mailward_billing::start_checkout(&app, &principal, &input).await?,
    ))
}

/// Opens the billing portal.
#[utoipa::path(post, path = "/billing/portal", tag = "billing", request_body = PortalInput,
    description = "An extension beyond SPEC §4 (the REST side of `start_billing_portal`). \
Answers the URL of the payment provider's billing portal for the organization: payment \
methods, invoices, plan changes and cancellation. The body is optional. 409 `no_subscription` \
before the first checkout. Dashboard sessions of administrators not limited to groups only.",
    security(("session" = [])),
    responses((status = 200, body = HostedPageUrl), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn open_portal(
    State(app): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> Result<axum::Json<HostedPageUrl>, ApiError> {
    let input: PortalInput = if body.trim_ascii().is_empty() {
        PortalInput::default()
    } else {
        parse_json(&body)?
    };
    Ok(axum::Json(
        mailward_billing::open_portal(&app, &principal, &input).await?,
    ))
}

/// Stripe's webhook.
#[utoipa::path(post, path = "/billing/stripe-webhook", tag = "billing",
    request_body(content = serde_json::Value, content_type = "application/json",
        description = "A Stripe event, as Stripe sends it"),
    description = "An extension beyond SPEC §4: the endpoint to register in Stripe's dashboard \
for the events checkout.session.completed, customer.subscription.created, \
customer.subscription.updated, customer.subscription.deleted, invoice.paid and \
invoice.payment_failed. Authenticated by `Stripe-Signature` (the `stripe_signature` scheme: \
`t=` and `v1=` HMAC-SHA256 of `t.body` under the endpoint's signing secret, \
MAILWARD_STRIPE_WEBHOOK_SECRET; 300 s tolerance; any of several `v1` values during a secret \
rotation). No `Mailward-Version`. 400 `invalid_signature` for a missing, wrong or stale \
signature. Each event id is processed once (a redelivery answers `duplicate: true`), and an \
event only names the subscription, whose latest state is read back from Stripe, so events may \
arrive in any order. Other event types are acknowledged and ignored.",
    security(("stripe_signature" = [])),
    responses((status = 200, body = WebhookReceipt), (status = 400, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn stripe_webhook(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<axum::Json<WebhookReceipt>, ApiError> {
    let signature = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok());
    Ok(axum::Json(
        mailward_billing::receive(&app, &body, signature).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(get_subscription))
        .routes(utoipa_axum::routes!(start_checkout))
        .routes(utoipa_axum::routes!(open_portal))
        .routes(utoipa_axum::routes!(stripe_webhook))
}
