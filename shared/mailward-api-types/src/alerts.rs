//! Alert rules and alerts (an extension beyond SPEC): `/alert-rules`, `/alert-rules/{id}`,
//! `/alert-rules/{id}/test` and `/alerts`.

use crate::common::PageInfo;
use crate::constraints::text;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

crate::words!(
    /// Which domains a rule watches: `all`, `groups` (`group_ids`) or `domains` (`domain_ids`).
    pub AlertScopeType = ["all", "groups", "domains"]
);
crate::words!(
    /// A rule's condition.
    pub AlertConditionType = [
        "monitoring_problem",
        "score_below",
        "dmarc_pass_rate_below",
        "new_unknown_sender",
        "sender_failure_rate_above",
        "tls_failure_rate_above",
        "hosted_record_error",
        "certificate_expiring",
        "dns_conflict"
    ]
);
crate::words!(
    /// A destination's type.
    pub AlertDestinationType = ["email", "slack", "teams", "pagerduty", "webhook_endpoint"]
);
crate::words!(
    /// A score band (`score_below`): alert when the domain's band is below it.
    pub AlertBand = ["bad", "good", "great"]
);
crate::words!(
    /// An alert's status.
    pub AlertStatusName = ["open", "resolved"]
);
crate::schema_type!(
    /// A routing key of a PagerDuty Events API v2 integration: 32 letters or digits.
    pub RoutingKey = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some("^[A-Za-z0-9]{32}$"))
);
crate::schema_type!(
    /// A rule's name: 1 to 100 characters without control characters.
    pub AlertRuleName = text(1, 100)
);

/// Which domains a rule watches.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertScopeInput {
    #[serde(rename = "type")]
    #[schema(value_type = AlertScopeType)]
    pub kind: String,
    /// With `groups`: 1 to 50 group ids.
    #[schema(max_items = 50)]
    pub group_ids: Option<Vec<Uuid>>,
    /// With `domains`: 1 to 500 domain ids.
    #[schema(max_items = 500)]
    pub domain_ids: Option<Vec<Uuid>>,
}

/// A condition and its parameters; each type takes only its own.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertConditionInput {
    #[serde(rename = "type")]
    #[schema(value_type = AlertConditionType)]
    pub kind: String,
    /// `score_below`: the band (`bad`, `good`, `great`).
    #[schema(value_type = Option<AlertBand>)]
    pub band: Option<String>,
    /// Rate conditions: the percentage, 0 to 100 (`dmarc_pass_rate_below`: default 95;
    /// failure rates: default 10).
    #[schema(minimum = 0, maximum = 100)]
    pub threshold_pct: Option<f64>,
    /// `dmarc_pass_rate_below`, `tls_failure_rate_above`: the window of whole UTC days ending
    /// today, 1 to 90 (default 7); `new_unknown_sender`: how recently the sender was first seen
    /// (default 7).
    #[schema(minimum = 1, maximum = 90)]
    pub window_days: Option<u32>,
    /// `dmarc_pass_rate_below`, `sender_failure_rate_above` (default 100) and
    /// `new_unknown_sender` (default 1): the fewest messages that count (senders: in their
    /// recent 30-day window).
    #[schema(minimum = 1, maximum = 1000000000)]
    pub min_messages: Option<u64>,
    /// `tls_failure_rate_above`: the fewest sessions in the window that count (default 100).
    #[schema(minimum = 1, maximum = 1000000000)]
    pub min_sessions: Option<u64>,
    /// `certificate_expiring`: 1 to 365 days (default 21).
    #[schema(minimum = 1, maximum = 365)]
    pub within_days: Option<u32>,
}

/// A destination. `email`: `emails`; `slack`, `teams`: `url`; `pagerduty`: `routing_key`;
/// `webhook_endpoint`: `endpoint_id`. On an update, a destination given with the `id` of one the
/// rule has, and without its `url` or `routing_key`, keeps the stored one.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlertDestinationInput {
    #[serde(rename = "type")]
    #[schema(value_type = AlertDestinationType)]
    pub kind: String,
    /// An existing destination's id (updates).
    pub id: Option<Uuid>,
    /// `email`: 1 to 20 addresses.
    #[schema(format = Email, max_items = 20)]
    pub emails: Option<Vec<String>>,
    /// `slack`: the incoming webhook URL; `teams`: the workflow's webhook URL. Never answered
    /// back.
    #[schema(value_type = Option<crate::constraints::HttpsUrl>)]
    pub url: Option<String>,
    /// `pagerduty`: the Events API v2 integration's routing key. Never answered back.
    #[schema(value_type = Option<RoutingKey>)]
    pub routing_key: Option<String>,
    /// `webhook_endpoint`: one of the organization's endpoints.
    pub endpoint_id: Option<Uuid>,
}

/// `POST /alert-rules` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAlertRule {
    #[schema(value_type = AlertRuleName)]
    pub name: String,
    /// Default true.
    pub enabled: Option<bool>,
    /// Default `{"type": "all"}`.
    pub scope: Option<AlertScopeInput>,
    pub condition: AlertConditionInput,
    /// 1 to 10 destinations.
    #[schema(min_items = 1, max_items = 10)]
    pub destinations: Vec<AlertDestinationInput>,
    /// Minutes between repeats while an alert stays open, 5 to 10080 (default 240).
    #[schema(minimum = 5, maximum = 10080)]
    pub repeat_interval_minutes: Option<u32>,
}

