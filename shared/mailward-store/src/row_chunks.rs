//! The stored form of a chunk of a report's daily rows.
//!
//! Rows are written by the hundred thousand, and most of a row's bytes were names repeated
//! from row to row: the header-from (nearly always the policy domain), the envelope-from and
//! the DKIM signers. A chunk therefore names each distinct string once, in a table, and its rows
//! refer to the table by position; each row is an array of its fields in declaration order.
//! This is about a third of the bytes of rows that spell their strings out, which is that much
//! less written to the table (DynamoDB bills writes by the kilobyte; SQLite writes each byte to
//! its log and then to the database) and less to encode and decode.
//!
//! ```json
//! {"rows":[["192.0.2.1",0,null,[1],[1],11,10,9,8,7,6,5,4]],
//!  "strings":["example.com","example.com/s1"]}
//! ```
//!
//! The rows come first: they are written in one pass straight from the rows, numbering each
//! string as it is met, and the table follows.
//!
//! Chunks written before this form (an array of rows, each an array or an object) stay
//! readable, and so do table rows without the two trailing raw pass counts (`spf_pass`,
//! `dkim_pass`: read as unknown).

use mailward_domain::reports::SourceDay;
use mailward_domain::store::StoreError;
use serde::ser::{SerializeMap as _, SerializeTuple as _};
use serde::{Deserialize, Serialize, Serializer};
use std::cell::RefCell;
use std::collections::HashMap;

/// A row with its strings as positions in the chunk's table: source IP, header-from,
/// envelope-from, DKIM signers, passing DKIM signers, then the counts in `SourceDay`'s order
/// (volume, dmarc_pass, spf_aligned_pass, dkim_aligned_pass, quarantined, rejected, forwarded,
/// undetermined); then, when known, the raw `spf_pass` and `dkim_pass` (see [`RowIn`]).
type TableRow<S> = (
    S,
    u32,
    Option<u32>,
    Vec<u32>,
    Vec<u32>,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
);

/// A chunk as read (owning its strings; the keys in either order).
#[derive(Deserialize)]
struct TableChunkIn {
    strings: Vec<String>,
    rows: Vec<RowIn>,
}

/// A table row as read: the [`TableRow`] and the raw pass counts that follow it in rows
/// written since they were kept (absent before: `None`).
struct RowIn(TableRow<String>, Option<u64>, Option<u64>);

impl<'de> Deserialize<'de> for RowIn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RowIn;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a row of 13 to 15 elements")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RowIn, A::Error> {
                use serde::de::Error as _;
                macro_rules! next {
                    ($i:expr) => {
                        seq.next_element()?
                            .ok_or_else(|| A::Error::invalid_length($i, &self))?
                    };
                }
                let row: TableRow<String> = (
                    next!(0),
                    next!(1),
                    next!(2),
                    next!(3),
                    next!(4),
                    next!(5),
                    next!(6),
                    next!(7),
                    next!(8),
                    next!(9),
                    next!(10),
                    next!(11),
                    next!(12),
                );
                let spf: Option<u64> = seq.next_element()?;
                let dkim: Option<u64> = match spf {
                    Some(_) => seq.next_element()?,
                    None => None,
                };
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(16, &self));
                }
                Ok(RowIn(row, spf, dkim))
            }
        }
        d.deserialize_seq(Visit)
    }
}

/// The distinct strings of a chunk, numbered in order of first use.
#[derive(Default)]
struct StringTable<'a> {
    strings: Vec<&'a str>,
    positions: HashMap<&'a str, u32, foldhash::fast::RandomState>,
}

impl<'a> StringTable<'a> {
    fn position(&mut self, s: &'a str) -> u32 {
        *self.positions.entry(s).or_insert_with(|| {
            self.strings.push(s);
            // A chunk holds a few hundred rows: never near 2^32 strings.
            (self.strings.len() - 1) as u32
        })
    }
}

/// A chunk being written: its rows first, each string numbered as it is met, then the table
/// of strings, so the rows are written straight from `SourceDay`s in one pass.
struct ChunkOut<'a> {
    rows: &'a [SourceDay],
}

/// The rows of a [`ChunkOut`], numbering their strings in the shared table.
struct RowsOut<'t, 'a> {
    rows: &'a [SourceDay],
    table: &'t RefCell<StringTable<'a>>,
}

/// One row as its [`TableRow`] array.
struct RowOut<'t, 'a> {
    row: &'a SourceDay,
    table: &'t RefCell<StringTable<'a>>,
}

/// A list of strings as their positions.
struct PositionsOut<'t, 'a> {
    list: &'a [String],
    table: &'t RefCell<StringTable<'a>>,
}

impl Serialize for ChunkOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let table = RefCell::new(StringTable::default());
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry(
            "rows",
            &RowsOut {
                rows: self.rows,
                table: &table,
            },
        )?;
        map.serialize_entry("strings", &table.borrow().strings)?;
        map.end()
    }
}

impl Serialize for RowsOut<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.rows.iter().map(|row| RowOut {
            row,
            table: self.table,
        }))
    }
}

