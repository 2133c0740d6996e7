//! Records guidance for a monitored domain (SPEC §1 onboarding flow, §2.5 DnsRecord, §4.1
//! `dns-records` and `verify` rows): the exact DNS records a domain should publish, how each
//! compares with live DNS, the warnings to read before publishing, and the verification pass.
//!
//! * [`expected_records`] (pure): DMARC (TXT from `mailward_dmarc::generate_record`, or the
//!   CNAME delegation to the hosted zone), SPF (from `target_spf`, else the live record merged
//!   with the known senders' includes), DKIM keys, MTA-STS TXT and policy host, TLS-RPT, BIMI.
//! * [`compare`] (async, through the [`DnsResolver`](mailward_domain::dns::DnsResolver) port):
//!   action, status, `already_published` and the delete entries for conflicting records.
//! * [`warnings`] and [`all_verified`] (pure, over the comparison).
//! * [`verify`] (async, always uncached): which purposes are confirmed now.
//!
//! No HTTP and no storage: the caller builds a [`PlanContext`] from the stored domain and the
//! service's configuration, stores the purposes [`Verification::confirmed`] returns, and feeds
//! them back as [`PlanContext::previously_verified`] so drift can be told from "never there".
//! The serialized types are the REST shapes (snake_case; a [`RecordState`] is one SPEC §2.5
//! DnsRecord object plus `live_values`).

mod compare;
mod expected;
mod model;
mod verify;

pub use compare::{all_verified, compare, warnings};
pub use expected::{
    RECOMMENDED_TTL, SPF_LOOKUP_LIMIT, dmarc_cname_target, dmarc_delegation_record,
    dmarc_txt_value, expected_records, mta_sts_policy_target, mta_sts_txt_target,
    planned_spf_source, spf_include_target,
};
pub use model::{
    Action, DkimPlan, ExpectedRecord, MtaStsPlan, PlanContext, Purpose, RecordKind, RecordState,
    Status, Warning,
};
pub use verify::{Results, VERIFIABLE, Verification, verify};

use mailward_domain::dns::{DnsError, DnsResolver};

/// The live `v=spf1` record at the apex, for [`PlanContext::live_spf`]: the first one when
/// several are published (the comparison then asks to delete the others), `Ok(None)` when
/// there is none. A failed lookup is an error, so the caller can tell "no record" from "could
/// not find out" (the plan then starts from the known senders only).
pub async fn fetch_live_spf(
    resolver: &dyn DnsResolver,
    domain: &str,
) -> Result<Option<String>, DnsError> {
    match mailward_spf::lookup_spf_record(resolver, domain).await {
        mailward_spf::RecordLookup::Found { record, .. } => Ok(Some(record.text)),
        mailward_spf::RecordLookup::Multiple { records, .. } => {
            Ok(records.into_iter().next().map(|r| r.text))
        }
        mailward_spf::RecordLookup::NotFound => Ok(None),
        mailward_spf::RecordLookup::Failed(e) => Err(e),
    }
}
