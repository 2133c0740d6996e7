//! What the data lifecycle removes, found by the key layout: an organization's report data
//! before a day, DNS snapshots before an instant (each type's latest always kept), activity
//! entries before an instant, and the deletes themselves ([`delete_all`]).
//!
//! A domain's report data and snapshots are read from its own partition (`crate::domain_data`;
//! the daily job moves what an older version left in the organization's partition first).
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
    let pk = keys::domain_pk(org, domain);
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
    let pk = keys::domain_pk(org, domain);
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
    let query =
        Query::partition(keys::domain_pk(org, domain)).prefix(keys::snapshot_prefix(domain, None));
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

/// What an organization's people leave outside its partition when it goes: for a person who
/// belongs to other organizations too, only the sessions and assistant connections (with
/// their refresh-token lookups) in this one; for a person only this organization had, the
/// account itself, its MFA factor and every session and connection, and its sign-in and
/// signup counters.
pub async fn people_of(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ItemKey>, StoreError> {
    use super::{accounts, identity, oauth};
    let mut out = Vec::new();
    for member in accounts::members_of(store, org).await? {
        let account = member.account_id;
        let elsewhere = accounts::memberships_of(store, account)
            .await?
            .iter()
            .any(|m| m.org_id != org);
        let identity_pk = keys::identity_pk(account);
        for session in identity::sessions(store, account).await? {
            if !elsewhere || session.org_id == org {
                out.push((identity_pk.clone(), keys::session_sk(session.id)));
            }
        }
        for connection in oauth::list_connections(store, account).await? {
            if !elsewhere || connection.org_id == Some(org) {
                out.push((
                    keys::oauth_connections_pk(account),
                    keys::oauth_connection_sk(connection.id),
                ));
                out.push((
                    keys::oauth_refresh_pk(&connection.refresh_hash),
                    keys::OAUTH_REFRESH_SK.to_owned(),
                ));
            }
        }
        if elsewhere {
            continue;
        }
        let whole = |pk: String| async move {
            Ok::<_, StoreError>(
                query_all(store, Query::partition(pk))
                    .await?
                    .into_iter()
                    .map(|i| (i.pk, i.sk))
                    .collect::<Vec<_>>(),
            )
        };
        out.extend(whole(identity_pk).await?);
        out.extend(whole(keys::oauth_connections_pk(account)).await?);
        if let Some(person) = accounts::get_by_id(store, account).await? {
            out.extend(whole(keys::signup_rate_pk(&person.email)).await?);
            out.extend(whole(keys::signin_failures_pk(&person.email)).await?);
            out.push((keys::account_pk(&person.email), keys::ACCOUNT_SK.to_owned()));
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The organization's events still waiting in the outbox (nobody will deliver them: its
/// endpoints go with it).
pub async fn outbox_of(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ItemKey>, StoreError> {
    let mut out = Vec::new();
    for shard in 0..keys::OUTBOX_SHARDS {
        for item in query_all(store, Query::partition(keys::outbox_pk(shard))).await? {
            let event: super::outbox::OutboxEvent = decode(&item)?;
            if event.org_id == org {
                out.push((item.pk, item.sk));
            }
        }
    }
    Ok(out)
}
