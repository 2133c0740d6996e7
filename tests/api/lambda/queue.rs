//! `worker-queue`: SQS batches of the jobs and deliveries queues, answered with the
//! partial-batch response (`ReportBatchItemFailures`): only the records that must run again.

use crate::common::{ApiRequest, Lambda, fixture};
use aws_lambda_events::event::sqs::SqsEvent;
use mailward_api_tests::faulty_store::StoreCall;
use mailward_domain::queue::QueueName;
use mailward_domain::store::StoreError;
use serde_json::{Value, json};
use worker_queue::ConsumedQueues;

/// The organization whose partition the store cannot read (in both SQS fixtures).
const POISONED_ORG: &str = "0f5e2d41-7c39-4b8a-9e61-3a2c5b7d9e01";

/// The queue URLs `template.yaml` hands the function; the fixtures' ARNs name the same queues.
fn queues() -> ConsumedQueues {
    ConsumedQueues {
        jobs: "https://sqs.eu-west-1.amazonaws.com/123456789012/mailward-JobsQueue-Q8bX2LcWm3Tz"
            .into(),
        deliveries:
            "https://sqs.eu-west-1.amazonaws.com/123456789012/mailward-DeliveriesQueue-H5vN0pRk7Ys1"
                .into(),
    }
}

/// A state whose store fails every read in the poisoned organization's partition: an outage
/// its jobs cannot get past, so SQS must deliver them again.
fn with_poisoned_org() -> Lambda {
    let partition = format!("ORG#{POISONED_ORG}");
    Lambda::with_store_rule(Box::new(move |call| match call {
        StoreCall::Get(pk, _) if *pk == partition => {
            Err(StoreError::Unavailable("injected outage".into()))
        }
        _ => Ok(()),
    }))
}

/// Runs one SQS event as the function's `main` does (read into `SqsEvent`, the batch response
/// serialized back): the JSON Lambda receives.
async fn invoke(lambda: &Lambda, event: &Value) -> Value {
    let event: SqsEvent =
        serde_json::from_slice(&serde_json::to_vec(event).unwrap()).expect("an SQS event");
    let response = worker_queue::handle_sqs_batch(&lambda.state, &queues(), event).await;
    serde_json::to_value(&response).expect("json")
}

fn message_id(event: &Value, record: usize) -> Value {
    event["Records"][record]["messageId"].clone()
}

#[tokio::test]
async fn a_jobs_batch_reports_exactly_the_job_that_failed() {
    let lambda = with_poisoned_org();
    let s = lambda.sign_up().await;
    // Deleting the organization through api-account's Lambda queues its purge.
    let delete = ApiRequest::new("DELETE", &format!("/organizations/{}", s.org_id))
        .route("/organizations/{id}")
        .key(&s.key)
        .event();
    let response = lambda.http(api_account::routes(), &delete).await;
    assert_eq!(response["statusCode"], 202, "{response}");
    let purge = lambda
        .drain(QueueName::Jobs)
        .await
        .into_iter()
        .find(|body| body.contains("\"delete_organization\""))
        .expect("the purge was queued");

    // One batch: that purge (due), a job not due before 2100, a body that is no job, and a
    // purge the store cannot serve.
    let mut event = fixture("sqs-jobs-batch.json");
    event["Records"][0]["body"] = json!(purge);
    let response = invoke(&lambda, &event).await;
    assert_eq!(
        response,
        json!({"batchItemFailures": [{"itemIdentifier": message_id(&event, 3)}]}),
        "only the failed job is retried; the early one was sent again, the garbage discarded"
    );

    // The due job ran its first pass: the record stays (deleting) until the final pass.
    let org = s.org_id.parse().unwrap();
    let store = lambda.state.store.as_ref();
    let left = mailward_store::orgs::get(store, org).await.unwrap();
    let left = left.expect("the first pass keeps the record");
    assert_eq!(left.value.state, mailward_domain::model::OrgState::Deleting);
    // The early job went back on the queue with SQS's longest delay, beside the purge's final
    // pass (queued 900 s later); the garbage did not.
    assert!(lambda.drain(QueueName::Jobs).await.is_empty());
    lambda.clock.advance(time::Duration::seconds(900));
    let early: Value = serde_json::from_str(event["Records"][1]["body"].as_str().unwrap()).unwrap();
    let again = lambda.drain(QueueName::Jobs).await;
    let mut again: Vec<Value> = again
        .iter()
        .map(|body| serde_json::from_str(body).expect("only envelopes were sent"))
        .collect();
    let last = again
        .iter()
        .position(|job| job["job"] == "delete_organization")
        .expect("the final pass was queued");
    let last = again.remove(last);
    assert_eq!(last["data"]["final_pass"], true, "{last}");
    assert_eq!(again, vec![early]);

    // The final pass, delivered in a batch of its own, removes the record.
    let mut event = fixture("sqs-jobs-batch.json");
    event["Records"] = json!([event["Records"][0].clone()]);
    event["Records"][0]["body"] = json!(last.to_string());
    let response = invoke(&lambda, &event).await;
    assert_eq!(response, json!({"batchItemFailures": []}));
    let left = mailward_store::orgs::get(store, org).await.unwrap();
    assert!(left.is_none(), "the final pass removed the record");
}

#[tokio::test]
async fn a_deliveries_batch_reports_the_failed_delivery_and_an_unknown_queue() {
    let lambda = with_poisoned_org();
    let event = fixture("sqs-deliveries-batch.json");
    // A delivery whose endpoint cannot be read fails; one whose endpoint is gone is dropped.
    let response = invoke(&lambda, &event).await;
    assert_eq!(
        response,
        json!({"batchItemFailures": [{"itemIdentifier": message_id(&event, 0)}]})
    );
    // With the store healthy the whole batch succeeds: the list is empty, not absent.
    let healthy = Lambda::new();
    assert_eq!(
        invoke(&healthy, &event).await,
        json!({"batchItemFailures": []})
    );
    // A record from a queue the function was not given is left to SQS, not acknowledged.
    let mut stray = event.clone();
    stray["Records"][1]["eventSourceARN"] =
        json!("arn:aws:sqs:eu-west-1:123456789012:mailward-OtherQueue-0000");
    assert_eq!(
        invoke(&healthy, &stray).await,
        json!({"batchItemFailures": [{"itemIdentifier": message_id(&stray, 1)}]})
    );
}
