//! Conversions from the port's record data to hickory records, and name helpers.

use crate::FixtureError;
use hickory_server::proto::rr::rdata::{A, AAAA, CNAME, MX, NS, PTR, SOA, TXT};
use hickory_server::proto::rr::{Name, RData, RecordType as HickoryType};
use mailward_domain::dns::{RecordData, RecordType};

/// Parses an absolute name (a trailing dot is optional).
pub(crate) fn absolute(name: &str) -> Result<Name, FixtureError> {
    let trimmed = name.trim_end_matches('.');
    if trimmed.is_empty() {
        return Ok(Name::root());
    }
    let mut parsed = Name::from_ascii(trimmed)
        .or_else(|e| {
            // Any octet is legal in a label (RFC 2181 §11); the host-name parser is stricter.
            let labels: Vec<&[u8]> = trimmed.split('.').map(str::as_bytes).collect();
            if labels.iter().any(|l| l.is_empty() || l.len() > 63) {
                return Err(e);
            }
            Name::from_labels(labels)
        })
        .map_err(|e| FixtureError::Invalid(format!("{name}: {e}")))?;
    parsed.set_fqdn(true);
    Ok(parsed.to_lowercase())
}

/// Resolves a builder name against `origin`: `@` is the origin, a trailing dot means absolute,
/// anything else is relative.
pub(crate) fn relative(origin: &Name, name: &str) -> Result<Name, FixtureError> {
    if name.is_empty() || name == "@" {
        return Ok(origin.clone());
    }
    if name.ends_with('.') {
        return absolute(name);
    }
    let label =
        Name::from_ascii(name).map_err(|e| FixtureError::Invalid(format!("{name}: {e}")))?;
    label
        .append_domain(origin)
        .map(|n| n.to_lowercase())
        .map_err(|e| FixtureError::Invalid(format!("{name}: {e}")))
}

/// The canonical spelling used for fault scopes: lower-case, no trailing dot.
pub(crate) fn canonical(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The hickory type of a port type.
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

/// The hickory data for the port's record data; target names are absolute.
pub(crate) fn to_rdata(data: &RecordData) -> Result<RData, FixtureError> {
    Ok(match data {
        RecordData::A(ip) => RData::A(A(*ip)),
        RecordData::Aaaa(ip) => RData::AAAA(AAAA(*ip)),
        RecordData::Mx {
            preference,
            exchange,
        } => RData::MX(MX::new(*preference, absolute(exchange)?)),
        RecordData::Txt(strings) => txt(strings.iter().map(Vec::as_slice).collect()),
        RecordData::Cname(target) => RData::CNAME(CNAME(absolute(target)?)),
        RecordData::Ns(target) => RData::NS(NS(absolute(target)?)),
        RecordData::Ptr(target) => RData::PTR(PTR(absolute(target)?)),
        RecordData::Soa { mname } => {
            let mname = absolute(mname)?;
            let rname = relative(&mname, "hostmaster")?;
            RData::SOA(SOA::new(mname, rname, 1, 3600, 600, 86400, 60))
        }
        RecordData::Tlsa {
            usage,
            selector,
            matching,
            data,
        } => RData::TLSA(hickory_server::proto::rr::rdata::TLSA::new(
            (*usage).into(),
            (*selector).into(),
            (*matching).into(),
            data.clone(),
        )),
        RecordData::Dnskey { flags } => dnskey(*flags),
    })
}

/// A DNSKEY record (served as opaque data: the fixture signs nothing) with `flags`, protocol 3,
/// algorithm 15 (Ed25519) and a 32-byte key of zeros. Enough to mark a zone as signed for a
/// reader that looks for the key.
pub(crate) fn dnskey(flags: u16) -> RData {
    let mut bytes = flags.to_be_bytes().to_vec();
    bytes.extend([3, 15]);
    bytes.extend([0u8; 32]);
    RData::Unknown {
        code: HickoryType::DNSKEY,
        rdata: hickory_server::proto::rr::rdata::NULL::with(bytes),
    }
}

/// TXT data; no strings at all cannot go on the wire (clients reject an empty RDATA), so it is
/// served as one empty string.
pub(crate) fn txt(strings: Vec<&[u8]>) -> RData {
    if strings.is_empty() {
        RData::TXT(TXT::from_bytes(vec![&b""[..]]))
    } else {
        RData::TXT(TXT::from_bytes(strings))
    }
}
