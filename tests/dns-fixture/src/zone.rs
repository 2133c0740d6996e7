//! [`Zone`]: a zone built in code or loaded from zone-file text, turned into a hickory zone
//! handler whenever the server (re)builds its catalog.

use crate::FixtureError;
use crate::rdata::{absolute, relative, to_rdata, txt};
use hickory_server::net::runtime::TokioRuntimeProvider;
use hickory_server::proto::rr::rdata::{CNAME, MX, NS, PTR, SOA};
use hickory_server::proto::rr::{Name, RData, Record, RecordType as HickoryType};
use hickory_server::proto::serialize::txt::Parser;
use hickory_server::store::in_memory::InMemoryZoneHandler;
use hickory_server::zone_handler::{AxfrPolicy, ZoneType};
use mailward_domain::dns::RecordData;
use std::path::{Path, PathBuf};

/// The hickory zone handler the fixture serves.
pub(crate) type Handler = InMemoryZoneHandler<TokioRuntimeProvider>;

/// The default TTL of records added in code.
const DEFAULT_TTL: u32 = 300;

/// The repository's shared zone files (`tests/fixtures/zones`), for tests that load them.
pub fn fixture_zones_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/zones")
}

/// One authoritative zone. Builder methods take owner names relative to the origin (`@` is the
/// apex, a trailing dot makes a name absolute); an invalid name or address is remembered and
/// reported when the server starts, so builder chains stay panic-free.
#[derive(Debug, Clone)]
pub struct Zone {
    origin: Name,
    ttl: u32,
    serial: u32,
    records: Vec<Record>,
    errors: Vec<String>,
}

impl Zone {
    /// An empty zone for `origin` (an SOA is added when served if none is given).
    pub fn new(origin: &str) -> Self {
        let (origin, errors) = match absolute(origin) {
            Ok(name) => (name, Vec::new()),
            Err(e) => (Name::root(), vec![e.to_string()]),
        };
        Self {
            origin,
            ttl: DEFAULT_TTL,
            serial: 1,
            records: Vec::new(),
            errors,
        }
    }

    /// Parses zone-file text (RFC 1035 master format). `origin` is used when the text has no
    /// `$ORIGIN`; records need a TTL (`$TTL` or per record) and the apex needs an SOA.
    pub fn parse(text: &str, origin: Option<&str>) -> Result<Self, FixtureError> {
        Self::parse_with_path(text, None, origin)
    }

