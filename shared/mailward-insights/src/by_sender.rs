//! Report rows summed per sender: the stored DomainSources matched by source IP, and each
//! address no sender lists on its own. Shared by the enforcement impact and the report data.

use mailward_domain::reports::SourceDay;
use mailward_domain::senders::DomainSource;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// One sender's sums over some rows.
#[derive(Debug, Default)]
pub struct Sums {
    pub volume: u64,
    pub dmarc: u64,
    pub spf: u64,
    pub dkim: u64,
    /// Forwarded (receiver overrides), counted whatever the result.
    pub forwarded: u64,
    /// Failed DMARC and not forwarded: what enforcement would stop.
    pub affected: u64,
    pub ips: BTreeSet<String>,
}

/// Sums per sender: keyed by `(DomainSource id, "")`, or `(None, address)` for an address no
/// sender lists.
pub fn group(
    rows: &[(String, SourceDay)],
    senders: &[DomainSource],
) -> BTreeMap<(Option<Uuid>, String), Sums> {
    let by_ip: HashMap<&str, &DomainSource> = senders
        .iter()
        .flat_map(|s| s.ips.iter().map(move |ip| (ip.as_str(), s)))
        .collect();
    let mut sums: BTreeMap<(Option<Uuid>, String), Sums> = BTreeMap::new();
    for (_, r) in rows {
        let key = match by_ip.get(r.source_ip.as_str()) {
            Some(sender) => (Some(sender.id), String::new()),
            None => (None, r.source_ip.clone()),
        };
        let s = sums.entry(key).or_default();
        let forwarded = r.forwarded.min(r.volume);
        let passing = r.dmarc_pass.min(r.volume - forwarded);
        s.volume += r.volume;
        s.dmarc += r.dmarc_pass;
        s.spf += r.spf_aligned_pass;
        s.dkim += r.dkim_aligned_pass;
        s.forwarded += forwarded;
        s.affected += r.volume - forwarded - passing;
        if !r.source_ip.is_empty() {
            s.ips.insert(r.source_ip.clone());
        }
    }
    sums
}
