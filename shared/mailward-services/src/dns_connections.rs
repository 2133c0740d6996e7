//! DNS connections: an organization connects the DNS host of its domains (Route 53 so far,
//! with an IAM user's keys or a role Mailward assumes) so that Mailward can read its zones and
//! say which of the organization's domains they serve (coverage). The credentials are checked
//! by reading the zones before anything is stored, stored sealed with the service key, and
//! never answered back. Administrators connect and remove; every member reads.

use crate::activity::{self, Change};
use crate::caller::Caller;
use crate::config::Config;
use crate::error::{ErrorKind, ServiceError};
use crate::secret_box;
use crate::state::AppState;
use mailward_api_types::dns_connections as wire;
use mailward_domain::dns_connections::{
    DnsConnection, DnsHostCredentials, DnsHostError, DnsHostZone, DnsHosts,
};
use mailward_domain::hosted_zone::{HostedZone, ZoneRecord, ZoneRecordKind, normalize};
use mailward_plan::{Action, RecordKind, RecordState};
use mailward_store::dns_connections as stored;
use std::sync::Arc;
use time::OffsetDateTime;
use uuid::Uuid;

/// Connections one organization may have.
pub const MAX_CONNECTIONS: usize = 20;

fn at(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn view(c: &DnsConnection) -> wire::DnsConnection {
    wire::DnsConnection {
        id: c.id,
        object: "dns_connection".to_owned(),
        provider: c.provider.clone(),
        name: c.name.clone(),
        credential_kind: c.credential_kind.clone(),
        credential_hint: c.credential_hint.clone(),
        status: c.status.clone(),
        error: c.error.clone(),
        zones: c
            .zones
            .iter()
            .map(|z| wire::DnsConnectionZone {
                id: z.id.clone(),
                name: z.name.clone(),
                private: z.private,
            })
            .collect(),
        created_at: at(c.created_at),
        checked_at: at(c.checked_at),
    }
}

fn hosts(app: &AppState) -> Result<Arc<dyn DnsHosts>, ServiceError> {
    app.dns_hosts.clone().ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unavailable,
            "dns_connections_unavailable",
            "DNS connections are not available in this deployment",
        )
    })
}

