//! `worker-publisher`: the table's DynamoDB stream. Outbox rows the operations wrote arrive as
//! INSERT records with their item in DynamoDB JSON; each is fanned out to the subscribed
//! webhook endpoints and deleted. A failed record is reported by sequence number and ends the
//! batch, so the shard is retried from it in order.

use crate::common::{ApiRequest, Lambda, fixture, json_body};
use base64::Engine as _;
use mailward_domain::queue::QueueName;
use mailward_domain::store::{Item, Query, query_all};
use mailward_store::keys;
use serde_json::{Value, json};

/// The `domain.created` outbox rows in the store, by the domain's name.
async fn created_rows(lambda: &Lambda) -> Vec<(String, Item)> {
    let mut rows = Vec::new();
    for shard in 0..keys::OUTBOX_SHARDS {
        let query = Query::partition(keys::outbox_pk(shard));
        for item in query_all(lambda.state.store.as_ref(), query).await.unwrap() {
            let event: Value = serde_json::from_slice(&item.data).unwrap();
            if event["type"] == "domain.created" {
                rows.push((event["object"]["url"].as_str().unwrap().to_owned(), item));
            }
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// Puts `item` into a stream record as DynamoDB writes it (`mailward-aws`'s attribute layout).
fn carry(record: &mut Value, item: &Item) {
    let keys = json!({"pk": {"S": item.pk}, "sk": {"S": item.sk}});
    let mut image = keys.clone();
    if !item.data.is_empty() {
        let data = base64::engine::general_purpose::STANDARD.encode(&item.data);
        image["d"] = json!({ "B": data });
    }
    image["v"] = json!({"N": item.version.to_string()});
    if let Some(ttl) = item.expires_at {
        image["ttl"] = json!({"N": ttl.to_string()});
    }
    record["dynamodb"]["Keys"] = keys;
    record["dynamodb"]["NewImage"] = image;
}

/// Runs one stream event as the function's `main` does; the event must also read as
/// `aws_lambda_events`' DynamoDB event (the shape Lambda delivers).
async fn invoke(lambda: &Lambda, event: &Value) -> Value {
    let _: aws_lambda_events::event::dynamodb::Event =
        serde_json::from_value(event.clone()).expect("a DynamoDB Streams event");
    worker_publisher::handle_stream_batch(&lambda.state, event.clone()).await
}

async fn exists(lambda: &Lambda, item: &Item) -> bool {
    let found = lambda.state.store.get(&item.pk, &item.sk, true).await;
    found.unwrap().is_some()
}

#[tokio::test]
async fn outbox_inserts_are_published_and_a_failed_record_ends_the_batch() {
    let lambda = Lambda::new();
    let s = lambda.sign_up().await;
    let hook = ApiRequest::new("POST", "/webhook-endpoints")
        .key(&s.key)
        .json(&json!({
            "url": "https://hooks.stream.example/mailward",
            "enabled_events": ["domain.created"],
        }));
    let created = lambda.http(api_webhooks::routes(), &hook.event()).await;
    assert_eq!(created["statusCode"], 201, "{created}");
    let endpoint = json_body(&created);
    for name in ["first-stream.example", "second-stream.example"] {
        let add = ApiRequest::new("POST", "/domains")
            .key(&s.key)
            .json(&json!({ "url": name }));
        let response = lambda.http(api_domains::routes(), &add.event()).await;
        assert_eq!(response["statusCode"], 201, "{response}");
    }
    let rows = created_rows(&lambda).await;
    let [(first_url, first), (second_url, second)] = rows.as_slice() else {
        panic!("two domain.created rows: {rows:?}");
    };
    assert!(lambda.drain(QueueName::Deliveries).await.is_empty());

    // The first record carries the first row, the last the second; between them a MODIFY of
    // another item (skipped) and an outbox row whose payload is no event (fails).
    let mut event = fixture("dynamodb-stream-outbox.json");
    carry(&mut event["Records"][0], first);
    carry(&mut event["Records"][3], second);
    let broken = event["Records"][2]["dynamodb"]["SequenceNumber"].clone();
    let response = invoke(&lambda, &event).await;
    assert_eq!(
        response,
        json!({"batchItemFailures": [{"itemIdentifier": broken}]})
    );
    let deliveries = lambda
        .drain_jobs(QueueName::Deliveries, "deliver_webhook")
        .await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    let job = &deliveries[0]["data"];
    assert_eq!(job["endpoint_id"], endpoint["id"]);
    assert_eq!(job["event_type"], "domain.created");
    let body: Value = serde_json::from_str(job["body"].as_str().unwrap()).unwrap();
    assert_eq!(&body["data"]["object"]["url"], first_url.as_str());
    assert!(!exists(&lambda, first).await, "a published row is deleted");
    assert!(
        exists(&lambda, second).await,
        "after the failure nothing ran"
    );

    // The retry without the broken row publishes the rest.
    let mut retry = fixture("dynamodb-stream-outbox.json");
    let last = retry["Records"][3].take();
    retry["Records"] = json!([last]);
    carry(&mut retry["Records"][0], second);
    assert_eq!(
        invoke(&lambda, &retry).await,
        json!({"batchItemFailures": []})
    );
    let deliveries = lambda
        .drain_jobs(QueueName::Deliveries, "deliver_webhook")
        .await;
    let body: Value =
        serde_json::from_str(deliveries[0]["data"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(&body["data"]["object"]["url"], second_url.as_str());
    assert!(!exists(&lambda, second).await);
}
