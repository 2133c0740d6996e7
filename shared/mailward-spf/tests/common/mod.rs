//! Test support: an in-memory [`DnsResolver`] and loaders for the SPF vector formats.
//!
//! The fake answers like the pyspf suite driver (`testspf.py`) that the RFC 7208 vectors were
//! written against: names are case-insensitive; a name with no entries is NXDOMAIN; CNAMEs are
//! followed (a loop is SERVFAIL); a bare `TIMEOUT` entry makes a query time out unless an entry of
//! the asked type came before it; `SPF` entries are served as TXT only when the name has no `TXT`
//! entry (`TXT: NONE` means "no TXT record, and do not copy SPF").

#![allow(dead_code)]

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordData, RecordType};
use serde_norway::Value;
use std::collections::HashMap;
use std::net::IpAddr;

/// One entry at a name, in order.
#[derive(Debug, Clone)]
pub enum Entry {
    Data(RecordData),
    Timeout,
    TypedTimeout(RecordType),
}

/// An in-memory zone.
#[derive(Debug, Clone, Default)]
pub struct FakeResolver {
    pub names: HashMap<String, Vec<Entry>>,
    /// Names containing this marker fail with SERVFAIL (mail-auth's convention).
    pub error_marker: Option<String>,
}

fn key(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

fn record_type(data: &RecordData) -> RecordType {
    data.record_type()
}

impl FakeResolver {
    pub fn add(&mut self, name: &str, entry: Entry) {
        self.names.entry(key(name)).or_default().push(entry);
    }

    /// Replaces every record of `data`'s type at `name` (mail-auth's cache semantics).
    pub fn replace(&mut self, name: &str, record_type: RecordType, data: Vec<RecordData>) {
        let entries = self.names.entry(key(name)).or_default();
        entries.retain(|e| !matches!(e, Entry::Data(d) if self::record_type(d) == record_type));
        entries.extend(data.into_iter().map(Entry::Data));
    }

    pub fn txt(&mut self, name: &str, text: &str) {
        self.add(
            name,
            Entry::Data(RecordData::Txt(vec![text.as_bytes().to_vec()])),
        );
    }

    pub fn a(&mut self, name: &str, ip: &str) {
        self.add(name, Entry::Data(RecordData::A(ip.parse().expect("ipv4"))));
    }

    pub fn aaaa(&mut self, name: &str, ip: &str) {
        self.add(
            name,
            Entry::Data(RecordData::Aaaa(ip.parse().expect("ipv6"))),
        );
    }

    pub fn mx(&mut self, name: &str, preference: u16, exchange: &str) {
        self.add(
            name,
            Entry::Data(RecordData::Mx {
                preference,
                exchange: key(exchange),
            }),
        );
    }

    pub fn timeout(&mut self, name: &str) {
        self.add(name, Entry::Timeout);
    }

    fn lookup_sync(&self, name: &str, qtype: RecordType) -> Result<Answer, DnsError> {
        let mut current = key(name);
        let mut chain = Vec::new();
        for _ in 0..8 {
            if current.is_empty()
                || current.len() > 253
                || current.split('.').any(|l| l.is_empty() || l.len() > 63)
            {
                return Err(DnsError::InvalidName(current));
            }
            if let Some(marker) = &self.error_marker
                && current.contains(marker.as_str())
            {
                return Err(DnsError::ServFail);
            }
            let Some(entries) = self.names.get(&current) else {
                return Err(DnsError::NxDomain);
            };
            let mut records = Vec::new();
            let mut cname = None;
            let mut seen_type = false;
            for entry in entries {
                match entry {
                    Entry::Timeout => {
                        if !seen_type {
                            return Err(DnsError::Timeout);
                        }
                        break;
                    }
                    Entry::TypedTimeout(t) if *t == qtype => return Err(DnsError::Timeout),
                    Entry::TypedTimeout(_) => {}
                    Entry::Data(RecordData::Cname(target)) if qtype != RecordType::Cname => {
                        cname = Some(target.clone());
                    }
                    Entry::Data(data) => {
                        if record_type(data) == qtype {
                            seen_type = true;
                            records.push(data.clone());
                        }
                    }
                }
            }
            if records.is_empty()
                && let Some(target) = cname
            {
                chain.push(key(&target));
                current = key(&target);
                continue;
            }
            return Ok(Answer {
                records,
                cname_chain: chain,
                ttl: Some(300),
            });
        }
        Err(DnsError::ServFail)
    }
}

#[async_trait]
impl DnsResolver for FakeResolver {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.lookup_sync(name, record_type)
    }
}

/// Reads a YAML scalar as text (some `spec`/`helo` values parse as numbers).
pub fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn txt_strings(value: &Value) -> Option<Vec<Vec<u8>>> {
    match value {
        Value::String(s) => Some(vec![s.as_bytes().to_vec()]),
        Value::Sequence(items) => Some(
            items
                .iter()
                .filter_map(text)
                .map(|s| s.into_bytes())
                .collect(),
        ),
        _ => None,
    }
}

