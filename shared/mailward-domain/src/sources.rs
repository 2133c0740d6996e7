//! The curated sending-source catalogue (SPEC §2.8): which services send mail on a customer's
//! behalf, and how to recognise them from SPF includes, DKIM selectors and CNAME targets, return
//! paths and MX hosts.
//!
//! The data lives in `data/sources.json` (provenance and curation rules in
//! `data/SOURCES-catalogue.md`) and is embedded at compile time, so every deployment serves the
//! same catalogue without a network fetch or a database seed step. Ids are UUID v5 over the
//! stable `external_id`, so they never change between deployments or re-imports.
//!
//! This module is pure: the HTTP layer serves [`Catalogue::filter`], [`Catalogue::spf_index`]
//! and [`Catalogue::dkim_index`], and the audit uses the `match_*` helpers.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The embedded catalogue file.
const CATALOGUE_JSON: &str = include_str!("../data/sources.json");

/// Namespace of the UUID v5 source ids: `uuid5(NAMESPACE_URL, "urn:mailward:sending-sources")`.
/// Fixed forever: changing it would change every source id clients have stored.
pub const SOURCE_ID_NAMESPACE: Uuid = Uuid::from_u128(0x2a8d_d577_9d4b_517b_aae1_c71a_ff9a_865d);

/// The `origin` given to every source of the embedded catalogue. SPEC §2.8 leaves the three
/// origin values unnamed; this is the curated one, and the only one this module produces.
pub const CURATED_ORIGIN: &str = "CURATED";

/// The stable id of a catalogue source, derived from its `external_id` so it is identical on
/// every deployment and survives re-imports.
pub fn source_id(external_id: &str) -> Uuid {
    Uuid::new_v5(&SOURCE_ID_NAMESPACE, external_id.as_bytes())
}

/// What kind of service a source is (SPEC §2.8 `category`); decides, for example, whether an MX
/// match names the mailbox provider or a gateway hiding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SourceCategory))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Category {
    /// An application that sends mail for the customer (marketing, CRM, helpdesk, billing).
    SendingTool,
    /// Hosts the customer's mailboxes.
    MailboxProvider,
    /// Virtual servers where the customer runs their own MTA.
    VpsProvider,
    /// A filtering gateway in front of (or behind) the mailbox provider.
    SecurityProvider,
    /// A transactional relay, smarthost or forwarding service.
    EmailRelay,
}

impl Category {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::SendingTool => "SENDING_TOOL",
            Category::MailboxProvider => "MAILBOX_PROVIDER",
            Category::VpsProvider => "VPS_PROVIDER",
            Category::SecurityProvider => "SECURITY_PROVIDER",
            Category::EmailRelay => "EMAIL_RELAY",
        }
    }
}

/// How well a service supports an authentication mechanism (`spf_support`, `dkim_support`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SupportLevel {
    /// Cannot be aligned with the customer's domain.
    None,
    /// Possible only on some plans, on request, or with unusual setup.
    Rare,
    /// Supported by the service's standard setup.
    Full,
}

/// A way to make the service pass aligned SPF (`spf_supported_methods`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SpfMethod {
    /// Add the prescribed mechanisms to the sending domain's own SPF record.
    Direct,
    /// Publish SPF (and usually MX) on a bounce subdomain the customer manages.
    Subdomain,
    /// Delegate a bounce subdomain to the service (usually one CNAME); it manages the SPF.
    ManagedSubdomain,
}

/// Whether the source shows up as a forwarder in DMARC reports (`forwarding_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ForwardingType {
    /// Only sends original mail.
    NotForwarder,
    /// Sends original mail and also forwards.
    Forwarder,
    /// Only forwards (for example an MX forwarding service).
    ForwarderOnly,
}

/// Review state of a source (`status`); only `ACTIVE` sources take part in indexes and matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceStatus {
    /// Curated and in use.
    Active,
    /// Proposed, awaiting review.
    PendingReview,
    /// Reviewed and refused.
    Rejected,
}

/// DNS record types used in SPF options and instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SourceRecordType))]
#[serde(rename_all = "UPPERCASE")]
pub enum RecordType {
    /// A TXT record.
    Txt,
    /// A CNAME record.
    Cname,
    /// An MX record.
    Mx,
}

/// Links to the service's own setup documentation; null where no page is known for certain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SourceDocumentation))]
#[serde(deny_unknown_fields)]
pub struct Documentation {
    /// The SPF setup page.
    pub spf: Option<String>,
    /// The DKIM setup page.
    pub dkim: Option<String>,
    /// A page covering both (domain authentication).
    pub combined: Option<String>,
}

/// The `direct` SPF option: what to add to the domain's own SPF record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SpfDirectOption {
    /// Mechanisms to add; safe to publish. Empty when the service uses its own bounce domain and
    /// an include on the customer's domain would only cost a lookup.
    pub values: Vec<String>,
    /// True when the values need a choice (region, account) so no one-click add may be offered.
    pub requires_advanced_config: Option<bool>,
}

