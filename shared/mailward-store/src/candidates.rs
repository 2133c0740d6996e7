//! Catalogue candidates (staff's, global): each watched domain's evidence of a sender no
//! catalogue source identifies, and staff's reviews. See `mailward_domain::candidates`.

use super::{decode, encode, keys};
use mailward_domain::candidates::{CandidateEvidence, CandidateReview};
use mailward_domain::store::{
    Condition, Index, Item, ItemStore, Query, StoreError, WriteOp, query_all,
};
use std::collections::BTreeMap;
use uuid::Uuid;

fn evidence_item(e: &CandidateEvidence) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::CANDIDATES_PK,
        keys::candidate_evidence_sk(&e.name, e.domain_id),
        encode(e)?,
    )
    .with_gsi1(keys::candidate_from_pk(e.domain_id), e.name.clone()))
}

/// The evidence one watched domain gave, by candidate name.
pub async fn of_domain(
    store: &dyn ItemStore,
    domain: Uuid,
) -> Result<BTreeMap<String, CandidateEvidence>, StoreError> {
    let items = query_all(
        store,
        Query::partition(keys::candidate_from_pk(domain)).on(Index::Gsi1),
    )
    .await?;
    let mut out = BTreeMap::new();
    for item in &items {
        let e: CandidateEvidence = decode(item)?;
        out.insert(e.name.clone(), e);
    }
    Ok(out)
}

/// Replaces a domain's evidence with `next` (what its rows say now): changed items are
/// written, names it no longer shows are deleted.
pub async fn replace_for_domain(
    store: &dyn ItemStore,
    domain: Uuid,
    next: &BTreeMap<String, CandidateEvidence>,
) -> Result<(), StoreError> {
    let before = of_domain(store, domain).await?;
    let mut ops = Vec::new();
    for (name, e) in next {
        if before.get(name) != Some(e) {
            ops.push(WriteOp::Put {
                item: evidence_item(e)?,
                condition: Condition::None,
            });
        }
    }
    for name in before.keys().filter(|n| !next.contains_key(*n)) {
        ops.push(WriteOp::Delete {
            pk: keys::CANDIDATES_PK.to_owned(),
            sk: keys::candidate_evidence_sk(name, domain),
            condition: Condition::None,
        });
    }
    for chunk in ops.chunks(25) {
        store.transact(chunk.to_vec()).await?;
    }
    Ok(())
}

/// Deletes what a domain gave (the domain was deleted).
pub async fn forget_domain(store: &dyn ItemStore, domain: Uuid) -> Result<(), StoreError> {
    replace_for_domain(store, domain, &BTreeMap::new()).await
}

/// Every candidate's evidence (`name`: one candidate's), grouped by name.
pub async fn evidence(
    store: &dyn ItemStore,
    name: Option<&str>,
) -> Result<BTreeMap<String, Vec<CandidateEvidence>>, StoreError> {
    let items = query_all(
        store,
        Query::partition(keys::CANDIDATES_PK).prefix(keys::candidate_evidence_prefix(name)),
    )
    .await?;
    let mut out: BTreeMap<String, Vec<CandidateEvidence>> = BTreeMap::new();
    for item in &items {
        let e: CandidateEvidence = decode(item)?;
        out.entry(e.name.clone()).or_default().push(e);
    }
    Ok(out)
}

/// Every review, by candidate name.
pub async fn reviews(
    store: &dyn ItemStore,
) -> Result<BTreeMap<String, CandidateReview>, StoreError> {
    let items = query_all(
        store,
        Query::partition(keys::CANDIDATES_PK).prefix("REVIEW#"),
    )
    .await?;
    let mut out = BTreeMap::new();
    for item in &items {
        let name = item.sk.trim_start_matches("REVIEW#").to_owned();
        out.insert(name, decode(item)?);
    }
    Ok(out)
}

/// Records staff's review of a candidate; `Condition::NotExists` so a candidate is reviewed
/// once (a second review conflicts).
pub async fn save_review(
    store: &dyn ItemStore,
    name: &str,
    review: &CandidateReview,
) -> Result<(), StoreError> {
    let item = Item::new(
        keys::CANDIDATES_PK,
        keys::candidate_review_sk(name),
        encode(review)?,
    );
    store.put(item, Condition::NotExists).await
}
