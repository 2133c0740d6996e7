//! Enforcement impact: from a window's report rows and the domain's senders, which senders and
//! what share of legitimate mail a stricter policy would quarantine or reject, and why.
//!
//! A row's mail is affected when it failed DMARC and was not forwarded (receivers decide
//! forwarded mail through their own overrides, so it is counted apart). Senders are the stored
//! DomainSources, matched by source IP; an address no sender lists stands alone. The policy is
//! assumed to apply to all failing mail (no `pct` sampling, as in RFC 9989), and the
//! organizational-domain policy is applied to subdomains' mail too (an `sp` is not modelled).

use crate::figures::pct;
use mailward_api_types::reports::{EnforcementImpact, ImpactSender};
use mailward_domain::domain::Domain;
use mailward_domain::reports::SourceDay;
use mailward_domain::senders::{ConfirmationStatus, DomainSource};
use std::collections::HashMap;
use uuid::Uuid;

/// Senders listed.
const MAX_LISTED: usize = 20;

/// The impact of `policy` on the rows, with the domain's senders.
pub fn assess(
    domain: &Domain,
    policy: &str,
    (date_from, date_to): (String, String),
    rows: &[(String, SourceDay)],
    senders: &[DomainSource],
) -> EnforcementImpact {
    let sums = crate::by_sender::group(rows, senders);
    let by_id: HashMap<Uuid, &DomainSource> = senders.iter().map(|s| (s.id, s)).collect();
    let mut impact = EnforcementImpact {
        domain_id: domain.id,
        domain: domain.url.clone(),
        policy: policy.to_owned(),
        current_policy: domain.dmarc_policy.as_str().to_owned(),
        date_from,
        date_to,
        volume: 0,
        legitimate_volume: 0,
        legitimate_affected: 0,
        legitimate_affected_pct: 0.0,
        unknown_affected: 0,
        forwarded: 0,
        safe: false,
        senders: Vec::new(),
        truncated: false,
    };
    let mut listed = Vec::new();
    for ((id, ip), s) in sums {
        let sender = id.and_then(|id| by_id.get(&id).copied());
        let status = sender.map_or(ConfirmationStatus::RequiresConfirmation, |x| {
            x.confirmation_status
        });
        let legitimate = status == ConfirmationStatus::Confirmed
            || (status != ConfirmationStatus::Discarded
                && (sender.is_some_and(DomainSource::is_known) || s.dmarc > 0));
        impact.volume += s.volume;
        impact.forwarded += s.forwarded;
        if legitimate {
            impact.legitimate_volume += s.volume;
            impact.legitimate_affected += s.affected;
        } else {
            impact.unknown_affected += s.affected;
        }
        if s.affected == 0 {
            continue;
        }
        let mut reasons = Vec::new();
        if s.spf < s.volume {
            reasons.push("spf_not_aligned".to_owned());
        }
        if s.dkim < s.volume {
            reasons.push("dkim_not_aligned".to_owned());
        }
        listed.push(ImpactSender {
            sender_id: id,
            name: sender
                .and_then(|x| x.source_name.clone().or_else(|| x.sending_domain.clone()))
                .unwrap_or_else(|| ip.clone()),
            sending_domain: sender.and_then(|x| x.sending_domain.clone()),
            is_known: sender.is_some_and(DomainSource::is_known),
            confirmation_status: status.as_str().to_owned(),
            legitimate,
            volume: s.volume,
            affected: s.affected,
            forwarded: s.forwarded,
            spf_aligned_pct: pct(s.spf, s.volume),
            dkim_aligned_pct: pct(s.dkim, s.volume),
            reasons,
        });
    }
    listed.sort_by(|a, b| {
        b.legitimate
            .cmp(&a.legitimate)
            .then(b.affected.cmp(&a.affected))
            .then(a.name.cmp(&b.name))
    });
    impact.truncated = listed.len() > MAX_LISTED;
    listed.truncate(MAX_LISTED);
    impact.senders = listed;
    impact.legitimate_affected_pct = pct(impact.legitimate_affected, impact.legitimate_volume);
    impact.safe = impact.volume > 0 && impact.legitimate_affected == 0;
    impact
}