/// Builds the zone of one openspf scenario (`zonedata`), as pyspf's driver does.
pub fn zone_from_openspf(zonedata: &Value) -> FakeResolver {
    let mut zone = FakeResolver::default();
    let Value::Mapping(names) = zonedata else {
        return zone;
    };
    for (name, entries) in names {
        let name = text(name).unwrap_or_default();
        let Value::Sequence(entries) = entries else {
            continue;
        };
        let has_txt = entries.iter().any(|e| e.get("TXT").is_some());
        let mut generated = Vec::new();
        // Make sure the name exists even when it only has SPF-type data.
        zone.names.entry(key(&name)).or_default();
        for entry in entries {
            if text(entry).as_deref() == Some("TIMEOUT") {
                zone.add(&name, Entry::Timeout);
                continue;
            }
            let Value::Mapping(map) = entry else { continue };
            for (kind, value) in map {
                let kind = text(kind).unwrap_or_default();
                if text(value).as_deref() == Some("NONE") {
                    continue;
                }
                if text(value).as_deref() == Some("TIMEOUT") {
                    if let Some(t) = type_of(&kind) {
                        zone.add(&name, Entry::TypedTimeout(t));
                    }
                    continue;
                }
                match kind.as_str() {
                    "SPF" if !has_txt => {
                        if let Some(strings) = txt_strings(value) {
                            generated.push(RecordData::Txt(strings));
                        }
                    }
                    "TXT" => {
                        if let Some(strings) = txt_strings(value) {
                            zone.add(&name, Entry::Data(RecordData::Txt(strings)));
                        }
                    }
                    "A" => {
                        if let Some(ip) = text(value).and_then(|s| s.parse().ok()) {
                            zone.add(&name, Entry::Data(RecordData::A(ip)));
                        }
                    }
                    "AAAA" => {
                        if let Some(ip) = text(value).and_then(|s| s.parse().ok()) {
                            zone.add(&name, Entry::Data(RecordData::Aaaa(ip)));
                        }
                    }
                    "MX" => {
                        if let Value::Sequence(pair) = value {
                            let preference = pair
                                .first()
                                .and_then(Value::as_u64)
                                .and_then(|p| u16::try_from(p).ok())
                                .unwrap_or(0);
                            let exchange = pair.get(1).and_then(text).unwrap_or_default();
                            zone.add(
                                &name,
                                Entry::Data(RecordData::Mx {
                                    preference,
                                    exchange: key(&exchange),
                                }),
                            );
                        }
                    }
                    "PTR" => {
                        if let Some(target) = text(value) {
                            zone.add(&name, Entry::Data(RecordData::Ptr(key(&target))));
                        }
                    }
                    "CNAME" => {
                        if let Some(target) = text(value) {
                            zone.add(&name, Entry::Data(RecordData::Cname(key(&target))));
                        }
                    }
                    _ => {}
                }
            }
        }
        for data in generated {
            zone.add(&name, Entry::Data(data));
        }
    }
    zone
}

fn type_of(kind: &str) -> Option<RecordType> {
    Some(match kind {
        "A" => RecordType::A,
        "AAAA" => RecordType::Aaaa,
        "MX" => RecordType::Mx,
        "TXT" | "SPF" => RecordType::Txt,
        "PTR" => RecordType::Ptr,
        "CNAME" => RecordType::Cname,
        _ => return None,
    })
}

/// One openspf test case.
#[derive(Debug, Clone)]
pub struct OpenSpfCase {
    pub id: String,
    pub helo: String,
    pub host: IpAddr,
    pub mailfrom: String,
    pub results: Vec<String>,
    pub explanation: Option<String>,
    pub zone_index: usize,
}

/// Loads an openspf suite file: the zones and the cases.
pub fn load_openspf(path: &str) -> (Vec<FakeResolver>, Vec<OpenSpfCase>) {
    let source = std::fs::read_to_string(path).expect("read suite");
    let mut zones = Vec::new();
    let mut cases = Vec::new();
    for document in serde_norway::Deserializer::from_str(&source) {
        let value: Value = serde::Deserialize::deserialize(document).expect("parse YAML document");
        let description = value.get("description").and_then(text).unwrap_or_default();
        let zone_index = zones.len();
        zones.push(zone_from_openspf(
            value.get("zonedata").unwrap_or(&Value::Null),
        ));
        let Some(Value::Mapping(tests)) = value.get("tests") else {
            continue;
        };
        for (name, test) in tests {
            let name = text(name).unwrap_or_default();
            let field = |k: &str| test.get(k).and_then(text).unwrap_or_default();
            let results = match test.get("result") {
                Some(Value::Sequence(items)) => items.iter().filter_map(text).collect(),
                Some(v) => text(v).into_iter().collect(),
                None => Vec::new(),
            };
            cases.push(OpenSpfCase {
                id: format!("{description}/{name}"),
                helo: field("helo"),
                host: field("host").parse().expect("host is an IP"),
                mailfrom: field("mailfrom"),
                results,
                explanation: test.get("explanation").and_then(text),
                zone_index,
            });
        }
    }
    (zones, cases)
}