/// The provider's refusal, with any ARN of Mailward's own account replaced: what a caller
/// learns from an error must not map Mailward's resources.
fn provider_error(app: &AppState, e: DnsHostError) -> ServiceError {
    let clean = |why: String| match &app.config.aws_account_id {
        Some(own) => why
            .split(' ')
            .map(|word| {
                if word.contains("arn:aws") && word.contains(&format!(":{own}:")) {
                    "[a Mailward resource]"
                } else {
                    word
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        None => why,
    };
    match e {
        DnsHostError::Denied(why) => ServiceError::new(
            ErrorKind::Unprocessable,
            "dns_connection_failed",
            format!("the DNS host refused these credentials: {}", clean(why)),
        ),
        DnsHostError::Unavailable(why) => ServiceError::new(
            ErrorKind::Unavailable,
            "dns_provider_unavailable",
            format!(
                "the DNS host did not answer: {}; try again later",
                clean(why)
            ),
        ),
    }
}

/// The external id Mailward sends whenever it assumes a role for `org`: derived from the
/// deployment's secret, one per organization, never taken from input. A customer's trust
/// policy that requires it admits this organization's connections alone, so another
/// organization cannot borrow the role by naming its ARN (the confused deputy).
pub fn external_id(config: &Config, org: Uuid) -> String {
    let mac = mailward_domain::secrets::hmac_sha256_hex(
        &config.secret_key,
        format!("dns-connection-external-id:{org}").as_bytes(),
    );
    format!("mailward-{}", &mac[..32])
}

/// Stored credentials as they are used: a role is always assumed with the organization's
/// external id (whatever a connection stored before ids were Mailward's).
fn in_use(app: &AppState, org: Uuid, sealed: &str) -> Result<DnsHostCredentials, ServiceError> {
    let credentials: DnsHostCredentials = serde_json::from_str(
        &secret_box::open(&app.config.secret_key, sealed).map_err(ServiceError::internal)?,
    )?;
    Ok(match credentials {
        DnsHostCredentials::Route53Role { role_arn, .. } => DnsHostCredentials::Route53Role {
            role_arn,
            external_id: Some(external_id(&app.config, org)),
        },
        keys => keys,
    })
}

fn invalid(param: &'static str, message: &str) -> ServiceError {
    ServiceError::invalid(param, message.to_owned())
}

fn is_token(value: &str, min: usize, max: usize, allowed: impl Fn(char) -> bool) -> bool {
    (min..=max).contains(&value.chars().count()) && value.chars().all(allowed)
}

/// The credentials of a request, validated; a role gets the organization's external id.
fn credentials(
    config: &Config,
    org: Uuid,
    input: wire::DnsCredentialsInput,
) -> Result<DnsHostCredentials, ServiceError> {
    let wire::DnsCredentialsInput {
        access_key_id,
        secret_access_key,
        role_arn,
    } = input;
    match (access_key_id, secret_access_key, role_arn) {
        (Some(key), Some(secret), None) => {
            let key = key.trim().to_owned();
            if !is_token(&key, 16, 128, |c| c.is_ascii_alphanumeric()) {
                return Err(invalid(
                    "credentials.access_key_id",
                    "access_key_id must be 16 to 128 letters and digits",
                ));
            }
            if !is_token(&secret, 1, 256, |c| c.is_ascii_graphic()) {
                return Err(invalid(
                    "credentials.secret_access_key",
                    "secret_access_key must be 1 to 256 printable characters without spaces",
                ));
            }
            Ok(DnsHostCredentials::Route53Keys {
                access_key_id: key,
                secret_access_key: secret,
            })
        }
        (None, None, Some(role)) => {
            let role = role.trim().to_owned();
            let valid = role.starts_with("arn:aws")
                && role.contains(":iam::")
                && role.contains(":role/")
                && is_token(&role, 20, 2048, |c| c.is_ascii_graphic());
            if !valid {
                return Err(invalid(
                    "credentials.role_arn",
                    "role_arn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)",
                ));
            }
            let account = role.split(':').nth(4).unwrap_or_default();
            if config.aws_account_id.as_deref() == Some(account) {
                return Err(invalid(
                    "credentials.role_arn",
                    "role_arn is in Mailward's own AWS account; give a role in the account that hosts your zones",
                ));
            }
            Ok(DnsHostCredentials::Route53Role {
                role_arn: role,
                external_id: Some(external_id(config, org)),
            })
        }
        _ => Err(invalid(
            "credentials",
            "give either access_key_id with secret_access_key, or role_arn",
        )),
    }
}

/// `POST /dns-connections`: checks the credentials by reading the zones, then stores the
/// connection with its zones. Administrators only.
pub async fn create(
    app: &AppState,
    caller: &Caller,
    input: wire::CreateDnsConnection,
) -> Result<wire::DnsConnection, ServiceError> {
    caller.require_org_admin()?;
    if input.provider != "route53" {
        return Err(invalid("provider", "provider must be route53"));
    }
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(invalid(
            "name",
            "name must be 1 to 100 characters without control characters",
        ));
    }
    let credentials = credentials(&app.config, caller.org_id, input.credentials)?;
    if stored::list(app.store.as_ref(), caller.org_id).await?.len() >= MAX_CONNECTIONS {
        return Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "dns_connection_limit",
            format!("an organization has at most {MAX_CONNECTIONS} DNS connections"),
        ));
    }
    let zones = hosts(app)?
        .zones(&credentials)
        .await
        .map_err(|e| provider_error(app, e))?;
    refuse_open_trust(app, &credentials).await?;
    let sealed = secret_box::seal(
        &app.config.secret_key,
        &serde_json::to_string(&credentials)?,
    )
    .map_err(ServiceError::internal)?;
    let now = app.clock.now();
    let connection = DnsConnection {
        id: Uuid::new_v4(),
        org_id: caller.org_id,
        provider: credentials.provider().to_owned(),
        name,
        credential_kind: credentials.kind().to_owned(),
        credential_hint: credentials.hint(),
        sealed_credentials: sealed,
        zones,
        status: "active".to_owned(),
        error: None,
        created_by: caller.actor().1,
        created_at: now,
        checked_at: now,
    };
    let (item, condition) = mailward_store::versioned_item(
        mailward_store::keys::org_pk(connection.org_id),
        mailward_store::keys::dns_connection_sk(connection.id),
        &connection,
        None,
    )?;
    let mut ops = vec![mailward_domain::store::WriteOp::Put { item, condition }];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "dns_connection.created",
            "dns_connection",
            Some(connection.id),
            format!("connected {} ({})", connection.name, connection.provider),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(view(&connection))
}

