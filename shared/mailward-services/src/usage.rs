//! Usage (SPEC §2.12, §4.2): the domain counts a bill is made of, and the line items they fall
//! into.
//!
//! A domain is *parked* when flagged so; otherwise *active* once monitoring is established
//! (status `setup` or `drifted`: reports reach the service) and *inactive* before that or after
//! it failed (`none`, `pending`, `failed`). Active domains are priced by plan: `free` plans
//! count them as DOMAIN-ACTIVE-FREE; paid plans (`it_teams`, `msp`) as DOMAIN-ACTIVE-TRIAL
//! during the first [`TRIAL_DAYS`] days, then in graduated volume tiers (the first 10 in
//! 1TO10, the next 90 in 11TO100, the next 900 in 101TO1000, the rest in 1001PLUS).
//! AGENT-ADDON counts the active domains on which agents may propose changes. Aligned messages
//! are those that passed DMARC in the month's aggregate reports.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::admin::{Usage, UsageDomain, UsageLineItem, UsageOrganization};
use mailward_domain::domain::{Domain, MonitoringStatus};
use mailward_domain::model::{OrgState, Organization, PricingType};
use mailward_store::{domains, orgs};
use time::{Duration, OffsetDateTime};

/// Days a paid plan is on trial after the organization's creation.
pub const TRIAL_DAYS: i64 = 14;

/// The graduated volume tiers: code and how many domains the tier holds (the last is open).
const TIERS: [(&str, u64); 4] = [
    ("DOMAIN-ACTIVE-1TO10", 10),
    ("DOMAIN-ACTIVE-11TO100", 90),
    ("DOMAIN-ACTIVE-101TO1000", 900),
    ("DOMAIN-ACTIVE-1001PLUS", u64::MAX),
];

/// How usage counts a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainState {
    Active,
    Inactive,
    Parked,
}

impl DomainState {
    fn as_str(self) -> &'static str {
        match self {
            DomainState::Active => "active",
            DomainState::Inactive => "inactive",
            DomainState::Parked => "parked",
        }
    }
}

/// The state usage counts `domain` in.
pub fn state_of(domain: &Domain) -> DomainState {
    if domain.is_parked {
        DomainState::Parked
    } else if matches!(
        domain.monitoring_status,
        MonitoringStatus::Setup | MonitoringStatus::Drifted
    ) {
        DomainState::Active
    } else {
        DomainState::Inactive
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    active: u64,
    inactive: u64,
    parked: u64,
    agent: u64,
}

fn count(org: &Organization, list: &[Domain]) -> Counts {
    let mut c = Counts::default();
    for d in list {
        match state_of(d) {
            DomainState::Active => {
                c.active += 1;
                if d.agent_proposals_enabled
                    .unwrap_or(org.agent_proposals_enabled)
                {
                    c.agent += 1;
                }
            }
            DomainState::Inactive => c.inactive += 1,
            DomainState::Parked => c.parked += 1,
        }
    }
    c
}

/// When a paid plan's trial ends; `None` on the free plan, which has none.
pub fn trial_end(org: &Organization) -> Option<OffsetDateTime> {
    (org.pricing_type != PricingType::Free).then(|| org.created_at + Duration::days(TRIAL_DAYS))
}

/// The active domains of `list` and the graduated tiers they fill, as a paid plan bills them
/// after its trial (tiers holding none left out): what billing notices announce.
pub fn paid_tiers(org: &Organization, list: &[Domain]) -> (u64, Vec<UsageLineItem>) {
    let c = count(org, list);
    let mut left = c.active;
    let mut items = Vec::new();
    for (code, size) in TIERS {
        let here = left.min(size);
        if here > 0 {
            items.push(UsageLineItem {
                code: code.to_owned(),
                quantity: here,
            });
        }
        left -= here;
    }
    (c.active, items)
}

/// The line items of an organization's counts at `now` (items with quantity 0 left out).
fn line_items(org: &Organization, c: Counts, now: OffsetDateTime) -> Vec<UsageLineItem> {
    let mut items: Vec<(String, u64)> = Vec::new();
    let trial = org.created_at + Duration::days(TRIAL_DAYS) > now;
    match org.pricing_type {
        PricingType::Free => items.push(("DOMAIN-ACTIVE-FREE".into(), c.active)),
        _ if trial => items.push(("DOMAIN-ACTIVE-TRIAL".into(), c.active)),
        _ => {
            let mut left = c.active;
            for (code, size) in TIERS {
                let here = left.min(size);
                items.push((code.into(), here));
                left -= here;
            }
        }
    }
    items.push(("DOMAIN-INACTIVE".into(), c.inactive));
    items.push(("DOMAIN-PARKED".into(), c.parked));
    items.push(("AGENT-ADDON".into(), c.agent));
    items
        .into_iter()
        .filter(|(_, q)| *q > 0)
        .map(|(code, quantity)| UsageLineItem { code, quantity })
        .collect()
}

fn pricing_name(p: PricingType) -> &'static str {
    match p {
        PricingType::Free => "free",
        PricingType::ItTeams => "it_teams",
        PricingType::Msp => "msp",
    }
}

#[derive(Debug, Default)]
struct Expand {
    domains: bool,
    organizations: bool,
    line_items: bool,
    aligned_messages: bool,
}