impl<'a> Serialize for RowOut<'_, 'a> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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
            spf_pass,
            dkim_pass,
        } = self.row;
        let position = |text: &'a str| self.table.borrow_mut().position(text);
        let positions = |list: &'a [String]| PositionsOut {
            list,
            table: self.table,
        };
        let raw = spf_pass.zip(*dkim_pass);
        let mut t = s.serialize_tuple(if raw.is_some() { 15 } else { 13 })?;
        t.serialize_element(source_ip)?;
        t.serialize_element(&position(header_from))?;
        t.serialize_element(&envelope_from.as_deref().map(position))?;
        t.serialize_element(&positions(dkim_signers))?;
        t.serialize_element(&positions(dkim_passing))?;
        for count in [
            volume,
            dmarc_pass,
            spf_aligned_pass,
            dkim_aligned_pass,
            quarantined,
            rejected,
            forwarded,
            undetermined,
        ] {
            t.serialize_element(count)?;
        }
        if let Some((spf, dkim)) = raw {
            t.serialize_element(&spf)?;
            t.serialize_element(&dkim)?;
        }
        t.end()
    }
}

impl Serialize for PositionsOut<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.list
                .iter()
                .map(|text| self.table.borrow_mut().position(text)),
        )
    }
}

/// The stored bytes of `rows`.
pub fn encode(rows: &[SourceDay]) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(rows.len() * 48);
    serde_json::to_writer(&mut out, &ChunkOut { rows })
        .map_err(|e| StoreError::Invalid(format!("encode: {e}")))?;
    Ok(out)
}

/// The rows of stored `bytes`, in either form; `what` names the item in an error.
pub fn decode(bytes: &[u8], what: &str) -> Result<Vec<SourceDay>, StoreError> {
    let corrupt = |why: String| StoreError::Unavailable(format!("corrupt item {what}: {why}"));
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()));
    }
    let TableChunkIn { strings, rows } =
        serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
    let string = |i: u32| {
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| corrupt(format!("string {i} of {}", strings.len())))
    };
    let list = |positions: Vec<u32>| -> Result<Vec<String>, StoreError> {
        positions.into_iter().map(string).collect()
    };
    rows.into_iter()
        .map(|RowIn(row, spf_pass, dkim_pass)| {
            let (
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
            ) = row;
            Ok(SourceDay {
                source_ip,
                header_from: string(header_from)?,
                envelope_from: envelope_from.map(string).transpose()?,
                dkim_signers: list(dkim_signers)?,
                dkim_passing: list(dkim_passing)?,
                volume,
                dmarc_pass,
                spf_aligned_pass,
                dkim_aligned_pass,
                quarantined,
                rejected,
                forwarded,
                undetermined,
                spf_pass: spf_pass.zip(dkim_pass).map(|(s, _)| s),
                dkim_pass: spf_pass.zip(dkim_pass).map(|(_, d)| d),
            })
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
            spf_pass: Some(3),
            dkim_pass: Some(2),
        }
    }

    #[test]
    fn rows_read_back_field_for_field_with_each_string_stored_once() {
        let other = SourceDay {
            source_ip: "2001:db8::1".into(),
            envelope_from: None,
            dkim_passing: vec![],
            ..row()
        };
        let rows = vec![row(), SourceDay::default(), other, row()];
        let bytes = encode(&rows).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with("{\"rows\":[[\"192.0.2.1\",0,1,[2,3],[2],"),
            "{text}"
        );
        assert_eq!(text.matches("example.com/s1").count(), 1, "{text}");
        assert_eq!(text.matches("bounce.example.com").count(), 1, "{text}");
        assert_eq!(decode(&bytes, "x").unwrap(), rows);
        assert_eq!(decode(&encode(&[]).unwrap(), "x").unwrap(), []);
    }

    #[test]
    fn chunks_written_in_the_earlier_forms_stay_readable() {
        let objects = serde_json::to_vec(&vec![row()]).unwrap();
        assert_eq!(decode(&objects, "x").unwrap(), [row()]);
        let old = SourceDay {
            spf_pass: None,
            dkim_pass: None,
            ..row()
        };
        let objects = serde_json::to_vec(&vec![old.clone()]).unwrap();
        assert_eq!(decode(&objects, "x").unwrap(), std::slice::from_ref(&old));
        let arrays = br#" [["192.0.2.1","example.com","bounce.example.com",["example.com/s1","esp.example/k\"1"],["example.com/s1"],11,10,9,8,7,6,5,4]]"#;
        assert_eq!(decode(arrays, "x").unwrap(), std::slice::from_ref(&old));
        // A table row written before the raw pass counts were kept.
        let table = br#"{"rows":[["192.0.2.1",0,1,[2,3],[2],11,10,9,8,7,6,5,4]],"strings":["example.com","bounce.example.com","example.com/s1","esp.example/k\"1"]}"#;
        assert_eq!(decode(table, "x").unwrap(), [old]);
    }

    #[test]
    fn a_damaged_chunk_is_an_error_not_a_panic() {
        for bad in [
            &br#"{"strings":["a"],"rows":[["ip",1,null,[],[],1,1,1,1,1,1,1,1]]}"#[..],
            br#"{"strings":["a"],"rows":[["ip",0,7,[],[],1,1,1,1,1,1,1,1]]}"#,
            br#"{"strings":["a"],"rows":[["ip",0,null,[0,3],[],1,1,1,1,1,1,1,1]]}"#,
            br#"{"strings":["a"],"rows":[["ip",0]]}"#,
            br#"{"strings":["a"],"rows":[["ip",0,null,[],[],1,1,1,1,1,1,1,1,1,1,1]]}"#,
            br#"{"strings":"#,
            b"",
        ] {
            let err = decode(bad, "pk/sk").unwrap_err();
            assert!(err.to_string().contains("pk/sk"), "{err}");
        }
    }
}
