//! Items to and from DynamoDB attribute maps, and query cursors to and from strings.
//!
//! Attribute layout (one table, see [`create_table`](super::create_table)): `pk`, `sk` (S),
//! `d` (B, payload; omitted when empty), `v` (N, version), `ttl` (N, optional), `gsi1pk`/`gsi1sk`
//! and `gsi2pk`/`gsi2sk` (S, optional), `n` (N, counter, optional).

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mailward_domain::store::{Index, IndexKey, Item, StoreError};
use std::collections::{BTreeMap, HashMap};

pub(super) const PK: &str = "pk";
pub(super) const SK: &str = "sk";
pub(super) const DATA: &str = "d";
pub(super) const VERSION: &str = "v";
pub(super) const TTL: &str = "ttl";
pub(super) const COUNTER: &str = "n";
pub(super) const GSI1: (&str, &str, &str) = ("gsi1", "gsi1pk", "gsi1sk");
pub(super) const GSI2: (&str, &str, &str) = ("gsi2", "gsi2pk", "gsi2sk");

/// An attribute map as the SDK takes and returns it.
pub(super) type Attrs = HashMap<String, AttributeValue>;

/// The index name (None for the table) and its partition and sort attributes.
pub(super) fn key_attrs(index: Index) -> (Option<&'static str>, &'static str, &'static str) {
    match index {
        Index::Primary => (None, PK, SK),
        Index::Gsi1 => (Some(GSI1.0), GSI1.1, GSI1.2),
        Index::Gsi2 => (Some(GSI2.0), GSI2.1, GSI2.2),
    }
}

pub(super) fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

pub(super) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The primary key of an item.
pub(super) fn key(pk: &str, sk: &str) -> Attrs {
    HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))])
}

/// The full attribute map written for `item`.
pub(super) fn to_attrs(item: Item) -> Attrs {
    let mut attrs = key(&item.pk, &item.sk);
    if !item.data.is_empty() {
        attrs.insert(DATA.to_owned(), AttributeValue::B(Blob::new(item.data)));
    }
    attrs.insert(VERSION.to_owned(), n(item.version));
    if let Some(ttl) = item.expires_at {
        attrs.insert(TTL.to_owned(), n(ttl));
    }
    for (index_key, (_, pk_attr, sk_attr)) in [(item.gsi1, GSI1), (item.gsi2, GSI2)] {
        if let Some(IndexKey { pk, sk }) = index_key {
            attrs.insert(pk_attr.to_owned(), AttributeValue::S(pk));
            attrs.insert(sk_attr.to_owned(), AttributeValue::S(sk));
        }
    }
    if let Some(counter) = item.counter {
        attrs.insert(COUNTER.to_owned(), n(counter));
    }
    attrs
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Unavailable(format!("malformed DynamoDB item: {what}"))
}

fn string(attrs: &Attrs, name: &str) -> Result<Option<String>, StoreError> {
    match attrs.get(name) {
        None => Ok(None),
        Some(AttributeValue::S(v)) => Ok(Some(v.clone())),
        Some(_) => Err(corrupt(&format!("`{name}` is not a string"))),
    }
}

/// Reads a numeric attribute, if present.
pub(super) fn number<T: std::str::FromStr>(
    attrs: &Attrs,
    name: &str,
) -> Result<Option<T>, StoreError> {
    match attrs.get(name) {
        None => Ok(None),
        Some(AttributeValue::N(v)) => v
            .parse()
            .map(Some)
            .map_err(|_| corrupt(&format!("`{name}` = {v} is out of range"))),
        Some(_) => Err(corrupt(&format!("`{name}` is not a number"))),
    }
}

/// Whether an item (as returned by DynamoDB) is still live at `now`.
pub(super) fn is_live(attrs: &Attrs, now: i64) -> Result<bool, StoreError> {
    Ok(number::<i64>(attrs, TTL)?.is_none_or(|ttl| ttl > now))
}

