//! The wire shapes of a page of domains, kept per process by the bytes they were made from.
//!
//! A domain list call shapes up to 100 stored domains of ~4 KB each, and most of them did not
//! change since the process last shaped them. Each shape is kept under the domain's id with a
//! digest (SipHash under a key drawn at the process's start) of the stored item's bytes and of
//! the deployment's zones (the only other input of a shape), so any write, whatever its
//! version, makes the next call shape the domain again; a shape is also made again after the
//! memo's age limit. Whether this pays was not established by a measurement yet (README,
//! the MSP run of 2026-11-29 09:16).

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::domains::Domain as DomainView;
use mailward_domain::domain::Domain;
use mailward_store::report_versions::Memo;
use std::hash::{BuildHasher as _, RandomState};
use std::sync::{Arc, LazyLock};
use uuid::Uuid;

/// Shapes kept (~2 KB each): two full passes over a 10,000-domain organization.
const MAX_KEPT: usize = 20_000;

static VIEWS: LazyLock<Memo<(Uuid, Uuid), Arc<DomainView>>> = LazyLock::new(|| Memo::new(MAX_KEPT));
static DIGEST: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// The wire shapes of the domains `ids` of `org`, in that order (a domain deleted meanwhile
/// is left out), read in one batch and shaped only where the stored bytes changed.
pub(super) async fn page(
    app: &AppState,
    org: Uuid,
    ids: &[Uuid],
) -> Result<Vec<DomainView>, ServiceError> {
    let items = mailward_store::domains::get_many_items(app.store.as_ref(), org, ids).await?;
    let mut views = Vec::with_capacity(ids.len());
    for (id, item) in ids.iter().zip(items) {
        let Some(item) = item else { continue };
        let key = (org, *id);
        let zones = app.config.zones();
        let digest = DIGEST.hash_one((&item.data, zones.report_domain, zones.hosted_zone));
        let digest = i64::from_ne_bytes(digest.to_ne_bytes());
        if let Some(view) = VIEWS.get(&key, digest) {
            views.push(DomainView::clone(&view));
            continue;
        }
        let domain: Domain = mailward_store::decode(&item)?;
        let view = app.domain_view(&domain);
        VIEWS.keep(key, digest, Arc::new(view.clone()));
        views.push(view);
    }
    Ok(views)
}