/// One DNS record of the `subdomain` SPF option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SpfSubdomainRecord {
    /// TXT, CNAME or MX.
    #[serde(rename = "type")]
    pub record_type: RecordType,
    /// The record value; `{region}`-style placeholders mark parts the user must choose.
    pub value: String,
}

/// The `subdomain` SPF option: a bounce (MAIL FROM) subdomain carrying the service's SPF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SpfSubdomainOption {
    /// True when the subdomain is delegated to the service (CNAME), which manages its SPF.
    pub is_managed: bool,
    /// True when the user must choose something (label, region) before records can be shown.
    pub requires_user_selection: bool,
    /// The suggested subdomain label, relative to the sending domain; null when the service
    /// generates it or the user picks it.
    pub path: Option<String>,
    /// The SPF TXT value to publish at the subdomain, when the customer publishes it.
    pub value: Option<String>,
    /// Other records at the subdomain; empty when they are account-specific.
    pub dns_records: Vec<SpfSubdomainRecord>,
}

/// SPEC §2.8 `spf_support_options`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SpfSupportOptions {
    /// Add mechanisms to the domain's own record; null when not offered.
    pub direct: Option<SpfDirectOption>,
    /// Use a bounce subdomain; null when not offered.
    pub subdomain: Option<SpfSubdomainOption>,
}

/// One record of curated setup instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct InstructionRecord {
    /// TXT or CNAME for DKIM; TXT, CNAME or MX for SPF.
    #[serde(rename = "type")]
    pub record_type: RecordType,
    /// The record name.
    pub name: String,
    /// The record value.
    pub value: String,
}

/// Curated setup instructions (`dkim_instructions`, `spf_instructions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = SourceInstructions))]
#[serde(deny_unknown_fields)]
pub struct Instructions {
    /// Human-readable steps.
    pub steps: Vec<String>,
    /// Records to publish.
    pub dns_records: Vec<InstructionRecord>,
}

/// One catalogue source as the API shows it (SPEC §2.8, without the timestamps and
/// `instructions_curation`, which belong to the stored copy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Source {
    /// UUID v5 of `external_id` (namespace `SOURCE_ID_NAMESPACE`): identical on every deployment.
    pub id: Uuid,
    /// Stable slug; the key of the catalogue file.
    pub external_id: String,
    /// The service's name.
    pub name: String,
    /// An override of `name` for display.
    pub display_name: Option<String>,
    /// The service's home page.
    pub homepage: Option<String>,
    /// A logo image.
    pub logo_url: Option<String>,
    /// What kind of service it is.
    pub category: Category,
    /// Review state.
    pub status: SourceStatus,
    /// Where the entry came from; `CURATED` (`CURATED_ORIGIN`) for the embedded catalogue.
    pub origin: String,
    /// True for sources an organization defined itself; false in the catalogue.
    pub is_custom: bool,
    /// The id of the product family's main source (e.g. Mandrill → Mailchimp).
    pub parent_source_id: Option<Uuid>,
    /// True when the service can pass DMARC for the customer's domain (aligned SPF or DKIM).
    pub dmarc_support: bool,
    /// Whether it forwards.
    pub forwarding_type: ForwardingType,
    /// How well aligned SPF is supported.
    pub spf_support: SupportLevel,
    /// The ways to get aligned SPF.
    pub spf_supported_methods: Vec<SpfMethod>,
    /// Mechanisms that identify the service in an SPF record (recognition only).
    pub spf_discovery_values: Vec<String>,
    /// Mechanisms that identify it in the SPF record of a reply-to or return-path domain.
    pub spf_reply_to_discovery_values: Vec<String>,
    /// The reply-to target domain, when the service uses one.
    pub spf_reply_to_target: Option<String>,
    /// What to publish for SPF.
    pub spf_support_options: SpfSupportOptions,
    /// How well aligned DKIM is supported.
    pub dkim_support: SupportLevel,
    /// Selector conventions (some are prefixes or suffixes, e.g. `scph`, `pm`); matched against
    /// existing keys, never published.
    pub dkim_discovery_selectors: Vec<String>,
    /// A DKIM CNAME target under one of these belongs to the service.
    pub base_domains: Vec<String>,
    /// Return-path (envelope from) domains seen in aggregate reports.
    pub envelope_froms: Vec<String>,
    /// MX host domains (mailbox providers, gateways, forwarders).
    pub mx_domains: Vec<String>,
    /// Setup documentation links.
    pub documentation: Documentation,
    /// Curated DKIM setup instructions.
    pub dkim_instructions: Option<Instructions>,
    /// Curated SPF setup instructions.
    pub spf_instructions: Option<Instructions>,
    /// Confidence of a machine-proposed entry; null for curated ones.
    pub ai_confidence: Option<f64>,
}

