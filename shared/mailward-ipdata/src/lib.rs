//! Who owns a sending IP address, from open data whose licence allows redistribution:
//! - the autonomous system (number, name, the owner's domain) and the country of the network
//!   holding the address, from IPinfo Lite (an MMDB file, CC BY-SA 4.0, ipinfo.io), read with
//!   the `maxminddb` crate;
//! - the service a reverse-DNS base domain belongs to (`google.com` → "Google (Including
//!   Gmail and Google Workspace)", an email provider), from parsedmarc's
//!   `base_reverse_dns_map.csv` (Apache-2.0).
//!
//! Pure: [`IpData::new`] takes the files' bytes; lookups are in memory.

use serde::Deserialize;
use std::collections::HashMap;
use std::net::IpAddr;

/// Who owns an address's network.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Owner {
    /// The autonomous system number (`AS15169` → 15169).
    pub asn: Option<u32>,
    /// The autonomous system's name (`Google LLC`).
    pub as_name: Option<String>,
    /// The domain of the network's owner (`google.com`).
    pub as_domain: Option<String>,
    /// ISO 3166-1 alpha-2 country code of the network (`US`).
    pub country_code: Option<String>,
    /// The country's English name.
    pub country: Option<String>,
}

/// A service a reverse-DNS base domain names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// Its name (`Amazon SES`).
    pub name: String,
    /// Its kind (`SaaS`, `Email Provider`, `ISP`, …).
    pub kind: String,
}

/// The data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IpDataError {
    /// Not an MMDB file, or not one of IP ownership.
    #[error("not an IPinfo Lite MMDB file: {0}")]
    Database(String),
    /// The map is not the expected CSV.
    #[error("the reverse-DNS map is not base_reverse_dns,name,type CSV: {0}")]
    Map(String),
}

/// One IPinfo Lite record.
#[derive(Deserialize)]
struct Record<'a> {
    asn: Option<&'a str>,
    as_name: Option<&'a str>,
    as_domain: Option<&'a str>,
    country_code: Option<&'a str>,
    country: Option<&'a str>,
}

/// The loaded data.
pub struct IpData {
    reader: maxminddb::Reader<Vec<u8>>,
    services: HashMap<String, Service>,
    /// When the database was built (Unix seconds).
    pub built_at: u64,
}

impl std::fmt::Debug for IpData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpData")
            .field("built_at", &self.built_at)
            .field("services", &self.services.len())
            .finish()
    }
}

impl IpData {
    /// Reads the MMDB file and, when given, the reverse-DNS map. The database must be one of
    /// IP ownership (its type names ipinfo, or its records carry `asn`).
    pub fn new(mmdb: Vec<u8>, map_csv: Option<&str>) -> Result<Self, IpDataError> {
        let reader = maxminddb::Reader::from_source(mmdb)
            .map_err(|e| IpDataError::Database(e.to_string()))?;
        let kind = reader.metadata.database_type.to_ascii_lowercase();
        let built_at = reader.metadata.build_epoch;
        let data = Self {
            reader,
            services: map_csv.map(parse_map).transpose()?.unwrap_or_default(),
            built_at,
        };
        // A probe of a well-known network (Google's 8.8.8.0/24) must say who owns it.
        let probe = data.owner(IpAddr::from([8, 8, 8, 8]));
        if !kind.contains("ipinfo") && probe.as_ref().is_none_or(|o| o.asn.is_none()) {
            return Err(IpDataError::Database(format!(
                "database type {kind:?} carries no autonomous systems"
            )));
        }
        Ok(data)
    }

    /// Who owns `ip`'s network, when the data knows it.
    pub fn owner(&self, ip: IpAddr) -> Option<Owner> {
        let found = self.reader.lookup(ip).ok()?;
        let record: Record<'_> = found.decode().ok()??;
        Self::owner_of(&record)
    }

    /// Who owns each address's network (`None` where the data does not know). Addresses of one
    /// network share one record in the file: each record is decoded once, however many of the
    /// addresses fall in it (a report whose every row is a new address from a few networks
    /// costs a tree walk per address, not a decode).
    pub fn owners(&self, ips: impl IntoIterator<Item = IpAddr>) -> Vec<Option<Owner>> {
        let mut decoded: std::collections::HashMap<usize, Option<Owner>> =
            std::collections::HashMap::new();
        ips.into_iter()
            .map(|ip| {
                let found = self.reader.lookup(ip).ok()?;
                let offset = found.offset()?;
                decoded
                    .entry(offset)
                    .or_insert_with(|| {
                        let record: Record<'_> = found.decode().ok()??;
                        Self::owner_of(&record)
                    })
                    .clone()
            })
            .collect()
    }

    fn owner_of(record: &Record<'_>) -> Option<Owner> {
        let text = |s: Option<&str>| {
            s.map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let owner = Owner {
            asn: record.asn.and_then(|a| {
                a.trim()
                    .trim_start_matches(['A', 'a'])
                    .trim_start_matches(['S', 's'])
                    .parse()
                    .ok()
            }),
            as_name: text(record.as_name),
            as_domain: text(record.as_domain).map(|d| d.to_ascii_lowercase()),
            country_code: text(record.country_code).map(|c| c.to_ascii_uppercase()),
            country: text(record.country),
        };
        (owner != Owner::default()).then_some(owner)
    }

    /// The service a reverse-DNS base domain (`amazonses.com`) names, if the map has it.
    pub fn service(&self, base_domain: &str) -> Option<&Service> {
        self.services.get(
            base_domain
                .trim_end_matches('.')
                .to_ascii_lowercase()
                .as_str(),
        )
    }

    /// How many base domains the map names.
    pub fn services_len(&self) -> usize {
        self.services.len()
    }
}

/// `base_reverse_dns,name,type` lines (a header first); names may be quoted with `"` (and
/// `""` inside).
fn parse_map(csv: &str) -> Result<HashMap<String, Service>, IpDataError> {
    let mut lines = csv.lines();
    let header = lines
        .next()
        .unwrap_or_default()
        .trim()
        .trim_start_matches('\u{feff}');
    if header != "base_reverse_dns,name,type" {
        return Err(IpDataError::Map(format!("header {header:?}")));
    }
    let mut map = HashMap::new();
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_csv(line);
        let [base, name, kind] = fields.as_slice() else {
            return Err(IpDataError::Map(format!(
                "line {} has {} fields",
                n + 2,
                fields.len()
            )));
        };
        map.insert(
            base.trim().to_ascii_lowercase(),
            Service {
                name: name.trim().to_owned(),
                kind: kind.trim().to_owned(),
            },
        );
    }
    Ok(map)
}

fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_reads_quoted_names() {
        let map = parse_map(
            "base_reverse_dns,name,type\namazonses.com,Amazon SES,SaaS\nx.example,\"Acme, \"\"Mail\"\"\",ISP\n\n",
        )
        .unwrap();
        assert_eq!(map["amazonses.com"].name, "Amazon SES");
        assert_eq!(map["x.example"].name, "Acme, \"Mail\"");
        assert!(parse_map("domain,name\n").is_err());
        assert!(parse_map("base_reverse_dns,name,type\na,b\n").is_err());
    }

    #[test]
    fn garbage_is_not_a_database() {
        assert!(matches!(
            IpData::new(b"not an mmdb".to_vec(), None),
            Err(IpDataError::Database(_))
        ));
    }
}
