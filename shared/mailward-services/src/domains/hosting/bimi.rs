//! Hosted BIMI (SPEC §2.10, §4.1 `bimi/assets`): a mark certificate (VMC or CMC) is validated
//! in full ([`mailward_bimi::validate`], at the service clock), then Mailward hosts the chain
//! and the logo the certificate vouches for at URLs versioned by their content (the same PEM
//! gives the same URLs), serves `v=BIMI1; l=…; a=…` at `<owner>.bimi.<hosted zone>`, and the
//! customer publishes `default._bimi.<domain>` as a CNAME to it.
//!
//! The hourly reconciliation then moves `managed_dns_status.bimi` from the CNAME (syncing → ready, `drift`,
//! `setup_timeout`, `record_conflict` for a BIMI TXT of the customer's own in its place), puts back a lost record (`publish_failed` when the zone refuses), and
//! turns it to `certificate_invalid` once the certificate has expired.

use super::common::{
    HOSTED_TTL, cname_points_at, next_managed_state as next_state, publish_failed,
};
use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::state::AppState;
use mailward_api_types::bimi::{BimiAssets, BimiCertificateFacts, BimiRecord};
use mailward_domain::domain::{
    Domain, HostedBimiAssets, HostingErrorReason, ManagedRecord, ManagedStatus,
};
use mailward_domain::hosted_zone::{ZoneRecord, ZoneRecordKind, normalize};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// Where a bundle comes from.
pub enum CertificateSource {
    /// The PEM text itself.
    Pem(Vec<u8>),
    /// An https URL to fetch it from.
    Url(String),
}

/// The object key of a hosted file.
fn object_key(domain: &str, version: &str, file: &str) -> String {
    format!("bimi/{}/{version}/{file}", normalize(domain))
}

/// The public URL of a hosted file.
fn asset_url(app: &AppState, domain: &str, version: &str, file: &str) -> String {
    format!(
        "{}/bimi/{}/{version}/{file}",
        app.config.base_url.trim_end_matches('/'),
        normalize(domain)
    )
}

/// Where `default._bimi.<domain>` points.
fn target(app: &AppState, domain: &Domain) -> String {
    format!(
        "{}.bimi.{}",
        super::common::owner(domain),
        normalize(&app.config.hosted_zone)
    )
}

/// The record served at the target.
fn txt_value(logo_url: &str, certificate_url: &str) -> String {
    format!("v=BIMI1; l={logo_url}; a={certificate_url}")
}

