//! Senders of a domain as its aggregate reports show them (SPEC §2.6 DomainSource): who a
//! report row comes from (a catalogue source, a sending domain, or a bare IP address), and the
//! stored sender with its confirmation state and figures.
//!
//! Identification is pure: it takes a row, the reverse-DNS name of its source IP (resolved
//! beforehand, outside the parse) and the catalogue. The order of evidence is strongest first:
//! a DKIM signature by the service's own domain, the envelope (return-path) domain, the
//! reverse-DNS name, and last a selector convention used under the customer's domain (only
//! when a single catalogue source uses that selector).

use crate::reports::SourceDay;
use crate::sources::{Catalogue, ForwardingType, Source};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Namespace of DomainSource ids: UUID v5 of `<domain id>/<sender key>`, so every worker that
/// identifies the same sender for the same domain writes the same item.
pub const DOMAIN_SOURCE_NAMESPACE: Uuid =
    Uuid::from_u128(0x6f1c_2b7e_0d4a_5c3e_9b8f_14a2_7e6d_c501);

/// SPEC §2.6 `confirmation_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmationStatus {
    /// A person said the sender is theirs.
    Confirmed,
    /// A person said it is not (or chose to ignore both SPF and DKIM for it).
    Discarded,
    /// Nobody decided yet.
    #[default]
    RequiresConfirmation,
}

impl ConfirmationStatus {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Discarded => "discarded",
            Self::RequiresConfirmation => "requires_confirmation",
        }
    }

    /// Parses the wire word.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "confirmed" => Some(Self::Confirmed),
            "discarded" => Some(Self::Discarded),
            "requires_confirmation" => Some(Self::RequiresConfirmation),
            _ => None,
        }
    }
}

/// SPEC §2.6 `totals`: every recorded message of the sender, split four ways.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderTotals {
    /// Passed DMARC.
    pub compliant: u64,
    /// Failed DMARC although the sender is recognised (catalogue) or confirmed: mail that
    /// enforcement would stop and that someone wants delivered.
    pub non_compliant: u64,
    /// Overridden as forwarded by the receiver, or sent through a forward-only service.
    pub forwarded: u64,
    /// Failed DMARC from a sender nobody recognised (or without an evaluation): likely spoofing.
    pub unknown: u64,
}

/// Messages and aligned passes of the recent window (the last 30 days), for the sender tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentFigures {
    pub volume: u64,
    pub dmarc_pass: u64,
    pub spf_aligned_pass: u64,
    pub dkim_aligned_pass: u64,
}

/// One sender of one domain, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainSource {
    /// UUID v5 (see [`DOMAIN_SOURCE_NAMESPACE`]).
    pub id: Uuid,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    /// What identifies the sender within the domain (see [`SenderIdentity::key`]).
    pub key: String,
    /// The catalogue source, when recognised.
    pub source_id: Option<Uuid>,
    /// The SPF mechanism that authorizes the source (its first discovery value).
    pub spf_value: Option<String>,
    pub source_name: Option<String>,
    pub source_homepage: Option<String>,
    /// The domain the sender uses (its signing, return-path or reverse-DNS domain).
    pub sending_domain: Option<String>,
    /// Selectors of the domain's own DKIM signatures seen from this sender.
    pub dkim_selectors: Vec<String>,
    pub confirmation_status: ConfirmationStatus,
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub confirmed_at: Option<OffsetDateTime>,
    /// Last report day with mail from it (YYYY-MM-DD).
    pub last_seen_at: Option<String>,
    /// Last report day on which its SPF passed aligned.
    pub last_spf_aligned_at: Option<String>,
    pub totals: SenderTotals,
    /// The last 30 days up to `recent_to`.
    #[serde(default)]
    pub recent: RecentFigures,
    /// Last day of the recent window (YYYY-MM-DD).
    #[serde(default)]
    pub recent_to: Option<String>,
    /// Source IPs seen (at most [`MAX_IPS_KEPT`]).
    #[serde(default)]
    pub ips: Vec<String>,
    /// Who owns each of `ips` (its network's autonomous system and country, its reverse-DNS
    /// name), as far as the IP data and reverse DNS say.
    #[serde(default)]
    pub networks: Vec<SourceNetwork>,
    /// Stop counting the sender against SPF (a person's choice on its confirm_source task).
    #[serde(default)]
    pub ignore_spf: bool,
    /// Stop counting it against DKIM.
    #[serde(default)]
    pub ignore_dkim: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Who owns one sending address: its forward-confirmed reverse-DNS name, and the network's
