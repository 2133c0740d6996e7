//! What `GET /domains` filters and sorts on (SPEC §4.1): a domain's list card, a projection
//! of ~250 bytes stored beside each domain (the domain item is ~4 KB), and the list's
//! orderings over cards. Listing a 10,000-domain organization reads the cards, not the domains,
//! and fetches only the page's domains.

use crate::domain::{Domain, MonitoringStatus, Policy, ReportFigures};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;
use uuid::Uuid;

/// A domain's list card: every field a `GET /domains` filter or sort reads, and nothing else.
/// Stored as JSON with short names (~250 bytes; it is read 10,000 at a time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainCard {
    #[serde(rename = "i")]
    pub id: Uuid,
    #[serde(rename = "u")]
    pub url: String,
    #[serde(rename = "c", with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(rename = "g", default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<Uuid>,
    #[serde(rename = "m")]
    pub monitoring_status: MonitoringStatus,
    #[serde(rename = "p")]
    pub dmarc_policy: Policy,
    #[serde(rename = "k", default)]
    pub is_parked: bool,
    /// `is_dmarc_managed`, `is_spf_managed`, `is_dkim_managed`, `is_bimi_managed`,
    /// `is_mta_sts_managed`, in that order.
    #[serde(rename = "h")]
    pub managed: [bool; 5],
    #[serde(rename = "s")]
    pub score: u8,
    #[serde(rename = "t", default)]
    pub open_tasks_count: u32,
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub highest_open_task_priority: Option<u8>,
    /// The 14-day figures: volume, counted, DMARC passes, aligned SPF passes, aligned DKIM
    /// passes (zeros without reports).
    #[serde(rename = "f", default)]
    pub figures: [u64; 5],
    /// The domain's own agent-proposals setting (usage counts the agent add-on by it).
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub agent_proposals_enabled: Option<bool>,
    /// Whether a report was ever imported for the domain (it has a first report day or report
    /// figures). Only such a domain can have day totals or senders: an import saves the
    /// figures before it queues the identification that writes them, so the organization-wide
    /// report views read nothing of the others.
    #[serde(rename = "x", default)]
    pub has_reports: bool,
}

impl DomainCard {
    /// The card of a domain as it is now.
    pub fn of(domain: &Domain) -> Self {
        let f = domain.report_figures.clone().unwrap_or_default();
        Self {
            id: domain.id,
            url: domain.url.clone(),
            created_at: domain.created_at,
            group_id: domain.group_id,
            monitoring_status: domain.monitoring_status,
            dmarc_policy: domain.dmarc_policy,
            is_parked: domain.is_parked,
            managed: [
                domain.is_dmarc_managed,
                domain.is_spf_managed,
                domain.is_dkim_managed,
                domain.is_bimi_managed,
                domain.is_mta_sts_managed,
            ],
            score: domain.score,
            open_tasks_count: domain.open_tasks_count,
            highest_open_task_priority: domain.highest_open_task_priority,
            figures: figures_array(&f),
            agent_proposals_enabled: domain.agent_proposals_enabled,
            has_reports: domain.monitoring_since.is_some() || domain.report_figures.is_some(),
        }
    }

    /// 14-day volume: every message reported.
    pub fn volume(&self) -> u64 {
        self.figures[0]
    }

    /// 14-day compliant and non-compliant messages (what pass shares count).
    pub fn counted(&self) -> u64 {
        self.figures[1]
    }

    /// 14-day DMARC passes (of [`Self::counted`]).
    pub fn dmarc_pass(&self) -> u64 {
        self.figures[2]
    }
}

fn figures_array(f: &ReportFigures) -> [u64; 5] {
    [
        f.volume,
        f.counted,
        f.dmarc_pass,
        f.spf_aligned_pass,
        f.dkim_aligned_pass,
    ]
}

/// Ticket severity: (priority of the most severe open task, open task count); domains without
/// open work have none.
fn severity_key(card: &DomainCard) -> Option<(u8, u32)> {
    card.highest_open_task_priority
        .map(|p| (p, card.open_tasks_count))
}

