//! A domain's rollout plan (SPEC §2.9), from its tasks, its observed policy and the onboarding
//! scan it was added with.

use super::{OnboardingScan, load};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::tasks::{DomainPlan, ScanFindings};
use mailward_audit::AuditResult;
use mailward_domain::domain::{Domain, MonitoringStatus, Policy};
use mailward_store::{onboarding, orgs, tasks as stored};
use mailward_tasks::Task;
use mailward_tasks::plan::{ImpactOutlook, PlanInput, build, scan_findings, upcoming_steps};
use uuid::Uuid;

/// The plan of one domain.
pub async fn plan(app: &AppState, caller: &Caller, id: Uuid) -> Result<DomainPlan, ServiceError> {
    let domain = load(app, caller, id).await?.value;
    let store = app.store.as_ref();
    let tasks: Vec<Task> = stored::list_for_domain(store, caller.org_id, id)
        .await?
        .into_iter()
        .map(|t| t.value)
        .collect();
    let org_default = orgs::get(store, caller.org_id)
        .await?
        .is_none_or(|o| o.value.agent_proposals_enabled);
    // Agents propose only on plans with the agent add-on (paid entitlements).
    let (ent, _) = crate::usage::entitlements(app, caller.org_id).await?;
    let proposals = ent.agent_addon && domain.agent_proposals_enabled.unwrap_or(org_default);
    // The enforcement stage reads what the next policy up would stop, once reports exist.
    let next = match domain.dmarc_policy {
        Policy::None => Some(Policy::Quarantine),
        Policy::Quarantine => Some(Policy::Reject),
        Policy::Reject => None,
    };
    let impact = match next {
        Some(policy) => {
            let word = if policy == Policy::Quarantine {
                "quarantine"
            } else {
                "reject"
            };
            let i = crate::reports::impact::for_domain(app, caller.org_id, &domain, word).await?;
            (i.volume > 0).then_some(ImpactOutlook {
                policy,
                legitimate_affected: i.legitimate_affected,
                unknown_affected: i.unknown_affected,
            })
        }
        None => None,
    };
    let built = build(&PlanInput {
        domain: &domain.url,
        parked: domain.is_parked,
        evaluated: domain.last_checked_at.is_some(),
        monitoring_set_up: domain.monitoring_status == MonitoringStatus::Setup,
        policy: domain.dmarc_policy,
        tasks: &tasks,
        impact,
    });
    let upcoming = upcoming_steps(&built, domain.is_parked, proposals);
    let scan = onboarding::load::<OnboardingScan>(store, caller.org_id, id).await?;
    Ok(DomainPlan {
        domain_id: domain.id,
        domain: domain.url.clone(),
        is_parked: domain.is_parked,
        agent_proposals_enabled: proposals,
        current_stage: built.current_stage,
        stages: built.stages,
        upcoming_steps: upcoming,
        scan_findings: scan.map(|s| findings_of(&domain, &s, &tasks)),
    })
}

/// The saved scan's problems, derived as the sweep would from that audit, linked to today's
/// tasks. A scan that no longer reads as an audit lists nothing.
fn findings_of(domain: &Domain, scan: &OnboardingScan, tasks: &[Task]) -> ScanFindings {
    let items = serde_json::from_value::<AuditResult>(scan.audit.clone())
        .map(|audit| {
            let evidence = mailward_tasks::Evidence {
                domain: &domain.url,
                parked: domain.is_parked || audit.summary.parked,
                audit: Some(&audit),
                missing_monitoring_rua: None,
                conflicts: &[],
                conflicts_examined: false,
                planned: &[],
                ttls: &[],
                mx_certificates: None,
                vmc: None,
                senders: None,
                now: scan.scanned_at,
            };
            let findings = mailward_tasks::derive(&evidence);
            scan_findings(domain.id, &findings.problems, tasks)
        })
        .unwrap_or_default();
    ScanFindings {
        scanned_at: scan.scanned_at,
        items,
    }
}
