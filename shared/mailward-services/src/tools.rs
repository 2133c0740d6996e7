//! The DNS tools (SPEC §4.8, §2.11): DNS lookup, DNS provider detection, SPF include
//! validation and mailbox-provider detection. Each runs under a per-request query budget; the
//! DNS rate-limit buckets are the edge's.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::tools::{
    DetectedDnsProvider, DnsLookupResult, DnsRecordsByType, IncludeValidation, MailboxProvider,
    MailboxProviderResult, MxAnswer,
};
use mailward_dns::Budgeted;
use mailward_domain::dns::{DnsResolver, RecordData, RecordType};
use mailward_domain::dns_providers::provider_of;
use mailward_domain::names::normalize_host;

/// Queries one tool request may make.
const TOOL_QUERY_BUDGET: u32 = 60;

/// A host from input, or 400 naming `param`.
pub fn parse_host(param: &'static str, raw: &str) -> Result<String, ServiceError> {
    normalize_host(raw).map_err(|_| {
        ServiceError::invalid(
            param,
            format!("{param} must be a domain name such as example.com"),
        )
    })
}

fn non_empty<T>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty()).then_some(items)
}

async fn records_of(
    resolver: &dyn DnsResolver,
    host: &str,
    record_type: RecordType,
) -> Vec<RecordData> {
    resolver
        .lookup(host, record_type)
        .await
        .map(|a| a.records)
        .unwrap_or_default()
}

fn name_servers(records: Vec<RecordData>) -> Vec<String> {
    records
        .into_iter()
        .filter_map(|r| match r {
            RecordData::Ns(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// Looks `host` up in TXT, MX, NS, A and CNAME, concurrently; a type with no answer (or whose
/// lookup failed) is absent.
pub async fn dns_lookup(app: &AppState, host: &str) -> Result<DnsLookupResult, ServiceError> {
    let host = parse_host("host", host)?;
    let resolver = Budgeted::new(app.resolver.as_ref(), TOOL_QUERY_BUDGET);
    let (txt, mx, ns, a, cname) = tokio::join!(
        records_of(&resolver, &host, RecordType::Txt),
        records_of(&resolver, &host, RecordType::Mx),
        records_of(&resolver, &host, RecordType::Ns),
        records_of(&resolver, &host, RecordType::A),
        resolver.lookup(&host, RecordType::Cname),
    );
    let mut mx: Vec<MxAnswer> = mx
        .into_iter()
        .filter_map(|r| match r {
            RecordData::Mx {
                preference,
                exchange,
            } => Some(MxAnswer {
                preference,
                exchange,
            }),
            _ => None,
        })
        .collect();
    mx.sort_by(|a, b| {
        a.preference
            .cmp(&b.preference)
            .then_with(|| a.exchange.cmp(&b.exchange))
    });
    let cname: Vec<String> = match cname {
        Ok(answer) => answer
            .records
            .into_iter()
            .filter_map(|r| match r {
                RecordData::Cname(target) => Some(target),
                _ => None,
            })
            .chain(answer.cname_chain.into_iter().take(1))
            .take(1)
            .collect(),
        Err(_) => Vec::new(),
    };
    let records = DnsRecordsByType {
        TXT: non_empty(txt.iter().filter_map(RecordData::txt_value).collect()),
        MX: non_empty(mx),
        NS: non_empty(name_servers(ns)),
        A: non_empty(
            a.iter()
                .filter_map(|r| r.ip().map(|ip| ip.to_string()))
                .collect(),
        ),
        CNAME: non_empty(cname),
    };
    Ok(DnsLookupResult { host, records })
}

/// The DNS host of a domain, from its NS records.
pub async fn detect_dns_provider(
    app: &AppState,
    domain: &str,
) -> Result<DetectedDnsProvider, ServiceError> {
    let domain = parse_host("domain", domain)?;
    let mut nameservers = match app.resolver.lookup(&domain, RecordType::Ns).await {
        Ok(answer) => name_servers(answer.records),
        Err(_) => Vec::new(),
    };
    nameservers.sort();
    nameservers.dedup();
    let id = provider_of(&nameservers).map(str::to_owned);
    Ok(DetectedDnsProvider { id, nameservers })
}

/// Decides validity from an audit of the include target.
pub fn judge_include(audit: &mailward_spf::SpfAudit) -> IncludeValidation {
    let lookups = audit.lookup_count.saturating_add(1);
    let blocking = audit.problems.iter().find(|p| {
        p.severity == mailward_spf::Severity::Error
            || p.code == mailward_spf::ProblemCode::PermissiveAll
    });
    if let Some(problem) = blocking {
        return IncludeValidation {
            valid: false,
            lookups: None,
            reason: Some(problem.code.as_str().to_owned()),
        };
    }
    if lookups > audit.lookup_limit {
        return IncludeValidation {
            valid: false,
            lookups: None,
            reason: Some("lookup_limit_exceeded".into()),
        };
    }
    IncludeValidation {
        valid: true,
        lookups: Some(lookups),
        reason: None,
    }
}

/// Whether `include:<domain>` is safe to add to an SPF record.
pub async fn validate_include(
    app: &AppState,
    domain: &str,
) -> Result<IncludeValidation, ServiceError> {
    let domain = parse_host("domain", domain)?;
    let resolver = Budgeted::new(app.resolver.as_ref(), TOOL_QUERY_BUDGET);
    let audit = mailward_spf::audit_domain(&resolver, &domain).await;
    Ok(judge_include(&audit))
}

/// The mailbox provider of a domain: the most preferred MX host that matches the catalogue
/// decides; a security gateway hides the provider.
pub async fn mailbox_provider(
    app: &AppState,
    domain: &str,
) -> Result<MailboxProviderResult, ServiceError> {
    use mailward_domain::sources::{Category, catalogue};
    let domain = parse_host("domain", domain)?;
    let answer = app.resolver.lookup(&domain, RecordType::Mx).await;
    let mut mx: Vec<(u16, String)> = match &answer {
        Ok(a) => a
            .records
            .iter()
            .filter_map(|r| match r {
                RecordData::Mx {
                    preference,
                    exchange,
                } if !exchange.is_empty() && exchange != "." => {
                    Some((*preference, exchange.clone()))
                }
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    mx.sort();
    let hosts: Vec<String> = mx.into_iter().map(|(_, h)| h).collect();
    let result = |provider: Option<MailboxProvider>, reason: Option<&str>| MailboxProviderResult {
        domain: domain.clone(),
        provider,
        reason: reason.map(str::to_owned),
        mx: hosts.clone(),
    };
    if answer.as_ref().is_err_and(|e| !e.is_definitive()) {
        return Ok(result(None, Some("dns_lookup_failed")));
    }
    if hosts.is_empty() {
        return Ok(result(None, Some("no_mx")));
    }
    for host in &hosts {
        if let Some(source) = catalogue().match_mx(host) {
            return Ok(match source.category {
                Category::SecurityProvider => result(None, Some("security_gateway")),
                _ => result(
                    Some(MailboxProvider {
                        id: source.id,
                        external_id: source.external_id.clone(),
                        name: source.name.clone(),
                    }),
                    None,
                ),
            });
        }
    }
    Ok(result(None, Some("unknown_mx")))
}
