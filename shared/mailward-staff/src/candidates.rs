//! Candidates for the sending-source catalogue (issue: senders seen in reports that no source
//! identifies, across organizations). Staff list them with their evidence, promote one to an
//! `ACTIVE` catalogue source (origin `PROMOTED`, recognised by the candidate's domain and the
//! envelope domains seen) or reject it. Nothing here is shown to customers: `GET /sources`
//! lists catalogue sources only, and the evidence names no organization.

use mailward_api_types::sources::SourceView;
use mailward_api_types::staff::{CandidateList, CandidateQuery, PromoteRequest};
use mailward_app::caller::StaffMember;
use mailward_app::error::ServiceError;
use mailward_app::state::AppState;
use mailward_domain::candidates::{
    Candidate, CandidateReview, DatedSource, PROMOTED_ORIGIN, plain_source,
};
use mailward_domain::sources::{SourceStatus, source_id};
use mailward_store::candidates as stored;
use time::format_description::well_known::Rfc3339;

fn status(raw: Option<&str>) -> Result<SourceStatus, ServiceError> {
    match raw.unwrap_or("PENDING_REVIEW") {
        "PENDING_REVIEW" => Ok(SourceStatus::PendingReview),
        "ACTIVE" => Ok(SourceStatus::Active),
        "REJECTED" => Ok(SourceStatus::Rejected),
        _ => Err(ServiceError::invalid(
            "status",
            "status is PENDING_REVIEW, ACTIVE or REJECTED",
        )),
    }
}

fn name_param(raw: &str) -> Result<String, ServiceError> {
    mailward_domain::names::normalize_domain_name(raw)
        .ok_or_else(|| ServiceError::invalid("name", "name is a candidate's domain name"))
}

/// The candidates of a status, most messages first.
pub async fn list(
    app: &AppState,
    _staff: &StaffMember,
    query: CandidateQuery,
) -> Result<CandidateList, ServiceError> {
    let wanted = status(query.status.as_deref())?;
    let store = app.store.as_ref();
    let reviews = stored::reviews(store).await?;
    let mut evidence = stored::evidence(store, None).await?;
    // A reviewed candidate stays listed under its status after its evidence is gone (a
    // promoted one's senders are the source's now).
    for name in reviews.keys() {
        evidence.entry(name.clone()).or_default();
    }
    let mut data: Vec<Candidate> = evidence
        .iter()
        .map(|(name, evidence)| Candidate::sum(name, evidence, reviews.get(name)))
        .filter(|c| c.status == wanted && c.volume >= query.min_volume.unwrap_or(0))
        .collect();
    data.sort_by(|a, b| b.volume.cmp(&a.volume).then(a.name.cmp(&b.name)));
    Ok(CandidateList { data })
}

/// One candidate.
pub async fn get(
    app: &AppState,
    _staff: &StaffMember,
    raw_name: &str,
) -> Result<Candidate, ServiceError> {
    let name = name_param(raw_name)?;
    let store = app.store.as_ref();
    let evidence = stored::evidence(store, Some(&name)).await?;
    let review = stored::reviews(store).await?.remove(&name);
    match (evidence.get(&name), &review) {
        (None, None) => Err(ServiceError::not_found("candidate")),
        (items, _) => Ok(Candidate::sum(
            &name,
            items.map_or(&[][..], Vec::as_slice),
            review.as_ref(),
        )),
    }
}

fn slug(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.trim().to_ascii_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').chars().take(64).collect()
}

