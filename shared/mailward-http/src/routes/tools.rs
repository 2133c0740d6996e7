//! DNS tools (SPEC §4.8, §2.11): DNS lookup, DNS provider detection and SPF include validation.
//! Every route here resolves DNS during the request, so each counts in the `dns` bucket (and
//! `api_key_dns` for API keys) and runs under a per-request query budget.

use crate::auth::{OptionalPrincipal, Principal};
use crate::error::ApiError;
use crate::extract::{Json, Query};
use crate::routes::dns_quota::{DnsQuota, normalize_domain};
use crate::state::AppState;
use crate::views::ErrorBody;
use axum::extract::State;
use mailward_dns::Budgeted;
use mailward_domain::dns::{DnsError, DnsResolver, RecordData, RecordType};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Queries one tool request may make.
const TOOL_QUERY_BUDGET: u32 = 60;

/// `POST /tools/dns-lookup` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DnsLookupRequest {
    /// The name to look up, e.g. `example.com` or `_dmarc.example.com`.
    #[schema(
        pattern = r"^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$",
        max_length = 253
    )]
    pub host: String,
}

/// An MX answer.
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct MxAnswer {
    /// Lower preference is tried first.
    pub preference: u16,
    /// The mail exchanger host.
    pub exchange: String,
}

/// Records found, by type; a type with no answer is absent.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[allow(non_snake_case)]
pub struct DnsRecordsByType {
    /// TXT values, each with its strings concatenated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub TXT: Option<Vec<String>>,
    /// MX records with their preference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub MX: Option<Vec<MxAnswer>>,
    /// Name servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub NS: Option<Vec<String>>,
    /// IPv4 addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub A: Option<Vec<String>>,
    /// The canonical name this host is an alias of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub CNAME: Option<Vec<String>>,
}

/// `POST /tools/dns-lookup` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DnsLookupResult {
    /// The normalised host.
    pub host: String,
    /// Answers by type.
    pub records: DnsRecordsByType,
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

/// Looks a host up in TXT, MX, NS, A and CNAME, concurrently.
#[utoipa::path(post, path = "/tools/dns-lookup", tag = "tools", request_body = DnsLookupRequest,
    description = "Optional auth. Asks TXT, MX, NS, A and CNAME for `host` concurrently; a type with \
no answer (or whose lookup failed) is absent from `records`. MX records carry their preference. \
Counts in the `dns` bucket (and `api_key_dns` with an API key).",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = DnsLookupResult), (status = 400, body = ErrorBody), (status = 429, body = crate::views::RateLimitBody)))]
pub async fn dns_lookup(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
    _quota: DnsQuota,
    Json(body): Json<DnsLookupRequest>,
) -> Result<axum::Json<DnsLookupResult>, ApiError> {
    let host = normalize_domain("host", &body.host)?;
    let resolver = Budgeted::new(state.resolver.as_ref(), TOOL_QUERY_BUDGET);
    let (txt, mx, ns, a, cname) = tokio::join!(
        records_of(&resolver, &host, RecordType::Txt),
        records_of(&resolver, &host, RecordType::Mx),
        records_of(&resolver, &host, RecordType::Ns),
        records_of(&resolver, &host, RecordType::A),
        state.resolver.lookup(&host, RecordType::Cname),
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
        NS: non_empty(
            ns.into_iter()
                .filter_map(|r| {
                    if let RecordData::Ns(n) = r {
                        Some(n)
                    } else {
                        None
                    }
                })
                .collect(),
        ),
        A: non_empty(
            a.iter()
                .filter_map(|r| r.ip().map(|ip| ip.to_string()))
                .collect(),
        ),
        CNAME: non_empty(cname),
    };
    Ok(axum::Json(DnsLookupResult { host, records }))
}

/// Query parameters naming a domain.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DomainParam {
    /// The domain, e.g. `example.com`.
    #[param(
        pattern = r"^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$",
        max_length = 253
    )]
    pub domain: String,
}

/// SPEC §2.11: a provider id from NS patterns, or null.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DetectedDnsProvider {
    /// Lowercase provider id (an open set: treat an unfamiliar id like null); null when unknown.
    pub id: Option<String>,
    /// The domain's name servers; empty when the lookup failed.
    pub nameservers: Vec<String>,
}

