//! The IANA bootstrap registry for DNS (RFC 9224 §4): `{"services": [[[labels…], [base URLs…]],
//! …]}`. A name is served by the entry whose label sequence is its longest matching suffix
//! (`co.uk` before `uk`), compared without case; the query is `<base URL>domain/<name>`
//! (RFC 9082 §3.1.3), each base URL ending with `/` (RFC 9224 §3: one is added when missing).

use serde_json::Value;
use std::collections::HashMap;

/// The bootstrap registry as read: each entry's suffix mapped to its service's base URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bootstrap {
    /// Lower-case suffix without a trailing dot → index into `services`.
    entries: HashMap<String, usize>,
    /// Each service's base URLs, in the file's order, each ending with `/`.
    services: Vec<Vec<String>>,
}

impl Bootstrap {
    /// Reads a `dns.json` body. Fails when it is not JSON or has no `services` array; a
    /// malformed service inside it is skipped (one bad entry must not hide every other TLD).
    /// When two services list the same suffix, the first keeps it.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        let document: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
        let services = document
            .get("services")
            .and_then(Value::as_array)
            .ok_or("no \"services\" array")?;
        let mut out = Self::default();
        for service in services {
            let Some((labels, urls)) = service_parts(service) else {
                continue;
            };
            let index = out.services.len();
            out.services.push(urls);
            for label in labels {
                out.entries.entry(label).or_insert(index);
            }
        }
        Ok(out)
    }

    /// How many suffixes the registry covers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the registry covers no suffix.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The base URLs of the service answering for `name`: the entry with the longest matching
    /// label suffix; `None` when no entry matches (no RDAP service for that TLD).
    pub fn base_urls(&self, name: &str) -> Option<&[String]> {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let mut suffix = name.as_str();
        loop {
            if let Some(index) = self.entries.get(suffix) {
                return self.services.get(*index).map(Vec::as_slice);
            }
            suffix = suffix.split_once('.')?.1;
        }
    }
}

/// An entry's lower-case labels and its usable base URLs (`None` when malformed or empty).
fn service_parts(service: &Value) -> Option<(Vec<String>, Vec<String>)> {
    let [labels, urls] = service.as_array()?.get(..2)? else {
        return None;
    };
    let labels: Vec<String> = strings(labels)
        .map(|l| l.trim().trim_matches('.').to_ascii_lowercase())
        .filter(|l| !l.is_empty())
        .collect();
    let urls: Vec<String> = strings(urls)
        .map(str::trim)
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        .map(with_slash)
        .collect();
    (!labels.is_empty() && !urls.is_empty()).then_some((labels, urls))
}

fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
}

fn with_slash(url: &str) -> String {
    if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    }
}

/// The base URLs to try, HTTPS first (RFC 9224 §3: prefer HTTPS when a service lists both),
/// otherwise in the file's order.
pub fn preferred(urls: &[String]) -> Vec<&str> {
    let (mut secure, plain): (Vec<&str>, Vec<&str>) = urls
        .iter()
        .map(String::as_str)
        .partition(|u| u.starts_with("https://"));
    secure.extend(plain);
    secure
}

/// The domain query of `name` at a service (RFC 9082 §3.1.3): `<base>domain/<name>`.
pub fn domain_url(base: &str, name: &str) -> String {
    format!(
        "{}domain/{}",
        with_slash(base),
        name.trim_end_matches('.').to_ascii_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
      "description": "RDAP bootstrap file for Domain Name System registrations",
      "publication": "2026-01-02T03:04:05Z",
      "version": "1.0",
      "services": [
        [["com", "net"], ["https://rdap.verisign.example/com/v1/"]],
        [["uk"], ["http://rdap.nominet.example/uk", "https://rdap.nominet.example/uk"]],
        [["co.uk"], ["https://rdap.second-level.example/"]],
        [["broken"]],
        "not an entry",
        [["ftp"], ["ftp://rdap.example/"]],
        [["COM"], ["https://shadow.example/"]],
        [["xn--p1ai"], ["https://rdap.rf.example/"]]
      ]
    }"#;

    fn registry() -> Bootstrap {
        Bootstrap::parse(FILE.as_bytes()).unwrap()
    }

    #[test]
    fn the_longest_matching_label_suffix_wins() {
        let r = registry();
        let check = |name: &str, expect: Option<&str>| {
            assert_eq!(
                r.base_urls(name).map(|u| preferred(u)[0].to_owned()),
                expect.map(str::to_owned),
                "{name}"
            );
        };
        check("example.com", Some("https://rdap.verisign.example/com/v1/"));
        check(
            "mail.EXAMPLE.NET.",
            Some("https://rdap.verisign.example/com/v1/"),
        );
        check("shop.co.uk", Some("https://rdap.second-level.example/"));
        check("shop.org.uk", Some("https://rdap.nominet.example/uk/"));
        check("example.xn--p1ai", Some("https://rdap.rf.example/"));
        // A suffix matches whole labels only, and a TLD without a service has none.
        check("example.notcom", None);
        check("example.org", None);
        check("example.ftp", None);
        check("example.broken", None);
    }

    #[test]
    fn malformed_entries_are_skipped_and_the_first_listing_keeps_a_suffix() {
        let r = registry();
        assert_eq!(r.len(), 5);
        assert_eq!(
            r.base_urls("a.com").unwrap(),
            ["https://rdap.verisign.example/com/v1/"]
        );
        // The slash RFC 9224 requires is added where a file forgot it.
        assert_eq!(
            r.base_urls("a.uk").unwrap(),
            [
                "http://rdap.nominet.example/uk/",
                "https://rdap.nominet.example/uk/"
            ]
        );
    }

    #[test]
    fn a_file_without_services_is_refused() {
        for body in [
            "",
            "<html>",
            "[]",
            r#"{"services": {}}"#,
            r#"{"version": "1.0"}"#,
        ] {
            assert!(Bootstrap::parse(body.as_bytes()).is_err(), "{body}");
        }
        let empty = Bootstrap::parse(br#"{"services": []}"#).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.base_urls("example.com"), None);
    }

    #[test]
    fn the_domain_query_appends_the_lower_case_name() {
        assert_eq!(
            domain_url("https://rdap.example/", "Example.COM."),
            "https://rdap.example/domain/example.com"
        );
        assert_eq!(
            domain_url("https://rdap.example/v1", "example.com"),
            "https://rdap.example/v1/domain/example.com"
        );
    }
}
