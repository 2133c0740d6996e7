//! The scheduled report (an extension beyond SPEC): its settings (`/report-settings`), what
//! sending one now answers, and the content the PDF typesets.

use crate::constraints::text;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

crate::words!(
    /// What a report covers: `organization` (every domain) or `group` (`group_id`'s domains).
    pub ReportScopeType = ["organization", "group"]
);
crate::words!(
    /// How often a report is sent: `weekly` (Mondays, the API's `last_7_days`) or `monthly`
    /// (the 1st, the API's `last_30_days`).
    pub CadenceName = ["weekly", "monthly"]
);
crate::schema_type!(
    /// A line of branding (a name, a footer): 1 to 200 characters without control characters.
    pub BrandingText = text(1, 200)
);

/// What a report covers.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportScopeInput {
    #[serde(rename = "type")]
    #[schema(value_type = ReportScopeType)]
    pub kind: String,
    /// With `group`.
    pub group_id: Option<Uuid>,
}

/// How the report presents itself. An empty string clears a field.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BrandingInput {
    /// The name on the cover (default: the group's, or the organization's).
    #[schema(value_type = Option<String>, max_length = 200)]
    pub name: Option<String>,
    /// A PNG or JPEG logo (https, public host; at most 1 MiB; default: the organization's
    /// `logo_url`).
    #[schema(value_type = Option<String>, max_length = 2048)]
    pub logo_url: Option<String>,
    /// A line at the foot of every page.
    #[schema(value_type = Option<String>, max_length = 200)]
    pub footer: Option<String>,
}

/// `POST /report-settings` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateReportSettings {
    /// Default `{"type": "organization"}`.
    pub scope: Option<ReportScopeInput>,
    #[schema(value_type = CadenceName)]
    pub cadence: String,
    /// 1 to 20 addresses.
    #[schema(format = Email, min_items = 1, max_items = 20)]
    pub recipients: Vec<String>,
    /// Default true.
    pub enabled: Option<bool>,
    pub branding: Option<BrandingInput>,
}

/// `POST /report-settings/{id}` body: the fields given replace the report's.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateReportSettings {
    #[schema(value_type = Option<CadenceName>)]
    pub cadence: Option<String>,
    #[schema(format = Email, min_items = 1, max_items = 20)]
    pub recipients: Option<Vec<String>>,
    pub enabled: Option<bool>,
    /// Replaces the fields given; `""` clears one.
    pub branding: Option<BrandingInput>,
}

/// A report's scope.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportScopeView {
    #[serde(rename = "type")]
    #[schema(value_type = ReportScopeType)]
    pub kind: String,
    pub group_id: Option<Uuid>,
}

/// A report's branding.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BrandingView {
    pub name: Option<String>,
    pub logo_url: Option<String>,
    pub footer: Option<String>,
}

/// A scheduled report's settings.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportSettings {
    pub id: Uuid,
    /// Always `report_settings`.
    pub object: String,
    pub scope: ReportScopeView,
    pub enabled: bool,
    #[schema(value_type = CadenceName)]
    pub cadence: String,
    /// The API period its window is: `last_7_days` or `last_30_days` on the day it is sent.
    pub period: String,
    pub recipients: Vec<String>,
    pub branding: BrandingView,
    /// When it is sent next (null while disabled).
    pub next_send_at: Option<String>,
    pub last_sent_at: Option<String>,
    /// The window last sent, `YYYY-MM-DD..YYYY-MM-DD`.
    pub last_period: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /report-settings`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportSettingsList {
    pub data: Vec<ReportSettings>,
}

/// `POST /report-settings/{id}/send`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReportSendQueued {
    pub report_settings_id: Uuid,
    /// Always `queued`: the PDF is built and mailed by a background job.
    pub status: String,
}

/// One day of a domain's chart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DayPoint {
    pub date: String,
    pub volume: u64,
    /// Passed DMARC.
    pub compliant: u64,
}

/// Open tasks of one priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityCount {
    /// Critical, High, Medium or Low.
    pub label: String,
    pub count: u64,
}

/// One domain in a scheduled report: the figures are the API's for the same window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedDomain {
    pub domain: String,
    pub score: u8,
    pub band: String,
    /// At the previous report, if there was one.
    pub previous_score: Option<u8>,
    pub previous_band: Option<String>,
    /// The rollout plan's current stage (`1. Setup` ...), or `done`.
    pub stage: String,
    pub volume: u64,
    pub dmarc_pass_pct: f64,
    /// Against the window before.
    pub delta_volume: i64,
    pub delta_dmarc_pass_pct: f64,
    pub days: Vec<DayPoint>,
    /// Senders first seen in the window (names), at most 5, and how many there were.
    pub new_senders: Vec<String>,
    pub new_senders_total: u64,
    pub open_tasks: Vec<PriorityCount>,
    /// What to do next (the summary's next action).
    pub next_action: String,
}

/// What a scheduled report's PDF says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduledReportContent {
    /// `Weekly email authentication report` or `Monthly ...`.
    pub title: String,
    /// The name on the cover.
    pub brand: String,
    pub footer: Option<String>,
    /// The API period.
    pub period: String,
    pub date_from: String,
    pub date_to: String,
    pub generated_at: String,
    pub volume: u64,
    pub dmarc_pass_pct: f64,
    pub domains: Vec<ReportedDomain>,
}
