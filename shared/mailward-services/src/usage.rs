//! Usage (SPEC §2.12, §4.2): the domain counts a bill is made of, and the line items they fall
//! into.
//!
//! A domain is *parked* when flagged so; otherwise *active* once monitoring is established
//! (status `setup` or `drifted`: reports reach the service) and *inactive* before that or after
//! it failed (`none`, `pending`, `failed`). Active domains are priced by what the organization
//! pays for ([`mailward_domain::billing::entitlements`], never the plan chosen at signup):
//! without a paid subscription they count as DOMAIN-ACTIVE-FREE; during the trial that starts
//! at checkout as DOMAIN-ACTIVE-TRIAL; then in graduated volume tiers (the first 10 in 1TO10,
//! the next 90 in 11TO100, the next 900 in 101TO1000, the rest in 1001PLUS). AGENT-ADDON counts
//! the active domains on which agents may propose changes, on plans that include the add-on.
//! Aligned messages are those that passed DMARC in the month's aggregate reports.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::admin::{Usage, UsageDomain, UsageLineItem, UsageOrganization};
use mailward_domain::billing::{BillingAccount, Entitlements, Phase, entitlements as rule};
use mailward_domain::domain::{Domain, MonitoringStatus};
use mailward_domain::domain_list::DomainCard;
use mailward_domain::model::{OrgState, Organization, PricingType};
use mailward_store::{card_cache, orgs};
use time::OffsetDateTime;

/// The organization's entitlements now and its billing record (the one read every gate
/// makes: retention, domain caps, the agent add-on, the line items).
pub async fn entitlements(
    app: &AppState,
    org: uuid::Uuid,
) -> Result<(Entitlements, Option<BillingAccount>), ServiceError> {
    let account = mailward_store::billing::get(app.store.as_ref(), org)
        .await?
        .map(|v| v.value);
    Ok((rule(account.as_ref(), app.clock.now()), account))
}

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
    state(domain.is_parked, domain.monitoring_status)
}

/// The state usage counts a domain in, from its list card.
fn card_state(card: &DomainCard) -> DomainState {
    state(card.is_parked, card.monitoring_status)
}