fn at(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The bundle's bytes: the PEM given, or fetched from the URL.
async fn bundle(app: &AppState, source: CertificateSource) -> Result<Vec<u8>, ServiceError> {
    match source {
        CertificateSource::Pem(pem) => {
            if pem.is_empty() {
                return Err(ServiceError::invalid(
                    "certificate_pem",
                    "certificate_pem must not be empty",
                ));
            }
            if pem.len() > crate::outbound::vmc::MAX_PEM_BYTES {
                return Err(ServiceError::invalid(
                    "certificate_pem",
                    "certificate_pem is larger than 256 KiB: a mark certificate chain with its logo is a few tens of KiB",
                ));
            }
            Ok(pem)
        }
        CertificateSource::Url(url) => {
            crate::outbound::client::check_url(url.trim(), app.config.outbound.allow_loopback)
                .map_err(|why| {
                    ServiceError::invalid("certificate_url", format!("certificate_url: {why}"))
                })?;
            crate::outbound::vmc::fetch_pem(app, url.trim())
                .await
                .map_err(|why| {
                    ServiceError::new(
                        ErrorKind::Unprocessable,
                        "certificate_url_unreachable",
                        format!("the certificate could not be fetched from certificate_url: {why}"),
                    )
                    .param("certificate_url")
                })
        }
    }
}

/// `POST /domains/{id}/bimi/assets`: validates the bundle, hosts the chain and the logo,
/// serves the BIMI record and turns hosted BIMI on. Nothing is stored when validation,
/// storage or publishing fails.
pub async fn upload(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    source: CertificateSource,
) -> Result<BimiAssets, ServiceError> {
    caller.require_write()?;
    let current = crate::access::load(app, caller, id).await?;
    let pem = bundle(app, source).await?;
    let valid = validated(app, &pem, &current.value.url)?;
    let domain = &current.value.url;
    let version = store_assets(app, domain, &valid).await?;
    let certificate_url = asset_url(app, domain, &version, "certificate.pem");
    let logo_url = asset_url(app, domain, &version, "logo.svg");
    let record = ZoneRecord::txt(
        &target(app, &current.value),
        &txt_value(&logo_url, &certificate_url),
        HOSTED_TTL,
    );
    app.zone.upsert(&[record]).await.map_err(publish_failed)?;
    let now = app.clock.now();
    let (logo, cert) = (logo_url.clone(), certificate_url.clone());
    let assets = HostedBimiAssets {
        version,
        not_after: valid.not_after,
    };
    let saved = crate::domains::set_hosting(app, caller, id, current, |d| {
        let mut next = d.clone();
        next.bimi_options.enabled = true;
        next.bimi_options.logo = Some(logo.clone());
        next.bimi_options.certificate = Some(cert.clone());
        if !d.is_bimi_managed || d.managed_bimi.status == ManagedStatus::Error {
            next.managed_bimi = ManagedRecord {
                status: ManagedStatus::Syncing,
                since: Some(now),
                error_reason: None,
                unchecked_since: None,
            };
        }
        next.is_bimi_managed = true;
        next.bimi_assets = Some(assets.clone());
        next
    })
    .await?;
    Ok(BimiAssets {
        certificate_url,
        logo_url,
        logotype_verified: true,
        svg_profile: "tiny-ps".to_owned(),
        chain_verified: true,
        chain_length: valid.chain_length,
        chain_repaired: valid.chain_repaired,
        trust_anchor: valid.trust_anchor,
        san_verified: true,
        not_after: at(valid.not_after),
        warnings: valid.warnings,
        cert: BimiCertificateFacts {
            serial: valid.serial,
            not_after: at(valid.not_after),
            common_name: valid.common_name,
        },
        record: BimiRecord {
            host: format!("default._bimi.{}", saved.url),
            record_type: "CNAME".to_owned(),
            value: target(app, &saved),
        },
        domain: app.domain_view(&saved),
    })
}

/// The mark certificate and its logo, validated for `domain`, or a 422 saying why not.
fn validated(
    app: &AppState,
    pem: &[u8],
    domain: &str,
) -> Result<mailward_bimi::Validated, ServiceError> {
    mailward_bimi::validate(
        pem,
        domain,
        app.clock.now(),
        mailward_bimi::TrustStore::builtin(),
    )
    .map_err(|r| {
        ServiceError::new(
            ErrorKind::Unprocessable,
            "bimi_certificate_invalid",
            format!(
                "the mark certificate was refused ({}): {}",
                r.reason.as_str(),
                r.detail
            ),
        )
        .details(serde_json::json!({ "reason": r.reason.as_str() }))
    })
}

/// Stores the certificate chain and the logo under a version named by their digest (a new
/// upload never overwrites what a cached record points at); answers the version.
async fn store_assets(
    app: &AppState,
    domain: &str,
    valid: &mailward_bimi::Validated,
) -> Result<String, ServiceError> {
    let objects = app.objects.clone().ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "object_storage_unavailable",
            "hosting BIMI assets needs object storage, which this deployment lacks",
        )
    })?;
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        &[valid.chain_pem.as_bytes(), &valid.logo_svg].concat(),
    );
    let version: String = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for (file, bytes, kind) in [
        (
            "certificate.pem",
            valid.chain_pem.as_bytes().to_vec(),
            "application/x-pem-file",
        ),
        ("logo.svg", valid.logo_svg.clone(), "image/svg+xml"),
    ] {
        objects
            .put(&object_key(domain, &version, file), bytes.into(), kind)
            .await
            .map_err(|e| ServiceError::unavailable(format!("storing the BIMI assets: {e}")))?;
    }
    Ok(version)
}