/// autonomous system and country from the IP data (IPinfo Lite), each absent when unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceNetwork {
    pub ip: String,
    /// The forward-confirmed reverse-DNS name.
    #[serde(default)]
    pub ptr: Option<String>,
    /// The service the name's base domain belongs to (parsedmarc's map), e.g. `Amazon SES`.
    #[serde(default)]
    pub ptr_service: Option<String>,
    #[serde(default)]
    pub asn: Option<u32>,
    #[serde(default)]
    pub as_name: Option<String>,
    /// The network owner's domain.
    #[serde(default)]
    pub as_domain: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[serde(default)]
    pub country_code: Option<String>,
    #[serde(default)]
    pub country: Option<String>,
}

impl SourceNetwork {
    /// `AS15169 Google LLC` (or the number alone), when the AS is known.
    pub fn as_label(&self) -> Option<String> {
        let asn = self.asn?;
        Some(match &self.as_name {
            Some(name) => format!("AS{asn} {name}"),
            None => format!("AS{asn}"),
        })
    }
}

/// Source IPs a sender keeps (the figures count every IP).
pub const MAX_IPS_KEPT: usize = 50;

impl DomainSource {
    /// The id of a sender of a domain.
    pub fn id_for(domain_id: Uuid, key: &str) -> Uuid {
        Uuid::new_v5(
            &DOMAIN_SOURCE_NAMESPACE,
            format!("{domain_id}/{key}").as_bytes(),
        )
    }

    /// Whether the catalogue recognises the sender (SPEC §2.6 `is_known`).
    pub fn is_known(&self) -> bool {
        self.source_id.is_some()
    }
}

/// Who a report row comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderIdentity {
    /// `source:<catalogue id>`, `domain:<sending domain>` or `ip:<address>`.
    pub key: String,
    /// The catalogue source, when recognised.
    pub source_id: Option<Uuid>,
    /// The domain the sender uses.
    pub sending_domain: Option<String>,
    /// Whether the source only forwards (its failures are forwarding, not spoofing).
    pub forward_only: bool,
}

/// Whether `name` is `base` or under it.
fn under(name: &str, base: &str) -> bool {
    let base = base.trim_end_matches('.');
    !base.is_empty()
        && (name.eq_ignore_ascii_case(base)
            || name
                .to_ascii_lowercase()
                .ends_with(&format!(".{}", base.to_ascii_lowercase())))
}

/// The registrable domain of a host name by the ICANN section of the Public Suffix List
/// (`data/public_suffix_list_icann.dat`): `mail.example.co.uk` → `example.co.uk`. The private
/// section is left out on purpose (it would make each cloud customer's host its own group).
/// It only groups unknown senders' reverse-DNS names for people; no policy decision rests on it
/// (the DMARC organizational domain comes from the RFC 9989 tree walk). A name the list does
/// not cover (a single label, an unknown top-level domain) keeps its last two labels.
pub fn registrable_part(host: &str) -> String {
    use publicsuffix::Psl as _;
    static LIST: std::sync::OnceLock<Option<publicsuffix::IcannList>> = std::sync::OnceLock::new();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let list = LIST.get_or_init(|| {
        include_str!("../data/public_suffix_list_icann.dat")
            .parse::<publicsuffix::List>()
            .ok()
            .map(publicsuffix::IcannList::from)
    });
    if let Some(domain) = list.as_ref().and_then(|l| l.domain(host.as_bytes()))
        && domain.suffix().is_known()
        && let Ok(text) = std::str::from_utf8(domain.as_bytes())
    {
        return text.to_owned();
    }
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    labels[labels.len().saturating_sub(2)..].join(".")
}

/// The domain and selector of a report's signer (`d/selector`).
pub fn domain_of_signer(signer: &str) -> (&str, Option<&str>) {
    match signer.split_once('/') {
        Some((d, s)) => (d, Some(s)),
        None => (signer, None),
    }
}