/// `severity` ordering: ticketed domains by priority (0 critical first) then count (more first)
/// under desc, reversed under asc; domains without tickets last under desc and first under asc.
fn compare_severity(a: &DomainCard, b: &DomainCard, descending: bool) -> Ordering {
    match (severity_key(a), severity_key(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) if descending => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) if descending => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((pa, ca)), Some((pb, cb))) => {
            let most_severe_first = pa.cmp(&pb).then(cb.cmp(&ca));
            if descending {
                most_severe_first
            } else {
                most_severe_first.reverse()
            }
        }
    }
}

fn status_rank(status: MonitoringStatus) -> u8 {
    match status {
        MonitoringStatus::None => 0,
        MonitoringStatus::Pending => 1,
        MonitoringStatus::Setup => 2,
        MonitoringStatus::Drifted => 3,
        MonitoringStatus::Failed => 4,
    }
}

/// Orders two cards by a 14-day pass share, `part` indexing [`DomainCard::figures`] (exact:
/// cross-multiplied counts; a domain with nothing counted has a share of 0).
fn pct_cmp(a: &DomainCard, b: &DomainCard, part: usize) -> Ordering {
    let share = |x: &DomainCard, y: &DomainCard| {
        if x.counted() == 0 {
            0
        } else {
            u128::from(x.figures[part]) * u128::from(y.counted().max(1))
        }
    };
    share(a, b).cmp(&share(b, a))
}

/// The primary ordering of `sort` (one of SPEC §4.1's sort keys; anything else is
/// `created_at`), before the ties are broken.
fn primary(a: &DomainCard, b: &DomainCard, sort: &str, descending: bool) -> Ordering {
    let directed = |o: Ordering| if descending { o.reverse() } else { o };
    match sort {
        "url" => directed(a.url.cmp(&b.url)),
        "monitoring_status" => {
            directed(status_rank(a.monitoring_status).cmp(&status_rank(b.monitoring_status)))
        }
        "dmarc_policy" => directed(a.dmarc_policy.cmp(&b.dmarc_policy)),
        "score" => directed(a.score.cmp(&b.score)),
        "open_tasks_count" => directed(a.open_tasks_count.cmp(&b.open_tasks_count)),
        "last_14_days_volume" => directed(a.volume().cmp(&b.volume())),
        "last_14_days_dmarc_pass_pct" => directed(pct_cmp(a, b, 2)),
        "last_14_days_spf_pass_pct" => directed(pct_cmp(a, b, 3)),
        "last_14_days_dkim_pass_pct" => directed(pct_cmp(a, b, 4)),
        "severity" => compare_severity(a, b, descending),
        // Configured domains (monitoring set up) come before the ones still in monitoring or
        // setup states, in both directions; severity orders each group.
        "status" => {
            let unconfigured = |d: &DomainCard| !d.monitoring_status.is_configured();
            unconfigured(a)
                .cmp(&unconfigured(b))
                .then_with(|| compare_severity(a, b, descending))
        }
        "group" => directed(a.group_id.cmp(&b.group_id)),
        _ => directed(a.created_at.cmp(&b.created_at)),
    }
}

/// Sorts cards by `sort` (SPEC §4.1), ties broken by name then id, so every order is total
/// and a page boundary never moves between two calls over the same data.
pub fn sort_cards(cards: &mut [DomainCard], sort: &str, descending: bool) {
    cards.sort_by(|a, b| compare_cards(a, b, sort, descending));
}

/// The order of [`sort_cards`] between two cards.
pub fn compare_cards(a: &DomainCard, b: &DomainCard, sort: &str, descending: bool) -> Ordering {
    primary(a, b, sort, descending)
        .then_with(|| a.url.cmp(&b.url))
        .then_with(|| a.id.cmp(&b.id))
}

/// An organization's cards as read at one moment, with each ordering [`CardSet::sorted`] was
/// asked for kept beside them: a process that keeps the set (the store's card cache) sorts
/// 10,000 cards once per order and version, not once per request.
#[derive(Debug, Default)]
pub struct CardSet {
    cards: Vec<DomainCard>,
    orders: Mutex<HashMap<(String, bool), Order>>,
}

