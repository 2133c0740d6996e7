//! The scheduled report (an extension): a weekly or monthly PDF by mail, for the whole
//! organization or for one group (an MSP's customer), with its own branding. Its settings are
//! one item per scope; each send keeps the scores it reported so the next one shows the change.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::{Duration, OffsetDateTime, Time};
use uuid::Uuid;

/// Recipients one report may have.
pub const MAX_RECIPIENTS: usize = 20;
/// The hour (UTC) a report is sent on its day.
pub const SEND_HOUR: u8 = 6;

/// What a report covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReportScope {
    /// Every domain of the organization.
    Organization,
    /// The domains of one group.
    Group { group_id: Uuid },
}

/// How often a report is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cadence {
    /// Mondays: the 7 days that ended on Sunday (the API's `last_7_days` that day).
    Weekly,
    /// The 1st of each month: the 30 days that ended the day before (the API's
    /// `last_30_days` that day).
    Monthly,
}

impl Cadence {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Cadence::Weekly => "weekly",
            Cadence::Monthly => "monthly",
        }
    }

    /// The API period whose window the report covers.
    pub fn period(self) -> &'static str {
        match self {
            Cadence::Weekly => "last_7_days",
            Cadence::Monthly => "last_30_days",
        }
    }

    /// The first send time strictly after `after`: the next Monday, or the next 1st of a
    /// month, at [`SEND_HOUR`] UTC.
    pub fn next_send(self, after: OffsetDateTime) -> OffsetDateTime {
        let at = Time::from_hms(SEND_HOUR, 0, 0).unwrap_or(Time::MIDNIGHT);
        let mut day = after.date();
        loop {
            let due = match self {
                Cadence::Weekly => day.weekday() == time::Weekday::Monday,
                Cadence::Monthly => day.day() == 1,
            };
            let candidate = day.with_time(at).assume_utc();
            if due && candidate > after {
                return candidate;
            }
            day += Duration::days(1);
        }
    }
}

/// How a report presents itself: an MSP's own name, logo and footer for its customer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Branding {
    /// The name on the cover (default: the group's or organization's name).
    pub name: Option<String>,
    /// A PNG or JPEG logo at an https URL (default: the organization's `logo_url`).
    pub logo_url: Option<String>,
    /// A line at the foot of each page.
    pub footer: Option<String>,
}

/// One report's settings, in the organization's partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportSettings {
    pub id: Uuid,
    pub org_id: Uuid,
    pub scope: ReportScope,
    pub enabled: bool,
    pub cadence: Cadence,
    /// Who receives it.
    pub recipients: Vec<String>,
    pub branding: Branding,
    /// When it is sent next.
    #[serde(with = "time::serde::rfc3339")]
    pub next_send_at: OffsetDateTime,
    /// The last period sent (`<date_from>..<date_to>`), so a period is sent once.
    pub last_period: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub last_sent_at: Option<OffsetDateTime>,
    /// The score of each domain when the last report was sent.
    #[serde(default)]
    pub last_scores: BTreeMap<Uuid, u8>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn sends_fall_on_mondays_and_first_days() {
        let wed = datetime!(2026-11-25 10:00 UTC);
        assert_eq!(
            Cadence::Weekly.next_send(wed),
            datetime!(2026-11-30 06:00 UTC)
        );
        assert_eq!(
            Cadence::Monthly.next_send(wed),
            datetime!(2026-12-01 06:00 UTC)
        );
        let monday_early = datetime!(2026-11-30 05:00 UTC);
        assert_eq!(
            Cadence::Weekly.next_send(monday_early),
            datetime!(2026-11-30 06:00 UTC)
        );
        let monday_sent = datetime!(2026-11-30 06:00 UTC);
        assert_eq!(
            Cadence::Weekly.next_send(monday_sent),
            datetime!(2026-12-07 06:00 UTC)
        );
    }
}
