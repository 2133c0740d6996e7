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
    /// Always false: the switch's new value.
    pub enabled: bool,
}
