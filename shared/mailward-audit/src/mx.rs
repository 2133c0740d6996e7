//! The MX dimension: the MX answer (preferences, null MX per RFC 7505), each exchange's A and
//! AAAA (asked concurrently; a CNAME shows in the answers' CNAME chain, so no extra query), and
//! `mailward_records::mx::check` for the record-level rules.
//!
//! | code | category | meaning |
//! |---|---|---|
//! | `null_mx` | info | the domain declares it accepts no mail |
//! | `no_mx_records`, `null_mx_nonzero_preference`, `duplicate_mx_host`, `mx_is_cname` | warning | from `mailward-records` |
//! | `null_mx_with_other_records`, `mx_ip_literal`, `invalid_mx_host` | error | from `mailward-records` |
//! | `mx_host_unresolvable` | warning | an exchange has neither A nor AAAA (NXDOMAIN/NODATA) |
//! | `mx_host_lookup_failed` | warning | an exchange's address lookups failed (unknown, not missing) |
//! | `mx_all_hosts_unresolvable` | error | no exchange resolves |
//! | `dns_lookup_failed` | warning | the MX lookup itself failed |

use crate::lookup::{Looked, look};
use crate::score::Dimension;
use crate::verdict::{Assessment, DNS_LOOKUP_FAILED, Findings};
use futures::future::{join, join_all};
use mailward_domain::dns::{DnsResolver, RecordType};
use mailward_records::mx::{self, MxHost};
use mailward_records::{ProblemCode, Severity};
use serde::{Deserialize, Serialize};

/// Most exchanges whose addresses are looked up (answers are attacker-controlled).
pub const MAX_HOSTS_RESOLVED: usize = 20;

/// One MX record with what its exchange resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MxRecord {
    /// Lower is tried first.
    pub preference: u16,
    /// The exchange (`.` for the null MX).
    pub exchange: String,
    /// IPv4 and IPv6 addresses found.
    pub addresses: Vec<String>,
    /// True when the exchange is a CNAME.
    pub is_cname: bool,
    /// True when it has an address, false when proven to have none, null when unknown (lookup
    /// failed or not asked).
    pub resolvable: Option<bool>,
}

/// The `mx` object of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MxResult {
    /// Score, verdict, codes and state.
    #[serde(flatten)]
    pub assessment: Assessment,
    /// The MX records by preference.
    pub records: Vec<MxRecord>,
    /// True for a null MX (RFC 7505): the domain accepts no mail.
    pub null_mx: bool,
}

/// What was asked, kept for the other dimensions (parked detection, MTA-STS coverage).
#[derive(Debug, Clone)]
pub(crate) struct MxRaw {
    pub(crate) answer: Looked,
    pub(crate) hosts: Vec<(String, Looked, Looked)>,
}

impl MxRaw {
    /// The MX records, when the lookup succeeded.
    pub(crate) fn records(&self) -> Option<Vec<MxHost>> {
        match &self.answer {
            Looked::Found(a) => Some(mx::from_answer(&a.records)),
            Looked::Absent(_) => Some(Vec::new()),
            Looked::Failed(_) => None,
        }
    }
}

/// Asks MX, then A and AAAA of every exchange concurrently.
pub(crate) async fn gather(resolver: &dyn DnsResolver, domain: &str) -> MxRaw {
    let answer = look(resolver, domain, RecordType::Mx).await;
    let mut names: Vec<String> = Vec::new();
    if let Looked::Found(a) = &answer {
        for host in mx::from_answer(&a.records) {
            if !host.is_root()
                && !names.contains(&host.exchange)
                && names.len() < MAX_HOSTS_RESOLVED
            {
                names.push(host.exchange);
            }
        }
    }
    let hosts = join_all(names.into_iter().map(|name| async move {
        let (v4, v6) = join(
            look(resolver, &name, RecordType::A),
            look(resolver, &name, RecordType::Aaaa),
        )
        .await;
        (name, v4, v6)
    }))
    .await;
    MxRaw { answer, hosts }
}

fn addresses(looked: &Looked) -> Vec<String> {
    match looked {
        Looked::Found(a) => a
            .records
            .iter()
            .filter_map(|r| r.ip())
            .map(|ip| ip.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn via_cname(looked: &Looked) -> bool {
    match looked {
        Looked::Found(a) | Looked::Absent(a) => !a.cname_chain.is_empty(),
        Looked::Failed(_) => false,
    }
}

/// Builds the `mx` object.
pub(crate) fn assess(raw: &MxRaw) -> MxResult {
    let mut findings = Findings::default();
    let Some(mut records) = raw.records() else {
        findings.warning(DNS_LOOKUP_FAILED);
        let status = findings.verdict();
        return MxResult {
            assessment: findings.verdict_with(Dimension::Mx, status),
            records: Vec::new(),
            null_mx: false,
        };
    };
    records.sort_by_key(|r| r.preference);
    let cname_hosts: Vec<&str> = raw
        .hosts
        .iter()
        .filter(|(_, v4, v6)| via_cname(v4) || via_cname(v6))
        .map(|(name, _, _)| name.as_str())
        .collect();
    let report = mx::check(&records, &cname_hosts);
    if report.null_mx {
        findings.info("null_mx");
    }
    for p in &report.problems {
        match p.severity {
            Severity::Error => findings.error(p.code.as_str()),
            Severity::Warning => findings.warning(p.code.as_str()),
        }
    }
    let mut views = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut any_resolves = false;
    let mut all_unresolvable = !raw.hosts.is_empty();
    for r in &records {
        if r.is_root() {
            views.push(MxRecord {
                preference: r.preference,
                exchange: ".".to_string(),
                addresses: Vec::new(),
                is_cname: false,
                resolvable: None,
            });
            continue;
        }
        if seen.contains(&r.exchange.as_str()) {
            continue;
        }
        seen.push(&r.exchange);
        let host = raw.hosts.iter().find(|(n, _, _)| *n == r.exchange);
        let (addrs, is_cname, resolvable) = match host {
            Some((_, v4, v6)) => {
                let mut addrs = addresses(v4);
                addrs.extend(addresses(v6));
                let resolvable = if !addrs.is_empty() {
                    Some(true)
                } else if v4.failed() || v6.failed() {
                    None
                } else {
                    Some(false)
                };
                (addrs, via_cname(v4) || via_cname(v6), resolvable)
            }
            None => (Vec::new(), false, None),
        };
        match resolvable {
            Some(true) => any_resolves = true,
            Some(false) => findings.warning("mx_host_unresolvable"),
            None if host.is_some() => findings.warning("mx_host_lookup_failed"),
            None => {}
        }
        if resolvable != Some(false) {
            all_unresolvable = false;
        }
        views.push(MxRecord {
            preference: r.preference,
            exchange: r.exchange.clone(),
            addresses: addrs,
            is_cname,
            resolvable,
        });
    }
    if all_unresolvable && !any_resolves {
        findings.error("mx_all_hosts_unresolvable");
    }
    let status = findings.verdict();
    MxResult {
        assessment: findings.verdict_with(Dimension::Mx, status),
        records: views,
        null_mx: report.null_mx,
    }
}
