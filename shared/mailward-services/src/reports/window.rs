//! Report windows: how many days a plan keeps, the periods a view may ask for, and the window of
//! whole UTC days ending yesterday (today's reports are still arriving), clamped to retention.
//! Also the one percentage rounding every report figure uses.

use crate::error::ServiceError;
use crate::state::AppState;
pub use mailward_insights::figures::pct;
use time::{Date, Duration};

/// Days of report data a plan's entitlements keep (the billing table's).
pub fn retention_days(plan: mailward_domain::model::PricingType) -> i64 {
    mailward_domain::billing::plan_table(plan).0
}

/// The days of a long-window `period` (TLS views, exports): last_7_days, last_30_days (the
/// default), last_90_days or last_365_days.
pub(crate) fn long_period_days(raw: Option<&str>) -> Result<i64, ServiceError> {
    match raw.unwrap_or("last_30_days") {
        "last_7_days" => Ok(7),
        "last_30_days" => Ok(30),
        "last_90_days" => Ok(90),
        "last_365_days" => Ok(365),
        _ => Err(ServiceError::invalid(
            "period",
            "period must be last_7_days, last_30_days, last_90_days or last_365_days",
        )),
    }
}

/// The window `[from, to]` of `days` days ending yesterday, clamped to `retention` days.
pub(crate) fn window(app: &AppState, retention: i64, days: i64) -> (Date, Date) {
    let today = app.clock.now().date();
    let to = today.previous_day().unwrap_or(today);
    let earliest = today - Duration::days(retention);
    let from = (to - Duration::days(days - 1)).max(earliest);
    (from, to)
}

/// The window of `days` days ending yesterday, clamped to the organization's retention: what
/// its paid entitlements keep (never the plan chosen at signup).
pub async fn org_window(
    app: &AppState,
    org: uuid::Uuid,
    days: i64,
) -> Result<(Date, Date), ServiceError> {
    let (ent, _) = crate::usage::entitlements(app, org).await?;
    Ok(window(app, ent.retention_days, days))
}