/// Refuses a role that Mailward can also assume with an external id that is not the
/// organization's: its trust policy does not require the organization's id, so any
/// organization naming the role would act on the customer's zones through it (the confused
/// deputy). The probe asks once with a random id; a refusal, or any failure, passes.
async fn refuse_open_trust(
    app: &AppState,
    credentials: &DnsHostCredentials,
) -> Result<(), ServiceError> {
    let DnsHostCredentials::Route53Role { role_arn, .. } = credentials else {
        return Ok(());
    };
    if !app.config.role_trust_probe {
        return Ok(());
    }
    let probe = DnsHostCredentials::Route53Role {
        role_arn: role_arn.clone(),
        external_id: Some(format!("mailward-probe-{}", Uuid::new_v4().simple())),
    };
    match hosts(app)?.zones(&probe).await {
        Ok(_) => Err(ServiceError::new(
            ErrorKind::Unprocessable,
            "role_trust_too_broad",
            "the role's trust policy lets Mailward assume it without this organization's external id: add the condition sts:ExternalId equal to the external_id of GET /dns-connections, then connect again",
        )
        .param("credentials.role_arn")),
        Err(_) => Ok(()),
    }
}

/// `GET /dns-connections`.
pub async fn list(
    app: &AppState,
    caller: &Caller,
) -> Result<wire::DnsConnectionList, ServiceError> {
    Ok(wire::DnsConnectionList {
        external_id: external_id(&app.config, caller.org_id),
        data: stored::list(app.store.as_ref(), caller.org_id)
            .await?
            .iter()
            .map(view)
            .collect(),
    })
}

async fn load(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<mailward_store::Versioned<DnsConnection>, ServiceError> {
    stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("dns connection"))
}

/// `GET /dns-connections/{id}`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::DnsConnection, ServiceError> {
    Ok(view(&load(app, caller, id).await?.value))
}

/// `DELETE /dns-connections/{id}`: the credentials are deleted with it. Administrators only.
pub async fn delete(app: &AppState, caller: &Caller, id: Uuid) -> Result<(), ServiceError> {
    caller.require_org_admin()?;
    let current = load(app, caller, id).await?;
    let mut ops = vec![mailward_domain::store::WriteOp::Delete {
        pk: mailward_store::keys::org_pk(caller.org_id),
        sk: mailward_store::keys::dns_connection_sk(id),
        condition: mailward_domain::store::Condition::Version(current.version),
    }];
    ops.extend(activity::ops(
        app,
        caller,
        Change::new(
            "dns_connection.deleted",
            "dns_connection",
            Some(id),
            format!("removed the DNS connection {}", current.value.name),
        ),
    )?);
    app.store.transact(ops).await?;
    Ok(())
}

