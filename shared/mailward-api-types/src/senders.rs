//! SPEC §2.6 DomainSource on the wire: a sender of a domain as its aggregate reports show it,
//! and the body of `POST /domains/{domainId}/sources/{sourceId}`.

use mailward_domain::senders::DomainSource;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// Who owns a sending address (an extension beyond SPEC §2.6): its forward-confirmed
/// reverse-DNS name and the service that name's base domain belongs to, the autonomous system
/// (number, name, owner's domain) and the country of its network. IP data: IPinfo Lite (CC
/// BY-SA 4.0, ipinfo.io); reverse-DNS services: parsedmarc's map. Each field is null when
/// unknown (an address no network data covers, or a deployment without the IP data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SourceNetworkView {
    pub ip: String,
    pub ptr: Option<String>,
    /// e.g. `Amazon SES`.
    pub ptr_service: Option<String>,
    /// e.g. 15169.
    pub asn: Option<u32>,
    /// e.g. `Google LLC`.
    pub as_name: Option<String>,
    /// e.g. `google.com`.
    pub as_domain: Option<String>,
    /// ISO 3166-1 alpha-2, e.g. `US`.
    pub country_code: Option<String>,
    pub country: Option<String>,
}

impl From<&mailward_domain::senders::SourceNetwork> for SourceNetworkView {
    fn from(n: &mailward_domain::senders::SourceNetwork) -> Self {
        Self {
            ip: n.ip.clone(),
            ptr: n.ptr.clone(),
            ptr_service: n.ptr_service.clone(),
            asn: n.asn,
            as_name: n.as_name.clone(),
            as_domain: n.as_domain.clone(),
            country_code: n.country_code.clone(),
            country: n.country.clone(),
        }
    }
}

/// SPEC §2.6 `totals`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SenderTotalsView {
    /// Messages that passed DMARC.
    pub compliant: u64,
    /// Failing messages of a recognised or confirmed sender (what enforcement would stop and
    /// someone wants delivered).
    pub non_compliant: u64,
    /// Messages the receiver overrode as forwarded, or that failed DMARC from a forwarder's
    /// network (a forward-only service; a mailbox provider that also forwards, with a DKIM
    /// signature that survived the hop).
    pub forwarded: u64,
    /// Failing messages of a sender nobody recognised, and messages without an evaluation.
    pub unknown: u64,
}

/// A sender of a domain (SPEC §2.6). Its `id` is the `sourceId` of the update route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DomainSourceView {
    pub id: Uuid,
    /// True when the sender matched the sending-source catalogue (`source_id` set).
    pub is_known: bool,
    /// The catalogue source (`GET /sources/{id}`), or null.
    pub source_id: Option<Uuid>,
    /// The SPF mechanism that authorizes the catalogue source, or null.
    pub spf_value: Option<String>,
    pub source_name: Option<String>,
    pub source_homepage: Option<String>,
    /// The domain the sender uses (DKIM signing, return-path or reverse-DNS domain).
    pub sending_domain: Option<String>,
    /// Selectors of the domain's own DKIM signatures seen from this sender.
    pub dkim_selectors: Vec<String>,
    /// confirmed, discarded or requires_confirmation.
    #[schema(pattern = "^(confirmed|discarded|requires_confirmation)$")]
    pub confirmation_status: String,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub confirmed_at: Option<OffsetDateTime>,
    /// Last report day with its mail (YYYY-MM-DD); all recorded history, may trail live
    /// reporting by days.
    pub last_seen_at: Option<String>,
    /// Last report day on which its SPF passed aligned (YYYY-MM-DD).
    pub last_spf_aligned_at: Option<String>,
    /// Every recorded message (within the plan's retention), split four ways.
    pub totals: SenderTotalsView,
    /// Source IP addresses seen (at most 50; beyond the SPEC).
    pub source_ips: Vec<String>,
    /// Who owns each of `source_ips` (beyond the SPEC).
    pub source_networks: Vec<SourceNetworkView>,
    /// Whether a person chose to stop counting it against SPF (beyond the SPEC).
    pub ignore_spf: bool,
    /// Whether a person chose to stop counting it against DKIM (beyond the SPEC).
    pub ignore_dkim: bool,
}

impl DomainSourceView {
    /// The wire shape of a stored sender.
    pub fn of(source: &DomainSource, name: Option<String>, homepage: Option<String>) -> Self {
        Self {
            id: source.id,
            is_known: source.is_known(),
            source_id: source.source_id,
            spf_value: source.spf_value.clone(),
            source_name: name.or_else(|| source.source_name.clone()),
            source_homepage: homepage.or_else(|| source.source_homepage.clone()),
            sending_domain: source.sending_domain.clone(),
            dkim_selectors: source.dkim_selectors.clone(),
            confirmation_status: source.confirmation_status.as_str().to_owned(),
            confirmed_at: source.confirmed_at,
            last_seen_at: source.last_seen_at.clone(),
            last_spf_aligned_at: source.last_spf_aligned_at.clone(),
            totals: SenderTotalsView {
                compliant: source.totals.compliant,
                non_compliant: source.totals.non_compliant,
                forwarded: source.totals.forwarded,
                unknown: source.totals.unknown,
            },
            source_ips: source.ips.clone(),
            source_networks: source
                .networks
                .iter()
                .map(SourceNetworkView::from)
                .collect(),
            ignore_spf: source.ignore_spf,
            ignore_dkim: source.ignore_dkim,
        }
    }
}

/// `POST /domains/{domainId}/sources/{sourceId}` (SPEC §3 DomainSource move).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDomainSourceRequest {
    /// confirmed, discarded or requires_confirmation. Confirming closes the sender's
    /// confirm_source tasks; discarding closes them too and opens cleanup_sender_records when
    /// the SPF record still authorizes the sender.
    #[schema(value_type = SourceConfirmation)]
    pub confirmation_status: Option<String>,
}

crate::words!(
    /// A sender's `confirmation_status` as a person sets it.
    pub SourceConfirmation = ["confirmed", "discarded", "requires_confirmation"]
);