/// NS host suffix → provider id. Ordered: the first match wins.
const PROVIDER_PATTERNS: &[(&str, &str)] = &[
    ("ns.cloudflare.com", "cloudflare"),
    ("awsdns-", "route53"),
    ("googledomains.com", "google"),
    ("ns-cloud-", "google"),
    ("azure-dns.", "azure"),
    ("domaincontrol.com", "godaddy"),
    ("registrar-servers.com", "namecheap"),
    ("digitalocean.com", "digitalocean"),
    ("linode.com", "linode"),
    ("hetzner.com", "hetzner"),
    ("hetzner.de", "hetzner"),
    ("ovh.net", "ovh"),
    ("gandi.net", "gandi"),
    ("dnsimple.com", "dnsimple"),
    ("dnsmadeeasy.com", "dnsmadeeasy"),
    ("nsone.net", "ns1"),
    ("ultradns.", "ultradns"),
    ("akam.net", "akamai"),
    ("dynect.net", "dyn"),
    ("wixdns.net", "wix"),
    ("squarespacedns.com", "squarespace"),
    ("ui-dns.", "ionos"),
    ("vercel-dns.com", "vercel"),
    ("porkbun.com", "porkbun"),
    ("name.com", "namecom"),
    ("dnsowl.com", "namesilo"),
    ("cloudns.net", "cloudns"),
    ("easydns.", "easydns"),
    ("he.net", "hurricane_electric"),
    ("bluehost.com", "bluehost"),
    ("hostgator.com", "hostgator"),
    ("hostinger.com", "hostinger"),
    ("dns-parking.com", "hostinger"),
    ("netlify.com", "netlify"),
    ("wordpress.com", "wordpress"),
    ("shopify.com", "shopify"),
    ("one.com", "one_com"),
    ("strato.de", "strato"),
    ("transip.net", "transip"),
    ("transip.nl", "transip"),
    ("nic.ru", "ru_center"),
    ("yandex.net", "yandex"),
    ("alidns.com", "alibaba"),
    ("dnspod.net", "dnspod"),
];

/// The provider id of a set of name servers: the first pattern matching any of them.
pub fn provider_of(nameservers: &[String]) -> Option<&'static str> {
    PROVIDER_PATTERNS.iter().find_map(|(pattern, id)| {
        nameservers
            .iter()
            .any(|ns| {
                let ns = ns.trim_end_matches('.').to_ascii_lowercase();
                if pattern.ends_with('.') || pattern.ends_with('-') {
                    ns.contains(pattern)
                } else {
                    ns == *pattern || ns.ends_with(&format!(".{pattern}"))
                }
            })
            .then_some(*id)
    })
}