/// The longest public zone serving `domain` (the domain itself or a parent).
fn serving_zone<'a>(zones: &'a [DnsHostZone], domain: &str) -> Option<&'a DnsHostZone> {
    let domain = normalize(domain);
    zones
        .iter()
        .filter(|z| !z.private)
        .filter(|z| domain == z.name || domain.ends_with(&format!(".{}", z.name)))
        .max_by_key(|z| z.name.len())
}

/// `GET /dns-connections/{id}/coverage`: reads the zones again (stored with the connection,
/// or its error) and says which of the caller's domains they serve.
pub async fn coverage(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<wire::DnsConnectionCoverage, ServiceError> {
    let current = load(app, caller, id).await?;
    let credentials = in_use(app, caller.org_id, &current.value.sealed_credentials)?;
    let now = app.clock.now();
    let read = hosts(app)?.zones(&credentials).await;
    let mut next = current.value.clone();
    next.checked_at = now;
    match &read {
        Ok(zones) => {
            next.zones = zones.clone();
            next.status = "active".to_owned();
            next.error = None;
        }
        Err(e) => {
            next.status = "error".to_owned();
            next.error = Some(e.to_string());
        }
    }
    if let Err(e) = stored::save(app.store.as_ref(), &next, Some(current.version)).await {
        tracing::debug!(connection.id = %id, error = %e, "DNS connection check not saved");
    }
    let zones = read.map_err(|e| provider_error(app, e))?;
    let mut domains: Vec<_> = mailward_store::domains::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|d| caller.sees_group(d.group_id))
        .collect();
    domains.sort_by(|a, b| a.url.cmp(&b.url));
    let mut covered = Vec::new();
    let mut uncovered = Vec::new();
    for d in &domains {
        match serving_zone(&zones, &d.url) {
            Some(zone) => covered.push(wire::CoveredDomain {
                domain_id: d.id,
                domain: d.url.clone(),
                zone_id: zone.id.clone(),
                zone: zone.name.clone(),
            }),
            None => uncovered.push(wire::UncoveredDomain {
                domain_id: d.id,
                domain: d.url.clone(),
            }),
        }
    }
    Ok(wire::DnsConnectionCoverage {
        connection_id: id,
        covered_count: covered.len(),
        domain_count: domains.len(),
        covered,
        uncovered,
        checked_at: at(now),
    })
}

/// The kind of a TXT value (`v=spf1`, `v=dmarc1`, …), lower-case; `None` for other TXT data.
fn txt_kind(value: &str) -> Option<String> {
    let first = value
        .trim_start()
        .split([';', ' '])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    first.starts_with("v=").then_some(first)
}

/// The TXT set at a name after writing `planned`: values of the same kind are replaced, values
/// the plan deletes are dropped, everything else is kept.
fn merged_txt(existing: &[String], planned: &[String], deleted: &[String]) -> Vec<String> {
    let kinds: Vec<Option<String>> = planned.iter().map(|v| txt_kind(v)).collect();
    let mut out: Vec<String> = existing
        .iter()
        .filter(|v| !deleted.contains(v))
        .filter(|v| {
            let kind = txt_kind(v);
            kind.is_none() || !kinds.contains(&kind)
        })
        .cloned()
        .collect();
    for value in planned {
        if !out.contains(value) {
            out.push(value.clone());
        }
    }
    out
}

/// The records the guidance asks for at one name and type.
struct PlannedSet {
    host: String,
    kind: mailward_plan::RecordKind,
    /// Values to create or replace.
    write: Vec<String>,
    /// Values to delete.
    drop: Vec<String>,
    ttl: u32,
}