fn state(is_parked: bool, status: MonitoringStatus) -> DomainState {
    if is_parked {
        DomainState::Parked
    } else if matches!(status, MonitoringStatus::Setup | MonitoringStatus::Drifted) {
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

fn count(org: &Organization, ent: &Entitlements, list: &[DomainCard]) -> Counts {
    let mut c = Counts::default();
    for d in list {
        match card_state(d) {
            DomainState::Active => {
                c.active += 1;
                if ent.agent_addon
                    && d.agent_proposals_enabled
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

/// After domains were added or removed: when the organization has a live subscription, its
/// quantities are reported to the payment provider a minute later (one job; failures are
/// logged, the daily report catches up).
pub async fn quantities_changed(app: &AppState, org: uuid::Uuid) {
    use mailward_domain::billing::SubscriptionStatus;
    let live = match mailward_store::billing::get(app.store.as_ref(), org).await {
        Ok(Some(a)) => {
            a.value.subscription_id.is_some()
                && !matches!(
                    a.value.status,
                    SubscriptionStatus::None | SubscriptionStatus::Canceled
                )
        }
        Ok(None) => false,
        Err(e) => {
            tracing::warn!(org.id = %org, error = %e, "billing record unreadable; quantities not queued");
            false
        }
    };
    if live {
        let job = mailward_app::jobs::BillingQuantitiesJob { org_id: org };
        if let Err(e) = mailward_app::job::enqueue(app, &job, 60).await {
            tracing::warn!(org.id = %org, error = %e, "billing quantities job not queued");
        }
    }
}

/// The active domains of `list` and the graduated tiers they fill, as a paid plan bills them
/// after its trial (tiers holding none left out): what billing notices announce.
pub fn paid_tiers(
    org: &Organization,
    ent: &Entitlements,
    list: &[DomainCard],
) -> (u64, Vec<UsageLineItem>) {
    let c = count(org, ent, list);
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

/// Every line item a paid subscription bills, quantities as of now (zeros included): the
/// quantities reported to the payment provider.
pub async fn billable(
    app: &AppState,
    org_id: uuid::Uuid,
) -> Result<Vec<UsageLineItem>, ServiceError> {
    let store = app.store.as_ref();
    let org = orgs::get(store, org_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("organization"))?
        .value;
    let (ent, _) = entitlements(app, org_id).await?;
    let counts = count(&org, &ent, &card_cache::all_cards(store, org_id).await?);
    Ok(line_items(Phase::Paid, counts, true))
}

/// The line items of an organization's counts in billing `phase` (items with quantity 0 left
/// out unless `zeros`).
fn line_items(phase: Phase, c: Counts, zeros: bool) -> Vec<UsageLineItem> {
    let mut items: Vec<(String, u64)> = Vec::new();
    match phase {
        Phase::Free => items.push(("DOMAIN-ACTIVE-FREE".into(), c.active)),
        Phase::Trial => items.push(("DOMAIN-ACTIVE-TRIAL".into(), c.active)),
        Phase::Paid => {
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
        .filter(|(_, q)| zeros || *q > 0)
        .map(|(code, quantity)| UsageLineItem { code, quantity })
        .collect()
}

/// The line items of the organization now, as `GET /usage` reports them.
pub async fn current_line_items(
    app: &AppState,
    org: &Organization,
) -> Result<Vec<UsageLineItem>, ServiceError> {
    let (ent, _) = entitlements(app, org.id).await?;
    let list = card_cache::all_cards(app.store.as_ref(), org.id).await?;
    Ok(line_items(ent.phase, count(org, &ent, &list), false))
}

/// The wire name of a plan.
pub fn pricing_name(p: PricingType) -> &'static str {
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
    domains: &[DomainCard],
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
    // The process's copy of the cards, read in place (not copied, not sorted per call: the
    // copy keeps its URL order once asked).
    let list = card_cache::all_cards(store, caller.org_id).await?;
    let (ent, _) = entitlements(app, caller.org_id).await?;
    let counts = count(&org, &ent, &list);
    let now = app.clock.now();
    let organizations = if expand.organizations {
        let mut out = Vec::new();
        for child in orgs::children_of(store, caller.org_id).await? {
            if child.state != OrgState::Active {
                continue;
            }
            let (child_ent, _) = entitlements(app, child.id).await?;
            let c = count(
                &child,
                &child_ent,
                &card_cache::all_cards(store, child.id).await?,
            );
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
        pricing_type: pricing_name(ent.plan).into(),
        line_items: expand
            .line_items
            .then(|| line_items(ent.phase, counts, false)),
        domains: expand.domains.then(|| {
            list.sorted("url", false)
                .iter()
                .map(|&i| &list[i as usize])
                .map(|d| UsageDomain {
                    id: d.id,
                    url: d.url.clone(),
                    state: card_state(d).as_str().into(),
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

    fn codes(items: &[UsageLineItem]) -> Vec<(&str, u64)> {
        items
            .iter()
            .map(|i| (i.code.as_str(), i.quantity))
            .collect()
    }

    #[test]
    fn paid_subscriptions_fill_graduated_tiers_after_the_trial() {
        let counts = Counts {
            active: 1_234,
            inactive: 3,
            parked: 2,
            agent: 0,
        };
        assert_eq!(
            codes(&line_items(Phase::Paid, counts, false)),
            vec![
                ("DOMAIN-ACTIVE-1TO10", 10),
                ("DOMAIN-ACTIVE-11TO100", 90),
                ("DOMAIN-ACTIVE-101TO1000", 900),
                ("DOMAIN-ACTIVE-1001PLUS", 234),
                ("DOMAIN-INACTIVE", 3),
                ("DOMAIN-PARKED", 2),
            ]
        );
        let small = Counts {
            active: 7,
            ..counts
        };
        let items = line_items(Phase::Paid, small, false);
        assert_eq!(codes(&items)[0], ("DOMAIN-ACTIVE-1TO10", 7));
        assert_eq!(items.len(), 3, "empty tiers are left out");
        assert_eq!(
            line_items(Phase::Paid, small, true).len(),
            7,
            "all, for the provider"
        );
    }

    #[test]
    fn trials_and_free_entitlements_count_active_domains_on_one_line() {
        let counts = Counts {
            active: 50,
            inactive: 0,
            parked: 0,
            agent: 50,
        };
        assert_eq!(
            codes(&line_items(Phase::Trial, counts, false)),
            vec![("DOMAIN-ACTIVE-TRIAL", 50), ("AGENT-ADDON", 50)]
        );
        assert_eq!(
            codes(&line_items(Phase::Free, counts, false)),
            vec![("DOMAIN-ACTIVE-FREE", 50), ("AGENT-ADDON", 50)]
        );
    }
}