impl Source {
    /// Every mechanism that identifies the source (discovery, reply-to and prescribed values),
    /// deduplicated in file order: the SPF index's `recognition_values`.
    pub fn spf_recognition_values(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.spf_discovery_values
            .iter()
            .chain(self.spf_reply_to_discovery_values.iter())
            .chain(self.spf_direct_values().iter())
            .filter(|v| seen.insert(v.to_ascii_lowercase()))
            .cloned()
            .collect()
    }

    /// The mechanisms prescribed for adding to the domain's own record (may be empty).
    pub fn spf_direct_values(&self) -> &[String] {
        self.spf_support_options
            .direct
            .as_ref()
            .map(|d| d.values.as_slice())
            .unwrap_or_default()
    }
}

/// The catalogue file as written by curators: sources reference their parent by `external_id`
/// and carry no id (it is derived).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceEntry {
    external_id: String,
    name: String,
    display_name: Option<String>,
    homepage: Option<String>,
    logo_url: Option<String>,
    category: Category,
    status: SourceStatus,
    is_custom: bool,
    parent_source_id: Option<String>,
    dmarc_support: bool,
    forwarding_type: ForwardingType,
    spf_support: SupportLevel,
    spf_supported_methods: Vec<SpfMethod>,
    spf_discovery_values: Vec<String>,
    spf_reply_to_discovery_values: Vec<String>,
    spf_reply_to_target: Option<String>,
    spf_support_options: SpfSupportOptions,
    dkim_support: SupportLevel,
    dkim_discovery_selectors: Vec<String>,
    base_domains: Vec<String>,
    envelope_froms: Vec<String>,
    mx_domains: Vec<String>,
    documentation: Documentation,
    #[serde(default)]
    dkim_instructions: Option<Instructions>,
    #[serde(default)]
    spf_instructions: Option<Instructions>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    version: String,
    sources: Vec<SourceEntry>,
}

/// SPEC §2.8 SPF index item, served by `GET /sources/spf-index`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SpfIndexItem {
    /// The source id.
    pub id: Uuid,
    /// The source name.
    pub name: String,
    /// A logo image.
    pub logo_url: Option<String>,
    /// The home page.
    pub homepage: Option<String>,
    /// Mechanisms prescribed for adding; safe to publish.
    pub values: Vec<String>,
    /// Every identifying mechanism, including observed-only ones; not safe to add.
    pub recognition_values: Vec<String>,
    /// True means never offer a one-click add (a choice is needed, or nothing is to be added).
    pub requires_advanced_config: bool,
}

/// SPEC §2.8 DKIM index item, served by `GET /sources/dkim-index`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DkimIndexItem {
    /// The source id.
    pub id: Uuid,
    /// The source name.
    pub name: String,
    /// A logo image.
    pub logo_url: Option<String>,
    /// The home page.
    pub homepage: Option<String>,
    /// Selector conventions matched against existing keys (not values to publish).
    pub selectors: Vec<String>,
    /// A DKIM CNAME target under one of these belongs to the source.
    pub base_domains: Vec<String>,
}

/// The loaded catalogue: a version tag and the sources, sorted by `external_id`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalogue {
    /// The file's version tag, bumped by curators on every change (usable as an ETag or a
    /// re-import marker).
    pub version: String,
    /// Every source, sorted by `external_id`.
    pub sources: Vec<Source>,
}

/// The embedded catalogue, parsed once.
///
/// # Panics
///
/// Panics if the embedded `data/sources.json` is invalid. The module's tests load that exact
/// file, so an invalid file cannot pass CI; a panic here means a build skipped the tests.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| match load(CATALOGUE_JSON) {
        Ok(catalogue) => catalogue,
        Err(error) => panic!("the embedded data/sources.json is invalid: {error}"),
    })
}