/// `POST /dns-connections/{id}/publish`: writes the records the guidance asks the domain to
/// create or change into the connection's zone that serves it. Editors and administrators.
pub async fn publish(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: wire::PublishDnsRecords,
) -> Result<wire::DnsPublishResult, ServiceError> {
    caller.require_write()?;
    let connection = load(app, caller, id).await?.value;
    let domain = crate::access::load(app, caller, input.domain_id)
        .await?
        .value;
    let credentials = in_use(app, caller.org_id, &connection.sealed_credentials)?;
    let hosts = hosts(app)?;
    let zones = hosts
        .zones(&credentials)
        .await
        .map_err(|e| provider_error(app, e))?;
    let zone = serving_zone(&zones, &domain.url).cloned().ok_or_else(|| {
        ServiceError::new(
            ErrorKind::Unprocessable,
            "domain_not_covered",
            format!("no public zone of this connection serves {}", domain.url),
        )
        .param("domain_id")
    })?;
    let target = hosts
        .zone(&credentials, &zone)
        .await
        .map_err(|e| provider_error(app, e))?;
    let guidance = crate::domains::records::dns_records(app, caller, domain.id).await?;
    let mut results = Vec::new();
    for set in planned_sets(&guidance.records) {
        let outcome = publish_set(target.as_ref(), &set).await;
        let record_type = match set.kind {
            RecordKind::Txt => "TXT",
            RecordKind::Cname => "CNAME",
            RecordKind::Ns => "NS",
        };
        results.push(match outcome {
            Ok(values) => wire::PublishedRecordSet {
                host: set.host,
                record_type: record_type.to_owned(),
                values,
                result: "published".to_owned(),
                error: None,
            },
            Err(error) => wire::PublishedRecordSet {
                host: set.host,
                record_type: record_type.to_owned(),
                values: set.write,
                result: "failed".to_owned(),
                error: Some(error),
            },
        });
    }
    Ok(wire::DnsPublishResult {
        connection_id: id,
        domain_id: domain.id,
        domain: domain.url,
        zone_id: zone.id,
        zone: zone.name,
        record_sets: results,
    })
}

/// The guidance's unpublished records grouped by name and type: what to write, what to drop.
fn planned_sets(records: &[RecordState]) -> Vec<PlannedSet> {
    let mut sets: Vec<PlannedSet> = Vec::new();
    for state in records {
        if state.already_published == Some(true) {
            continue;
        }
        let r = &state.record;
        let at = match sets
            .iter()
            .position(|s| s.host == r.host && s.kind == r.record_type)
        {
            Some(i) => i,
            None => {
                sets.push(PlannedSet {
                    host: r.host.clone(),
                    kind: r.record_type,
                    write: Vec::new(),
                    drop: Vec::new(),
                    ttl: r.ttl,
                });
                sets.len() - 1
            }
        };
        match state.action {
            Action::Delete => sets[at].drop.push(r.value.clone()),
            Action::Create | Action::Replace => sets[at].write.push(r.value.clone()),
        }
    }
    sets
}

