//! Creating the single table (tests against moto, local bootstrapping).

use super::codec::{GSI1, GSI2, PK, SK, TTL};
use aws_sdk_dynamodb::error::DisplayErrorContext;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus,
    TimeToLiveSpecification,
};
use std::time::Duration;

/// How long to wait for a new table to become ACTIVE (instant on moto, seconds on AWS).
const ACTIVE_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(500);

fn key(name: &str, key_type: KeyType) -> anyhow::Result<KeySchemaElement> {
    Ok(KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()?)
}

/// Creates the table [`DynamoStore`](super::DynamoStore) expects: `pk`/`sk` keys, GSIs `gsi1`
/// and `gsi2` (projection ALL), on-demand billing, a NEW_AND_OLD_IMAGES stream, and TTL on
/// `ttl`. Waits for the table to be ACTIVE before enabling TTL, as AWS requires.
pub async fn create_table(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    let mut request = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()?,
        );
    for attr in [PK, SK, GSI1.1, GSI1.2, GSI2.1, GSI2.2] {
        request = request.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(attr)
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        );
    }
    for (index, pk, sk) in [GSI1, GSI2] {
        request = request.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(index)
                .key_schema(key(pk, KeyType::Hash)?)
                .key_schema(key(sk, KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()?,
        );
    }
    request
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("creating table {name}: {}", DisplayErrorContext(&e)))?;
    wait_until_active(client, name).await?;
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name(TTL)
                .build()?,
        )
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("enabling TTL on {name}: {}", DisplayErrorContext(&e)))?;
    Ok(())
}

async fn wait_until_active(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + ACTIVE_TIMEOUT;
    loop {
        let described = client
            .describe_table()
            .table_name(name)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("describing table {name}: {}", DisplayErrorContext(&e)))?;
        let status = described.table().and_then(|t| t.table_status());
        if status == Some(&TableStatus::Active) {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("table {name} not ACTIVE after {ACTIVE_TIMEOUT:?} (status {status:?})");
        }
        tokio::time::sleep(POLL).await;
    }
}