/// Parses and validates a catalogue file: derives ids, resolves parents, refuses duplicate
/// `external_id`s, unknown parents, malformed SPF mechanisms and non-https URLs. Public so a
/// catalogue from elsewhere (a store copy, a curation proposal) gets the same checks.
pub fn load(text: &str) -> Result<Catalogue, String> {
    let file: CatalogueFile =
        serde_json::from_str(text).map_err(|e| format!("cannot parse the catalogue: {e}"))?;
    if file.version.trim().is_empty() {
        return Err("the catalogue version is empty".to_owned());
    }
    let mut ids = HashSet::new();
    for entry in &file.sources {
        if !is_slug(&entry.external_id) {
            return Err(format!(
                "external_id {:?} is not a lowercase slug",
                entry.external_id
            ));
        }
        if !ids.insert(entry.external_id.as_str()) {
            return Err(format!("duplicate external_id {:?}", entry.external_id));
        }
    }
    for entry in &file.sources {
        validate_entry(entry, &ids)?;
    }
    let mut sources = Vec::with_capacity(file.sources.len());
    for entry in file.sources {
        sources.push(Source {
            id: source_id(&entry.external_id),
            parent_source_id: entry.parent_source_id.as_deref().map(source_id),
            external_id: entry.external_id,
            name: entry.name,
            display_name: entry.display_name,
            homepage: entry.homepage,
            logo_url: entry.logo_url,
            category: entry.category,
            status: entry.status,
            origin: CURATED_ORIGIN.to_owned(),
            is_custom: entry.is_custom,
            dmarc_support: entry.dmarc_support,
            forwarding_type: entry.forwarding_type,
            spf_support: entry.spf_support,
            spf_supported_methods: entry.spf_supported_methods,
            spf_discovery_values: entry.spf_discovery_values,
            spf_reply_to_discovery_values: entry.spf_reply_to_discovery_values,
            spf_reply_to_target: entry.spf_reply_to_target,
            spf_support_options: entry.spf_support_options,
            dkim_support: entry.dkim_support,
            dkim_discovery_selectors: entry.dkim_discovery_selectors,
            base_domains: entry.base_domains,
            envelope_froms: entry.envelope_froms,
            mx_domains: entry.mx_domains,
            documentation: entry.documentation,
            dkim_instructions: entry.dkim_instructions,
            spf_instructions: entry.spf_instructions,
            ai_confidence: None,
        });
    }
    sources.sort_by(|a, b| a.external_id.cmp(&b.external_id));
    Ok(Catalogue {
        version: file.version,
        sources,
    })
}

fn validate_entry(entry: &SourceEntry, ids: &HashSet<&str>) -> Result<(), String> {
    let at = |what: &str| format!("source {:?}: {what}", entry.external_id);
    if entry.name.trim().is_empty() {
        return Err(at("empty name"));
    }
    if let Some(parent) = &entry.parent_source_id
        && (parent == &entry.external_id || !ids.contains(parent.as_str()))
    {
        return Err(at(&format!("unknown parent_source_id {parent:?}")));
    }
    let direct = entry
        .spf_support_options
        .direct
        .iter()
        .flat_map(|d| d.values.iter());
    for value in entry
        .spf_discovery_values
        .iter()
        .chain(entry.spf_reply_to_discovery_values.iter())
        .chain(direct)
    {
        if !is_spf_mechanism(value) {
            return Err(at(&format!("{value:?} is not an SPF mechanism")));
        }
    }
    for domain in entry
        .base_domains
        .iter()
        .chain(entry.envelope_froms.iter())
        .chain(entry.mx_domains.iter())
    {
        if !is_domain(domain) {
            return Err(at(&format!("{domain:?} is not a lowercase domain name")));
        }
    }
    for selector in &entry.dkim_discovery_selectors {
        if selector.is_empty()
            || !selector
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(at(&format!("{selector:?} is not a DKIM selector")));
        }
    }
    let docs = &entry.documentation;
    for url in [
        &entry.homepage,
        &entry.logo_url,
        &docs.spf,
        &docs.dkim,
        &docs.combined,
    ]
    .into_iter()
    .flatten()
    {
        if !url.starts_with("https://") || url.len() <= "https://".len() || url.contains(' ') {
            return Err(at(&format!("{url:?} is not an https URL")));
        }
    }
    Ok(())
}

/// Lowercase ASCII letters, digits and single hyphens: safe in URLs and stable as a key.
fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A lowercase dotted domain name without a trailing dot (labels may contain `_`).
fn is_domain(s: &str) -> bool {
    s.len() <= 253
        && s.contains('.')
        && !s.bytes().any(|b| b.is_ascii_uppercase())
        && s.split('.')
            .all(|label| crate::names::is_label(label, true))
}

/// `include:`, `a:`, `mx:` or `exists:` with a domain-spec (macros allowed), or `ip4:`/`ip6:`
/// with an address or network. Qualifiers are not allowed: the catalogue stores mechanisms as
/// they are added, with the default `+`.
fn is_spf_mechanism(value: &str) -> bool {
    let Some((name, operand)) = value.split_once(':') else {
        return false;
    };
    match name {
        "include" | "a" | "mx" | "exists" => is_domain_spec(operand),
        "ip4" => {
            let (addr, len) = operand.split_once('/').unwrap_or((operand, "32"));
            addr.parse::<std::net::Ipv4Addr>().is_ok() && len.parse::<u8>().is_ok_and(|n| n <= 32)
        }
        "ip6" => {
            let (addr, len) = operand.split_once('/').unwrap_or((operand, "128"));
            addr.parse::<std::net::Ipv6Addr>().is_ok() && len.parse::<u16>().is_ok_and(|n| n <= 128)
        }
        _ => false,
    }
}