fn parse_expand(values: &[String]) -> Result<Expand, ServiceError> {
    let mut e = Expand::default();
    for v in values {
        match v.as_str() {
            "domains" => e.domains = true,
            "organizations" => e.organizations = true,
            "line_items" => e.line_items = true,
            "aligned_messages" => e.aligned_messages = true,
            _ => {
                return Err(ServiceError::invalid(
                    "expand[]",
                    "expand[] accepts domains, organizations, line_items and aligned_messages",
                ));
            }
        }
    }
    Ok(e)
}

/// Messages that passed DMARC in the current UTC calendar month, over `domains`.
async fn aligned_this_month(
    app: &AppState,
    org: uuid::Uuid,
    domains: &[Domain],
    now: OffsetDateTime,
) -> Result<u64, ServiceError> {
    let today = now.date();
    let first = today.replace_day(1).unwrap_or(today);
    let mut total = 0;
    for d in domains {
        let rows =
            mailward_store::reports::rows_between(app.store.as_ref(), org, d.id, first, today)
                .await?;
        total += rows.iter().map(|(_, r)| r.dmarc_pass).sum::<u64>();
    }
    Ok(total)
}

/// The organization's usage now. Counts are organization-wide, so members limited to groups
/// are refused.
pub async fn usage(
    app: &AppState,
    caller: &Caller,
    expand: &[String],
) -> Result<Usage, ServiceError> {
    caller.require_unlimited()?;
    let expand = parse_expand(expand)?;
    let store = app.store.as_ref();
    let org = orgs::get(store, caller.org_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?
        .value;
    let mut list = domains::list(store, caller.org_id).await?;
    list.sort_by(|a, b| a.url.cmp(&b.url));
    let counts = count(&org, &list);
    let now = app.clock.now();
    let organizations = if expand.organizations {
        let mut out = Vec::new();
        for child in orgs::children_of(store, caller.org_id).await? {
            if child.state != OrgState::Active {
                continue;
            }
            let c = count(&child, &domains::list(store, child.id).await?);
            out.push(UsageOrganization {
                id: child.id,
                name: child.name,
                active_domains: c.active,
                inactive_domains: c.inactive,
                parked_domains: c.parked,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
        Some(out)
    } else {
        None
    };
    Ok(Usage {
        active_domains: counts.active,
        inactive_domains: counts.inactive,
        parked_domains: counts.parked,
        pricing_type: pricing_name(org.pricing_type).into(),
        line_items: expand.line_items.then(|| line_items(&org, counts, now)),
        domains: expand.domains.then(|| {
            list.iter()
                .map(|d| UsageDomain {
                    id: d.id,
                    url: d.url.clone(),
                    state: state_of(d).as_str().into(),
                })
                .collect()
        }),
        organizations,
        aligned_messages: if expand.aligned_messages {
            Some(aligned_this_month(app, caller.org_id, &list, now).await?)
        } else {
            None
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn org(pricing: PricingType, age_days: i64, now: OffsetDateTime) -> Organization {
        let mut o = Organization {
            id: uuid::Uuid::nil(),
            name: "Acme".into(),
            is_active: true,
            state: OrgState::Active,
            pricing_type: pricing,
            referer: None,
            attribution_id: None,
            logo_url: None,
            email: None,
            phone_number: None,
            website: None,
            require_mfa: false,
            email_notifications: Default::default(),
            agent_proposals_enabled: true,
            onboarding_dismissed_at: None,
            created_by: None,
            parent_org_id: None,
            invitation_failure: None,
            created_at: now,
            updated_at: now,
        };
        o.pricing_type = pricing;
        o.created_at = now - Duration::days(age_days);
        o
    }

    fn codes(items: &[UsageLineItem]) -> Vec<(&str, u64)> {
        items
            .iter()
            .map(|i| (i.code.as_str(), i.quantity))
            .collect()
    }

    #[test]
    fn paid_plans_fill_graduated_tiers_after_the_trial() {
        let now = OffsetDateTime::now_utc();
        let counts = Counts {
            active: 1_234,
            inactive: 3,
            parked: 2,
            agent: 0,
        };
        let items = line_items(&org(PricingType::Msp, 30, now), counts, now);
        assert_eq!(
            codes(&items),
            vec![
                ("DOMAIN-ACTIVE-1TO10", 10),
                ("DOMAIN-ACTIVE-11TO100", 90),
                ("DOMAIN-ACTIVE-101TO1000", 900),
                ("DOMAIN-ACTIVE-1001PLUS", 234),
                ("DOMAIN-INACTIVE", 3),
                ("DOMAIN-PARKED", 2),
            ]
        );
        let items = line_items(
            &org(PricingType::ItTeams, 30, now),
            Counts {
                active: 7,
                ..counts
            },
            now,
        );
        assert_eq!(codes(&items)[0], ("DOMAIN-ACTIVE-1TO10", 7));
        assert_eq!(items.len(), 3, "empty tiers are left out");
    }

    #[test]
    fn trials_and_free_plans_count_active_domains_on_one_line() {
        let now = OffsetDateTime::now_utc();
        let counts = Counts {
            active: 50,
            inactive: 0,
            parked: 0,
            agent: 50,
        };
        let trial = line_items(&org(PricingType::ItTeams, 13, now), counts, now);
        assert_eq!(
            codes(&trial),
            vec![("DOMAIN-ACTIVE-TRIAL", 50), ("AGENT-ADDON", 50)]
        );
        let free = line_items(&org(PricingType::Free, 400, now), counts, now);
        assert_eq!(
            codes(&free),
            vec![("DOMAIN-ACTIVE-FREE", 50), ("AGENT-ADDON", 50)]
        );
    }
}
