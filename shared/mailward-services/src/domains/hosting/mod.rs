//! Records Mailward serves for a domain in its own zone (the hosted-zone port), one module per
//! record: hosted DMARC and the RFC 9989 report authorizations ([`dmarc`]), hosted SPF with
//! flattening ([`spf`]), hosted DKIM keys ([`dkim_keys`]), hosted MTA-STS ([`mta_sts`]) and hosted
//! BIMI ([`bimi`]); what they share is [`common`]. This module removes a deleted domain's records
//! from all of them.

pub mod bimi;
pub mod common;
pub mod dkim_keys;
pub mod dmarc;
pub mod mta_sts;
pub mod spf;

use crate::state::AppState;
use common::owner;
use dmarc::{dmarc_target, report_authorization_name};
use mailward_domain::domain::Domain;
use mailward_domain::hosted_zone::ZoneRecordKind;

/// Removes a deleted domain's served records: its report authorization, unless another
/// organization still monitors the name, its hosted DMARC record and its DKIM keys.
pub async fn withdraw(app: &AppState, domain: &Domain) {
    let mut keys = Vec::new();
    let watched = mailward_store::reports::watchers(app.store.as_ref(), &domain.url)
        .await
        .map(|watchers| watchers.iter().any(|(org, _)| *org != domain.org_id))
        .unwrap_or(true);
    if !watched {
        keys.push((
            report_authorization_name(app, &domain.url),
            ZoneRecordKind::Txt,
        ));
    }
    if domain.is_dmarc_managed {
        keys.push((dmarc_target(app, domain), ZoneRecordKind::Txt));
    }
    if domain.is_dkim_managed
        && let Ok(dkim) =
            mailward_store::dkim_keys::list(app.store.as_ref(), domain.org_id, domain.id).await
    {
        for key in dkim.iter().filter(|k| k.value.deleted_at.is_none()) {
            let kind = match key.value.record_type {
                mailward_domain::dkim_keys::DkimRecordType::Txt => ZoneRecordKind::Txt,
                mailward_domain::dkim_keys::DkimRecordType::Cname => ZoneRecordKind::Cname,
            };
            keys.push((
                mailward_domain::dkim_keys::hosted_name(
                    &key.value.selector,
                    &owner(domain),
                    &app.config.hosted_zone,
                ),
                kind,
            ));
        }
    }
    if domain.is_spf_managed {
        spf::withdraw(app, domain).await;
    }
    mta_sts::withdraw(app, domain).await;
    bimi::withdraw(app, domain).await;
    if !keys.is_empty()
        && let Err(e) = app.zone.remove(&keys).await
    {
        tracing::warn!(domain.id = %domain.id, error = %e, "served records of a deleted domain not removed");
    }
}
