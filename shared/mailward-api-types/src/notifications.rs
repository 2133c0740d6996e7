//! The one-click unsubscribe route of notification mail.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of `/notifications/unsubscribe`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UnsubscribeParams {
    /// The signed token from the mail's link (names the organization and the setting).
    pub token: String,
}

/// What an unsubscribe turned off.
#[derive(Debug, Serialize, ToSchema)]
pub struct Unsubscribed {
    /// The organization's name.
    pub organization: String,
    /// The `settings.email_notifications` switch now off.
    pub setting: String,
    /// The switch's value: false, or unchanged (true) when a recipient's link took one address
    /// off one list.
    pub enabled: bool,
    /// The address taken off its alert rule or scheduled report (an extension), for a
    /// recipient's link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipient: Option<String>,
}
