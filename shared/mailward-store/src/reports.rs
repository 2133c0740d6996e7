//! Imported reports and their daily per-source rows, in the domain's partition
//! ([`crate::domain_data`]). A report
//! is written as its rows first (idempotent puts: the same report always produces the same
//! items) and its report item last, so the report item marks a complete import and a crash
//! half-way is repaired by importing again.

use super::{decode, domain_data, encode, keys, row_chunks};
use mailward_domain::reports::{DayTotal, ReportKind, SourceDay, StoredReport};
use mailward_domain::sources::ForwardingType;
use mailward_domain::store::{
    Condition, Item, ItemStore, Query, SortKey, StoreError, WriteOp, query_all,
};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Rows per stored chunk (keeps items far below DynamoDB's 400 KB).
pub const ROWS_PER_CHUNK: usize = 500;

fn kind_str(kind: ReportKind) -> &'static str {
    match kind {
        ReportKind::Dmarc => "dmarc",
        ReportKind::Tlsrpt => "tlsrpt",
        ReportKind::Failure => "failure",
    }
}

/// The report the organization already imported under this identity for the domain.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    kind: ReportKind,
    key: &str,
) -> Result<Option<StoredReport>, StoreError> {
    let sk = keys::report_sk(domain, kind_str(kind), key);
    domain_data::get(store, org, domain, &sk, true)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// The deletes of every row chunk a stored report wrote (found on the days of its date range),
/// for a report being replaced.
pub async fn row_deletes(
    store: &dyn ItemStore,
    report: &StoredReport,
) -> Result<Vec<WriteOp>, StoreError> {
    let mut ops = Vec::new();
    let spread = mailward_domain::reports::DaySpread::new(report.begin, report.end);
    for day in spread.days() {
        let first = keys::report_day_sk(report.domain_id, &day_string(*day), &report.key, 0);
        let prefix = first.trim_end_matches("0000");
        let found =
            domain_data::query_prefix(store, report.org_id, report.domain_id, prefix.to_owned());
        for item in found.await? {
            ops.push(WriteOp::Delete {
                pk: item.pk,
                sk: item.sk,
                condition: Condition::None,
            });
        }
    }
    Ok(ops)
}

/// The writes of one day's rows of a report (unconditional: the same report writes the same
/// items, so repeating them is harmless).
pub fn day_ops(
    report: &StoredReport,
    day: time::Date,
    rows: &[SourceDay],
) -> Result<Vec<WriteOp>, StoreError> {
    let day = day_string(day);
    rows.chunks(ROWS_PER_CHUNK)
        .enumerate()
        .map(|(i, chunk)| {
            Ok(WriteOp::Put {
                item: Item::new(
                    keys::domain_pk(report.org_id, report.domain_id),
                    keys::report_day_sk(report.domain_id, &day, &report.key, i),
                    row_chunks::encode(chunk)?,
                ),
                condition: Condition::None,
            })
        })
        .collect()
}

/// The write that marks a report imported (fails when it already was, unless `replacing`: an
/// authenticated report taking the place of an unauthenticated one).
pub fn report_op(report: &StoredReport, replacing: bool) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::domain_pk(report.org_id, report.domain_id),
            keys::report_sk(report.domain_id, kind_str(report.kind), &report.key),
            encode(report)?,
        ),
        condition: if replacing {
            Condition::Exists
        } else {
            Condition::NotExists
        },
    })
}

pub use mailward_domain::reports::day_string;

/// A domain's imported reports.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<StoredReport>, StoreError> {
    domain_data::query_prefix(store, org, domain, keys::reports_prefix(domain))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// Most forwarding addresses kept per domain (the item stays far below 400 KB).
pub const MAX_FORWARDERS: usize = 5_000;

