//! The DANE dimension (RFC 7672): the TLSA records at `_25._tcp.<mx host>` of each MX host
//! (`mailward_records::dane`) and whether the zones holding them are DNSSEC-signed (a DNSKEY at
//! the zone's apex: the service's resolvers do not validate, so the AD bit is not read).
//! Informational and never scored: SPEC fixes which dimensions count; absence is the verdict
//! `info`. The audit does not connect to port 25: a monitored domain's MX TLS probe matches
//! the records against the certificates its MX hosts present (`MxTlsCheck`).
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `dane_not_configured` | info | no TLSA record at any MX host (verdict `info`) |
//! | `dane_certificate_not_checked` | info | records are published; this audit did not match them against a certificate |
//! | `dane_partial` | warning | some MX hosts have usable TLSA records and others none: DANE senders deliver to those without DANE's protection |
//! | `dane_no_usable_record` | error | a host's TLSA records are all unusable for SMTP (it is as if it had none) |
//! | `dane_zone_unsigned` | error | TLSA records in a zone without DNSSEC: senders ignore them |
//! | `dns_lookup_failed` | warning | a TLSA or DNSKEY lookup failed: unknown, not missing |
//! | every `mailward_records::dane` code | its severity | e.g. `tlsa_bad_digest_length`, `tlsa_pkix_usage` |

use crate::lookup::{Looked, look};
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings, Verdict};
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use mailward_records::dane::{Tlsa, tlsa_name};
use mailward_records::{ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// MX hosts whose TLSA records are read, at most (by preference).
pub const MAX_HOSTS: usize = 5;

/// One MX host's DANE state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DaneHost {
    /// The MX host.
    pub host: String,
    /// Its TLSA records in presentation form (`3 1 1 <hex>`).
    pub records: Vec<String>,
    /// How many of them an SMTP client would use (DANE-TA or DANE-EE, well formed).
    pub usable: u32,
    /// Whether the zone holding them is DNSSEC-signed; null when it could not be told.
    pub dnssec_signed: Option<bool>,
}

/// The `dane` object of the audit (an extension beyond SPEC §2.12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DaneResult {
    /// Score (always 0), verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// Each MX host read (null MX and hosts beyond the first five left out).
    pub hosts: Vec<DaneHost>,
    /// Whether the domain's own zone is DNSSEC-signed; null when it could not be told.
    pub dnssec_signed: Option<bool>,
}

impl DaneResult {
    /// The TLSA records of `host` a DANE sender uses, parsed back: usable ones in a zone known
    /// to be signed (without DNSSEC senders ignore them, and the host is judged as any other).
    pub fn usable_records(&self, host: &str) -> Vec<Tlsa> {
        self.hosts
            .iter()
            .filter(|h| h.host.eq_ignore_ascii_case(host) && h.dnssec_signed == Some(true))
            .flat_map(|h| h.records.iter().filter_map(|r| parse_presentation(r)))
            .filter(Tlsa::is_usable)
            .collect()
    }
}

/// `3 1 1 <hex>` back into a record.
pub fn parse_presentation(text: &str) -> Option<Tlsa> {
    let mut parts = text.split_whitespace();
    let mut number = || parts.next()?.parse::<u8>().ok();
    let (usage, selector, matching) = (number()?, number()?, number()?);
    let hex: String = parts.collect();
    let data = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    Some(Tlsa {
        usage,
        selector,
        matching,
        data,
    })
}

/// What was looked up.
pub(crate) struct DaneRaw {
    /// Each host's TLSA answer and the DNSKEY answers from its parent zone upwards.
    hosts: Vec<(String, Looked, Vec<Looked>)>,
    /// The domain's own DNSKEY.
    domain_key: Looked,
}

/// The zones a host's records may sit in, nearest first: its parents down to two labels.
fn zones_of(host: &str) -> Vec<String> {
    let labels: Vec<&str> = host.trim_end_matches('.').split('.').collect();
    (1..labels.len().saturating_sub(1))
        .map(|i| labels[i..].join("."))
        .take(3)
        .collect()
}

/// Looks up the TLSA records of the MX hosts (already known) and the DNSKEYs.
pub(crate) async fn gather(resolver: &dyn DnsResolver, domain: &str, hosts: &[String]) -> DaneRaw {
    let hosts = hosts.iter().take(MAX_HOSTS).map(|host| async move {
        let tlsa = look(resolver, &tlsa_name(host), RecordType::Tlsa).await;
        let mut keys = Vec::new();
        if matches!(tlsa, Looked::Found(_)) {
            for zone in zones_of(host) {
                let key = look(resolver, &zone, RecordType::Dnskey).await;
                let found = matches!(key, Looked::Found(_));
                keys.push(key);
                if found {
                    break;
                }
            }
        }
        (host.clone(), tlsa, keys)
    });
    let (hosts, domain_key) = futures::future::join(
        futures::future::join_all(hosts),
        look(resolver, domain, RecordType::Dnskey),
    )
    .await;
    DaneRaw { hosts, domain_key }
}