fn by_domain<'c>(catalogue: &'c Catalogue, name: &str, with_mx: bool) -> Option<&'c Source> {
    catalogue.sources.iter().find(|s| {
        s.base_domains
            .iter()
            .chain(s.envelope_froms.iter())
            .chain(s.mx_domains.iter().filter(|_| with_mx))
            .any(|b| under(name, b))
    })
}

fn by_selector<'c>(catalogue: &'c Catalogue, selector: &str) -> Option<&'c Source> {
    let mut matching = catalogue.sources.iter().filter(|s| {
        s.dkim_discovery_selectors
            .iter()
            .any(|c| c.eq_ignore_ascii_case(selector))
    });
    let first = matching.next()?;
    matching.next().is_none().then_some(first)
}

/// Whether a source address is in the network of a service that forwards mail (the
/// catalogue's `FORWARDER` and `FORWARDER_ONLY` sources), known by its forward-confirmed
/// reverse-DNS name or, failing that, by the domain of its autonomous system's owner.
pub fn relay_of(
    ptr: Option<&str>,
    as_domain: Option<&str>,
    catalogue: &Catalogue,
) -> Option<ForwardingType> {
    [ptr, as_domain]
        .into_iter()
        .flatten()
        .find_map(|name| by_domain(catalogue, name, true))
        .map(|s| s.forwarding_type)
        .filter(|t| *t != ForwardingType::NotForwarder)
}

/// Identifies the sender of `row`, mail of `policy_domain`, whose source IP has the
/// reverse-DNS name `ptr` (when one was found). Only verified DKIM signatures count as
/// evidence.
pub fn identify(
    row: &SourceDay,
    ptr: Option<&str>,
    policy_domain: &str,
    catalogue: &Catalogue,
) -> SenderIdentity {
    let own = |name: &str| under(name, policy_domain) || under(policy_domain, name);
    let foreign_signers: Vec<&str> = row
        .dkim_passing
        .iter()
        .map(|s| domain_of_signer(s).0)
        .filter(|d| !own(d))
        .collect();
    let envelope = row.envelope_from.as_deref().filter(|e| !own(e));
    let found = foreign_signers
        .iter()
        .find_map(|d| by_domain(catalogue, d, false).map(|s| (s, Some((*d).to_owned()))))
        .or_else(|| {
            envelope.and_then(|e| by_domain(catalogue, e, false).map(|s| (s, Some(e.to_owned()))))
        })
        .or_else(|| {
            ptr.and_then(|p| by_domain(catalogue, p, true).map(|s| (s, Some(registrable_part(p)))))
        })
        .or_else(|| {
            row.dkim_passing
                .iter()
                .map(|s| domain_of_signer(s))
                .filter(|(d, _)| own(d))
                .find_map(|(_, sel)| sel.and_then(|sel| by_selector(catalogue, sel)))
                .map(|s| (s, None))
        });
    if let Some((source, sending)) = found {
        return SenderIdentity {
            key: format!("source:{}", source.id),
            source_id: Some(source.id),
            sending_domain: sending.or_else(|| source.base_domains.first().cloned()),
            forward_only: source.forwarding_type == ForwardingType::ForwarderOnly,
        };
    }
    let sending = ptr
        .map(registrable_part)
        .filter(|d| !d.is_empty())
        .or_else(|| envelope.map(registrable_part))
        .or_else(|| foreign_signers.first().map(|d| registrable_part(d)));
    match sending {
        Some(d) => SenderIdentity {
            key: format!("domain:{d}"),
            source_id: None,
            sending_domain: Some(d),
            forward_only: false,
        },
        None => SenderIdentity {
            key: format!("ip:{}", row.source_ip),
            source_id: None,
            sending_domain: None,
            forward_only: false,
        },
    }
}

