//! Billing: the subscription, and the hosted pages where a person pays. An agent never handles
//! card data: it hands the person a URL to open.

use super::{Access, Context, NoInput, Tool, ToolError};
use mailward_api_types::billing::{CheckoutInput, HostedPageUrl, PortalInput, Subscription};

/// `get_subscription`.
pub struct GetSubscription;

impl Tool for GetSubscription {
    const NAME: &'static str = "get_subscription";
    const DESCRIPTION: &'static str = "The organization's subscription: the plan whose entitlements apply (free until a checkout completes), its status (none, trialing, active, past_due, canceled), trial and period ends, the entitlements (report retention, domain cap, agent add-on), the quantities of the usage line items and the next invoice's estimate. Administrators not limited to groups.";
    const ACCESS: Access = Access::Read;
    const SCOPE: Option<&'static str> = Some("billing:read");
    const TITLE: &'static str = "Get subscription";
    type Input = NoInput;
    type Output = Subscription;

    async fn call(ctx: &Context, _: NoInput) -> Result<Subscription, ToolError> {
        Ok(mailward_billing::subscription(&ctx.app, ctx.caller()?).await?)
    }
}

/// `start_checkout`.
pub struct StartCheckout;

impl Tool for StartCheckout {
    const NAME: &'static str = "start_checkout";
    const DESCRIPTION: &'static str = "Starts a subscription to it_teams or msp: answers the URL of the payment provider's hosted Checkout page, for the person to open in a browser (payment happens there; never ask for card details). The 14-day trial starts at checkout. The plan applies once the payment provider confirms; then get_subscription shows it. Administrators not limited to groups.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("billing:write");
    const TITLE: &'static str = "Start checkout";
    const IDEMPOTENT: bool = false;
    const OPEN_WORLD: bool = true;
    type Input = CheckoutInput;
    type Output = HostedPageUrl;

    async fn call(ctx: &Context, input: CheckoutInput) -> Result<HostedPageUrl, ToolError> {
        Ok(mailward_billing::start_checkout(&ctx.app, ctx.caller()?, &input).await?)
    }
}

/// `start_billing_portal`.
pub struct StartBillingPortal;

impl Tool for StartBillingPortal {
    const NAME: &'static str = "start_billing_portal";
    const DESCRIPTION: &'static str = "Answers the URL of the payment provider's billing portal, for the person to open: payment methods, invoices, plan changes and cancellation happen there. Administrators not limited to groups, once a checkout was started.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("billing:write");
    const TITLE: &'static str = "Start billing portal";
    const IDEMPOTENT: bool = false;
    const OPEN_WORLD: bool = true;
    type Input = PortalInput;
    type Output = HostedPageUrl;

    async fn call(ctx: &Context, input: PortalInput) -> Result<HostedPageUrl, ToolError> {
        Ok(mailward_billing::open_portal(&ctx.app, ctx.caller()?, &input).await?)
    }
}