/// `POST /alert-rules/{id}` body: the fields given replace the rule's.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAlertRule {
    #[schema(value_type = Option<AlertRuleName>)]
    pub name: Option<String>,
    pub enabled: Option<bool>,
    pub scope: Option<AlertScopeInput>,
    pub condition: Option<AlertConditionInput>,
    #[schema(min_items = 1, max_items = 10)]
    pub destinations: Option<Vec<AlertDestinationInput>>,
    #[schema(minimum = 5, maximum = 10080)]
    pub repeat_interval_minutes: Option<u32>,
}

/// A rule's scope.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertScopeView {
    #[serde(rename = "type")]
    #[schema(value_type = AlertScopeType)]
    pub kind: String,
    pub group_ids: Vec<Uuid>,
    pub domain_ids: Vec<Uuid>,
}

/// A rule's condition with every parameter it takes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertConditionView {
    #[serde(rename = "type")]
    #[schema(value_type = AlertConditionType)]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<AlertBand>)]
    pub band: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_days: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_messages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_sessions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_days: Option<u32>,
}

/// A destination as shown: never its URL or routing key.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertDestinationView {
    pub id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = AlertDestinationType)]
    pub kind: String,
    /// `email`: the addresses.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub emails: Vec<String>,
    /// `webhook_endpoint`: the endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint_id: Option<Uuid>,
    /// `slack`, `teams`: the URL's host and its last four characters; `pagerduty`: the routing
    /// key's last four.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// An alert rule.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertRule {
    pub id: Uuid,
    /// Always `alert_rule`.
    pub object: String,
    pub name: String,
    pub enabled: bool,
    pub scope: AlertScopeView,
    pub condition: AlertConditionView,
    pub destinations: Vec<AlertDestinationView>,
    pub repeat_interval_minutes: u32,
    /// Alerts of this rule open now.
    pub open_alerts: u32,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /alert-rules`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertRuleList {
    pub data: Vec<AlertRule>,
}

/// One attempt at notifying a destination.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertDeliveryView {
    pub destination_id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = AlertDestinationType)]
    pub kind: String,
    /// `opened`, `updated` or `resolved`.
    pub action: String,
    pub attempt: u32,
    /// `succeeded` or `failed`.
    pub status: String,
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub created_at: String,
    /// When a failed attempt is tried again.
    pub next_retry_at: Option<String>,
}

/// Where an alert points.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertLinks {
    /// The domain in the API (`GET /domains/{id}`).
    pub domain: String,
    /// The rule in the API.
    pub rule: String,
    /// The domain's page in the web application (`/app/domains/{id}`). Extension.
    #[serde(default)]
    pub domain_page: String,
    /// The open alerts and the rules in the web application. Extension.
    #[serde(default)]
    pub alerts_page: String,
}

impl AlertLinks {
    /// The links of an alert on `domain` from `rule`, under the service's base URL.
    pub fn new(base: &str, domain: Uuid, rule: Uuid) -> Self {
        let base = base.trim_end_matches('/');
        Self {
            domain: format!("{base}/domains/{domain}"),
            rule: format!("{base}/alert-rules/{rule}"),
            domain_page: format!("{base}/app/domains/{domain}"),
            alerts_page: format!("{base}/app/organization/groups#rules-h"),
        }
    }
}

/// An alert.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Alert {
    pub id: Uuid,
    /// Always `alert`.
    pub object: String,
    pub rule_id: Uuid,
    pub rule_name: String,
    #[schema(value_type = AlertConditionType)]
    pub condition: String,
    pub domain_id: Uuid,
    pub domain: String,
    /// What in the domain it is about: a sender id, a certificate (`bimi`, `mta_sts`,
    /// `mx:<host>`), a hosted record (`dmarc`, `spf`, `dkim`, `bimi`, `mta_sts`); empty for the
    /// domain as a whole.
    pub subject: String,
    #[schema(value_type = AlertStatusName)]
    pub status: String,
    /// `critical`, `error`, `warning` or `info`.
    pub severity: String,
    pub summary: String,
    /// The figures behind it.
    #[schema(value_type = Object)]
    pub details: serde_json::Map<String, serde_json::Value>,
    pub opened_at: String,
    pub updated_at: String,
    pub resolved_at: Option<String>,
    /// When the destinations last heard of it.
    pub notified_at: String,
    /// Notifications sent (opened, repeats, resolved).
    pub notifications: u32,
    /// PagerDuty's `dedup_key` for it.
    pub dedup_key: String,
    /// The latest delivery attempts to its destinations, oldest first (at most 50; mail is
    /// not listed, webhook endpoints' attempts are under the endpoint's deliveries).
    pub deliveries: Vec<AlertDeliveryView>,
    pub links: AlertLinks,
}

/// `GET /alerts`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AlertList {
    pub data: Vec<Alert>,
    pub page_info: PageInfo,
}

/// `GET /alerts` filters.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AlertFilters {
    /// `open` or `resolved`; both when omitted.
    #[param(value_type = Option<AlertStatusName>)]
    pub status: Option<String>,
    /// Alerts of this domain.
    pub domain_id: Option<Uuid>,
    /// Alerts of this rule.
    pub rule_id: Option<Uuid>,
}

/// How sending a sample to one destination went.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertTestResult {
    pub destination_id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = AlertDestinationType)]
    pub kind: String,
    /// `delivered` (the receiver answered 2xx, or the mail was handed over), `queued` (a
    /// webhook endpoint: the signed delivery is queued, see its deliveries), `skipped` (email
    /// with the `alerts` notification switch off; a disabled webhook endpoint) or `failed`.
    pub status: String,
    pub response_status: Option<u16>,
    pub error: Option<String>,
}

/// `POST /alert-rules/{id}/test`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertTest {
    pub rule_id: Uuid,
    pub results: Vec<AlertTestResult>,
}
