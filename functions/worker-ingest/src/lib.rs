//! The `worker-ingest` function: the report mailbox on AWS. SES receives mail for the report
//! domain; the receipt rule's S3 action writes each message to the objects bucket under
//! `inbound/` and notifies an SNS topic with the receipt (`notificationType` `Received`: the
//! envelope recipients the rule accepted, SES's DKIM and DMARC verdicts, and the object's key).
//! This handler, subscribed to that topic, ingests the message for the domains its recipients
//! name (`mailward_workers::ingest`, [`Delivery`]) and removes the inbound copy (ingestion keeps
//! the raw message under `reports/raw/`). An S3 object-created event would carry neither the
//! recipients nor the verdicts, so the bucket notifies nothing. A store failure fails the
//! invocation, and Lambda retries it.

use mailward_services::AppState;
use mailward_workers::ingest::Delivery;
use serde::Deserialize;

/// Prefix SES writes received messages under.
pub const INBOUND_PREFIX: &str = "inbound/";

#[derive(Debug, Deserialize)]
struct SnsEvent {
    #[serde(rename = "Records", default)]
    records: Vec<SnsRecord>,
}

#[derive(Debug, Deserialize)]
struct SnsRecord {
    #[serde(rename = "Sns")]
    sns: SnsMessage,
}

#[derive(Debug, Deserialize)]
struct SnsMessage {
    /// The SES notification, as a JSON string.
    #[serde(rename = "Message")]
    message: String,
}

/// An SES receipt notification (only the fields used).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SesNotification {
    notification_type: String,
    receipt: Receipt,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Receipt {
    /// The envelope recipients (`RCPT TO`) the receipt rule accepted.
    #[serde(default)]
    recipients: Vec<String>,
    dkim_verdict: Option<Verdict>,
    dmarc_verdict: Option<Verdict>,
    action: Action,
}

#[derive(Debug, Deserialize)]
struct Verdict {
    status: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Action {
    #[serde(rename = "type")]
    kind: String,
    object_key: Option<String>,
}

impl Receipt {
    /// SES's word that the message passed DMARC (aligned SPF or DKIM for its From domain) and
    /// carried a valid DKIM signature.
    fn authenticated(&self) -> bool {
        let pass = |v: &Option<Verdict>| {
            v.as_ref()
                .is_some_and(|v| v.status.eq_ignore_ascii_case("PASS"))
        };
        pass(&self.dkim_verdict) && pass(&self.dmarc_verdict)
    }
}

/// Ingests the message of every SES receipt notification the event carries; answers what
/// happened to each report. Notifications of other kinds, or naming objects outside `inbound/`,
/// are skipped with a warning.
pub async fn handle_sns_event(
    state: &AppState,
    event: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let event: SnsEvent = serde_json::from_value(event.clone())?;
    let objects = state.objects.as_ref().ok_or_else(|| {
        anyhow::anyhow!("no object store is configured (MAILWARD_OBJECTS_BUCKET)")
    })?;
    let limits = mailward_reports::Limits::default();
    let mut results = Vec::new();
    for record in event.records {
        let notification: SesNotification = match serde_json::from_str(&record.sns.message) {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "ignoring an SNS message that is not an SES receipt");
                continue;
            }
        };
        let receipt = notification.receipt;
        let key = match (
            notification.notification_type.as_str(),
            receipt.action.kind.as_str(),
            receipt.action.object_key.as_deref(),
        ) {
            ("Received", "S3", Some(key)) if key.starts_with(INBOUND_PREFIX) => key.to_owned(),
            (kind, action, key) => {
                tracing::warn!(notification = kind, action, object.key = ?key, "ignoring a receipt that names no inbound object");
                continue;
            }
        };
        let Some(bytes) = objects.get(&key).await? else {
            // Already ingested by an earlier delivery of this notification.
            continue;
        };
        let delivery = Delivery::mail_to(receipt.recipients.iter().cloned())
            .authenticated(receipt.authenticated());
        let outcomes = mailward_workers::ingest::ingest(state, bytes, &delivery, &limits)
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
