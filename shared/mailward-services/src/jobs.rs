//! Background jobs: enqueued as [`Envelope`]s, run by the queue worker (an SQS-triggered Lambda
//! on AWS, in-process workers locally). Every job is idempotent: at-least-once delivery may run
//! it twice.

use crate::error::ServiceError;
use crate::state::AppState;
use futures::StreamExt as _;
use mailward_domain::model::OrgState;
use mailward_domain::queue::{Due, Envelope, QueueName, check_due, send_job};
use mailward_store::orgs;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Job name: purge an organization marked `deleting`.
pub const DELETE_ORGANIZATION: &str = "delete_organization";

/// Payload of [`DELETE_ORGANIZATION`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeleteOrganization {
    /// The organization to purge.
    pub org_id: Uuid,
}

/// Queues the purge of an organization.
pub async fn enqueue_delete_organization(
    state: &AppState,
    org_id: Uuid,
) -> Result<(), ServiceError> {
    let data = serde_json::to_value(DeleteOrganization { org_id })?;
    send_job(
        state.queue.as_ref(),
        QueueName::Jobs,
        DELETE_ORGANIZATION,
        data,
        state.clock.unix(),
        0,
    )
    .await?;
    Ok(())
}

/// What happened to one message.
#[derive(Debug, PartialEq, Eq)]
pub enum Handled {
    /// The job ran to completion: ack it.
    Done,
    /// The job is not due yet and was sent again with the remaining delay: ack this copy.
    Requeued,
    /// The body is not a job (or an unknown job): ack it so it does not loop; it was logged.
    Discarded,
}

/// Handles one received message body. An `Err` means "leave it on the queue": it comes back
/// after the visibility timeout and dead-letters after too many attempts.
pub async fn handle_message(
    state: &AppState,
    queue: QueueName,
    body: &str,
) -> anyhow::Result<Handled> {
    let due = match check_due(body, state.clock.unix()) {
        Ok(due) => due,
        Err(e) => {
            tracing::error!(queue = queue.as_str(), error = %e, "discarding a message that is not a job envelope");
            return Ok(Handled::Discarded);
        }
    };
    match due {
        Due::Requeue(envelope, delay) => {
            let body = serde_json::to_string(&envelope)?;
            state.queue.send(queue, body, delay).await?;
            Ok(Handled::Requeued)
        }
        Due::Run(envelope) => run_job(state, envelope).await,
    }
}

async fn run_job(state: &AppState, envelope: Envelope) -> anyhow::Result<Handled> {
    match envelope.job.as_str() {
        DELETE_ORGANIZATION => {
            let job: DeleteOrganization = serde_json::from_value(envelope.data)?;
            delete_organization(state, job.org_id).await?;
            Ok(Handled::Done)
        }
        crate::reconcile::RECONCILE_BATCH => {
            let batch: crate::reconcile::ReconcileBatch = serde_json::from_value(envelope.data)?;
            crate::reconcile::run_batch(state, batch).await?;
            Ok(Handled::Done)
        }
        crate::sweep::SWEEP_BATCH => {
            let batch: crate::sweep::SweepBatch = serde_json::from_value(envelope.data)?;
            crate::sweep::run_batch(state, batch).await?;
            Ok(Handled::Done)
        }
        crate::reports::senders::IDENTIFY_SENDERS => {
            let job: crate::reports::senders::IdentifySenders =
                serde_json::from_value(envelope.data)?;
            crate::reports::senders::identify_domain(state, job.org_id, job.domain_id).await?;
            Ok(Handled::Done)
        }
        crate::tasks::TASK_EVENT_CHECK => {
            let check: crate::tasks::EventCheck = serde_json::from_value(envelope.data)?;
            crate::tasks::run_check(state, check).await?;
            Ok(Handled::Done)
        }
        crate::notifications::SEND_NOTIFICATION => {
            let job: crate::notifications::Notification = serde_json::from_value(envelope.data)?;
            crate::notifications::send(state, job).await?;
            Ok(Handled::Done)
        }
        crate::notifications::digest::SEND_DIGEST => {
            let job: crate::notifications::digest::DigestJob =
                serde_json::from_value(envelope.data)?;
            crate::notifications::digest::send(state, job).await?;
            Ok(Handled::Done)
        }
        crate::notifications::reminders::SEND_REMINDERS => {
            let job: crate::notifications::reminders::RemindersJob =
                serde_json::from_value(envelope.data)?;
            crate::notifications::reminders::send(state, job).await?;
            Ok(Handled::Done)
        }
        crate::webhooks::delivery::DELIVER_WEBHOOK => {
            let job: crate::webhooks::delivery::DeliveryJob =
                serde_json::from_value(envelope.data)?;
            crate::webhooks::delivery::deliver(state, job).await?;
            Ok(Handled::Done)
        }
        other => {
            tracing::error!(job = other, "discarding an unknown job");
            Ok(Handled::Discarded)
        }
    }
}

/// Removes every item of an organization marked `deleting`: API key lookups first (the keys
/// already answer 401 because the organization is `deleting`), then the partition, then the
/// organization record itself, so a crash half-way leaves the job repeatable.
pub async fn delete_organization(state: &AppState, org_id: Uuid) -> anyhow::Result<()> {
    let store = state.store.as_ref();
    let Some(org) = orgs::get(store, org_id).await? else {
        return Ok(());
    };
    if org.value.state != OrgState::Deleting {
        tracing::warn!(org.id = %org_id, "refusing to purge an organization that is not marked deleting");
        return Ok(());
    }
    // What Mailward serves for the organization's domains goes first (hosted records, served
    // MTA-STS policies, report authorizations no other organization needs): the purge below
    // removes only the organization's own items.
    for domain in mailward_store::domains::list(store, org_id).await? {
        crate::domains::hosted::withdraw(state, &domain).await;
    }
    let items = orgs::purge(store, org_id).await?;
    tracing::info!(org.id = %org_id, items, "organization purged");
    Ok(())
}

/// Receives and handles up to `max` messages from `queue` once (the local workers call this in a
/// loop). Returns how many messages were received.
pub async fn drain_once(
    state: &AppState,
    queue: QueueName,
    max: usize,
    visibility_secs: u64,
) -> anyhow::Result<usize> {
    let messages = state.queue.receive(queue, max, visibility_secs).await?;
    let count = messages.len();
    // The batch runs concurrently: one slow receiver must not hold up the others.
    futures::stream::iter(messages)
        .for_each_concurrent(None, |message| async move {
            match handle_message(state, queue, &message.body).await {
                Ok(_) => {
                    if let Err(e) = state.queue.ack(queue, &message.receipt).await {
                        tracing::warn!(queue = queue.as_str(), message.id = %message.id, error = %e, "ack failed; the message will run again");
                    }
                }
                Err(e) => tracing::warn!(queue = queue.as_str(), message.id = %message.id, attempt = message.receive_count, error = %e, "job failed; it will be retried"),
            }
        })
        .await;
    Ok(count)
}
