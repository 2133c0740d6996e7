//! The `worker-publisher` function: reads the table's DynamoDB stream and publishes outbox events
//! (one webhook delivery job per subscribed endpoint), the AWS counterpart of the local stack's
//! in-process outbox poller. Publishing itself lives in `mailward_workers::webhooks::publisher`.

use mailward_domain::store::Condition;
use mailward_services::AppState;
use mailward_store::outbox::OutboxEvent;

/// Publishes the outbox events of one DynamoDB Streams batch: every INSERT of an `OUTBOX#` item
/// is fanned out to its endpoints, then the outbox row is deleted. A failed record is reported
/// (by sequence number) so the stream retries from it; publishing twice only duplicates
/// deliveries with the same event id, which receivers dedupe.
pub async fn handle_stream_batch(state: &AppState, event: serde_json::Value) -> serde_json::Value {
    let mut failures = Vec::new();
    let records = event
        .get("Records")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    for record in records {
        let sequence = record
            .pointer("/dynamodb/SequenceNumber")
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_owned();
        if let Err(e) = publish_stream_record(state, &record).await {
            tracing::warn!(stream.sequence = %sequence, error = %e, "publishing an outbox event failed; the stream will retry");
            failures.push(serde_json::json!({ "itemIdentifier": sequence }));
            // Later records of the shard are retried too; stop here to keep order per shard.
            break;
        }
    }
    serde_json::json!({ "batchItemFailures": failures })
}

/// The outbox row a stream record inserted, if it is one: `(pk, sk, event)`.
fn inserted_outbox_row(
    record: &serde_json::Value,
) -> anyhow::Result<Option<(String, String, OutboxEvent)>> {
    if record.get("eventName").and_then(|n| n.as_str()) != Some("INSERT") {
        return Ok(None);
    }
    let image = record
        .pointer("/dynamodb/NewImage")
        .cloned()
        .unwrap_or_default();
    let item: serde_dynamo::Item = serde_json::from_value(image)?;
    let text = |name: &str| match item.inner().get(name) {
        Some(serde_dynamo::AttributeValue::S(s)) => Some(s.clone()),
        _ => None,
    };
    let (Some(pk), Some(sk)) = (text("pk"), text("sk")) else {
        return Ok(None);
    };
    if !pk.starts_with("OUTBOX#") {
        return Ok(None);
    }
    let Some(serde_dynamo::AttributeValue::B(data)) = item.inner().get("d") else {
        anyhow::bail!("outbox item {pk}/{sk} has no payload");
    };
    Ok(Some((pk, sk, serde_json::from_slice(data)?)))
}

async fn publish_stream_record(state: &AppState, record: &serde_json::Value) -> anyhow::Result<()> {
    let Some((pk, sk, event)) = inserted_outbox_row(record)? else {
        return Ok(());
    };
    mailward_workers::webhooks::publisher::publish_event(state, &event).await?;
    state.store.delete(&pk, &sk, Condition::None).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_records_of_outbox_inserts_are_decoded() {
        use base64::Engine as _;
        let payload = serde_json::json!({
            "id": "evt_1", "type": "organization.updated", "org_id": "7d0b3a57-3b0e-4c36-9a63-2b8c1b0f5e11",
            "created": "2026-11-22T04:00:00Z", "object": {"name": "Acme"}
        });
        let b64 =
            base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&payload).unwrap());
        let record = serde_json::json!({
            "eventName": "INSERT",
            "dynamodb": {"SequenceNumber": "1", "NewImage": {
                "pk": {"S": "OUTBOX#2"}, "sk": {"S": "000001#evt_1"}, "d": {"B": b64}, "v": {"N": "1"}
            }}
        });
        let (pk, sk, event) = inserted_outbox_row(&record).unwrap().unwrap();
        assert_eq!(
            (pk.as_str(), sk.as_str(), event.id.as_str()),
            ("OUTBOX#2", "000001#evt_1", "evt_1")
        );
        assert_eq!(event.object["name"], "Acme");
        let other = serde_json::json!({"eventName": "INSERT", "dynamodb": {"NewImage": {"pk": {"S": "ORG#x"}, "sk": {"S": "META"}}}});
        assert!(inserted_outbox_row(&other).unwrap().is_none());
        let removal = serde_json::json!({"eventName": "REMOVE", "dynamodb": {}});
        assert!(inserted_outbox_row(&removal).unwrap().is_none());
    }
}
