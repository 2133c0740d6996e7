//! Remediation tasks: each task in its organization's partition under its domain
//! (`TASK#<domain>#<id>`, so a domain's tasks are one prefix query), plus a reference item per
//! task id (`TASKREF#<id>` → its domain) so `GET /tasks/{id}` reads two items, strongly
//! consistent, without an index.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use mailward_tasks::Task;
use uuid::Uuid;

fn task_item(task: &Task, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(task.org_id),
        keys::task_sk(task.domain_id, task.id),
        encode(task)?,
    )
    .with_version(version))
}

/// The writes that store a new task and its reference.
pub fn create_ops(task: &Task) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: task_item(task, 1)?,
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: Item::new(
                keys::org_pk(task.org_id),
                keys::task_ref_sk(task.id),
                task.domain_id.as_bytes().to_vec(),
            ),
            condition: Condition::NotExists,
        },
    ])
}

/// The write that saves a changed task if nobody changed it since `read_version`.
pub fn save_op(task: &Task, read_version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: task_item(task, read_version + 1)?,
        condition: Condition::Version(read_version),
    })
}

/// Every task of one domain, with versions.
pub async fn list_for_domain(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<Versioned<Task>>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::task_domain_prefix(domain)),
    )
    .await?
    .iter()
    .map(decode_versioned)
    .collect()
}

/// Every task of an organization (filtering and sorting happen in memory, as for domains).
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Task>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::TASK_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// One task of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Task>>, StoreError> {
    let Some(reference) = store
        .get(&keys::org_pk(org), &keys::task_ref_sk(id), true)
        .await?
    else {
        return Ok(None);
    };
    let Ok(domain) = Uuid::from_slice(&reference.data) else {
        return Err(StoreError::Unavailable(format!(
            "corrupt task reference {}",
            reference.sk
        )));
    };
    store
        .get(&keys::org_pk(org), &keys::task_sk(domain, id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The deletes that remove every task of a domain and their references.
pub async fn delete_ops_for_domain(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<WriteOp>, StoreError> {
    let tasks = list_for_domain(store, org, domain).await?;
    Ok(tasks
        .iter()
        .flat_map(|t| {
            [
                WriteOp::Delete {
                    pk: keys::org_pk(org),
                    sk: keys::task_sk(domain, t.value.id),
                    condition: Condition::None,
                },
                WriteOp::Delete {
                    pk: keys::org_pk(org),
                    sk: keys::task_ref_sk(t.value.id),
                    condition: Condition::None,
                },
            ]
        })
        .collect())
}
