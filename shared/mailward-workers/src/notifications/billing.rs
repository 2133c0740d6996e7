//! `billing_notices`: the mails that tell an organization with a paid subscription what its
//! invoices are about to bill, from the usage model ([`mailward_services::usage`]: the 14-day
//! trial that starts at checkout, then graduated tiers of active domains). The quantities of
//! those line items are what is reported to the payment provider (`mailward_billing::sync`),
//! so the invoice lines are these. Organizations without a paid subscription (whatever plan
//! they chose at signup) hear nothing; payment failures are announced by the billing
//! webhook (`mailward_billing::webhook`), not here.
//!
//! - **Trial ending**: within [`TRIAL_ENDING_WITHIN`] of the trial's end, what the active domains
//!   will then be billed as. Once per trial.
//! - **Trial ended**: on the first daily pass after it (within [`TRIAL_ENDED_WITHIN`], so an
//!   organization long past its trial is not told on a deployment), the tiers now billed. Once.
//! - **New tier**: after the trial, the active domains reaching a tier for the first time (11,
//!   101 or 1001 of them). Once per tier: the tiers filled when the trial ended count as known.
//!
//! They ride on the daily reminders job ([`super::reminders`]): one mail per organization and
//! day lists everything newly due, to the administrators, with the `billing_notices`
//! unsubscribe.

use super::Switch;
use super::render::Reminder;
use mailward_api_types::admin::UsageLineItem;
use mailward_domain::model::Organization;
use mailward_services::state::AppState;
use mailward_store::{card_cache, notifications};
use time::{Duration, OffsetDateTime};

/// How long before the trial's end it is announced.
pub const TRIAL_ENDING_WITHIN: Duration = Duration::days(3);

/// How long after the trial's end its notice is still news.
pub const TRIAL_ENDED_WITHIN: Duration = Duration::days(7);

/// The marker recipient of the per-notice claims (as the reminders' items).
const LISTED: &str = "listed";

/// One notice: its claim and its line in the mail.
struct Notice {
    occurrence: String,
    line: String,
    subject: String,
}

/// The billing notices newly due for `org` at `now`, claimed, as one reminder and the claims
/// taken (given back by the caller when the mail fails). `None` when nothing is news.
pub(super) async fn due(
    state: &AppState,
    org: &Organization,
    now: OffsetDateTime,
) -> anyhow::Result<Option<(Reminder, Vec<String>)>> {
    let (ent, account) = mailward_services::usage::entitlements(state, org.id).await?;
    // Paid subscriptions only; one bought without a trial (a second subscription) hears of
    // new tiers, never of a trial.
    let Some(account) = account.filter(|_| ent.phase != mailward_domain::billing::Phase::Free)
    else {
        return Ok(None);
    };
    let trial_end = account.trial_end.unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let store = state.store.as_ref();
    let list = card_cache::all_cards(store, org.id).await?;
    let (active, tiers) = mailward_services::usage::paid_tiers(org, &ent, &list);
    let candidates = candidates(trial_end, now, active, &tiers);
    let mut claimed: Vec<Notice> = Vec::new();
    let mut ended_now = false;
    for notice in candidates {
        let is_tier = notice.occurrence.starts_with("billing:tier:");
        let taken = notifications::claim(
            store,
            org.id,
            &notice.occurrence,
            LISTED,
            state.clock.unix(),
        )
        .await?;
        if !taken {
            continue;
        }
        ended_now |= notice.occurrence.starts_with("billing:trial_ended:");
        if is_tier && ended_now {
            // Filled when the trial ended: the trial-ended notice already lists it.
            continue;
        }
        claimed.push(notice);
    }
    if claimed.is_empty() {
        return Ok(None);
    }
    let base = state.config.base_url.trim_end_matches('/');
    let subject = if claimed.len() == 1 {
        claimed[0].subject.clone()
    } else {
        format!("{} billing notices from Mailward", claimed.len())
    };
    let occurrences = claimed.iter().map(|n| n.occurrence.clone()).collect();
    Ok(Some((
        Reminder {
            switch: Switch::BillingNotices,
            subject,
            intro: "What your Mailward invoices bill is changing:".to_owned(),
            items: claimed.into_iter().map(|n| n.line).collect(),
            todo: format!(
                "See the domains and line items behind it at {base}/usage?expand[]=line_items&expand[]=domains. Only active domains (monitoring set up) are billed by tier; park the ones that send no mail (POST {base}/domains/{{id}} with is_parked) or delete the ones you no longer need."
            ),
        },
        occurrences,
    )))
}

/// The notices that apply at `now`, whether sent before or not: the trial ending soon or just
/// ended, and each tier beyond the first.
fn candidates(
    trial_end: OffsetDateTime,
    now: OffsetDateTime,
    active: u64,
    tiers: &[UsageLineItem],
) -> Vec<Notice> {
    let end = trial_end.unix_timestamp();
    let mut candidates = Vec::new();
    if now < trial_end && trial_end - now <= TRIAL_ENDING_WITHIN {
        candidates.push(Notice {
            occurrence: format!("billing:trial_ending:{end}"),
            line: format!(
                "Your trial ends on {}. From then your invoices bill your {active} active domain{} as: {}.",
                trial_end.date(),
                plural(active),
                describe(tiers)
            ),
            subject: format!("Your Mailward trial ends on {}", trial_end.date()),
        });
    } else if now >= trial_end {
        if now - trial_end <= TRIAL_ENDED_WITHIN {
            candidates.push(Notice {
                occurrence: format!("billing:trial_ended:{end}"),
                line: format!(
                    "Your trial ended on {}. Your next invoice bills your {active} active domain{} as: {}.",
                    trial_end.date(),
                    plural(active),
                    describe(tiers)
                ),
                subject: "Your Mailward trial has ended".to_owned(),
            });
        }
        // Tiers beyond the first, each announced once (the trial-ended notice covers the
        // tiers filled when it is sent: they are claimed with it below).
        for tier in tiers.iter().skip(1) {
            candidates.push(Notice {
                occurrence: format!("billing:tier:{}", tier.code),
                line: format!(
                    "Your active domains reached the {} tier: {active} active domains, {} of them billed in it.",
                    tier.code, tier.quantity
                ),
                subject: format!("{active} active domains: the {} tier starts", tier.code),
            });
        }
    }
    candidates
}

/// `s` unless one.
fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `DOMAIN-ACTIVE-1TO10 × 10, DOMAIN-ACTIVE-11TO100 × 2`, or a sentence when there are none.
fn describe(tiers: &[UsageLineItem]) -> String {
    if tiers.is_empty() {
        return "nothing yet (no domain is active)".to_owned();
    }
    tiers
        .iter()
        .map(|t| format!("{} × {}", t.code, t.quantity))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_are_described_in_order_with_their_quantities() {
        let tiers = vec![
            UsageLineItem {
                code: "DOMAIN-ACTIVE-1TO10".into(),
                quantity: 10,
            },
            UsageLineItem {
                code: "DOMAIN-ACTIVE-11TO100".into(),
                quantity: 2,
            },
        ];
        assert_eq!(
            describe(&tiers),
            "DOMAIN-ACTIVE-1TO10 × 10, DOMAIN-ACTIVE-11TO100 × 2"
        );
        assert_eq!(describe(&[]), "nothing yet (no domain is active)");
    }
}
