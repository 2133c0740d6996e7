//! Imported reports and their daily per-source rows, in the organization's partition. A report
//! is written as its rows first (idempotent puts: the same report always produces the same
//! items) and its report item last, so the report item marks a complete import and a crash
//! half-way is repaired by importing again.

use super::{decode, encode, keys};
use mailward_domain::reports::{DayTotal, ReportKind, SourceDay, StoredReport};
use mailward_domain::store::{
    Condition, Item, ItemStore, Query, SortKey, StoreError, WriteOp, query_all,
};
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

/// Whether the organization already imported this report for the domain.
pub async fn exists(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    kind: ReportKind,
    key: &str,
) -> Result<bool, StoreError> {
    Ok(store
        .get(
            &keys::org_pk(org),
            &keys::report_sk(domain, kind_str(kind), key),
            true,
        )
        .await?
        .is_some())
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
                    keys::org_pk(report.org_id),
                    keys::report_day_sk(report.domain_id, &day, &report.key, i),
                    encode_rows(chunk)?,
                ),
                condition: Condition::None,
            })
        })
        .collect()
}

/// A chunk of rows as JSON, each row an array of its fields in declaration order rather than
/// an object: rows are written by the hundred thousand, and the field names were most of their
/// bytes and of the time spent encoding them. `SourceDay`'s derived `Deserialize` reads either
/// form, so rows written as objects stay readable.
fn encode_rows(rows: &[SourceDay]) -> Result<Vec<u8>, StoreError> {
    struct Packed<'a>(&'a SourceDay);
    impl serde::Serialize for Packed<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeTuple as _;
            // Every field named, so a field added to `SourceDay` cannot be left out unnoticed.
            let SourceDay {
                source_ip,
                header_from,
                envelope_from,
                dkim_signers,
                dkim_passing,
                volume,
                dmarc_pass,
                spf_aligned_pass,
                dkim_aligned_pass,
                quarantined,
                rejected,
                forwarded,
                undetermined,
            } = self.0;
            let mut t = s.serialize_tuple(13)?;
            t.serialize_element(source_ip)?;
            t.serialize_element(header_from)?;
            t.serialize_element(envelope_from)?;
            t.serialize_element(dkim_signers)?;
            t.serialize_element(dkim_passing)?;
            t.serialize_element(volume)?;
            t.serialize_element(dmarc_pass)?;
            t.serialize_element(spf_aligned_pass)?;
            t.serialize_element(dkim_aligned_pass)?;
            t.serialize_element(quarantined)?;
            t.serialize_element(rejected)?;
            t.serialize_element(forwarded)?;
            t.serialize_element(undetermined)?;
            t.end()
        }
    }
    let mut out = Vec::with_capacity(rows.len() * 96);
    serde_json::to_writer(&mut out, &rows.iter().map(Packed).collect::<Vec<_>>())
        .map_err(|e| StoreError::Invalid(format!("encode: {e}")))?;
    Ok(out)
}

/// The write that marks a report imported (fails when it already was).
pub fn report_op(report: &StoredReport) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(report.org_id),
            keys::report_sk(report.domain_id, kind_str(report.kind), &report.key),
            encode(report)?,
        ),
        condition: Condition::NotExists,
    })
}

/// `yyyy-mm-dd`.
pub fn day_string(day: time::Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

/// A domain's imported reports.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<StoredReport>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::reports_prefix(domain)),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// A domain's rows from day `from` to `to` (inclusive), with their day.
pub async fn rows_between(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    from: time::Date,
    to: time::Date,
) -> Result<Vec<(String, SourceDay)>, StoreError> {
    let (lo, hi) = keys::report_days_between(domain, &day_string(from), &day_string(to));
    let mut query = Query::partition(keys::org_pk(org));
    query.sort = SortKey::Between(lo, hi);
    let prefix_len = keys::report_days_between(domain, "", "").0.len() - 1;
    let mut out = Vec::new();
    for item in query_all(store, query).await? {
        let day = item
            .sk
            .get(prefix_len..prefix_len + 10)
            .unwrap_or_default()
            .to_owned();
        let rows: Vec<SourceDay> = decode(&item)?;
        out.extend(rows.into_iter().map(|r| (day.clone(), r)));
    }
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

/// The write of a domain's total of one day (unconditional: it is recomputed from the rows).
pub fn day_total_op(
    org: Uuid,
    domain: Uuid,
    day: &str,
    total: &DayTotal,
) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(org),
            keys::report_total_sk(domain, day),
            encode(total)?,
        ),
        condition: Condition::None,
    })
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
    let mut query = Query::partition(keys::org_pk(org));
    query.sort = SortKey::Between(
        format!("{prefix}{}", day_string(from)),
        format!("{prefix}{}", day_string(to)),
    );
    query_all(store, query)
        .await?
        .iter()
        .map(|item| {
            let day = item.sk.get(prefix.len()..).unwrap_or_default().to_owned();
            Ok((day, decode(item)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> SourceDay {
        SourceDay {
            source_ip: "192.0.2.1".into(),
            header_from: "example.com".into(),
            envelope_from: Some("bounce.example.com".into()),
            dkim_signers: vec!["example.com/s1".into(), "esp.example/k\"1".into()],
            dkim_passing: vec!["example.com/s1".into()],
            volume: 11,
            dmarc_pass: 10,
            spf_aligned_pass: 9,
            dkim_aligned_pass: 8,
            quarantined: 7,
            rejected: 6,
            forwarded: 5,
            undetermined: 4,
        }
    }

    #[test]
    fn packed_rows_read_back_field_for_field() {
        let rows = vec![row(), SourceDay::default()];
        let packed = encode_rows(&rows).unwrap();
        assert!(
            packed.starts_with(b"[[\"192.0.2.1\""),
            "arrays, not objects"
        );
        let back: Vec<SourceDay> = serde_json::from_slice(&packed).unwrap();
        assert_eq!(back, rows);
    }

    #[test]
    fn rows_written_as_objects_stay_readable() {
        let objects = serde_json::to_vec(&vec![row()]).unwrap();
        let back: Vec<SourceDay> = serde_json::from_slice(&objects).unwrap();
        assert_eq!(back, [row()]);
    }
}
