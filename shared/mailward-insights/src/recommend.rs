//! The policy recommendation and the next action a domain's report summary shows: with enough
//! mail in the window and no legitimate mail the next policy would stop, move the policy up.

use mailward_api_types::reports::{NextAction, PeriodFigures, Recommendation};
use mailward_domain::domain::{Domain, Policy};

/// Fewest messages in the window before a recommendation to advance is made.
pub const ADVANCE_MIN_VOLUME: u64 = 100;

/// Whether to move the policy up: with enough data in the window and no legitimate mail that
/// the next policy would stop over the last 30 days (the enforcement impact), what still fails
/// comes from unidentified sources, which is exactly the mail enforcement is meant to stop.
pub fn recommend(
    domain: &Domain,
    window: &PeriodFigures,
    legitimate_affected: u64,
) -> Recommendation {
    let next = match domain.dmarc_policy {
        Policy::Reject => {
            return Recommendation {
                status: "at_maximum".into(),
                next_policy: None,
                reason: "the domain already publishes p=reject".into(),
            };
        }
        Policy::Quarantine => "reject",
        Policy::None => "quarantine",
    };
    let hold = |reason: String| Recommendation {
        status: "hold".into(),
        next_policy: None,
        reason,
    };
    if window.volume < ADVANCE_MIN_VOLUME {
        return hold(format!(
            "too little report data in the window ({} messages; at least {ADVANCE_MIN_VOLUME} are needed)",
            window.volume
        ));
    }
    if legitimate_affected > 0 {
        return hold(format!(
            "p={next} would stop {legitimate_affected} messages of legitimate senders over the last 30 days; fix those senders first (see the enforcement impact)"
        ));
    }
    Recommendation {
        status: "advance_recommended".into(),
        next_policy: Some(next.into()),
        reason: format!(
            "every known sender passes DMARC ({}% of {} messages); what fails comes from unidentified sources",
            window.dmarc_pass_pct, window.volume
        ),
    }
}

/// What the summary tells the domain to do next: wait for reports, fix the legitimate senders a
/// stricter policy would stop, publish the next policy, or keep monitoring.
pub fn next_action(
    window: &PeriodFigures,
    recommendation: &Recommendation,
    legitimate_affected: u64,
) -> NextAction {
    let (code, message) = if window.volume == 0 {
        (
            "wait_for_reports",
            "No aggregate reports cover the window yet; check the DMARC record names the report address".to_owned(),
        )
    } else if legitimate_affected > 0 {
        (
            "fix_failing_senders",
            format!(
                "Fix SPF or DKIM for the legitimate senders behind {legitimate_affected} failing messages"
            ),
        )
    } else if recommendation.status == "advance_recommended" {
        (
            "advance_policy",
            format!(
                "Publish p={} for the domain",
                recommendation
                    .next_policy
                    .as_deref()
                    .unwrap_or("quarantine")
            ),
        )
    } else {
        ("keep_monitoring", recommendation.reason.clone())
    };
    NextAction {
        code: code.into(),
        message,
    }
}
