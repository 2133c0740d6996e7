//! Background jobs: enqueued as [`Envelope`]s ([`mailward_app::job`]), run by the queue worker (an
//! SQS-triggered Lambda on AWS, in-process workers locally) through [`REGISTRY`], one line per
//! job type. Every job is idempotent: at-least-once delivery may run it twice.

use futures::StreamExt as _;
use mailward_app::jobs::{
    AlertDeliveryJob, BillingQuantitiesJob, BuildExport, DeleteOrganization, DeliveryJob,
    DigestJob, EvaluateAlertRule, EventCheck, IdentifySenders, IngestUpload, Notification,
    PollMailbox, ReconcileBatch, RemindersJob, RetentionJob, SendScheduledReport, SupportMail,
    SweepBatch,
};
use mailward_domain::queue::{Due, Envelope, QueueName, check_due};
use mailward_services::job::Job;
use mailward_services::state::AppState;
use std::future::Future;
use std::pin::Pin;

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

/// A job type's runner: reads the payload, runs the job.
type Runner = for<'a> fn(
    &'a AppState,
    serde_json::Value,
) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// What running a job does: the workers' side of [`Job`] (the payload types and their names are
/// the kernel's, so an operation can send a job without linking this).
pub trait Work: Job {
    /// Runs the job. An error leaves the message on the queue for a retry.
    fn run(self, state: &AppState) -> impl Future<Output = anyhow::Result<()>> + Send;
}

impl Work for DeleteOrganization {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::purge::delete_organization(state, self.org_id, self.final_pass).await
    }
}

impl Work for ReconcileBatch {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::reconcile::run_batch(state, self).await
    }
}

impl Work for SweepBatch {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::sweep::run_batch(state, self).await
    }
}

impl Work for IdentifySenders {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        Ok(crate::identify::identify_domain(state, self.org_id, self.domain_id).await?)
    }
}

impl Work for IngestUpload {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::ingest::ingest_upload(state, self).await
    }
}

impl Work for PollMailbox {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::mailboxes::poll(state, self).await
    }
}

impl Work for AlertDeliveryJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::alerts::deliver(state, self).await
    }
}

impl Work for SendScheduledReport {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::scheduled_reports::send(state, self).await
    }
}

impl Work for EvaluateAlertRule {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::alerts::evaluate_rule(state, self).await
    }
}

impl Work for EventCheck {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        Ok(mailward_services::tasks::writes::run_check(state, self).await?)
    }
}

impl Work for Notification {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::notifications::send(state, self).await
    }
}

impl Work for DigestJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::notifications::digest::send(state, self).await
    }
}

impl Work for RemindersJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::notifications::reminders::send(state, self).await
    }
}

impl Work for BillingQuantitiesJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        mailward_billing::sync_quantities(state, self.org_id).await?;
        Ok(())
    }
}

impl Work for BuildExport {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::exports::build(state, self).await
    }
}

impl Work for SupportMail {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::notifications::support::send(state, self).await
    }
}

impl Work for RetentionJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::retention::apply(state, self.org_id).await?;
        Ok(())
    }
}

impl Work for DeliveryJob {
    async fn run(self, state: &AppState) -> anyhow::Result<()> {
        crate::webhooks::delivery::deliver(state, self).await
    }
}

fn runner<J: Work>(state: &AppState, data: serde_json::Value) -> RunFuture<'_> {
    Box::pin(async move {
        let job: J = serde_json::from_value(data)?;
        job.run(state).await
    })
}

type RunFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// One registry entry: a job type's name and its runner.
const fn register<J: Work>() -> (&'static str, Runner) {
    (J::NAME, runner::<J>)
}

/// Every job type the workers run, one line each (the payload type knows its name).
pub const REGISTRY: &[(&str, Runner)] = &[
    register::<DeleteOrganization>(),
    register::<ReconcileBatch>(),
    register::<SweepBatch>(),
    register::<IdentifySenders>(),
    register::<IngestUpload>(),
    register::<PollMailbox>(),
    register::<EventCheck>(),
    register::<Notification>(),
    register::<DigestJob>(),
    register::<RemindersJob>(),
    register::<DeliveryJob>(),
    register::<AlertDeliveryJob>(),
    register::<EvaluateAlertRule>(),
    register::<SendScheduledReport>(),
    register::<BillingQuantitiesJob>(),
    register::<RetentionJob>(),
    register::<SupportMail>(),
    register::<BuildExport>(),
];

async fn run_job(state: &AppState, envelope: Envelope) -> anyhow::Result<Handled> {
    match REGISTRY.iter().find(|(name, _)| *name == envelope.job) {
        Some((_, run)) => {
            run(state, envelope.data).await?;
            Ok(Handled::Done)
        }
        None => {
            tracing::error!(job = envelope.job, "discarding an unknown job");
            Ok(Handled::Discarded)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_type_is_registered_once_under_its_name() {
        let mut names: Vec<&str> = REGISTRY.iter().map(|(name, _)| *name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a job name is registered twice");
        for name in [
            mailward_app::jobs::DELETE_ORGANIZATION,
            mailward_app::jobs::RECONCILE_BATCH,
            mailward_app::jobs::SWEEP_BATCH,
            mailward_app::jobs::IDENTIFY_SENDERS,
            mailward_app::jobs::INGEST_UPLOAD,
            mailward_app::jobs::POLL_MAILBOX,
            mailward_app::jobs::TASK_EVENT_CHECK,
            mailward_app::jobs::SEND_NOTIFICATION,
            mailward_app::jobs::SEND_DIGEST,
            mailward_app::jobs::SEND_REMINDERS,
            mailward_app::jobs::DELIVER_WEBHOOK,
            mailward_app::jobs::DELIVER_ALERT,
            mailward_app::jobs::EVALUATE_ALERT_RULE,
            mailward_app::jobs::SEND_SCHEDULED_REPORT,
            mailward_app::jobs::APPLY_RETENTION,
            mailward_app::jobs::SEND_SUPPORT_MAIL,
            mailward_app::jobs::BUILD_EXPORT,
        ] {
            assert!(names.contains(&name), "{name} has no runner");
        }
    }
}