/// Writes one record set into the zone; answers the values now published there.
async fn publish_set(target: &dyn HostedZone, set: &PlannedSet) -> Result<Vec<String>, String> {
    let host = &set.host;
    let existing = target.records(host).await.map_err(|e| e.to_string())?;
    let existing_txt: Vec<String> = existing
        .iter()
        .filter(|r| r.kind == ZoneRecordKind::Txt)
        .flat_map(|r| r.values.clone())
        .collect();
    let remove = |kind| async move {
        target
            .remove(&[(host.clone(), kind)])
            .await
            .map_err(|e| e.to_string())
    };
    let upsert = |kind, values: Vec<String>| async move {
        target
            .upsert(&[ZoneRecord {
                name: host.clone(),
                kind,
                values,
                ttl: set.ttl,
            }])
            .await
            .map_err(|e| e.to_string())
    };
    match set.kind {
        RecordKind::Txt => {
            let values = merged_txt(&existing_txt, &set.write, &set.drop);
            if values.is_empty() {
                remove(ZoneRecordKind::Txt).await?;
            } else {
                upsert(ZoneRecordKind::Txt, values.clone()).await?;
            }
            Ok(values)
        }
        RecordKind::Cname => {
            let Some(value) = set.write.first() else {
                remove(ZoneRecordKind::Cname).await?;
                return Ok(Vec::new());
            };
            // A CNAME stands alone at its name: the TXT the plan replaces goes first.
            if !existing_txt.is_empty() {
                remove(ZoneRecordKind::Txt).await?;
            }
            upsert(ZoneRecordKind::Cname, vec![value.clone()]).await?;
            Ok(vec![value.clone()])
        }
        RecordKind::Ns => Err("NS records are not published".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, private: bool) -> DnsHostZone {
        DnsHostZone {
            id: format!("Z{name}"),
            name: name.to_owned(),
            private,
        }
    }

    #[test]
    fn the_longest_public_parent_serves() {
        let zones = [
            zone("example.com", false),
            zone("mail.example.com", false),
            zone("corp.example.com", true),
        ];
        let name = |d: &str| serving_zone(&zones, d).map(|z| z.name.clone());
        assert_eq!(name("example.com").as_deref(), Some("example.com"));
        assert_eq!(
            name("a.mail.example.com").as_deref(),
            Some("mail.example.com")
        );
        assert_eq!(name("corp.example.com").as_deref(), Some("example.com"));
        assert_eq!(name("notexample.com"), None);
        assert_eq!(name("Example.COM.").as_deref(), Some("example.com"));
    }

    #[test]
    fn credentials_are_one_kind_and_well_formed() {
        let mut config = Config::new("https://api.example.com", vec![7; 32]);
        config.aws_account_id = Some("999999999999".into());
        let org = Uuid::new_v4();
        let credentials = |input| credentials(&config, org, input);
        let keys = |id: &str, secret: &str| wire::DnsCredentialsInput {
            access_key_id: Some(id.into()),
            secret_access_key: Some(secret.into()),
            ..Default::default()
        };
        assert!(credentials(keys("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG")).is_ok());
        assert_eq!(
            credentials(keys("short", "x")).unwrap_err().param_name(),
            Some("credentials.access_key_id")
        );
        let role = |arn: &str| wire::DnsCredentialsInput {
            role_arn: Some(arn.into()),
            ..Default::default()
        };
        let DnsHostCredentials::Route53Role {
            external_id: sent, ..
        } = credentials(role("arn:aws:iam::123456789012:role/mailward-dns")).unwrap()
        else {
            panic!("a role")
        };
        assert_eq!(
            sent,
            Some(external_id(&config, org)),
            "the organization's own id"
        );
        assert_ne!(
            external_id(&config, org),
            external_id(&config, Uuid::new_v4())
        );
        assert_eq!(
            credentials(role("arn:aws:iam::999999999999:role/inside"))
                .unwrap_err()
                .param_name(),
            Some("credentials.role_arn"),
            "a role in Mailward's own account"
        );
        assert_eq!(
            credentials(role("arn:aws:s3:::bucket"))
                .unwrap_err()
                .param_name(),
            Some("credentials.role_arn")
        );
        let both = wire::DnsCredentialsInput {
            role_arn: Some("arn:aws:iam::123456789012:role/x".into()),
            ..keys("AKIAIOSFODNN7EXAMPLE", "s")
        };
        assert_eq!(
            credentials(both).unwrap_err().param_name(),
            Some("credentials")
        );
        assert_eq!(
            credentials(wire::DnsCredentialsInput::default())
                .unwrap_err()
                .param_name(),
            Some("credentials")
        );
    }

    #[test]
    fn txt_of_another_kind_is_kept() {
        let existing = vec![
            "google-site-verification=abc".to_owned(),
            "v=spf1 include:old.example ~all".to_owned(),
        ];
        let merged = merged_txt(
            &existing,
            &["v=spf1 include:new.example -all".to_owned()],
            &[],
        );
        assert_eq!(
            merged,
            [
                "google-site-verification=abc",
                "v=spf1 include:new.example -all"
            ]
        );
        let dropped = merged_txt(&existing, &[], &["google-site-verification=abc".to_owned()]);
        assert_eq!(dropped, ["v=spf1 include:old.example ~all"]);
    }
}
