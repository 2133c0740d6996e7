//! Conversions between hickory's types and the port's: names, record types, record data, errors.

use hickory_resolver::proto::rr::{Name, RData, Record, RecordType as HickoryType};
use mailward_domain::dns::{DnsError, RecordData, RecordType};

/// The port's canonical spelling of a name: lower-case, no trailing dot.
pub(crate) fn canonical(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The canonical spelling of a hickory name: the raw labels (not the zone-file escapes hickory's
/// `to_ascii` would add for octets such as `:`), lower-cased, joined with dots.
pub(crate) fn canonical_name(name: &Name) -> String {
    let labels: Vec<String> = name
        .iter()
        .map(|label| String::from_utf8_lossy(label).to_ascii_lowercase())
        .collect();
    labels.join(".")
}

/// Parses a query name as a fully-qualified name (search domains never apply).
pub(crate) fn query_name(name: &str) -> Result<Name, DnsError> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > 254 {
        return Err(DnsError::InvalidName(name.to_owned()));
    }
    let mut parsed = Name::from_ascii(trimmed)
        .or_else(|_| raw_labels(trimmed))
        .map_err(|_| DnsError::InvalidName(name.to_owned()))?;
    parsed.set_fqdn(true);
    if parsed.is_root() {
        return Err(DnsError::InvalidName(name.to_owned()));
    }
    Ok(parsed)
}

/// DNS labels may hold any octet (RFC 2181 §11): names such as `foo:bar.example.com`, which SPF
/// macros can produce, are sent as they are when the host-name parser refuses them.
fn raw_labels(name: &str) -> Result<Name, ()> {
    let trimmed = name.strip_suffix('.').unwrap_or(name);
    let labels: Vec<&[u8]> = trimmed.split('.').map(str::as_bytes).collect();
    if labels.iter().any(|l| l.is_empty() || l.len() > 63) {
        return Err(());
    }
    Name::from_labels(labels).map_err(|_| ())
}

/// The hickory record type for a port record type.
pub(crate) fn hickory_type(record_type: RecordType) -> HickoryType {
    match record_type {
        RecordType::A => HickoryType::A,
        RecordType::Aaaa => HickoryType::AAAA,
        RecordType::Mx => HickoryType::MX,
        RecordType::Txt => HickoryType::TXT,
        RecordType::Cname => HickoryType::CNAME,
        RecordType::Ns => HickoryType::NS,
        RecordType::Ptr => HickoryType::PTR,
        RecordType::Soa => HickoryType::SOA,
        RecordType::Tlsa => HickoryType::TLSA,
        RecordType::Dnskey => HickoryType::DNSKEY,
    }
}

/// The port's data for one hickory record, when it is of a type the port knows.
pub(crate) fn record_data(record: &Record) -> Option<RecordData> {
    Some(match &record.data {
        RData::A(a) => RecordData::A(a.0),
        RData::AAAA(aaaa) => RecordData::Aaaa(aaaa.0),
        RData::MX(mx) => RecordData::Mx {
            preference: mx.preference,
            exchange: canonical_name(&mx.exchange),
        },
        RData::TXT(txt) => RecordData::Txt(txt.txt_data.iter().map(|s| s.to_vec()).collect()),
        RData::CNAME(cname) => RecordData::Cname(canonical_name(&cname.0)),
        RData::NS(ns) => RecordData::Ns(canonical_name(&ns.0)),
        RData::PTR(ptr) => RecordData::Ptr(canonical_name(&ptr.0)),
        RData::SOA(soa) => RecordData::Soa {
            mname: canonical_name(&soa.mname),
        },
        RData::TLSA(tlsa) => RecordData::Tlsa {
            usage: tlsa.cert_usage.into(),
            selector: tlsa.selector.into(),
            matching: tlsa.matching.into(),
            data: tlsa.cert_data.clone(),
        },
        // A DNSKEY is parsed or opaque depending on hickory's DNSSEC feature (which another
        // crate of the build may turn on): read its first two octets, the flags (RFC 4034 §2.1),
        // from the wire form either way.
        data if data.record_type() == HickoryType::DNSKEY => {
            use hickory_resolver::proto::serialize::binary::BinEncodable as _;
            match data.to_bytes().ok()?.as_slice() {
                [a, b, ..] => RecordData::Dnskey {
                    flags: u16::from_be_bytes([*a, *b]),
                },
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// True for failures worth another attempt (the network, not the server's answer).
pub(crate) fn is_retryable(error: &DnsError) -> bool {
    matches!(error, DnsError::Timeout | DnsError::Other(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(canonical("Example.TEST."), "example.test");
        assert!(query_name("").is_err());
        assert!(query_name(".").is_err());
        assert!(query_name(&"a".repeat(64)).is_err());
        assert!(query_name(&format!("{}.test", "a.".repeat(130))).is_err());
        assert_eq!(
            query_name("Mail.Example.test").unwrap().to_ascii(),
            "Mail.Example.test."
        );
        assert_eq!(
            query_name("foo:bar/baz.example.com").unwrap().num_labels(),
            3
        );
        assert!(query_name("a..b").is_err());
        let odd = query_name("Foo:Bar/baz.example.com.").unwrap();
        assert_eq!(canonical_name(&odd), "foo:bar/baz.example.com");
        assert_eq!(canonical_name(&Name::root()), "");
    }
}