/// The selectors of the domain's own signatures in a row (`d=` the policy domain or under it).
pub fn own_selectors<'r>(row: &'r SourceDay, policy_domain: &str) -> Vec<&'r str> {
    row.dkim_signers
        .iter()
        .map(|s| domain_of_signer(s))
        .filter(|(d, _)| under(d, policy_domain))
        .filter_map(|(_, s)| s)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ip: &str, envelope: Option<&str>, signers: &[&str]) -> SourceDay {
        SourceDay {
            source_ip: ip.into(),
            header_from: "example.com".into(),
            envelope_from: envelope.map(str::to_owned),
            dkim_signers: signers.iter().map(|s| (*s).to_owned()).collect(),
            dkim_passing: signers.iter().map(|s| (*s).to_owned()).collect(),
            volume: 1,
            ..SourceDay::default()
        }
    }

    fn id_of(external: &str) -> Option<Uuid> {
        Some(crate::sources::source_id(external))
    }

    #[test]
    fn a_service_signature_names_the_service() {
        let c = crate::sources::catalogue();
        let r = row(
            "192.0.2.1",
            None,
            &["example.com/s1", "sendgrid.net/smtpapi"],
        );
        let who = identify(&r, None, "example.com", c);
        assert_eq!(who.source_id, id_of("sendgrid"));
        assert_eq!(who.sending_domain.as_deref(), Some("sendgrid.net"));
    }

    #[test]
    fn the_return_path_and_reverse_dns_identify_when_no_signature_does() {
        let c = crate::sources::catalogue();
        let r = row("192.0.2.1", Some("bounce.mcsv.net"), &[]);
        assert_eq!(
            identify(&r, None, "example.com", c).source_id,
            id_of("mailchimp")
        );
        let r = row("192.0.2.1", Some("example.com"), &[]);
        let who = identify(&r, Some("o1.ptr1234.sendgrid.net"), "example.com", c);
        assert_eq!(who.source_id, id_of("sendgrid"));
    }

    #[test]
    fn a_unique_selector_convention_identifies_the_customers_own_signature() {
        let c = crate::sources::catalogue();
        let r = row("192.0.2.1", Some("example.com"), &["example.com/google"]);
        let who = identify(&r, None, "example.com", c);
        assert_eq!(who.source_id, id_of("google-workspace"));
    }

    #[test]
    fn unknown_senders_group_by_their_reverse_dns_domain_or_stay_an_address() {
        let c = crate::sources::catalogue();
        let r = row("203.0.113.9", Some("example.com"), &[]);
        let who = identify(&r, Some("mail7.smtp.hosting.co.uk"), "example.com", c);
        assert_eq!(who.key, "domain:hosting.co.uk");
        assert_eq!(who.source_id, None);
        let who = identify(&r, None, "example.com", c);
        assert_eq!(who.key, "ip:203.0.113.9");
    }

    #[test]
    fn a_signature_that_did_not_verify_names_nobody() {
        let c = crate::sources::catalogue();
        let mut r = row("192.0.2.1", None, &["sendgrid.net/s1"]);
        r.dkim_passing.clear();
        let who = identify(&r, None, "example.com", c);
        assert_eq!((who.source_id, who.key.as_str()), (None, "ip:192.0.2.1"));
    }

    #[test]
    fn ids_are_stable_per_domain_and_key() {
        let d = Uuid::from_u128(7);
        assert_eq!(
            DomainSource::id_for(d, "ip:1"),
            DomainSource::id_for(d, "ip:1")
        );
        assert_ne!(
            DomainSource::id_for(d, "ip:1"),
            DomainSource::id_for(d, "ip:2")
        );
    }

    #[test]
    fn registrable_part_keeps_country_second_levels() {
        assert_eq!(registrable_part("a.b.example.com."), "example.com");
        assert_eq!(registrable_part("x.example.co.uk"), "example.co.uk");
        assert_eq!(registrable_part("localhost"), "localhost");
        // The Public Suffix List, not a guess: deeper registries and wildcard-free TLDs.
        assert_eq!(
            registrable_part("mx.example.kawasaki.jp"),
            "mx.example.kawasaki.jp"
        );
        assert_eq!(registrable_part("a.b.example.com.au"), "example.com.au");
        assert_eq!(
            registrable_part("host.example.pvt.k12.ma.us"),
            "example.pvt.k12.ma.us"
        );
        // The private section is left out: a cloud host groups under the provider's domain.
        assert_eq!(
            registrable_part("ec2-3-4-5-6.compute-1.amazonaws.com"),
            "amazonaws.com"
        );
    }
}
