//! The sending-source catalogue (SPEC §2.8, §4.8) as the API shows it.

use mailward_domain::sources::Source;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};

/// When the embedded catalogue was published (its items' `created_at` and `updated_at`).
pub const CATALOGUE_PUBLISHED_AT: OffsetDateTime = time::macros::datetime!(2026-11-22 00:00 UTC);

/// One source as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SourceView {
    /// The SPEC §2.8 fields (id, external_id, name, homepage, category, support levels,
    /// discovery values, base domains, documentation, instructions ...).
    #[serde(flatten)]
    pub source: Source,
    /// Curation state of the instructions; null unless the caller holds `sources:update`.
    pub instructions_curation: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl SourceView {
    /// The view of a catalogue source (no curation state: see [`SourceView::instructions_curation`]).
    pub fn of(source: &Source) -> Self {
        Self {
            source: source.clone(),
            instructions_curation: None,
            created_at: CATALOGUE_PUBLISHED_AT,
            updated_at: CATALOGUE_PUBLISHED_AT,
        }
    }
}

/// `GET /sources` filters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SourceFilters {
    /// ACTIVE, PENDING_REVIEW or REJECTED.
    #[param(value_type = Option<mailward_domain::sources::SourceStatus>, inline)]
    pub status: Option<String>,
    /// Origin of the entries (the embedded catalogue's is `CURATED`).
    pub origin: Option<String>,
}

/// `POST /sources` (an organization's own source) and `POST /sources/{id}` (its update: the
/// fields sent replace the stored ones). An extension beyond SPEC §4.8.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CustomSourceRequest {
    /// 1 to 100 characters. Required to create.
    pub name: Option<String>,
    /// SENDING_TOOL (the default), MAILBOX_PROVIDER, VPS_PROVIDER, SECURITY_PROVIDER or
    /// EMAIL_RELAY.
    pub category: Option<String>,
    /// An `https://` address.
    pub homepage: Option<String>,
    /// Domains the sender's hosts, DKIM signatures or PTR names are under (the source's
    /// `base_domains`); at most 20.
    pub sending_domains: Option<Vec<String>>,
    /// Return-path (envelope from) domains it uses; at most 20.
    pub envelope_froms: Option<Vec<String>>,
    /// DKIM selectors it signs the organization's mail with; at most 20.
    pub dkim_selectors: Option<Vec<String>>,
    /// Domains it asks to be included in SPF (`include:` targets); at most 20.
    pub spf_includes: Option<Vec<String>>,
}
