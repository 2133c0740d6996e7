//! DKIM keys a domain already publishes, found by probing selectors.
//!
//! Why: until DKIM keys can be registered with Mailward, the records guidance plans the keys
//! the domain serves itself. A key found here is planned exactly as it is published (the TXT
//! record, or the CNAME to the sender's key host), so `POST /domains/{id}/verify/dkim` confirms a
//! working key and a key that disappears later shows as drift.
//!
//! Not the audit's DKIM probe (`mailward_audit::dkim`): that one asks TXT and CNAME per selector
//! and reports the end of a CNAME chain for display; a plan needs the first hop (what stands at
//! the selector) and one TXT query per selector is enough, because the TXT answer carries the
//! chain. Key usability is judged by the same parser (`mailward_records::dkim`).

use futures::future::join_all;
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use mailward_plan::{DkimPlan, RecordKind};

/// Most keys planned for one domain.
pub const MAX_PLANNED_KEYS: usize = 10;

/// The usable keys among `selectors` at `domain` (a lookup that fails or a key verifiers cannot
/// use plans nothing), in the selectors' order.
pub async fn discover(
    resolver: &dyn DnsResolver,
    domain: &str,
    selectors: &[String],
) -> Vec<DkimPlan> {
    let probes = selectors.iter().map(|selector| async move {
        let name = format!("{selector}._domainkey.{domain}");
        let answer = resolver.lookup(&name, RecordType::Txt).await.ok()?;
        let usable = answer
            .records
            .iter()
            .filter_map(RecordData::txt_value)
            .find(|text| mailward_records::dkim::parse(text).is_usable())?;
        Some(match answer.cname_chain.first() {
            Some(target) => DkimPlan {
                selector: selector.clone(),
                record_type: RecordKind::Cname,
                value: target.clone(),
            },
            None => DkimPlan {
                selector: selector.clone(),
                record_type: RecordKind::Txt,
                value: usable,
            },
        })
    });
    join_all(probes)
        .await
        .into_iter()
        .flatten()
        .take(MAX_PLANNED_KEYS)
        .collect()
}
