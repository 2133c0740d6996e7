//! Organizations.

use super::{Versioned, api_keys, decode, decode_versioned, encode, keys};
use mailward_domain::model::{ApiKey, Organization};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// The stored item of an organization at a version.
/// An organization created from another is indexed under its parent, for usage; every
/// organization is in the organization index (GSI2), which the daily jobs walk.
pub fn org_item(org: &Organization, version: u64) -> Result<Item, StoreError> {
    let item = Item::new(keys::org_pk(org.id), keys::ORG_META, encode(org)?)
        .with_version(version)
        .with_gsi2(keys::org_index_pk(org.id), keys::org_pk(org.id));
    Ok(match org.parent_org_id {
        Some(parent) => item.with_gsi1(keys::children_gsi(parent), keys::org_pk(org.id)),
        None => item,
    })
}

/// The organizations created from `parent` (through the index; eventually consistent).
pub async fn children_of(
    store: &dyn ItemStore,
    parent: Uuid,
) -> Result<Vec<Organization>, StoreError> {
    query_all(
        store,
        Query::partition(keys::children_gsi(parent)).on(mailward_domain::store::Index::Gsi1),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// Every organization, shard after shard of the index (eventually consistent: one created a
/// moment ago may be missing; an organization saved before the index existed appears after
/// its next save).
pub async fn list_all(store: &dyn ItemStore) -> Result<Vec<Organization>, StoreError> {
    let mut out = Vec::new();
    for shard in 0..keys::ORG_INDEX_SHARDS {
        let query = Query::partition(keys::org_index_shard_pk(shard))
            .on(mailward_domain::store::Index::Gsi2);
        for item in query_all(store, query).await? {
            out.push(decode(&item)?);
        }
    }
    Ok(out)
}

/// Reads an organization (strongly consistent).
pub async fn get(
    store: &dyn ItemStore,
    id: Uuid,
) -> Result<Option<Versioned<Organization>>, StoreError> {
    store
        .get(&keys::org_pk(id), keys::ORG_META, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The writes that create an organization: its record, and the note that all its domains (none
/// yet) have their list cards (`domains::cards`).
pub fn create_ops(org: &Organization) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: org_item(org, 1)?,
            condition: Condition::NotExists,
        },
        super::domains::cards_ready_op(org.id),
    ])
}

/// Saves a changed organization if nobody changed it since `read_version`, together with
/// `extra` writes (its outbox events) in one transaction.
pub async fn save(
    store: &dyn ItemStore,
    org: &Organization,
    read_version: u64,
    extra: Vec<WriteOp>,
) -> Result<u64, StoreError> {
    let version = read_version + 1;
    let mut ops = vec![WriteOp::Put {
        item: org_item(org, version)?,
        condition: Condition::Version(read_version),
    }];
    ops.extend(extra);
    store.transact(ops).await?;
    Ok(version)
}

/// The global items (outside the partition) that point into an organization, found from its
/// partition item `item`: an API key's lookup, a domain's entry in the name index, an
/// invitation's or SCIM token's lookup, the single sign-on routing entries, a prospecting
/// report's public link.
fn global_entries(item: &Item, org: Uuid) -> Result<Vec<(String, String)>, StoreError> {
    use mailward_domain::{admin::Invitation, domain::Domain, identity::SsoConnection};
    let sk = item.sk.as_str();
    let pair = |pk: String, sk: &str| vec![(pk, sk.to_owned())];
    Ok(if sk.starts_with(keys::API_KEY_PREFIX) {
        let key: ApiKey = decode(item)?;
        api_keys::delete_ops(&key, None)
            .into_iter()
            .skip(1)
            .map(|op| {
                let (pk, sk) = op.key();
                (pk.to_owned(), sk.to_owned())
            })
            .collect()
    } else if sk.starts_with(keys::DOMAIN_PREFIX) {
        let domain: Domain = decode(item)?;
        pair(keys::domain_name_pk(&domain.url), &keys::org_pk(org))
    } else if sk.starts_with(keys::INVITATION_PREFIX) {
        let invitation: Invitation = decode(item)?;
        pair(
            keys::invitation_token_pk(&invitation.token_hash),
            keys::INVITATION_TOKEN_SK,
        )
    } else if sk.starts_with(keys::SCIM_TOKEN_PREFIX) {
        let token: mailward_domain::scim::ScimToken = decode(item)?;
        pair(
            keys::scim_lookup_pk(&token.token_hash),
            keys::SCIM_LOOKUP_SK,
        )
    } else if sk == keys::SSO_SK {
        let sso: SsoConnection = decode(item)?;
        sso.domains
            .iter()
            .map(|d| (keys::sso_domain_pk(&d.name), keys::org_pk(org)))
            .collect()
    } else if let Some(id) = sk.strip_prefix(keys::PROSPECT_PREFIX) {
        match Uuid::parse_str(id) {
            Ok(id) => pair(keys::prospect_link_pk(id), keys::PROSPECT_LINK_SK),
            Err(_) => Vec::new(),
        }
    } else {
        Vec::new()
    })
}

/// Removes every item of an organization's partition and the global items that point into it
/// ([`global_entries`]), then the organization record itself last, so a crash half-way leaves
/// the purge repeatable. Returns how many partition items were removed.
///
/// With `keep_record`, the organization record stays (still `deleting`) with a
/// `DOMAINGONE#<domain>` note per domain, written before anything is deleted: a job that was
/// already running when the purge began may still write into a domain's partition, and the
/// final pass, run once no such job can still be running, finds those partitions again through
/// the notes and removes the record last.
pub async fn purge(
    store: &dyn ItemStore,
    id: Uuid,
    keep_record: bool,
) -> Result<usize, StoreError> {
    let items = query_all(store, Query::partition(keys::org_pk(id))).await?;
    // Each domain's own partition (current domains and deleted ones not yet emptied).
    for item in &items {
        let domain = item
            .sk
            .strip_prefix(keys::DOMAIN_PREFIX)
            .or_else(|| item.sk.strip_prefix(keys::DOMAIN_GONE_PREFIX))
            .and_then(|rest| Uuid::parse_str(rest).ok());
        if let Some(domain) = domain {
            super::domain_data::purge_partition(store, id, domain).await?;
        }
    }
    let kept = |sk: &str| {
        sk == keys::ORG_META || (keep_record && sk.starts_with(keys::DOMAIN_GONE_PREFIX))
    };
    if keep_record {
        let notes: Vec<Item> = items
            .iter()
            .filter_map(|item| item.sk.strip_prefix(keys::DOMAIN_PREFIX))
            .filter_map(|rest| Uuid::parse_str(rest).ok())
            .map(|domain| Item::new(keys::org_pk(id), keys::domain_gone_sk(domain), Vec::new()))
            .collect();
        store.put_all(notes).await?;
    }
    let mut deletes: Vec<(String, String)> = Vec::with_capacity(items.len() * 2);
    for item in &items {
        if kept(&item.sk) {
            continue;
        }
        // Lookups first: once the partition item is gone, nothing finds them any more.
        deletes.extend(global_entries(item, id)?);
    }
    super::retention::delete_all(store, deletes).await?;
    let own: Vec<(String, String)> = items
        .iter()
        .filter(|item| !kept(&item.sk))
        .map(|item| (item.pk.clone(), item.sk.clone()))
        .collect();
    let removed = own.len();
    super::retention::delete_all(store, own).await?;
    // After the partitions whose writes count into them.
    super::report_versions::purge(store, id).await?;
    if !keep_record {
        store
            .delete(&keys::org_pk(id), keys::ORG_META, Condition::None)
            .await?;
    }
    Ok(removed)
}