/// Detects the DNS provider of a domain from its NS records.
#[utoipa::path(get, path = "/dns-providers/detect", tag = "tools", params(DomainParam),
    description = "The query parameter is `domain`. `id` is a lowercase provider id from NS \
patterns (an open set; e.g. cloudflare, route53, google, azure, godaddy, namecheap), null when no \
pattern matches; `nameservers` is empty when the lookup failed. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DetectedDnsProvider), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn detect_dns_provider(
    State(state): State<AppState>,
    _caller: Principal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<DetectedDnsProvider>, ApiError> {
    let domain = normalize_domain("domain", &params.domain)?;
    let mut nameservers: Vec<String> = match state.resolver.lookup(&domain, RecordType::Ns).await {
        Ok(answer) => answer
            .records
            .into_iter()
            .filter_map(|r| {
                if let RecordData::Ns(n) = r {
                    Some(n)
                } else {
                    None
                }
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    nameservers.sort();
    nameservers.dedup();
    let id = provider_of(&nameservers).map(str::to_owned);
    Ok(axum::Json(DetectedDnsProvider { id, nameservers }))
}

/// `GET /tools/validate-include` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IncludeValidation {
    /// Whether `include:<domain>` is safe to add.
    pub valid: bool,
    /// DNS lookups the include costs, itself included (only when valid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookups: Option<u32>,
    /// Why it is not (only when invalid): an SPF problem code such as `no_spf_record`,
    /// `multiple_spf_records`, `syntax_error`, `lookup_limit_exceeded`,
    /// `void_lookup_limit_exceeded`, `include_loop`, `permissive_all` or `dns_temporary_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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

/// Validates a domain as an SPF include target.
#[utoipa::path(get, path = "/tools/validate-include", tag = "tools", params(DomainParam),
    description = "The query parameter is `domain`, the include target. Valid when it publishes \
exactly one well-formed SPF record that stays within the 10-lookup limit counting the include \
itself, and does not end in a permissive `+all`/`?all`. Counts in the DNS buckets.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = IncludeValidation), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn validate_include(
    State(state): State<AppState>,
    _caller: Principal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<IncludeValidation>, ApiError> {
    let domain = normalize_domain("domain", &params.domain)?;
    let resolver = Budgeted::new(state.resolver.as_ref(), TOOL_QUERY_BUDGET);
    let audit = mailward_spf::audit_domain(&resolver, &domain).await;
    Ok(axum::Json(judge_include(&audit)))
}

/// The provider a domain's mail is hosted by.
#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct MailboxProvider {
    /// Catalogue source id.
    pub id: uuid::Uuid,
    /// Catalogue slug, e.g. `google-workspace`.
    pub external_id: String,
    /// Display name.
    pub name: String,
}

/// `GET /tools/mailbox-provider` response.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MailboxProviderResult {
    /// The normalised domain.
    pub domain: String,
    /// The mailbox provider, or null.
    pub provider: Option<MailboxProvider>,
    /// Why `provider` is null: `no_mx`, `unknown_mx`, `security_gateway` or `dns_lookup_failed`;
    /// null when a provider was found.
    pub reason: Option<String>,
    /// The MX hosts, lowest preference first.
    pub mx: Vec<String>,
}

/// Detects the mailbox provider from the MX records.
#[utoipa::path(get, path = "/tools/mailbox-provider", tag = "tools", params(DomainParam),
    description = "Optional auth. The query parameter is `domain`. The most preferred MX host that \
matches the sending-source catalogue decides: a mailbox provider (e.g. Google Workspace, Microsoft \
365) is returned; a security gateway (e.g. Mimecast, Proofpoint) hides the provider, so the result \
is null with reason `security_gateway`; no MX (or a null MX) gives `no_mx`; unmatched hosts give \
`unknown_mx`. Counts in the DNS buckets.",
    security((), ("api_key" = []), ("session" = [])),
    responses((status = 200, body = MailboxProviderResult), (status = 400, body = ErrorBody)))]
pub async fn mailbox_provider(
    State(state): State<AppState>,
    _caller: OptionalPrincipal,
    _quota: DnsQuota,
    Query(params): Query<DomainParam>,
) -> Result<axum::Json<MailboxProviderResult>, ApiError> {
    use mailward_domain::sources::{Category, catalogue};
    let domain = normalize_domain("domain", &params.domain)?;
    let answer = state.resolver.lookup(&domain, RecordType::Mx).await;
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
    if answer.as_ref().is_err_and(is_transient) {
        return Ok(axum::Json(result(None, Some("dns_lookup_failed"))));
    }
    if hosts.is_empty() {
        return Ok(axum::Json(result(None, Some("no_mx"))));
    }
    for host in &hosts {
        if let Some(source) = catalogue().match_mx(host) {
            return Ok(axum::Json(match source.category {
                Category::SecurityProvider => result(None, Some("security_gateway")),
                _ => result(
                    Some(MailboxProvider {
                        id: source.id,
                        external_id: source.external_id.clone(),
                        name: source.name.clone(),
                    }),
                    None,
                ),
            }));
        }
    }
    Ok(axum::Json(result(None, Some("unknown_mx"))))
}

/// True for failures that mean "we could not find out" rather than "there is nothing".
pub fn is_transient(e: &DnsError) -> bool {
    !e.is_definitive()
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(dns_lookup))
        .routes(utoipa_axum::routes!(detect_dns_provider))
        .routes(utoipa_axum::routes!(validate_include))
        .routes(utoipa_axum::routes!(mailbox_provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_detected_from_name_servers() {
        let ns = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            provider_of(&ns(&["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"])),
            Some("cloudflare")
        );
        assert_eq!(provider_of(&ns(&["ns-123.awsdns-45.com"])), Some("route53"));
        assert_eq!(
            provider_of(&ns(&["ns01.domaincontrol.com."])),
            Some("godaddy")
        );
        assert_eq!(provider_of(&ns(&["ns1-01.azure-dns.com"])), Some("azure"));
        assert_eq!(provider_of(&ns(&["ns1.example.net"])), None);
        assert_eq!(
            provider_of(&ns(&["ns1.notname.com"])),
            None,
            "suffix match is on label boundaries"
        );
        assert_eq!(provider_of(&[]), None);
    }
}
