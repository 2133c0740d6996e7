//! The sending-source catalogue's curation (SPEC §2.8, `sources:update`, staff only): a
//! proposal of one kind of a source's instructions with its provenance, then staff's review.
//! Approval publishes the proposal as the source's instructions for everyone; a newer proposal
//! waits for review while the approved one stays in force.

use mailward_api_types::sources::SourceView;
use mailward_api_types::staff::ProposalRequest;
use mailward_app::caller::StaffMember;
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_domain::sources::{Curation, CurationStatus, Instructions};
use mailward_store::sources as stored;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

fn kind(raw: &str) -> Result<&'static str, ServiceError> {
    match raw {
        "dkim" => Ok("dkim"),
        "spf" => Ok("spf"),
        _ => Err(ServiceError::invalid("kind", "kind is dkim or spf")),
    }
}

fn now(app: &AppState) -> String {
    app.clock.now().format(&Rfc3339).unwrap_or_default()
}

fn check(input: &ProposalRequest) -> Result<(), ServiceError> {
    let bad_step = |s: &String| s.trim().is_empty() || s.chars().count() > 1000;
    if input.steps.is_empty() || input.steps.len() > 20 || input.steps.iter().any(bad_step) {
        return Err(ServiceError::invalid(
            "steps",
            "steps holds 1 to 20 steps of 1 to 1,000 characters",
        ));
    }
    let bad_record = |r: &mailward_domain::sources::InstructionRecord| {
        r.name.trim().is_empty()
            || r.value.trim().is_empty()
            || r.name.len() > 253
            || r.value.len() > 4000
    };
    if input.dns_records.len() > 20 || input.dns_records.iter().any(bad_record) {
        return Err(ServiceError::invalid(
            "dns_records",
            "dns_records holds at most 20 records, each with a name and a value",
        ));
    }
    if input
        .provenance
        .confidence
        .is_some_and(|c| !(0.0..=1.0).contains(&c))
    {
        return Err(ServiceError::invalid(
            "provenance.confidence",
            "confidence is 0 to 1",
        ));
    }
    Ok(())
}

/// The source with its curation, as staff see it.
pub async fn get(
    app: &AppState,
    _staff: &StaffMember,
    id: Uuid,
) -> Result<SourceView, ServiceError> {
    mailward_services::sources::get_curated(app, id).await
}

async fn external_id(app: &AppState, id: Uuid) -> Result<String, ServiceError> {
    Ok(mailward_services::sources::get(app, None, id)
        .await?
        .source
        .external_id)
}

/// Records a proposal, pending review (replacing a pending or rejected one; an approved one
/// stays in force until this one is approved).
pub async fn propose(
    app: &AppState,
    staff: &StaffMember,
    id: Uuid,
    input: ProposalRequest,
) -> Result<SourceView, ServiceError> {
    let kind = kind(&input.kind)?;
    check(&input)?;
    let external = external_id(app, id).await?;
    let curation = Curation {
        status: CurationStatus::Pending,
        proposal: Instructions {
            steps: input.steps.iter().map(|s| s.trim().to_owned()).collect(),
            dns_records: input.dns_records,
        },
        provenance: input.provenance,
        reviewed_at: None,
        reviewed_by: None,
        proposed_at: now(app),
    };
    // An approved proposal keeps publishing until the new one is reviewed.
    let approved = stored::curations(app.store.as_ref())
        .await?
        .into_iter()
        .any(|(e, k, c)| e == external && k == kind && c.status == CurationStatus::Approved);
    let key = if approved {
        format!("{kind}-next")
    } else {
        kind.to_owned()
    };
    stored::save_curation(app.store.as_ref(), &external, &key, &curation).await?;
    tracing::info!(source = %external, kind, staff = %staff.email, "instructions proposed");
    get(app, staff, id).await
}

/// Approves or rejects the pending proposal of `kind`.
pub async fn review(
    app: &AppState,
    staff: &StaffMember,
    id: Uuid,
    kind_raw: &str,
    approve: bool,
) -> Result<SourceView, ServiceError> {
    let kind = kind(kind_raw)?;
    let external = external_id(app, id).await?;
    let all = stored::curations(app.store.as_ref()).await?;
    let pending = |k: &str| {
        all.iter()
            .find(|(e, key, c)| *e == external && key == k && c.status == CurationStatus::Pending)
            .map(|(_, _, c)| c.clone())
    };
    let next = format!("{kind}-next");
    let (from_next, mut curation) = match (pending(&next), pending(kind)) {
        (Some(c), _) => (true, c),
        (None, Some(c)) => (false, c),
        (None, None) => {
            return Err(ServiceError::conflict(
                "no proposal of these instructions waits for review",
            ));
        }
    };
    curation.status = if approve {
        CurationStatus::Approved
    } else {
        CurationStatus::Rejected
    };
    curation.reviewed_at = Some(now(app));
    curation.reviewed_by = Some(staff.email.clone());
    let store = app.store.as_ref();
    if !from_next || approve {
        // An approved next proposal takes the place of the one in force.
        stored::save_curation(store, &external, kind, &curation).await?;
    }
    if from_next {
        // Reviewed: the next proposal is either in force now or dropped; the approved one it
        // would have replaced stays when it was rejected.
        stored::delete_curation(store, &external, &next).await?;
    }
    tracing::info!(source = %external, kind, approve, staff = %staff.email, "instructions reviewed");
    get(app, staff, id).await
}