async fn review(
    app: &AppState,
    staff: &StaffMember,
    name: &str,
    status: SourceStatus,
    source: Option<uuid::Uuid>,
) -> Result<(), ServiceError> {
    let review = CandidateReview {
        status,
        reviewed_at: app.clock.now().format(&Rfc3339).unwrap_or_default(),
        reviewed_by: staff.email.clone(),
        source_id: source,
    };
    match stored::save_review(app.store.as_ref(), name, &review).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_conflict() => Err(ServiceError::conflict(
            "this candidate was already reviewed",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Promotes a pending candidate to an `ACTIVE` catalogue source, then re-identifies the
/// senders of the domains that evidenced it.
pub async fn promote(
    app: &AppState,
    staff: &StaffMember,
    raw_name: &str,
    input: PromoteRequest,
) -> Result<SourceView, ServiceError> {
    let candidate = get(app, staff, raw_name).await?;
    if candidate.status != SourceStatus::PendingReview {
        return Err(ServiceError::conflict(
            "this candidate was already reviewed",
        ));
    }
    let name = input.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ServiceError::invalid(
            "name",
            "name must be 1 to 100 characters",
        ));
    }
    let category = mailward_services::sources::custom::category(&input.category)?;
    let external = slug(input.external_id.as_deref().unwrap_or(name));
    if external.is_empty() || input.external_id.as_deref().is_some_and(|e| e != external) {
        return Err(ServiceError::invalid(
            "external_id",
            "external_id is lower-case letters, digits and single hyphens",
        ));
    }
    let homepage = input
        .homepage
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty());
    if homepage.is_some_and(|h| !url::Url::parse(h).is_ok_and(|u| u.scheme() == "https")) {
        return Err(ServiceError::invalid(
            "homepage",
            "homepage must be an https:// address",
        ));
    }
    let id = source_id(&external);
    let mut source = plain_source(id, external, name.to_owned(), category, PROMOTED_ORIGIN);
    source.homepage = homepage.map(str::to_owned);
    source.base_domains = vec![candidate.name.clone()];
    source.envelope_froms = candidate
        .envelope_domains
        .iter()
        .filter(|d| !d.ends_with(&format!(".{}", candidate.name)) && **d != candidate.name)
        .cloned()
        .collect();
    let now = app.clock.now();
    let dated = DatedSource {
        source,
        created_at: now,
        updated_at: now,
    };
    let store = app.store.as_ref();
    let taken = mailward_store::sources::load(store)
        .await?
        .by_id(id)
        .is_some();
    if taken {
        return Err(ServiceError::conflict(
            "a catalogue source has this external_id",
        ));
    }
    match mailward_store::sources::add_promoted(store, &dated).await {
        Ok(()) => {}
        Err(e) if e.is_conflict() => {
            return Err(ServiceError::conflict(
                "a catalogue source has this external_id",
            ));
        }
        Err(e) => return Err(e.into()),
    }
    review(app, staff, &candidate.name, SourceStatus::Active, Some(id)).await?;
    tracing::info!(candidate = %candidate.name, source = %dated.source.external_id, staff = %staff.email, "candidate promoted");
    for e in stored::evidence(store, Some(&candidate.name))
        .await?
        .remove(&candidate.name)
        .unwrap_or_default()
    {
        let job = mailward_app::jobs::IdentifySenders {
            org_id: e.org_id,
            domain_id: e.domain_id,
        };
        if let Err(err) = mailward_app::job::enqueue(app, &job, 0).await {
            tracing::warn!(domain.id = %e.domain_id, error = %err, "could not queue sender identification");
        }
    }
    mailward_services::sources::get_curated(app, id).await
}

/// Rejects a pending candidate: it leaves the review queue (evidence keeps being counted).
pub async fn reject(
    app: &AppState,
    staff: &StaffMember,
    raw_name: &str,
) -> Result<Candidate, ServiceError> {
    let candidate = get(app, staff, raw_name).await?;
    if candidate.status != SourceStatus::PendingReview {
        return Err(ServiceError::conflict(
            "this candidate was already reviewed",
        ));
    }
    review(app, staff, &candidate.name, SourceStatus::Rejected, None).await?;
    tracing::info!(candidate = %candidate.name, staff = %staff.email, "candidate rejected");
    get(app, staff, &candidate.name).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs_are_lower_case_with_single_hyphens() {
        assert_eq!(super::slug("  Bulk Mailer, Inc. "), "bulk-mailer-inc");
        assert_eq!(super::slug("a--b"), "a-b");
    }
}
