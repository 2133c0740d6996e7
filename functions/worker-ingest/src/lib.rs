//! The `worker-ingest` function: the report mailbox on AWS. SES receives mail for the report
//! domain and writes each message to the objects bucket under `inbound/`; the bucket's
//! object-created event runs this handler, which ingests the message
//! (`mailward_workers::ingest`) and removes the inbound copy (ingestion keeps the raw
//! message under `reports/raw/`). A store failure fails the invocation, and Lambda retries it.

use mailward_services::AppState;
use serde::Deserialize;

/// Prefix SES writes received messages under.
pub const INBOUND_PREFIX: &str = "inbound/";

#[derive(Debug, Deserialize)]
struct S3Event {
    #[serde(rename = "Records", default)]
    records: Vec<S3Record>,
}

#[derive(Debug, Deserialize)]
struct S3Record {
    s3: S3Entity,
}

#[derive(Debug, Deserialize)]
struct S3Entity {
    object: S3Object,
}

#[derive(Debug, Deserialize)]
struct S3Object {
    key: String,
}

/// Object keys in S3 events are form-URL-encoded (`+` for a space).
fn decode_key(raw: &str) -> String {
    url::form_urlencoded::parse(format!("k={raw}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| raw.to_owned())
}

/// Ingests every inbound message the event names; answers what happened to each report.
pub async fn handle_s3_event(
    state: &AppState,
    event: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let event: S3Event = serde_json::from_value(event.clone())?;
    let objects = state.objects.as_ref().ok_or_else(|| {
        anyhow::anyhow!("no object store is configured (MAILWARD_OBJECTS_BUCKET)")
    })?;
    let limits = mailward_reports::Limits::default();
    let mut results = Vec::new();
    for record in event.records {
        let key = decode_key(&record.s3.object.key);
        if !key.starts_with(INBOUND_PREFIX) {
            tracing::warn!(object.key = %key, "ignoring an object outside inbound/");
            continue;
        }
        let Some(bytes) = objects.get(&key).await? else {
            // Already ingested by an earlier delivery of this event.
            continue;
        };
        let outcomes = mailward_workers::ingest::ingest(state, bytes, &limits)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for o in &outcomes {
            tracing::info!(object.key = %key, status = ?o.status, report.id = ?o.report_id, domain = ?o.policy_domain, reason = ?o.reason, "report ingested");
        }
        objects.delete(&key).await?;
        results.push(serde_json::json!({"key": key, "reports": outcomes}));
    }
    Ok(serde_json::json!({ "messages": results }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_are_url_decoded() {
        assert_eq!(decode_key("inbound/a+b%2Bc"), "inbound/a b+c");
    }
}
