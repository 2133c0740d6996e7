//! RFC 1035 master-file presentation of names and records, for the real server's zone files.

use crate::FixtureError;
use hickory_server::proto::rr::{Name, RData, Record};
use hickory_server::proto::serialize::binary::BinEncodable;
use std::fmt::Write as _;

/// A name in presentation format, absolute (trailing dot), every octet that is special in a
/// master file escaped (`\.`, `\"`, `\DDD` for the unprintable).
pub(crate) fn name(name: &Name) -> String {
    let mut out = String::new();
    for label in name.iter() {
        for &byte in label {
            escape_into(&mut out, byte, b".\\\"();@$ ");
        }
        out.push('.');
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// One character-string, quoted, with `"` and `\` escaped and unprintable octets as `\DDD`.
fn character_string(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &byte in bytes {
        escape_into(&mut out, byte, b"\\\"");
    }
    out.push('"');
    out
}

fn escape_into(out: &mut String, byte: u8, special: &[u8]) {
    if !(0x21..0x7f).contains(&byte) && byte != b' ' {
        let _ = write!(out, "\\{byte:03}");
    } else if special.contains(&byte) {
        out.push('\\');
        out.push(char::from(byte));
    } else {
        out.push(char::from(byte));
    }
}

/// One record as a master-file line: owner, TTL, class, type, data.
pub(crate) fn line(record: &Record) -> Result<String, FixtureError> {
    let data = match &record.data {
        RData::A(a) => a.0.to_string(),
        RData::AAAA(aaaa) => aaaa.0.to_string(),
        RData::MX(mx) => format!("{} {}", mx.preference, name(&mx.exchange)),
        RData::CNAME(target) => name(&target.0),
        RData::NS(target) => name(&target.0),
        RData::PTR(target) => name(&target.0),
        RData::TXT(txt) if txt.txt_data.is_empty() => "\"\"".to_owned(),
        RData::TXT(txt) => txt
            .txt_data
            .iter()
            .map(|s| character_string(s))
            .collect::<Vec<_>>()
            .join(" "),
        RData::SOA(_) => {
            return Err(FixtureError::Invalid(
                "an SOA below the zone apex cannot be served".into(),
            ));
        }
        // Anything else in its generic form (RFC 3597), which every server reads.
        other => {
            let bytes = BinEncodable::to_bytes(other)
                .map_err(|e| FixtureError::Invalid(format!("record data: {e}")))?;
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            return Ok(format!(
                "{} {} IN TYPE{} \\# {} {}",
                name(&record.name),
                record.ttl,
                u16::from(record.record_type()),
                bytes.len(),
                if hex.is_empty() { "".to_owned() } else { hex }
            ));
        }
    };
    Ok(format!(
        "{} {} IN {} {}",
        name(&record.name),
        record.ttl,
        record.record_type(),
        data
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_server::proto::rr::rdata::TXT;

    #[test]
    fn names_and_strings_are_escaped() {
        let odd = Name::from_labels(vec![&b"a.b"[..], &b"c\"d"[..], &b"test"[..]]).unwrap();
        assert_eq!(name(&odd), "a\\.b.c\\\"d.test.");
        assert_eq!(name(&Name::root()), ".");
        let record = Record::from_rdata(
            Name::from_ascii("x.test.").unwrap(),
            300,
            RData::TXT(TXT::from_bytes(vec![
                &b"v=spf1 -all"[..],
                &b"q\"\\\x01"[..],
            ])),
        );
        assert_eq!(
            line(&record).unwrap(),
            "x.test. 300 IN TXT \"v=spf1 -all\" \"q\\\"\\\\\\001\""
        );
    }
}