/// A hosted file for the public route: `(bytes, content type)`.
pub async fn asset(
    app: &AppState,
    domain: &str,
    version: &str,
    file: &str,
) -> Option<(Vec<u8>, &'static str)> {
    let kind = match file {
        "certificate.pem" => "application/x-pem-file",
        "logo.svg" => "image/svg+xml",
        _ => return None,
    };
    let plausible = |s: &str| {
        !s.is_empty()
            && s.len() <= 253
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !s.contains("..")
    };
    if !plausible(domain) || !plausible(version) {
        return None;
    }
    let objects = app.objects.as_ref()?;
    match objects.get(&object_key(domain, version, file)).await {
        Ok(found) => found.map(|bytes| (bytes, kind)),
        Err(e) => {
            tracing::warn!(error = %e, "hosted BIMI asset not read");
            None
        }
    }
}

/// One reconciliation pass over a hosted-BIMI domain.
pub async fn reconcile(app: &AppState, domain: &Domain, now: OffsetDateTime) {
    if !domain.is_bimi_managed {
        return;
    }
    let (Some(assets), Some(logo), Some(cert)) = (
        domain.bimi_assets.as_ref(),
        domain.bimi_options.logo.as_deref(),
        domain.bimi_options.certificate.as_deref(),
    ) else {
        return;
    };
    let target = target(app, domain);
    let wanted = txt_value(logo, cert);
    let intact = app.zone.records(&target).await.is_ok_and(|records| {
        records
            .iter()
            .any(|r| r.kind == ZoneRecordKind::Txt && r.values == [wanted.clone()])
    });
    let mut managed = domain.managed_bimi.clone();
    if !intact {
        match app
            .zone
            .upsert(&[ZoneRecord::txt(&target, &wanted, HOSTED_TTL)])
            .await
        {
            Ok(()) if managed.error_reason == Some(HostingErrorReason::PublishFailed) => {
                managed.status = ManagedStatus::Syncing;
                managed.error_reason = None;
            }
            Ok(()) => {}
            Err(e) => {
                tracing::warn!(domain.id = %domain.id, error = %e, "hosted BIMI record not republished");
                managed = ManagedRecord {
                    status: ManagedStatus::Error,
                    since: managed.since,
                    error_reason: Some(HostingErrorReason::PublishFailed),
                    unchecked_since: None,
                };
            }
        }
    }
    if now > assets.not_after {
        managed = ManagedRecord {
            status: ManagedStatus::Error,
            since: managed.since,
            error_reason: Some(HostingErrorReason::CertificateInvalid),
            unchecked_since: None,
        };
    } else if managed.error_reason != Some(HostingErrorReason::PublishFailed) {
        let host = format!("default._bimi.{}", domain.url);
        let delegated = cname_points_at(app, &host, &target).await;
        // The customer's own BIMI TXT where our CNAME belongs.
        let conflict = delegated == Some(false)
            && super::common::txt_instead_of_cname(app, &host, "v=bimi1").await;
        let window = Duration::seconds(i64::try_from(app.config.pending_grace_secs).unwrap_or(0));
        managed = next_state(&managed, delegated, conflict, now, window);
    }
    let result = super::common::save_managed(app, domain.org_id, domain.id, "bimi", now, |d| {
        d.managed_bimi = managed.clone();
    })
    .await;
    if let Err(e) = result {
        tracing::debug!(domain.id = %domain.id, error = %e, "managed BIMI state not saved; next pass");
    }
}

/// Stops serving a deleted domain's BIMI record (the content-addressed files stay: another
/// account may host the same ones).
pub(crate) async fn withdraw(app: &AppState, domain: &Domain) {
    if domain.is_bimi_managed
        && let Err(e) = app
            .zone
            .remove(&[(target(app, domain), ZoneRecordKind::Txt)])
            .await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "hosted BIMI record not removed");
    }
}