    /// Loads a zone file; without `$ORIGIN` the origin is the file name minus `.zone`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FixtureError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)?;
        let stem = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| n.strip_suffix(".zone").unwrap_or(n).to_owned());
        Self::parse_with_path(&text, Some(path.to_path_buf()), stem.as_deref())
    }

    /// Loads every `*.zone` file of a directory, in name order.
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Vec<Self>, FixtureError> {
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) == Some("zone") {
                paths.push(path);
            }
        }
        paths.sort();
        paths.iter().map(Self::load).collect()
    }

    fn parse_with_path(
        text: &str,
        path: Option<PathBuf>,
        origin: Option<&str>,
    ) -> Result<Self, FixtureError> {
        let origin = origin.map(absolute).transpose()?;
        let (origin, sets) = Parser::new(text, path, origin)
            .parse()
            .map_err(|e| FixtureError::Parse(e.to_string()))?;
        let mut zone = Self::new(&origin.to_ascii());
        for set in sets.values() {
            zone.records
                .extend(set.records_without_rrsigs().cloned().map(|mut r| {
                    r.name = r.name.to_lowercase();
                    r
                }));
        }
        Ok(zone)
    }

    /// The origin, lower-case without the trailing dot.
    pub fn origin(&self) -> String {
        crate::rdata::canonical(&self.origin.to_ascii())
    }

    /// Sets the TTL of records added after this call.
    pub fn default_ttl(mut self, ttl: u32) -> Self {
        self.ttl = ttl;
        self
    }

    /// Adds one record; `data`'s target names (MX exchange, CNAME...) are absolute.
    pub fn record(self, name: &str, data: RecordData) -> Self {
        let rdata = to_rdata(&data);
        self.push(name, rdata)
    }

    /// Adds a TXT record with one string (values over 255 bytes are split into strings of 255).
    pub fn txt(self, name: &str, value: &str) -> Self {
        let strings = value.as_bytes().chunks(255).collect();
        self.push(name, Ok(txt(strings)))
    }

    /// Adds a TXT record made of these strings, exactly as given (none: one empty string).
    pub fn txt_strings(self, name: &str, strings: &[&str]) -> Self {
        let strings = strings.iter().map(|s| s.as_bytes()).collect();
        self.push(name, Ok(txt(strings)))
    }

    /// Adds an A record.
    pub fn a(self, name: &str, ip: &str) -> Self {
        let data = ip
            .parse()
            .map(RecordData::A)
            .map_err(|_| FixtureError::Invalid(format!("IPv4 address {ip:?}")));
        self.push(name, data.and_then(|d| to_rdata(&d)))
    }

    /// Adds an AAAA record.
    pub fn aaaa(self, name: &str, ip: &str) -> Self {
        let data = ip
            .parse()
            .map(RecordData::Aaaa)
            .map_err(|_| FixtureError::Invalid(format!("IPv6 address {ip:?}")));
        self.push(name, data.and_then(|d| to_rdata(&d)))
    }

    /// Adds an MX record; `exchange` is relative to the origin unless it ends with a dot.
    pub fn mx(self, name: &str, preference: u16, exchange: &str) -> Self {
        let data = relative(&self.origin, exchange).map(|e| RData::MX(MX::new(preference, e)));
        self.push(name, data)
    }

    /// Adds a CNAME record; `target` is relative to the origin unless it ends with a dot.
    pub fn cname(self, name: &str, target: &str) -> Self {
        let data = relative(&self.origin, target).map(|t| RData::CNAME(CNAME(t)));
        self.push(name, data)
    }

    /// Adds an NS record; `target` is relative to the origin unless it ends with a dot.
    pub fn ns(self, name: &str, target: &str) -> Self {
        let data = relative(&self.origin, target).map(|t| RData::NS(NS(t)));
        self.push(name, data)
    }

    /// Adds a PTR record; `target` is relative to the origin unless it ends with a dot.
    pub fn ptr(self, name: &str, target: &str) -> Self {
        let data = relative(&self.origin, target).map(|t| RData::PTR(PTR(t)));
        self.push(name, data)
    }

    /// Adds a TLSA record (RFC 6698): usage, selector, matching type and the data in hex.
    pub fn tlsa(self, name: &str, usage: u8, selector: u8, matching: u8, hex: &str) -> Self {
        let data = (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
                    .ok_or_else(|| FixtureError::Invalid(format!("TLSA data {hex:?}")))
            })
            .collect::<Result<Vec<u8>, _>>();
        self.push(
            name,
            data.and_then(|data| {
                to_rdata(&RecordData::Tlsa {
                    usage,
                    selector,
                    matching,
                    data,
                })
            }),
        )
    }

    /// Adds a DNSKEY record (a zone key, flags 257) at `name`: marks the zone as signed for
    /// readers that look for its key (nothing is signed).
    pub fn dnskey(self, name: &str) -> Self {
        self.push(name, Ok(crate::rdata::dnskey(257)))
    }

    fn push(mut self, name: &str, data: Result<RData, FixtureError>) -> Self {
        match relative(&self.origin, name).and_then(|owner| data.map(|d| (owner, d))) {
            Ok((owner, data)) => self.records.push(Record::from_rdata(owner, self.ttl, data)),
            Err(e) => self.errors.push(e.to_string()),
        }
        self
    }

    /// The builder mistakes recorded so far (invalid names or addresses), so a caller loading
    /// foreign data can skip what the fixture cannot express instead of failing at start.
    pub fn problems(&self) -> &[String] {
        &self.errors
    }

    /// The first builder error, if any.
    pub(crate) fn check(&self) -> Result<(), FixtureError> {
        match self.errors.first() {
            Some(e) => Err(FixtureError::Invalid(format!("zone {}: {e}", self.origin))),
            None => Ok(()),
        }
    }

    /// The zone's origin as a hickory name.
    pub(crate) fn origin_name(&self) -> &Name {
        &self.origin
    }

    /// True when `name` is at or below the origin.
    pub(crate) fn contains(&self, name: &Name) -> bool {
        self.origin.zone_of(name)
    }

    /// Replaces the records of `record_type` at `name` (none: removes them).
    pub(crate) fn set(&mut self, name: &Name, record_type: HickoryType, data: Vec<RData>) {
        self.records
            .retain(|r| !(r.name == *name && r.record_type() == record_type));
        self.add(name, data);
    }

    /// Adds records at `name`.
    pub(crate) fn add(&mut self, name: &Name, data: Vec<RData>) {
        let ttl = self.ttl;
        self.records.extend(
            data.into_iter()
                .map(|d| Record::from_rdata(name.clone(), ttl, d)),
        );
        self.serial = self.serial.wrapping_add(1);
    }

    /// Removes every record at `name`, or only those of one type.
    pub(crate) fn remove(&mut self, name: &Name, record_type: Option<HickoryType>) {
        self.records
            .retain(|r| !(r.name == *name && record_type.is_none_or(|t| r.record_type() == t)));
        self.serial = self.serial.wrapping_add(1);
    }

    /// Builds the hickory handler for the zone's current records.
    pub(crate) fn handler(&self) -> Result<Handler, FixtureError> {
        self.check()?;
        let mut handler = Handler::empty(self.origin.clone(), ZoneType::Primary, AxfrPolicy::Deny);
        let has_soa = self
            .records
            .iter()
            .any(|r| r.record_type() == HickoryType::SOA && r.name == self.origin);
        if !has_soa {
            let mname = relative(&self.origin, "ns1")?;
            let rname = relative(&self.origin, "hostmaster")?;
            let soa = SOA::new(mname, rname, self.serial, 3600, 600, 86400, 60);
            handler.upsert_mut(
                Record::from_rdata(self.origin.clone(), 60, RData::SOA(soa)),
                self.serial,
            );
        }
        for record in &self.records {
            // Refused inserts (a CNAME beside other data, exact duplicates) are skipped, as a
            // real server loading such a zone would.
            if !handler.upsert_mut(record.clone(), self.serial) {
                tracing::debug!(zone = %self.origin, name = %record.name, "record not inserted");
            }
        }
        Ok(handler)
    }

    /// The zone as an RFC 1035 master file for a real authoritative server, its SOA carrying
    /// `serial`. Records the in-process server would refuse are left out the same way (a CNAME
    /// beside other data at a name, exact duplicates, names outside the zone), so both servers
    /// serve the same data.
    pub(crate) fn zone_file(&self, serial: u32) -> Result<String, FixtureError> {
        self.check()?;
        let mut out = String::new();
        let apex_soa = self.records.iter().find_map(|r| match &r.data {
            RData::SOA(soa) if r.name == self.origin => Some((r.ttl, soa.clone())),
            _ => None,
        });
        let (soa_ttl, soa) = match apex_soa {
            Some(found) => found,
            None => (
                60,
                SOA::new(
                    relative(&self.origin, "ns1")?,
                    relative(&self.origin, "hostmaster")?,
                    serial,
                    3600,
                    600,
                    86400,
                    60,
                ),
            ),
        };
        out.push_str(&format!(
            "{} {soa_ttl} IN SOA {} {} {serial} {} {} {} {}\n",
            crate::zonefile::name(&self.origin),
            crate::zonefile::name(&soa.mname),
            crate::zonefile::name(&soa.rname),
            soa.refresh,
            soa.retry,
            soa.expire,
            soa.minimum,
        ));
        let mut kept: Vec<&Record> = Vec::new();
        // The records kept so far at each owner name (a zone of 300,000 records is written in
        // well under a second; comparing each record with every kept one took hours).
        let mut at_name: std::collections::HashMap<Name, Vec<&Record>> =
            std::collections::HashMap::new();
        for record in &self.records {
            if record.record_type() == HickoryType::SOA || !self.origin.zone_of(&record.name) {
                continue;
            }
            let is_cname = record.record_type() == HickoryType::CNAME;
            let here = at_name.entry(record.name.to_lowercase()).or_default();
            // Exact duplicates, and anything beside a CNAME (RFC 1034 §3.6.2): first one wins.
            let clash = here.iter().any(|k| {
                (k.record_type() == record.record_type() && k.data == record.data)
                    || k.record_type() == HickoryType::CNAME
                    || is_cname
            });
            if clash {
                continue;
            }
            here.push(record);
            kept.push(record);
        }
        for record in kept {
            out.push_str(&crate::zonefile::line(record)?);
            out.push('\n');
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_file_keeps_the_first_of_duplicates_and_nothing_beside_a_cname() {
        let zone = Zone::new("z.test")
            .txt("a", "one")
            .txt("A", "one")
            .txt("a", "two")
            .cname("a", "elsewhere")
            .cname("b", "target")
            .txt("b", "beside")
            .txt("c", "three");
        let file = zone.zone_file(1).unwrap();
        let lines: Vec<&str> = file.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "a.z.test. 300 IN TXT \"one\"",
                "a.z.test. 300 IN TXT \"two\"",
                "b.z.test. 300 IN CNAME target.z.test.",
                "c.z.test. 300 IN TXT \"three\"",
            ],
            "{file}"
        );
    }
}
