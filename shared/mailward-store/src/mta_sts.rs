//! Served MTA-STS policies, one per domain name under `MTASTS#<domain>`/`POLICY`: the policy
//! route finds a policy by the host name it was asked for, without an organization.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::mta_sts::ServedPolicy;
use mailward_domain::store::{Condition, ItemStore, StoreError, WriteOp};

const SK: &str = "POLICY";

/// The policy served for `domain` (lower-case, no trailing dot).
pub async fn get(
    store: &dyn ItemStore,
    domain: &str,
) -> Result<Option<Versioned<ServedPolicy>>, StoreError> {
    store
        .get(&keys::mta_sts_policy_pk(domain), SK, true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// The write that serves `policy` for `domain`, replacing the version read (`None`: nothing
/// was there).
pub fn put_op(
    domain: &str,
    policy: &ServedPolicy,
    version: Option<u64>,
) -> Result<WriteOp, StoreError> {
    let (item, condition) = super::versioned_item(
        keys::mta_sts_policy_pk(domain),
        SK.to_owned(),
        policy,
        version,
    )?;
    Ok(WriteOp::Put { item, condition })
}

/// The write that stops serving `domain`'s policy.
pub fn delete_op(domain: &str) -> WriteOp {
    WriteOp::Delete {
        pk: keys::mta_sts_policy_pk(domain),
        sk: SK.to_owned(),
        condition: Condition::None,
    }
}

/// The write that stops serving `domain`'s policy if it is still the version read (another
/// organization's policy, served meanwhile, is never removed).
pub fn delete_op_if(domain: &str, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::mta_sts_policy_pk(domain),
        sk: SK.to_owned(),
        condition: Condition::Version(version),
    }
}
