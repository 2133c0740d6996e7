//! `worker-sweep`: the schedules' events. The sweep runs on any event but the reconciliation's
//! input (`{"job": "reconcile"}`), whatever its envelope (an EventBridge rule's "Scheduled
//! Event", or what EventBridge Scheduler delivers).

use crate::common::{ApiRequest, Lambda, fixture, json_body};
use mailward_domain::queue::QueueName;
use serde_json::{Value, json};

/// The `(organization, domain)` pairs of every batch of `job` on the jobs queue, sorted.
async fn batched(lambda: &Lambda, job: &str) -> Vec<Value> {
    let mut pairs: Vec<Value> = lambda
        .drain_jobs(QueueName::Jobs, job)
        .await
        .iter()
        .flat_map(|envelope| envelope["data"]["domains"].as_array().cloned().unwrap())
        .collect();
    pairs.sort_by_key(Value::to_string);
    pairs
}

#[tokio::test]
async fn the_sweep_schedule_batches_every_due_domain_and_the_reconcile_input_every_domain() {
    let lambda = Lambda::new();
    let s = lambda.sign_up().await;
    let mut expected = Vec::new();
    for name in ["one-sweep.example", "two-sweep.example"] {
        let add = ApiRequest::new("POST", "/domains")
            .key(&s.key)
            .json(&json!({ "url": name }));
        let domain = json_body(&lambda.http(api_domains::routes(), &add.event()).await);
        expected.push(json!([s.org_id, domain["id"]]));
    }
    expected.sort_by_key(Value::to_string);
    // What creating them queued is not the sweep's doing.
    lambda.drain(QueueName::Jobs).await;

    let scheduled = fixture("eventbridge-scheduled-event.json");
    let shape: aws_lambda_events::event::eventbridge::EventBridgeEvent =
        serde_json::from_value(scheduled.clone()).expect("an EventBridge event");
    assert_eq!(shape.detail_type, "Scheduled Event");
    let answer = worker_sweep::handle_schedule(&lambda.state, &scheduled)
        .await
        .unwrap();
    assert_eq!(answer, json!({"enqueued": 2}));
    assert_eq!(batched(&lambda, "sweep_batch").await, expected);

    let reconcile = fixture("scheduler-reconcile-input.json");
    let answer = worker_sweep::handle_schedule(&lambda.state, &reconcile)
        .await
        .unwrap();
    assert_eq!(answer, json!({"reconcile_enqueued": 2}));
    assert_eq!(batched(&lambda, "reconcile_batch").await, expected);
    assert!(
        batched(&lambda, "sweep_batch").await.is_empty(),
        "the reconciliation's event runs no sweep"
    );

    // The daily retention input queues one data-lifecycle pass per organization, no sweep.
    let retention = fixture("scheduler-retention-input.json");
    let answer = worker_sweep::handle_schedule(&lambda.state, &retention)
        .await
        .unwrap();
    assert_eq!(answer, json!({"retention_enqueued": 1, "raw_removed": 0}));
    let passes = lambda.drain_jobs(QueueName::Jobs, "apply_retention").await;
    assert_eq!(passes.len(), 1);
    assert_eq!(passes[0]["data"]["org_id"], json!(s.org_id));
    assert!(batched(&lambda, "sweep_batch").await.is_empty());

    // A schedule without input delivers an empty object: the sweep (the domains are still due:
    // nothing evaluated them).
    let answer = worker_sweep::handle_schedule(&lambda.state, &json!({}))
        .await
        .unwrap();
    assert_eq!(answer, json!({"enqueued": 2}));
}