/// An RFC 7208 domain-spec as the catalogue uses it: a domain name whose labels may be macros
/// (`%{d}`, `%{ir}` …).
fn is_domain_spec(s: &str) -> bool {
    s.contains('.')
        && !s.ends_with('.')
        && s.split('.').all(|label| {
            !label.is_empty()
                && (label.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                }) || is_macro_label(label))
        })
}

fn is_macro_label(label: &str) -> bool {
    label.starts_with("%{")
        && label.ends_with('}')
        && label.len() > 3
        && label[2..label.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric())
}

/// Lowercases, trims whitespace and one trailing dot: DNS names compare case-insensitively.
fn normalize_name(name: &str) -> String {
    let trimmed = name.trim();
    trimmed
        .strip_suffix('.')
        .unwrap_or(trimmed)
        .to_ascii_lowercase()
}

/// True when `name` is `domain` or a subdomain of it (label boundary, not a string suffix).
fn is_under(name: &str, domain: &str) -> bool {
    name == domain
        || (name.len() > domain.len()
            && name.ends_with(domain)
            && name.as_bytes()[name.len() - domain.len() - 1] == b'.')
}

impl Catalogue {
    /// Every source, sorted by `external_id`.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The DKIM selectors to probe when a domain's own are unknown: every selector convention
    /// of the catalogue's sources, sorted and without repeats. Selectors cannot be listed from
    /// DNS, so the audit, the sweep and the records guidance all probe these.
    pub fn dkim_discovery_selectors(&self) -> Vec<String> {
        let mut selectors: Vec<String> = self
            .sources
            .iter()
            .flat_map(|s| s.dkim_discovery_selectors.iter().cloned())
            .collect();
        selectors.sort();
        selectors.dedup();
        selectors
    }

    /// The source with this id (`GET /sources/{id}`).
    pub fn by_id(&self, id: Uuid) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The source with this slug (used by curators, seeds and tests).
    pub fn by_external_id(&self, external_id: &str) -> Option<&Source> {
        self.sources
            .binary_search_by(|s| s.external_id.as_str().cmp(external_id))
            .ok()
            .and_then(|i| self.sources.get(i))
    }

    /// `GET /sources`: the sources with this status and origin; a `None` filter matches all.
    pub fn filter(&self, status: Option<SourceStatus>, origin: Option<&str>) -> Vec<&Source> {
        self.sources
            .iter()
            .filter(|s| status.is_none_or(|st| s.status == st))
            .filter(|s| origin.is_none_or(|o| s.origin == o))
            .collect()
    }

    fn active(&self) -> impl Iterator<Item = &Source> {
        self.sources
            .iter()
            .filter(|s| s.status == SourceStatus::Active)
    }

    /// `GET /sources/spf-index`: active sources with at least one SPF value. A source with no
    /// prescribed values is marked `requires_advanced_config`, so no client offers a one-click
    /// add of nothing.
    pub fn spf_index(&self) -> Vec<SpfIndexItem> {
        self.active()
            .filter_map(|s| {
                let recognition_values = s.spf_recognition_values();
                if recognition_values.is_empty() {
                    return None;
                }
                let values = s.spf_direct_values().to_vec();
                let advanced = s
                    .spf_support_options
                    .direct
                    .as_ref()
                    .and_then(|d| d.requires_advanced_config)
                    .unwrap_or(false);
                Some(SpfIndexItem {
                    id: s.id,
                    name: s.name.clone(),
                    logo_url: s.logo_url.clone(),
                    homepage: s.homepage.clone(),
                    requires_advanced_config: advanced || values.is_empty(),
                    values,
                    recognition_values,
                })
            })
            .collect()
    }

    /// `GET /sources/dkim-index`: active sources with selector conventions or base domains.
    pub fn dkim_index(&self) -> Vec<DkimIndexItem> {
        self.active()
            .filter(|s| !s.dkim_discovery_selectors.is_empty() || !s.base_domains.is_empty())
            .map(|s| DkimIndexItem {
                id: s.id,
                name: s.name.clone(),
                logo_url: s.logo_url.clone(),
                homepage: s.homepage.clone(),
                selectors: s.dkim_discovery_selectors.clone(),
                base_domains: s.base_domains.clone(),
            })
            .collect()
    }

    /// The active source an SPF term identifies. Accepts a mechanism with or without a
    /// qualifier (`include:x`, `~include:x`) or a bare include target (`x`); case and a
    /// trailing dot are ignored.
    pub fn match_spf_include(&self, value: &str) -> Option<&Source> {
        let term = value.trim();
        let term = term
            .strip_prefix(['+', '-', '~', '?'])
            .unwrap_or(term)
            .to_ascii_lowercase();
        let term = match term.split_once(':') {
            Some((name, operand)) => format!("{name}:{}", normalize_name(operand)),
            None => format!("include:{}", normalize_name(&term)),
        };
        self.active().find(|s| {
            s.spf_discovery_values
                .iter()
                .chain(s.spf_reply_to_discovery_values.iter())
                .chain(s.spf_direct_values().iter())
                .any(|v| v.eq_ignore_ascii_case(&term))
        })
    }