/// The item held in an attribute map. A counter item has no payload (`data` is empty).
pub(super) fn from_attrs(attrs: &Attrs) -> Result<Item, StoreError> {
    let index_key = |(_, pk_attr, sk_attr): (&str, &str, &str)| -> Result<_, StoreError> {
        Ok(match (string(attrs, pk_attr)?, string(attrs, sk_attr)?) {
            (Some(pk), Some(sk)) => Some(IndexKey { pk, sk }),
            _ => None,
        })
    };
    let data = match attrs.get(DATA) {
        None => Vec::new(),
        Some(AttributeValue::B(blob)) => blob.as_ref().to_vec(),
        Some(_) => return Err(corrupt("`d` is not binary")),
    };
    Ok(Item {
        pk: string(attrs, PK)?.ok_or_else(|| corrupt("no `pk`"))?,
        sk: string(attrs, SK)?.ok_or_else(|| corrupt("no `sk`"))?,
        data,
        version: number(attrs, VERSION)?.unwrap_or(0),
        expires_at: number(attrs, TTL)?,
        gsi1: index_key(GSI1)?,
        gsi2: index_key(GSI2)?,
        counter: number(attrs, COUNTER)?,
    })
}

/// Turns a `LastEvaluatedKey` (string key attributes only) into an opaque cursor: base64url of
/// its JSON.
pub(super) fn encode_cursor(last_key: &Attrs) -> Result<String, StoreError> {
    let mut plain = BTreeMap::new();
    for (name, value) in last_key {
        let AttributeValue::S(v) = value else {
            return Err(corrupt(&format!(
                "LastEvaluatedKey `{name}` is not a string"
            )));
        };
        plain.insert(name.as_str(), v.as_str());
    }
    let json = serde_json::to_vec(&plain).map_err(|e| StoreError::Unavailable(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(json))
}

/// The `ExclusiveStartKey` of a scan's cursor: exactly the table's key attributes.
pub(super) fn decode_scan_cursor(cursor: &str) -> Result<Attrs, StoreError> {
    let invalid = || StoreError::Invalid("malformed scan cursor".into());
    let json = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let plain: BTreeMap<String, String> = serde_json::from_slice(&json).map_err(|_| invalid())?;
    if !plain.keys().map(String::as_str).eq([PK, SK]) {
        return Err(invalid());
    }
    Ok(plain
        .into_iter()
        .map(|(k, v)| (k, AttributeValue::S(v)))
        .collect())
}

/// The `ExclusiveStartKey` for a cursor, refusing cursors this query cannot have produced: the
/// key attributes must be exactly the table's plus the index's, and the partition must match.
pub(super) fn decode_cursor(
    cursor: &str,
    index: Index,
    partition: &str,
) -> Result<Attrs, StoreError> {
    let invalid = || StoreError::Invalid("malformed query cursor".into());
    let json = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let plain: BTreeMap<String, String> = serde_json::from_slice(&json).map_err(|_| invalid())?;
    let (_, pk_attr, sk_attr) = key_attrs(index);
    let mut expected = vec![PK, SK, pk_attr, sk_attr];
    expected.sort_unstable();
    expected.dedup();
    if !plain
        .keys()
        .map(String::as_str)
        .eq(expected.iter().copied())
        || plain.get(pk_attr).map(String::as_str) != Some(partition)
    {
        return Err(invalid());
    }
    Ok(plain
        .into_iter()
        .map(|(k, v)| (k, AttributeValue::S(v)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_round_trip_through_attributes() {
        let mut item = Item::new("P", "S", b"{}".to_vec())
            .with_version(9)
            .expiring_at(42)
            .with_gsi1("g1", "s1")
            .with_gsi2("g2", "s2");
        item.counter = Some(-3);
        assert_eq!(from_attrs(&to_attrs(item.clone())).ok(), Some(item));
        let bare = Item::new("P", "S", Vec::new());
        assert_eq!(from_attrs(&to_attrs(bare.clone())).ok(), Some(bare));
    }

    #[test]
    fn cursors_round_trip_and_reject_foreign_ones() {
        let last: Attrs = [("pk", "o"), ("sk", "m"), ("gsi1pk", "G"), ("gsi1sk", "x")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), s(v)))
            .collect();
        let cursor = encode_cursor(&last).unwrap_or_default();
        assert_eq!(decode_cursor(&cursor, Index::Gsi1, "G").ok(), Some(last));
        assert!(decode_cursor(&cursor, Index::Gsi1, "other").is_err());
        assert!(decode_cursor(&cursor, Index::Primary, "o").is_err());
        assert!(decode_cursor("not a cursor!", Index::Primary, "o").is_err());
    }
}
