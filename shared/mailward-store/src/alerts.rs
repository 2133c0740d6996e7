//! Alert rules (`ALERTRULE#<id>`), alerts (`ALERT#<id>`, ids time-ordered) and the marker of
//! each open alert (`ALERTOPEN#<rule>#<domain>#<subject>`), all in the organization's partition.
//! The marker is created with `NotExists`, so two evaluations racing on one domain open one
//! alert, never two.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::alerts::{Alert, AlertRule, AlertStatus, RESOLVED_KEPT_DAYS};
use mailward_domain::store::{Condition, ItemStore, Query, StoreError, WriteOp, query_all};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// The write of a rule: created when `version` is `None`, else replacing the version read.
pub fn rule_op(rule: &AlertRule, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = super::versioned_item(
        keys::org_pk(rule.org_id),
        keys::alert_rule_sk(rule.id),
        rule,
        version,
    )?;
    Ok(WriteOp::Put { item, condition })
}

/// The delete of a rule at the version read.
pub fn delete_rule_op(org: Uuid, id: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::alert_rule_sk(id),
        condition: Condition::Version(version),
    }
}

/// One rule of an organization.
pub async fn rule(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<AlertRule>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::alert_rule_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every rule of an organization, oldest first.
pub async fn rules(store: &dyn ItemStore, org: Uuid) -> Result<Vec<AlertRule>, StoreError> {
    let mut all: Vec<AlertRule> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::ALERT_RULES_PREFIX),
    )
    .await?
    .iter()
    .map(|i| decode_versioned(i).map(|v| v.value))
    .collect::<Result<_, _>>()?;
    all.sort_by_key(|r| (r.created_at, r.id));
    Ok(all)
}

/// The write of an alert. A resolved alert expires [`RESOLVED_KEPT_DAYS`] after it resolved.
pub fn alert_op(alert: &Alert, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (mut item, condition) = super::versioned_item(
        keys::org_pk(alert.org_id),
        keys::alert_sk(alert.id),
        alert,
        version,
    )?;
    if let (AlertStatus::Resolved, Some(at)) = (alert.status, alert.resolved_at) {
        item = item.expiring_at((at + time::Duration::days(RESOLVED_KEPT_DAYS)).unix_timestamp());
    }
    Ok(WriteOp::Put { item, condition })
}

/// One alert.
pub async fn alert(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Alert>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::alert_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every alert of an organization (open, and resolved within the last
/// [`RESOLVED_KEPT_DAYS`]), newest first.
pub async fn alerts(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Alert>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org))
            .prefix(keys::ALERTS_PREFIX)
            .descending(),
    )
    .await?
    .iter()
    .map(|i| decode_versioned(i).map(|v: Versioned<Alert>| v.value))
    .collect()
}

/// The marker of an open alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenAlert {
    pub alert_id: Uuid,
    pub rule_id: Uuid,
    pub domain_id: Uuid,
    pub subject: String,
    /// When its destinations last heard of it.
    #[serde(with = "time::serde::rfc3339")]
    pub notified_at: OffsetDateTime,
}

/// The write of an open-alert marker: created when `version` is `None`.
pub fn open_op(org: Uuid, open: &OpenAlert, version: Option<u64>) -> Result<WriteOp, StoreError> {
    let (item, condition) = super::versioned_item(
        keys::org_pk(org),
        keys::alert_open_sk(open.rule_id, open.domain_id, &open.subject),
        open,
        version,
    )?;
    Ok(WriteOp::Put { item, condition })
}

/// The delete of an open-alert marker at the version read.
pub fn close_op(org: Uuid, open: &OpenAlert, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::alert_open_sk(open.rule_id, open.domain_id, &open.subject),
        condition: Condition::Version(version),
    }
}

async fn open_under(
    store: &dyn ItemStore,
    org: Uuid,
    prefix: String,
) -> Result<Vec<Versioned<OpenAlert>>, StoreError> {
    query_all(store, Query::partition(keys::org_pk(org)).prefix(prefix))
        .await?
        .iter()
        .map(decode_versioned)
        .collect()
}

/// The open alerts of a rule on a domain.
pub async fn open_for(
    store: &dyn ItemStore,
    org: Uuid,
    rule: Uuid,
    domain: Uuid,
) -> Result<Vec<Versioned<OpenAlert>>, StoreError> {
    open_under(store, org, keys::alert_open_prefix(rule, domain)).await
}

/// Every open alert of a rule.
pub async fn open_for_rule(
    store: &dyn ItemStore,
    org: Uuid,
    rule: Uuid,
) -> Result<Vec<Versioned<OpenAlert>>, StoreError> {
    open_under(store, org, keys::alert_open_rule_prefix(rule)).await
}