/// The domain's source addresses in forwarders' networks, as identification last found them.
pub async fn forwarders(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<BTreeMap<String, ForwardingType>, StoreError> {
    domain_data::get(store, org, domain, &keys::forwarders_sk(domain), false)
        .await?
        .map(|i| decode(&i))
        .transpose()
        .map(Option::unwrap_or_default)
}

/// The write of the domain's forwarding addresses (at most [`MAX_FORWARDERS`]); `None` when
/// they are what is stored.
pub fn forwarders_op(
    org: Uuid,
    domain: Uuid,
    found: &BTreeMap<String, ForwardingType>,
    stored: &BTreeMap<String, ForwardingType>,
) -> Result<Option<WriteOp>, StoreError> {
    let kept: BTreeMap<&String, &ForwardingType> = found.iter().take(MAX_FORWARDERS).collect();
    let same = kept.len() == stored.len() && kept.iter().all(|(ip, t)| stored.get(*ip) == Some(*t));
    if same {
        return Ok(None);
    }
    Ok(Some(WriteOp::Put {
        item: Item::new(
            keys::domain_pk(org, domain),
            keys::forwarders_sk(domain),
            encode(&kept)?,
        ),
        condition: Condition::None,
    }))
}

/// A domain's rows from day `from` to `to` (inclusive), with their day. A row from a
/// forwarder's network carries its derived forwarded count (`SourceDay::forwarded_through`),
/// so every reader counts forwarding alike.
pub async fn rows_between(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<Vec<(String, SourceDay)>, StoreError> {
    let mut out = rows_as_reported(store, org, domain, from, to).await?;
    let relays = forwarders(store, org, domain).await?;
    if !relays.is_empty() {
        for (_, row) in &mut out {
            with_relay(&relays, row);
        }
    }
    Ok(out)
}

/// Sets a row's derived forwarded count when its source is in a forwarder's network.
fn with_relay(relays: &BTreeMap<String, ForwardingType>, row: &mut SourceDay) {
    if let Some(relay) = relays.get(&row.source_ip) {
        row.forwarded = row.forwarded_through(*relay);
    }
}

/// [`rows_between`] with the key of the report each row came from (`(day, report key, row)`):
/// what a per-reporter view groups by.
pub async fn rows_by_report_between(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<Vec<(String, String, SourceDay)>, StoreError> {
    let relays = forwarders(store, org, domain).await?;
    let mut out = Vec::new();
    for_each_chunk(store, org, domain, (from, to), |day, key, rows| {
        out.extend(rows.into_iter().map(|mut row| {
            with_relay(&relays, &mut row);
            (day.to_owned(), key.to_owned(), row)
        }));
    })
    .await?;
    Ok(out)
}

/// Calls `each(day, report key, rows)` for every stored chunk of the domain's rows from day
/// `from` to `to`.
async fn for_each_chunk(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    (from, to): (time::Date, time::Date),
    mut each: impl FnMut(&str, &str, Vec<SourceDay>),
) -> Result<(), StoreError> {
    let (lo, hi) = keys::report_days_between(domain, &day_string(from), &day_string(to));
    let prefix_len = keys::report_days_prefix(domain).len();
    for item in domain_data::query(store, org, domain, SortKey::Between(lo, hi)).await? {
        let rest = item.sk.get(prefix_len..).unwrap_or_default();
        let day = rest.get(..10).unwrap_or_default();
        let key = rest
            .get(11..)
            .and_then(|k| k.rsplit_once('#'))
            .map_or("", |(k, _)| k);
        let rows = row_chunks::decode(&item.data, &format!("{}/{}", item.pk, item.sk))?;
        each(day, key, rows);
    }
    Ok(())
}

/// [`rows_between`] as the reports gave them, without derived forwarding (what sender
/// identification derives it from).
pub async fn rows_as_reported(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<Vec<(String, SourceDay)>, StoreError> {
    let mut out = Vec::new();
    for_each_chunk(store, org, domain, (from, to), |day, _, rows| {
        let day = day.to_owned();
        out.extend(rows.into_iter().map(|r| (day.clone(), r)));
    })
    .await?;
    Ok(out)
}

/// Notes a report no organization watches (kept 400 days for the operator's counts).
pub fn unattributed_op(
    day: time::Date,
    key: &str,
    summary: &serde_json::Value,
    expires: i64,
) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::unattributed_pk(&day_string(day)),
            key,
            encode(summary)?,
        )
        .expiring_at(expires),
        condition: Condition::None,
    })
}

/// The organizations watching a domain name, with their domain ids (the global name index).
pub async fn watchers(store: &dyn ItemStore, name: &str) -> Result<Vec<(Uuid, Uuid)>, StoreError> {
    let items = query_all(store, Query::partition(keys::domain_name_pk(name))).await?;
    Ok(items
        .iter()
        .filter_map(|item| {
            let org = Uuid::parse_str(item.sk.strip_prefix("ORG#")?).ok()?;
            let domain = Uuid::from_slice(&item.data).ok()?;
            Some((org, domain))
        })
        .collect())
}

/// The item of a domain's total of one day (put unconditionally, with `ItemStore::put_all`: it
/// is recomputed from the rows).
pub fn day_total_item(
    org: Uuid,
    domain: Uuid,
    day: &str,
    total: &DayTotal,
) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::domain_pk(org, domain),
        keys::report_total_sk(domain, day),
        encode(total)?,
    ))
}

/// A domain's day totals from `from` to `to` (inclusive), by day (`yyyy-mm-dd`).
pub async fn day_totals_between(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<Vec<(String, DayTotal)>, StoreError> {
    let prefix = keys::report_total_sk(domain, "");
    let between = SortKey::Between(
        format!("{prefix}{}", day_string(from)),
        format!("{prefix}{}", day_string(to)),
    );
    domain_data::query(store, org, domain, between)
        .await?
        .iter()
        .map(|item| {
            let day = item.sk.get(prefix.len()..).unwrap_or_default().to_owned();
            Ok((day, decode(item)?))
        })
        .collect()
}
