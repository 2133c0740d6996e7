//! Failure reports imported (RFC 9991): one item per domain the delivery was addressed to,
//! with its ARF fields and the original headers, local parts redacted (RFC 6590), expiring
//! with the organization's failure-report retention
//! ([`FAILURE_REPORT_DAYS`](mailward_domain::failure_reports::FAILURE_REPORT_DAYS): a week
//! free, 30 days paid). The same message delivered twice is one report.

use mailward_domain::failure_reports::{FAILURE_REPORT_DAYS, FailureReport, StoredFailureReport};
use mailward_domain::model::PricingType;
use mailward_reports::failure::redact_local_parts;
use mailward_services::error::ServiceError;
use mailward_services::state::AppState;
use uuid::Uuid;

/// Namespace of failure-report ids (UUID v5 of the delivery's hash and the domain).
const ID_NAMESPACE: Uuid = Uuid::from_u128(0x6f1c_2b3e_8d41_5a07_9c2e_44b1_d0a3_77e5);

/// Days `org` keeps failure reports.
async fn days_kept(app: &AppState, org: Uuid) -> Result<i64, ServiceError> {
    let (ent, _) = mailward_services::usage::entitlements(app, org).await?;
    Ok(if ent.plan == PricingType::Free {
        FAILURE_REPORT_DAYS.0
    } else {
        FAILURE_REPORT_DAYS.1
    })
}

fn redacted(mut report: FailureReport) -> FailureReport {
    report.original_headers = report.original_headers.map(|h| redact_local_parts(&h));
    report.original_mail_from = report.original_mail_from.map(|a| redact_local_parts(&a));
    report.original_rcpt_to = report
        .original_rcpt_to
        .iter()
        .map(|a| redact_local_parts(a))
        .collect();
    report.dkim_identity = report.dkim_identity.map(|a| redact_local_parts(&a));
    report
}

/// Stores the report for each of `targets` (`content_hash` names the delivery): how many
/// domains got it (0: each had it already).
pub async fn import(
    app: &AppState,
    authenticated: bool,
    targets: Vec<(Uuid, Uuid)>,
    report: FailureReport,
    content_hash: &str,
) -> Result<usize, ServiceError> {
    let plain = report;
    let hidden = redacted(plain.clone());
    let now = app.clock.now();
    let mut imported = 0;
    for (org, domain_id) in targets {
        // Each organization's own choice (RFC 6590 redaction unless it turned it off).
        let redact = mailward_store::orgs::get(app.store.as_ref(), org)
            .await?
            .is_none_or(|o| o.value.redact_failure_reports);
        let stored = StoredFailureReport {
            id: Uuid::new_v5(
                &ID_NAMESPACE,
                format!("{content_hash}:{domain_id}").as_bytes(),
            ),
            org_id: org,
            domain_id,
            received_at: now,
            authenticated,
            redacted: redact,
            report: if redact {
                hidden.clone()
            } else {
                plain.clone()
            },
        };
        let expires = (now + time::Duration::days(days_kept(app, org).await?)).unix_timestamp();
        let op = mailward_store::failure_reports::create_op(&stored, expires)?;
        match app.store.transact(vec![op]).await {
            Ok(()) => imported += 1,
            Err(e) if e.is_conflict() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(imported)
}
