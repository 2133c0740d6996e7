//! External report-destination authorization (RFC 9990 §4 / RFC 9989 §4.7 "rua"/"ruf").
//!
//! Why: a receiver sends reports to a `mailto:` destination whose organizational domain differs
//! from the policy domain's only if the destination publishes a TXT record starting with
//! `v=DMARC1` at `<policy domain>._report._dmarc.<destination host>`; otherwise the reports are
//! silently dropped. Mailward's own report host must publish it for every monitored domain.
//!
//! Rules: organizational domains come from the RFC 9989 tree walk (each distinct host walked
//! once per call); at least one record starting with `v=DMARC1` authorizes (several are fine,
//! unlike policy records); NXDOMAIN/NODATA/other TXT means unauthorized; a failed lookup means
//! unknown. A DNS wildcard (`*._report._dmarc.<host>`) is answered by the server for the exact
//! name, so no separate wildcard query is needed. Only valid `mailto:` URIs are checked.

use crate::names::{DnsFailure, fold_nxdomain, normalize_domain};
use crate::parse::{DmarcRecord, parse_txt};
use crate::tree_walk::organizational_domain;
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use serde::Serialize;
use std::collections::HashMap;

/// Which tag a destination came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportTag {
    /// Aggregate reports.
    Rua,
    /// Failure reports.
    Ruf,
}

/// The verdict for one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthorizationStatus {
    /// Same organizational domain as the policy domain: no authorization record needed.
    NotRequired,
    /// The destination publishes the authorization record.
    Authorized,
    /// It does not (or the query name is too long to exist): receivers drop the reports.
    Unauthorized,
    /// A lookup failed; we could not find out.
    Unknown,
}

/// One `mailto:` destination and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DestinationCheck {
    /// The tag it came from.
    pub tag: ReportTag,
    /// The URI as written.
    pub uri: String,
    /// The destination host.
    pub host: String,
    /// The destination's organizational domain, when it could be determined.
    pub host_org_domain: Option<String>,
    /// The name queried for the authorization record, when one was queried.
    pub query_name: Option<String>,
    /// The verdict.
    pub status: AuthorizationStatus,
    /// The failure behind `unknown`.
    pub failure: Option<DnsFailure>,
}

/// Checks every valid `mailto:` destination in `record`'s `rua` and `ruf` for `policy_domain`
/// (the domain that published the record). `policy_org_domain` may be passed when already
/// known (for example from [`crate::discover_policy`]); otherwise it is walked.
pub async fn check_report_destinations(
    resolver: &dyn DnsResolver,
    policy_domain: &str,
    policy_org_domain: Option<&str>,
    record: &DmarcRecord,
) -> Vec<DestinationCheck> {
    let policy_domain = normalize_domain(policy_domain).unwrap_or_default();
    let policy_org: Result<String, DnsFailure> = match policy_org_domain {
        Some(org) => normalize_domain(org).ok_or(DnsFailure::InvalidName),
        None if policy_domain.is_empty() => Err(DnsFailure::InvalidName),
        None => organizational_domain(resolver, &policy_domain).await,
    };
    let mut org_cache: HashMap<String, Result<String, DnsFailure>> = HashMap::new();
    let mut auth_cache: HashMap<String, (AuthorizationStatus, Option<DnsFailure>)> = HashMap::new();
    let mut out = Vec::new();
    let uris = record
        .rua
        .iter()
        .map(|u| (ReportTag::Rua, u))
        .chain(record.ruf.iter().map(|u| (ReportTag::Ruf, u)));
    for (tag, uri) in uris {
        let Some(host) = uri.host.clone().filter(|_| uri.valid) else {
            continue;
        };
        let host_org = match org_cache.get(&host) {
            Some(cached) => cached.clone(),
            None => {
                let result = if host == policy_domain {
                    Ok(policy_domain.clone())
                } else {
                    organizational_domain(resolver, &host).await
                };
                org_cache.insert(host.clone(), result.clone());
                result
            }
        };
        let mut check = DestinationCheck {
            tag,
            uri: uri.raw.clone(),
            host: host.clone(),
            host_org_domain: host_org.as_ref().ok().cloned(),
            query_name: None,
            status: AuthorizationStatus::NotRequired,
            failure: None,
        };
        if host == policy_domain {
            out.push(check);
            continue;
        }
        match (&policy_org, &host_org) {
            (Ok(a), Ok(b)) if a == b => {
                out.push(check);
                continue;
            }
            (Err(failure), _) | (_, Err(failure)) => {
                // Requirement unknown: ask anyway; a record settles it, its absence does not.
                check.failure = Some(failure.clone());
            }
            _ => {}
        }
        let query_name = format!("{policy_domain}._report._dmarc.{host}");
        let (status, failure) = match auth_cache.get(&host) {
            Some(cached) => cached.clone(),
            None => {
                let result = authorization_lookup(resolver, &query_name).await;
                auth_cache.insert(host.clone(), result.clone());
                result
            }
        };
        check.query_name = Some(query_name);
        check.status = if check.failure.is_some() && status == AuthorizationStatus::Unauthorized {
            AuthorizationStatus::Unknown
        } else {
            status
        };
        if failure.is_some() {
            check.failure = failure;
        }
        out.push(check);
    }
    out
}

async fn authorization_lookup(
    resolver: &dyn DnsResolver,
    query_name: &str,
) -> (AuthorizationStatus, Option<DnsFailure>) {
    if normalize_domain(query_name).is_none() {
        // A name over 253 octets cannot exist in the DNS: no receiver can find a record.
        return (AuthorizationStatus::Unauthorized, None);
    }
    match fold_nxdomain(resolver.lookup(query_name, RecordType::Txt).await) {
        Err(failure) => (AuthorizationStatus::Unknown, Some(failure)),
        Ok(None) => (AuthorizationStatus::Unauthorized, None),
        Ok(Some(answer)) => {
            let authorized = answer.records.iter().any(|r| match r {
                RecordData::Txt(strings) => parse_txt(strings).is_dmarc(),
                _ => false,
            });
            if authorized {
                (AuthorizationStatus::Authorized, None)
            } else {
                (AuthorizationStatus::Unauthorized, None)
            }
        }
    }
}
