//! What the data lifecycle removes, found by the key layout: an organization's report data
//! before a day, DNS snapshots before an instant (each type's latest always kept), activity
//! entries before an instant, and the deletes themselves ([`delete_all`]).
//!
//! Every function only *finds* items; [`delete_all`] removes them, unconditionally and a few
//! at a time, so a run that stops half-way is finished by the next one.

use super::{decode, keys};
use mailward_domain::reports::{StoredReport, day_string};
use mailward_domain::snapshots::Snapshot;
use mailward_domain::store::{ItemStore, Query, SortKey, StoreError, query_all};
use mailward_domain::tls_reports::StoredTlsReport;
use std::collections::HashSet;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

/// A stored item's key.
pub type ItemKey = (String, String);

/// Sort keys of a partition between two bounds (both inclusive).
async fn keys_between(
    store: &dyn ItemStore,
    pk: &str,
    lo: String,
    hi: String,
) -> Result<Vec<ItemKey>, StoreError> {
    let mut query = Query::partition(pk);
    query.sort = SortKey::Between(lo, hi);
    Ok(query_all(store, query)
        .await?
        .into_iter()
        .map(|item| (item.pk, item.sk))
        .collect())
}

/// A domain's aggregate-report items of days before `keep_from`: the row chunks, the day
/// totals and the marks of reports whose whole date range ends before it.
pub async fn report_data_before(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    keep_from: Date,
) -> Result<Vec<ItemKey>, StoreError> {
    let pk = keys::org_pk(org);
    let Some(last_gone) = keep_from.previous_day() else {
        return Ok(Vec::new());
    };
    let last = day_string(last_gone);
    let (lo, _) = keys::report_days_between(domain, "", "");
    let (_, hi) = keys::report_days_between(domain, &last, &last);
    let mut out = keys_between(store, &pk, lo, hi).await?;
    let totals = keys::report_total_sk(domain, "");
    out.extend(keys_between(store, &pk, totals.clone(), format!("{totals}{last}")).await?);
    let marks = ended_before(
        store,
        &pk,
        keys::reports_prefix(domain),
        keep_from,
        |item| decode::<StoredReport>(item).map(|r| r.end),
    );
    out.extend(marks.await?);
    Ok(out)
}

/// The items under `prefix` whose date range (`end_of`, unix seconds) ended by `keep_from`.
async fn ended_before(
    store: &dyn ItemStore,
    pk: &str,
    prefix: String,
    keep_from: Date,
    end_of: impl Fn(&mailward_domain::store::Item) -> Result<i64, StoreError>,
) -> Result<Vec<ItemKey>, StoreError> {
    let cutoff = keep_from.midnight().assume_utc().unix_timestamp();
    let mut out = Vec::new();
    for item in query_all(store, Query::partition(pk).prefix(prefix)).await? {
        if end_of(&item)? <= cutoff {
            out.push((item.pk, item.sk));
        }
    }
    Ok(out)
}

/// A domain's TLS reports whose date range ends before `keep_from`.
pub async fn tls_reports_before(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    keep_from: Date,
) -> Result<Vec<ItemKey>, StoreError> {
    let pk = keys::org_pk(org);
    ended_before(
        store,
        &pk,
        keys::tls_reports_prefix(domain),
        keep_from,
        |item| decode::<StoredTlsReport>(item).map(|r| r.end),
    )
    .await
}

/// A domain's DNS snapshots captured before `before`, except the latest of each record type
/// (the record as it stands stays in the history however old it is).
pub async fn snapshots_before(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    before: OffsetDateTime,
) -> Result<Vec<ItemKey>, StoreError> {
    let latest: HashSet<Uuid> = super::snapshots::latest(store, org, domain)
        .await?
        .iter()
        .map(|s| s.id)
        .collect();
    let query = Query::partition(keys::org_pk(org)).prefix(keys::snapshot_prefix(domain, None));
    let mut out = Vec::new();
    for item in query_all(store, query).await? {
        let snapshot: Snapshot = decode(&item)?;
        if snapshot.captured_at < before && !latest.contains(&snapshot.id) {
            out.push((item.pk, item.sk));
        }
    }
    Ok(out)
}

/// An organization's activity entries written before `before`, with their reference items.
pub async fn activity_before(
    store: &dyn ItemStore,
    org: Uuid,
    before: OffsetDateTime,
) -> Result<Vec<ItemKey>, StoreError> {
    let pk = keys::org_pk(org);
    let millis = before.unix_timestamp_nanos() / 1_000_000;
    let hi = keys::activity_sk(millis - 1, Uuid::max());
    let entries = keys_between(store, &pk, keys::ACTIVITY_PREFIX.to_owned(), hi).await?;
    let mut out = Vec::with_capacity(entries.len() * 2);
    for (pk, sk) in entries {
        if let Some(id) = sk.rsplit('#').next().and_then(|s| Uuid::parse_str(s).ok()) {
            out.push((pk.clone(), keys::activity_ref_sk(id)));
        }
        out.push((pk, sk));
    }
    Ok(out)
}

/// Deletes every key, sixteen at a time; the first failure is returned after the others ran.
pub async fn delete_all(store: &dyn ItemStore, items: Vec<ItemKey>) -> Result<usize, StoreError> {
    use futures::StreamExt as _;
    let count = items.len();
    let results: Vec<_> = futures::stream::iter(items)
        .map(|(pk, sk)| async move {
            store
                .delete(&pk, &sk, mailward_domain::store::Condition::None)
                .await
        })
        .buffer_unordered(16)
        .collect()
        .await;
    for result in results {
        result?;
    }
    Ok(count)
}