/// Positions into a [`CardSet`], in one sort's order.
pub type Order = Arc<[u32]>;

impl CardSet {
    /// The set of `cards`.
    pub fn new(cards: Vec<DomainCard>) -> Self {
        Self {
            cards,
            orders: Mutex::default(),
        }
    }

    /// The positions of the cards in the order of [`sort_cards`] (`sort` must be one of its
    /// keys: a caller validates it first, since each distinct key is kept).
    pub fn sorted(&self, sort: &str, descending: bool) -> Arc<[u32]> {
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        let key = (sort.to_owned(), descending);
        if let Some(order) = orders.get(&key) {
            return Arc::clone(order);
        }
        let mut order: Vec<u32> = (0..self.cards.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        order.sort_by(|&a, &b| {
            compare_cards(
                &self.cards[a as usize],
                &self.cards[b as usize],
                sort,
                descending,
            )
        });
        let order: Arc<[u32]> = order.into();
        orders.insert(key, Arc::clone(&order));
        order
    }
}

impl std::ops::Deref for CardSet {
    type Target = [DomainCard];
    fn deref(&self) -> &[DomainCard] {
        &self.cards
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(n: u128, url: &str) -> DomainCard {
        let mut d = Domain::new(
            Uuid::from_u128(n),
            Uuid::from_u128(1),
            url.into(),
            OffsetDateTime::UNIX_EPOCH,
        );
        d.score = u8::try_from(n).unwrap();
        DomainCard::of(&d)
    }

    #[test]
    fn a_card_survives_its_stored_form_and_stays_small() {
        let mut d = Domain::new(
            Uuid::from_u128(9),
            Uuid::from_u128(1),
            "a-rather-long-subsidiary-name.example.co.uk".into(),
            OffsetDateTime::now_utc(),
        );
        d.group_id = Some(Uuid::from_u128(3));
        d.highest_open_task_priority = Some(1);
        d.report_figures = Some(ReportFigures {
            volume: 1_000_000,
            counted: 999_999,
            ..ReportFigures::default()
        });
        let card = DomainCard::of(&d);
        let json = serde_json::to_vec(&card).unwrap();
        assert!(json.len() < 300, "{}", String::from_utf8_lossy(&json));
        assert_eq!(serde_json::from_slice::<DomainCard>(&json).unwrap(), card);
    }

    #[test]
    fn ties_fall_back_to_the_name_then_the_id_and_share_sorts_are_exact() {
        let mut cards = vec![
            card(3, "b.example"),
            card(2, "a.example"),
            card(1, "a.example"),
        ];
        for c in &mut cards {
            c.score = 50;
        }
        sort_cards(&mut cards, "score", true);
        let ids: Vec<u128> = cards.iter().map(|c| c.id.as_u128()).collect();
        assert_eq!(ids, [1, 2, 3]);

        // 1/3 against 333/1000: exact cross-multiplication tells them apart.
        let (mut a, mut b) = (card(1, "a.example"), card(2, "b.example"));
        a.figures = [3, 3, 1, 0, 0];
        b.figures = [1000, 1000, 333, 0, 0];
        let mut cards = vec![b.clone(), a.clone()];
        sort_cards(&mut cards, "last_14_days_dmarc_pass_pct", true);
        assert_eq!(cards[0].id, a.id);
    }

    #[test]
    fn a_card_sets_orders_are_the_sorts_and_each_is_kept() {
        let cards: Vec<DomainCard> = (1..=40)
            .map(|n| card(n, &format!("d{}.example", (n * 7) % 13)))
            .collect();
        let set = CardSet::new(cards.clone());
        for (sort, descending) in [("url", false), ("score", true), ("severity", false)] {
            let mut expected = cards.clone();
            sort_cards(&mut expected, sort, descending);
            let order = set.sorted(sort, descending);
            let got: Vec<&DomainCard> = order.iter().map(|&i| &set[i as usize]).collect();
            assert_eq!(got, expected.iter().collect::<Vec<_>>(), "{sort}");
            assert!(Arc::ptr_eq(&order, &set.sorted(sort, descending)));
        }
        assert_eq!(set.len(), 40);
    }
}
