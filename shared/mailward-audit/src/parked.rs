//! Parked-domain detection.
//!
//! Why: a parked domain sends and receives no mail, so DKIM, BIMI and MX do not apply; only SPF
//! (`v=spf1 -all`) and DMARC (`p=reject`) protect it from spoofing, and the score counts only
//! those two (see [`crate::score`]).
//!
//! # Rule
//!
//! A domain is parked when either:
//! 1. **`parking_nameservers`**: one of its NS hosts is, or is under, a known parking service's
//!    zone ([`PARKING_NAMESERVER_SUFFIXES`]); or
//! 2. **`no_mail_setup`**: the MX lookup succeeded and returned a null MX (RFC 7505) or no MX
//!    at all, **and** the SPF lookup succeeded and found no SPF record or exactly
//!    `v=spf1 -all` (compared case-insensitively, surrounding and repeated spaces ignored).
//!
//! A failed MX or SPF lookup never makes a domain parked by rule 2 (unknown is not "none").

use serde::{Deserialize, Serialize};

/// Name-server zones of parking services (matched as the host itself or a suffix after a dot).
pub const PARKING_NAMESERVER_SUFFIXES: &[&str] = &[
    "sedoparking.com",
    "parkingcrew.net",
    "bodis.com",
    "above.com",
    "parklogic.com",
    "dan.com",
    "afternic.com",
    "parkingpage.namecheap.com",
    "ns.parked.com",
    "domaincontrol-parking.com",
];

/// The parked verdict and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Parking {
    /// True for a parked domain.
    pub parked: bool,
    /// `parking_nameservers` or `no_mail_setup`.
    pub reason: Option<String>,
    /// The parking service's name-server zone, for `parking_nameservers`.
    pub service: Option<String>,
}

/// What the rule looks at.
#[derive(Debug, Clone, Copy)]
pub struct ParkingInput<'a> {
    /// The NS hosts.
    pub nameservers: &'a [String],
    /// `Some(true)` null MX or no MX, `Some(false)` real MX hosts, `None` lookup failed.
    pub no_mail_exchangers: Option<bool>,
    /// `Some(None)` no SPF record, `Some(Some(record))` the record, `None` lookup failed or
    /// several records.
    pub spf_record: Option<Option<&'a str>>,
}

/// Applies the rule (see the module docs).
pub fn detect(input: ParkingInput<'_>) -> Parking {
    for ns in input.nameservers {
        let ns = ns.trim_end_matches('.').to_ascii_lowercase();
        if let Some(service) = PARKING_NAMESERVER_SUFFIXES
            .iter()
            .find(|s| ns == **s || ns.ends_with(&format!(".{s}")))
        {
            return Parking {
                parked: true,
                reason: Some("parking_nameservers".to_string()),
                service: Some((*service).to_string()),
            };
        }
    }
    let spf_closed = match input.spf_record {
        Some(None) => true,
        Some(Some(record)) => {
            let words: Vec<String> = record
                .split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect();
            words == ["v=spf1", "-all"]
        }
        None => false,
    };
    if input.no_mail_exchangers == Some(true) && spf_closed {
        return Parking {
            parked: true,
            reason: Some("no_mail_setup".to_string()),
            service: None,
        };
    }
    Parking {
        parked: false,
        reason: None,
        service: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule() {
        let ns = vec!["ns1.sedoparking.com".to_string()];
        let p = detect(ParkingInput {
            nameservers: &ns,
            no_mail_exchangers: Some(false),
            spf_record: Some(Some("v=spf1 include:x -all")),
        });
        assert_eq!(p.service.as_deref(), Some("sedoparking.com"));
        let none: Vec<String> = Vec::new();
        let closed = ParkingInput {
            nameservers: &none,
            no_mail_exchangers: Some(true),
            spf_record: Some(Some("V=SPF1   -ALL")),
        };
        assert!(detect(closed).parked);
        assert!(
            !detect(ParkingInput {
                no_mail_exchangers: None,
                ..closed
            })
            .parked
        );
        assert!(
            !detect(ParkingInput {
                spf_record: Some(Some("v=spf1 mx -all")),
                ..closed
            })
            .parked
        );
        assert!(
            !detect(ParkingInput {
                nameservers: &["notsedoparking.com".to_string()],
                no_mail_exchangers: Some(false),
                spf_record: None,
            })
            .parked
        );
    }
}