    /// The active source whose base domain contains a DKIM CNAME target; the most specific
    /// (longest) base domain wins.
    pub fn match_dkim_target(&self, cname_target: &str) -> Option<&Source> {
        self.longest_match(cname_target, |s| &s.base_domains)
    }

    /// The active source an MX host belongs to. The caller reads `category`: a
    /// `SECURITY_PROVIDER` hides the mailbox provider, an `EMAIL_RELAY` is a forwarder.
    pub fn match_mx(&self, host: &str) -> Option<&Source> {
        self.longest_match(host, |s| &s.mx_domains)
    }

    fn longest_match<'a>(
        &'a self,
        name: &str,
        domains: impl Fn(&'a Source) -> &'a [String],
    ) -> Option<&'a Source> {
        let name = normalize_name(name);
        self.active()
            .flat_map(|s| domains(s).iter().map(move |d| (s, d)))
            .filter(|(_, d)| is_under(&name, d))
            .max_by_key(|(_, d)| d.len())
            .map(|(s, _)| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> &'static Catalogue {
        catalogue()
    }

    fn named(external_id: &str) -> &'static Source {
        cat()
            .by_external_id(external_id)
            .unwrap_or_else(|| panic!("{external_id} missing"))
    }

    #[test]
    fn embedded_file_parses_and_has_enough_sources() {
        let c = load(CATALOGUE_JSON).expect("valid catalogue");
        assert!(c.sources.len() >= 60, "only {} sources", c.sources.len());
        assert!(!c.version.is_empty());
        println!(
            "{} sources in catalogue version {}",
            c.sources.len(),
            c.version
        );
    }

    #[test]
    fn file_is_sorted_and_ids_unique() {
        let file: CatalogueFile = serde_json::from_str(CATALOGUE_JSON).expect("parses");
        let ids: Vec<&str> = file
            .sources
            .iter()
            .map(|s| s.external_id.as_str())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "external_ids must be unique and sorted");
        let uuids: HashSet<Uuid> = cat().sources.iter().map(|s| s.id).collect();
        assert_eq!(uuids.len(), cat().sources.len());
    }

    #[test]
    fn every_catalogue_entry_is_curated_and_active() {
        for s in &cat().sources {
            assert_eq!(s.status, SourceStatus::Active, "{}", s.external_id);
            assert!(!s.is_custom, "{}", s.external_id);
            assert_eq!(s.origin, CURATED_ORIGIN);
            assert!(s.display_name.is_none() && s.logo_url.is_none());
            assert!(s.ai_confidence.is_none());
        }
    }

    #[test]
    fn spf_values_are_mechanisms_and_discovery_values_unambiguous() {
        let mut owner: std::collections::HashMap<String, &str> = Default::default();
        for s in &cat().sources {
            for v in s
                .spf_discovery_values
                .iter()
                .chain(s.spf_reply_to_discovery_values.iter())
                .chain(s.spf_direct_values().iter())
            {
                assert!(is_spf_mechanism(v), "{}: {v}", s.external_id);
                assert!(
                    v.starts_with("include:") || v.starts_with("a:") || v.starts_with("ip"),
                    "{}: {v}",
                    s.external_id
                );
            }
            for v in s.spf_recognition_values() {
                if let Some(other) = owner.insert(v.clone(), &s.external_id) {
                    panic!("{v} claimed by {other} and {}", s.external_id);
                }
            }
        }
    }

    #[test]
    fn direct_values_are_recognised_and_methods_consistent() {
        for s in &cat().sources {
            for v in s.spf_direct_values() {
                assert!(s.spf_discovery_values.contains(v), "{}: {v}", s.external_id);
            }
            let has = |m| s.spf_supported_methods.contains(&m);
            if !s.spf_direct_values().is_empty() {
                assert!(has(SpfMethod::Direct), "{}", s.external_id);
            }
            if has(SpfMethod::Subdomain) || has(SpfMethod::ManagedSubdomain) {
                assert!(
                    s.spf_support_options.subdomain.is_some(),
                    "{}",
                    s.external_id
                );
            }
            if s.spf_support == SupportLevel::None {
                assert!(s.spf_supported_methods.is_empty(), "{}", s.external_id);
            }
        }
    }

    #[test]
    fn domains_are_unambiguous_across_sources() {
        for list in [
            (|s: &Source| s.base_domains.clone()) as fn(&Source) -> Vec<String>,
            |s| s.mx_domains.clone(),
            |s| s.envelope_froms.clone(),
        ] {
            let mut owner: std::collections::HashMap<String, &str> = Default::default();
            for s in &cat().sources {
                for d in list(s) {
                    if let Some(other) = owner.insert(d.clone(), &s.external_id) {
                        panic!("{d} claimed by {other} and {}", s.external_id);
                    }
                }
            }
        }
    }

    #[test]
    fn urls_are_https_and_enums_round_trip() {
        for s in &cat().sources {
            let d = &s.documentation;
            for url in [&s.homepage, &s.logo_url, &d.spf, &d.dkim, &d.combined]
                .into_iter()
                .flatten()
            {
                assert!(url.starts_with("https://"), "{}: {url}", s.external_id);
            }
            let json = serde_json::to_value(s).expect("serializes");
            let category = json["category"].as_str().expect("string");
            assert!(
                [
                    "SENDING_TOOL",
                    "MAILBOX_PROVIDER",
                    "VPS_PROVIDER",
                    "SECURITY_PROVIDER",
                    "EMAIL_RELAY"
                ]
                .contains(&category)
            );
            for field in ["spf_support", "dkim_support"] {
                assert!(["NONE", "RARE", "FULL"].contains(&json[field].as_str().expect("str")));
            }
            assert!(
                ["NOT_FORWARDER", "FORWARDER", "FORWARDER_ONLY"]
                    .contains(&json["forwarding_type"].as_str().expect("str"))
            );
            assert_eq!(json["status"], "ACTIVE");
            let back: Source = serde_json::from_value(json).expect("round trip");
            assert_eq!(&back, s);
        }
    }

    #[test]
    fn loader_rejects_bad_files() {
        let good = serde_json::to_value(
            serde_json::from_str::<CatalogueFile>(CATALOGUE_JSON).expect("parses"),
        )
        .expect("value");
        let with = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = good.clone();
            f(&mut v);
            load(&v.to_string())
        };
        assert!(with(&|_| {}).is_ok());
        assert!(
            with(
                &|v| v["sources"][0]["spf_discovery_values"] = "[\"_spf.x.com\"]"
                    .parse::<serde_json::Value>()
                    .expect("json")
            )
            .is_err()
        );
        assert!(with(&|v| v["sources"][0]["homepage"] = "http://example.com".into()).is_err());
        assert!(
            with(&|v| v["sources"][1]["external_id"] = v["sources"][0]["external_id"].clone())
                .is_err()
        );
        assert!(with(&|v| v["sources"][0]["parent_source_id"] = "nope".into()).is_err());
        assert!(with(&|v| v["sources"][0]["surprise"] = true.into()).is_err());
        assert!(with(&|v| v["sources"][0]["id"] = "x".into()).is_err());
        assert!(with(&|v| v["sources"][0]["category"] = "OTHER".into()).is_err());
        assert!(load("not json").is_err());
    }

    #[test]
    fn ids_are_stable() {
        let expected: Uuid = "e606ec98-db70-535e-8a4b-11e430fc9c43"
            .parse()
            .expect("uuid");
        assert_eq!(named("google-workspace").id, expected);
        assert_eq!(source_id("google-workspace"), expected);
        assert_eq!(
            SOURCE_ID_NAMESPACE,
            Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:mailward:sending-sources")
        );
        assert_eq!(
            cat().by_id(expected).map(|s| s.name.as_str()),
            Some("Google Workspace")
        );
        assert_eq!(
            named("mandrill").parent_source_id,
            Some(named("mailchimp").id)
        );
    }

    #[test]
    fn match_spf_include_on_real_values() {
        let c = cat();
        let ext = |v: &str| c.match_spf_include(v).map(|s| s.external_id.as_str());
        assert_eq!(ext("include:_spf.google.com"), Some("google-workspace"));
        assert_eq!(
            ext("include:spf.protection.outlook.com"),
            Some("microsoft-365")
        );
        assert_eq!(
            ext("~INCLUDE:Spf.Protection.Outlook.com."),
            Some("microsoft-365")
        );
        assert_eq!(ext("sendgrid.net"), Some("sendgrid"));
        assert_eq!(ext("include:servers.mcsv.net"), Some("mailchimp"));
        assert_eq!(ext("include:amazonses.com"), Some("amazon-ses"));
        assert_eq!(ext("include:spf.mandrillapp.com"), Some("mandrill"));
        assert_eq!(
            ext("include:%{ir}.%{v}.%{d}.spf.has.pphosted.com"),
            Some("proofpoint")
        );
        assert_eq!(ext("include:example.com"), None);
        assert_eq!(ext("ip4:192.0.2.1"), None);
    }

    #[test]
    fn match_dkim_target_on_real_values() {
        let c = cat();
        let ext = |v: &str| c.match_dkim_target(v).map(|s| s.external_id.as_str());
        assert_eq!(ext("s1.domainkey.u123.wl.sendgrid.net"), Some("sendgrid"));
        assert_eq!(ext("s1.domainkey.u123.wl.sendgrid.net."), Some("sendgrid"));
        assert_eq!(ext("dkim2.mcsv.net"), Some("mailchimp"));
        assert_eq!(ext("abcdef123.dkim.amazonses.com"), Some("amazon-ses"));
        assert_eq!(
            ext("selector1-example-com._domainkey.example.onmicrosoft.com"),
            Some("microsoft-365")
        );
        assert_eq!(ext("zendesk1._domainkey.zendesk.com"), Some("zendesk"));
        assert_eq!(ext("notsendgrid.net"), None, "label boundary");
        assert_eq!(ext("example.com"), None);
    }

    #[test]
    fn match_mx_on_real_hosts() {
        let c = cat();
        let m = |v: &str| c.match_mx(v).map(|s| (s.external_id.as_str(), s.category));
        assert_eq!(
            m("aspmx.l.google.com"),
            Some(("google-workspace", Category::MailboxProvider))
        );
        assert_eq!(
            m("alt1.aspmx.l.google.com."),
            Some(("google-workspace", Category::MailboxProvider))
        );
        assert_eq!(
            m("example-com.mail.protection.outlook.com"),
            Some(("microsoft-365", Category::MailboxProvider))
        );
        assert_eq!(
            m("eu-smtp-inbound-1.mimecast.com"),
            Some(("mimecast", Category::SecurityProvider))
        );
        assert_eq!(
            m("mx0a-001b2d01.pphosted.com"),
            Some(("proofpoint", Category::SecurityProvider))
        );
        assert_eq!(
            m("route1.mx.cloudflare.net").map(|x| x.0),
            Some("cloudflare-email-routing")
        );
        assert_eq!(m("mx.example.com"), None);
    }

    #[test]
    fn indexes_follow_the_spec() {
        let c = cat();
        let spf = c.spf_index();
        assert!(spf.iter().all(|i| !i.recognition_values.is_empty()));
        for item in &spf {
            for v in &item.values {
                assert!(item.recognition_values.contains(v));
            }
            if item.values.is_empty() {
                assert!(item.requires_advanced_config);
            }
        }
        let google = spf
            .iter()
            .find(|i| i.name == "Google Workspace")
            .expect("google in spf index");
        assert_eq!(google.values, vec!["include:_spf.google.com".to_owned()]);
        assert!(!google.requires_advanced_config);
        let sendgrid = spf.iter().find(|i| i.name == "SendGrid").expect("sendgrid");
        assert!(sendgrid.values.is_empty() && sendgrid.requires_advanced_config);
        assert!(spf.iter().all(|i| i.name != "Klaviyo"), "no SPF value");

        let dkim = c.dkim_index();
        assert!(
            dkim.iter()
                .all(|i| !i.selectors.is_empty() || !i.base_domains.is_empty())
        );
        let m365 = dkim
            .iter()
            .find(|i| i.name == "Microsoft 365")
            .expect("m365 in dkim index");
        assert_eq!(m365.selectors, vec!["selector1", "selector2"]);
        assert!(dkim.iter().all(|i| i.name != "Barracuda Email Protection"));
        assert_eq!(
            c.filter(Some(SourceStatus::Active), None).len(),
            c.sources.len()
        );
        assert_eq!(c.filter(Some(SourceStatus::Rejected), None).len(), 0);
        assert_eq!(c.filter(None, Some("OTHER")).len(), 0);
        assert_eq!(c.filter(None, Some(CURATED_ORIGIN)).len(), c.sources.len());
    }
}

/// Where a proposal of instructions came from (SPEC §2.8 `provenance`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Provenance {
    /// The documentation page the steps were taken from.
    pub doc_url: Option<String>,
    pub doc_title: Option<String>,
    /// How the page was found (search, the vendor's docs index, a person).
    pub doc_discovered: Option<String>,
    /// The model that wrote the proposal, when a tool did.
    pub model: Option<String>,
    /// 0 to 1.
    pub confidence: Option<f64>,
    /// What a reviewing pass found doubtful.
    pub critic_notes: Option<String>,
    /// When the proposal was written (RFC 3339).
    pub generated_at: Option<String>,
}

/// The review state of one proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CurationStatus {
    Pending,
    Approved,
    Rejected,
}

/// The curation of one kind of a source's instructions (`dkim` or `spf`): the latest proposal
/// and its review. An approved proposal is what the source's instructions say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Curation {
    pub status: CurationStatus,
    pub proposal: Instructions,
    pub provenance: Provenance,
    /// When staff reviewed it (RFC 3339), and who.
    pub reviewed_at: Option<String>,
    pub reviewed_by: Option<String>,
    /// When it was proposed (RFC 3339).
    pub proposed_at: String,
}