fn signed(keys: &[Looked]) -> Option<bool> {
    if keys.iter().any(|k| matches!(k, Looked::Found(_))) {
        Some(true)
    } else if keys.iter().any(Looked::failed) || keys.is_empty() {
        None
    } else {
        Some(false)
    }
}

/// The DANE dimension alone (the MX answer, then the TLSA records and keys): for the records
/// guidance. `None` when the MX lookup failed.
pub async fn check(resolver: &dyn DnsResolver, domain: &str) -> Option<DaneResult> {
    let raw = crate::mx::gather(resolver, domain).await;
    let hosts: Vec<String> = raw
        .records()?
        .into_iter()
        .filter(|h| !h.is_root())
        .map(|h| h.exchange)
        .collect();
    Some(assess(&gather(resolver, domain, &hosts).await))
}

/// Whether every MX host has a usable TLSA record in a signed zone (and there is one).
pub fn protects_every_host(result: &DaneResult) -> bool {
    !result.hosts.is_empty()
        && result
            .hosts
            .iter()
            .all(|h| h.usable > 0 && h.dnssec_signed == Some(true))
}

/// Builds the `dane` object.
pub(crate) fn assess(raw: &DaneRaw) -> DaneResult {
    let mut findings = Findings::default();
    let mut hosts = Vec::new();
    let mut protected = 0;
    for (host, tlsa, keys) in &raw.hosts {
        let records: Vec<Tlsa> = match tlsa {
            Looked::Found(answer) => answer
                .records
                .iter()
                .filter_map(|r| match r {
                    RecordData::Tlsa {
                        usage,
                        selector,
                        matching,
                        data,
                    } => Some(Tlsa {
                        usage: *usage,
                        selector: *selector,
                        matching: *matching,
                        data: data.clone(),
                    }),
                    _ => None,
                })
                .collect(),
            Looked::Absent(_) => Vec::new(),
            Looked::Failed(_) => {
                findings.warning(DNS_LOOKUP_FAILED);
                continue;
            }
        };
        if records.is_empty() {
            hosts.push(DaneHost {
                host: host.clone(),
                records: Vec::new(),
                usable: 0,
                dnssec_signed: None,
            });
            continue;
        }
        for problem in records.iter().flat_map(Tlsa::problems) {
            match problem.severity {
                Severity::Error => findings.error(problem.code.as_str()),
                Severity::Warning => findings.warning(problem.code.as_str()),
            }
        }
        let usable = records.iter().filter(|r| r.is_usable()).count() as u32;
        let dnssec_signed = signed(keys);
        match (usable, dnssec_signed) {
            (0, _) => findings.error("dane_no_usable_record"),
            (_, Some(false)) => findings.error("dane_zone_unsigned"),
            (_, None) => findings.warning(DNS_LOOKUP_FAILED),
            _ => protected += 1,
        }
        hosts.push(DaneHost {
            host: host.clone(),
            records: records.iter().map(Tlsa::presentation).collect(),
            usable,
            dnssec_signed,
        });
    }
    let published = hosts.iter().any(|h| !h.records.is_empty());
    if published {
        findings.info("dane_certificate_not_checked");
        if protected > 0 && hosts.iter().any(|h| h.records.is_empty()) {
            findings.warning("dane_partial");
        }
    }
    let absent = !published && findings.warnings.is_empty();
    if absent {
        findings.info("dane_not_configured");
    }
    let status = if absent {
        Verdict::Info
    } else {
        findings.verdict()
    };
    DaneResult {
        assessment: findings.verdict_with(Dimension::Dane, status),
        hosts,
        dnssec_signed: match &raw.domain_key {
            Looked::Found(_) => Some(true),
            Looked::Absent(_) => Some(false),
            Looked::Failed(_) => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_run_from_the_hosts_parent_to_two_labels() {
        assert_eq!(
            zones_of("mx1.mail.example.com"),
            ["mail.example.com", "example.com"]
        );
        assert_eq!(zones_of("mx.example.com."), ["example.com"]);
        assert!(zones_of("localhost").is_empty());
    }

    #[test]
    fn presentation_reads_back() {
        let t = parse_presentation("3 1 1 0aFF").unwrap();
        assert_eq!(
            (t.usage, t.selector, t.matching, t.data),
            (3, 1, 1, vec![10, 255])
        );
        assert!(parse_presentation("3 1").is_none());
        assert!(parse_presentation("3 1 1 0g").is_none());
    }
}
