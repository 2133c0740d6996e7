//! The publisher: outbox events → one delivery job per subscribed, enabled endpoint.

use super::delivery::DeliveryJob;
use mailward_domain::events::is_subscribed;
use mailward_services::state::AppState;
use mailward_store::outbox::{self, OutboxEvent};
use mailward_store::{keys, webhooks};
use serde_json::{Map, Value, json};

/// The envelope an endpoint receives (SPEC §6.2), serialized once per endpoint so every retry
/// sends the same bytes.
pub fn envelope(event: &OutboxEvent, api_version: &str) -> Result<String, serde_json::Error> {
    let mut data = Map::new();
    data.insert("object".into(), event.object.clone());
    if let Some(previous) = &event.previous_attributes {
        data.insert("previous_attributes".into(), previous.clone());
    }
    if let Some(record) = &event.record {
        data.insert("record".into(), Value::String(record.clone()));
    }
    let created = event
        .created
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    serde_json::to_string(&json!({
        "id": event.id,
        "type": event.event_type,
        "api_version": api_version,
        "created": created,
        "data": Value::Object(data),
    }))
}

/// Enqueues one delivery per subscribed, enabled endpoint of the event's organization, and the
/// email notification the event calls for, if any. Returns how many deliveries were enqueued.
pub async fn publish_event(state: &AppState, event: &OutboxEvent) -> anyhow::Result<usize> {
    crate::notifications::on_event(state, event).await?;
    // An alert event also goes to the webhook endpoints its rule names, subscribed or not, and
    // once to an endpoint that is both.
    let routed: Vec<uuid::Uuid> = event
        .route
        .iter()
        .flat_map(|r| r.destinations.iter().filter_map(|d| d.endpoint_id))
        .collect();
    let endpoints = webhooks::list(state.store.as_ref(), event.org_id).await?;
    let mut sent = 0;
    for endpoint in endpoints {
        let wanted = is_subscribed(&endpoint.enabled_events, &event.event_type)
            || routed.contains(&endpoint.id);
        if !endpoint.receives_at(event.created) || !wanted {
            continue;
        }
        let job = DeliveryJob {
            org_id: event.org_id,
            endpoint_id: endpoint.id,
            event_id: event.id.clone(),
            event_type: event.event_type.clone(),
            body: envelope(event, &endpoint.api_version)?,
            attempt: 1,
        };
        mailward_services::job::enqueue(state, &job, 0).await?;
        sent += 1;
    }
    crate::alerts::fan_out(state, event).await?;
    Ok(sent)
}

/// Drains the outbox once (the local stack's stand-in for DynamoDB Streams): publishes each event
/// then deletes its row. A crash between the two republishes the event: receivers may see a
/// duplicate with the same id, never a lost event. Returns how many events were published.
pub async fn drain_outbox(state: &AppState, max_per_shard: usize) -> anyhow::Result<usize> {
    let mut waiting = Vec::new();
    for shard in 0..keys::OUTBOX_SHARDS {
        waiting.extend(outbox::pending(state.store.as_ref(), shard, max_per_shard).await?);
    }
    // In the order they committed, across shards (an event's shard follows its id).
    waiting.sort_by_key(|p| p.event.created);
    let mut published = 0;
    for pending in waiting {
        publish_event(state, &pending.event).await?;
        outbox::remove(state.store.as_ref(), &pending).await?;
        published += 1;
    }
    Ok(published)
}
