//! SPF diagnostics of a domain (SPEC §2.13): the live record's whole tree walked without a
//! sender, the lookup count as SPEC §8.2 counts it, every problem, hosted-SPF state and the next
//! step to take.

use super::load;
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::records::{NextAction, SpfDiagnostics};
use mailward_dns::{Budgeted, Deadline};
use mailward_domain::dns::Uncached;
use uuid::Uuid;

/// Queries one diagnosis may make.
const QUERY_BUDGET: u32 = 300;

/// The suggested next step for an audited record.
pub fn next_action(audit: &mailward_spf::SpfAudit) -> NextAction {
    use mailward_spf::ProblemCode as C;
    let has = |code: C| audit.problems.iter().any(|p| p.code == code);
    let (code, message) = if has(C::DnsTemporaryError) {
        (
            "retry_later",
            "DNS did not answer; the record could not be checked",
        )
    } else if has(C::NoSpfRecord) {
        (
            "publish_spf_record",
            "publish one TXT record starting with v=spf1 at the domain",
        )
    } else if has(C::MultipleSpfRecords) {
        (
            "merge_spf_records",
            "merge the v=spf1 records into one: receivers treat several as an error",
        )
    } else if has(C::SyntaxError) {
        (
            "fix_spf_syntax",
            "fix the record's syntax: receivers treat it as a permanent error",
        )
    } else if has(C::LookupLimitExceeded) || has(C::VoidLookupLimitExceeded) {
        (
            "reduce_spf_lookups",
            "remove unused includes or flatten the record: it exceeds the DNS lookup limits",
        )
    } else if has(C::PermissiveAll) {
        (
            "tighten_all",
            "end the record with ~all or -all instead of +all/?all",
        )
    } else if !audit.problems.is_empty() {
        ("review_warnings", "the record works; review the warnings")
    } else {
        ("none", "the SPF record is healthy")
    };
    NextAction {
        code: code.into(),
        message: message.into(),
    }
}

/// Walks the domain's live SPF record (uncached) and says what to do next.
pub async fn diagnostics(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<SpfDiagnostics, ServiceError> {
    let domain = load(app, caller, id).await?.value;
    let direct = Uncached(app.resolver.as_ref());
    let deadline = Deadline::new(&direct, super::records::DNS_DEADLINE);
    let resolver = Budgeted::new(&deadline, QUERY_BUDGET);
    let audit = mailward_spf::audit_domain(&resolver, &domain.url).await;
    let hosted_spf = super::hosting::spf::view(app, &domain).await?;
    let next_action = match hosted_spf.record.as_deref().filter(|_| !hosted_spf.active) {
        // Hosted SPF waits for the domain's record to include the served chain.
        Some(record) => NextAction {
            code: "publish_hosted_spf_record".into(),
            message: format!(
                "publish this as the only SPF record of {}: {record}",
                domain.url
            ),
        },
        None => next_action(&audit),
    };
    Ok(SpfDiagnostics {
        audit,
        hosted_spf,
        next_action,
    })
}
