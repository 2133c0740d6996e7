//! Hosted BIMI assets (SPEC §2.10, §4.1 `bimi/assets`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /domains/{id}/bimi/assets` JSON body: one of the two.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BimiAssetsRequest {
    /// The VMC or CMC bundle: the mark certificate first, then its intermediates (at most
    /// 256 KiB; never a private key).
    #[schema(min_length = 1, max_length = 262144)]
    pub certificate_pem: Option<String>,
    /// An https URL where the bundle is published (fetched once, through the outbound-safe
    /// client: public addresses only, no redirects to private ones).
    #[schema(value_type = Option<crate::constraints::HttpsUrl>)]
    pub certificate_url: Option<String>,
}

crate::schema_type!(
    /// The JSON body of `POST /domains/{id}/bimi/assets`: exactly one of `certificate_pem` and
    /// `certificate_url` (400 naming `certificate_pem` otherwise).
    pub BimiAssetsBody = crate::constraints::refined(
        "BimiAssetsRequest",
        utoipa::openapi::schema::OneOfBuilder::new()
            .item(crate::constraints::carries("certificate_pem", <String as utoipa::PartialSchema>::schema(), &["certificate_url"]))
            .item(crate::constraints::carries("certificate_url", <String as utoipa::PartialSchema>::schema(), &["certificate_pem"])),
    );
    uses BimiAssetsRequest
);

/// The hosted certificate's facts.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BimiCertificateFacts {
    /// Lower-case hex, no leading zeros.
    pub serial: String,
    #[schema(format = DateTime)]
    pub not_after: String,
    pub common_name: Option<String>,
}

/// The BIMI assets response (SPEC §2.10).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BimiAssets {
    /// Where Mailward serves the certificate chain (the `a=` of the BIMI record).
    #[schema(format = "uri")]
    pub certificate_url: String,
    /// Where Mailward serves the logo (the `l=`).
    #[schema(format = "uri")]
    pub logo_url: String,
    /// The logo is the one the certificate's logotype vouches for (hashes checked).
    pub logotype_verified: bool,
    /// `tiny-ps`.
    pub svg_profile: String,
    /// Always true on 200.
    pub chain_verified: bool,
    /// Certificates from the mark certificate to its trust anchor, both included.
    pub chain_length: usize,
    /// Mailward completed the chain from its trust store; the completed chain is served.
    pub chain_repaired: bool,
    /// The root the chain ends at.
    pub trust_anchor: String,
    /// The certificate names the domain (or a parent of it).
    pub san_verified: bool,
    #[schema(format = DateTime)]
    pub not_after: String,
    /// Non-blocking findings: `vmc-mark-type-oid-missing`, `svg-viewbox-not-square`,
    /// `svg-larger-than-32kib`.
    pub warnings: Vec<String>,
    pub cert: BimiCertificateFacts,
    /// The record to publish: `default._bimi.<domain>` CNAME to `bimi_cname_target`, where
    /// Mailward serves `v=BIMI1; l=…; a=…`.
    pub record: BimiRecord,
    /// The domain after the change (`bimi_options`, `bimi_txt_value`, `is_bimi_managed`,
    /// `managed_dns_status.bimi`).
    pub domain: crate::domains::Domain,
}

/// The CNAME to publish for hosted BIMI.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BimiRecord {
    pub host: String,
    #[serde(rename = "type")]
    pub record_type: String,
    pub value: String,
}
