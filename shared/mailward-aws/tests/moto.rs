//! The AWS adapters against a moto server: the shared conformance suites plus a few
//! DynamoDB-specific edges. Set `MOTO_ENDPOINT` (e.g. `http://127.0.0.1:5000`) to run them;
//! without it every test is skipped so a bare `cargo test` passes.

use async_trait::async_trait;
use aws_config::SdkConfig;
use mailward_aws::{DynamoStore, SesMailer, SqsQueue, create_queues, create_table};
use mailward_domain::mailer::{Mailer, OutboundEmail};
use mailward_domain::queue::{Queue, QueueError, QueueName};
use mailward_domain::store::{Condition, Item, ItemStore, Query, SortKey, StoreError, WriteOp};
use mailward_domain::{Clock, ManualClock};
use mailward_testkit::{TimeTravel, queue_conformance, store_conformance};
use std::sync::Arc;
use std::time::Duration;

/// SDK config for moto: explicit region and static credentials so nothing probes IMDS.
async fn moto() -> Option<SdkConfig> {
    let Ok(endpoint) = std::env::var("MOTO_ENDPOINT") else {
        println!("skipped: MOTO_ENDPOINT not set");
        return None;
    };
    Some(mailward_aws::emulator_config(&endpoint).await)
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4())
}

async fn store(config: &SdkConfig) -> (Arc<DynamoStore>, Arc<ManualClock>) {
    let client = aws_sdk_dynamodb::Client::new(config);
    let table = unique("mailward-test");
    create_table(&client, &table).await.unwrap();
    let clock = Arc::new(ManualClock::starting_now());
    let store = DynamoStore::new(client, table, Arc::clone(&clock) as Arc<dyn Clock>);
    (Arc::new(store), clock)
}

#[tokio::test]
async fn dynamo_store_passes_the_conformance_suite() {
    let Some(config) = moto().await else { return };
    let (store, clock) = store(&config).await;
    store_conformance(store, clock).await;
}

/// Real time passes for SQS: the suite's "time travel" sleeps.
struct Sleep;

#[async_trait]
impl TimeTravel for Sleep {
    async fn pass(&self, secs: u64) {
        tokio::time::sleep(Duration::from_secs(secs)).await;
    }
}

#[tokio::test]
async fn sqs_queue_passes_the_conformance_suite() {
    let Some(config) = moto().await else { return };
    let client = aws_sdk_sqs::Client::new(&config);
    let urls = create_queues(&client, &uuid::Uuid::new_v4().to_string(), 3)
        .await
        .unwrap();
    queue_conformance(Arc::new(SqsQueue::new(client, urls)), &Sleep).await;
}

#[tokio::test]
async fn expired_items_count_as_absent_for_every_operation() {
    let Some(config) = moto().await else { return };
    let (store, clock) = store(&config).await;
    let pk = unique("EXPIRED");
    let doomed = Item::new(&pk, "A", b"x".to_vec())
        .with_version(4)
        .expiring_at(clock.unix() + 5);
    store.put(doomed, Condition::None).await.unwrap();
    clock.advance(time::Duration::seconds(5));
    // Deleting an expired item reports that nothing live was deleted.
    let again = Item::new(&pk, "B", b"x".to_vec()).expiring_at(clock.unix());
    store.put(again, Condition::None).await.unwrap();
    assert!(!store.delete(&pk, "B", Condition::None).await.unwrap());
    // Version and Exists conditions fail on it, in plain writes and in transactions.
    let stale = store
        .put(Item::new(&pk, "A", b"y".to_vec()), Condition::Version(4))
        .await;
    assert!(
        matches!(stale, Err(StoreError::ConditionFailed)),
        "{stale:?}"
    );
    let gone = store.delete(&pk, "A", Condition::Exists).await;
    assert!(matches!(gone, Err(StoreError::ConditionFailed)), "{gone:?}");
    let txn = store
        .transact(vec![
            WriteOp::Check {
                pk: pk.clone(),
                sk: "C".into(),
                condition: Condition::None,
            },
            WriteOp::Check {
                pk: pk.clone(),
                sk: "A".into(),
                condition: Condition::Exists,
            },
        ])
        .await;
    assert!(
        matches!(
            txn,
            Err(StoreError::TransactionCanceled { failed: Some(1) })
        ),
        "{txn:?}"
    );
    // NotExists succeeds over it, in a transaction too.
    store
        .transact(vec![WriteOp::Put {
            item: Item::new(&pk, "A", b"new".to_vec()),
            condition: Condition::NotExists,
        }])
        .await
        .unwrap();
    assert_eq!(
        store.get(&pk, "A", true).await.unwrap().map(|i| i.data),
        Some(b"new".to_vec())
    );
}

#[tokio::test]
async fn counters_read_back_and_edge_queries_behave() {
    let Some(config) = moto().await else { return };
    let (store, clock) = store(&config).await;
    let pk = unique("EDGE");
    let end = clock.unix() + 60;
    assert_eq!(store.increment(&pk, "N", 3, Some(end)).await.unwrap(), 3);
    let counter = store.get(&pk, "N", true).await.unwrap().unwrap();
    assert_eq!(
        (counter.counter, counter.expires_at, counter.data.len()),
        (Some(3), Some(end), 0)
    );
    assert_eq!(counter.version, 1);
    // An inverted range matches nothing instead of failing.
    let mut q = Query::partition(&pk);
    q.sort = SortKey::Between("z".into(), "a".into());
    assert!(store.query(q).await.unwrap().items.is_empty());
    // A cursor from another partition is refused.
    for sk in ["a", "b", "c"] {
        store
            .put(Item::new(&pk, sk, b"x".to_vec()), Condition::None)
            .await
            .unwrap();
    }
    let page = store.query(Query::partition(&pk).limit(1)).await.unwrap();
    let foreign = store
        .query(Query::partition("other").after(page.cursor))
        .await;
    assert!(
        matches!(foreign, Err(StoreError::Invalid(_))),
        "{foreign:?}"
    );
    assert!(store.transact(Vec::new()).await.is_ok());
    // Empty key strings, which DynamoDB refuses, are invalid requests (writes) or absent (reads).
    let blank = store
        .put(Item::new(&pk, "", b"x".to_vec()), Condition::None)
        .await;
    assert!(matches!(blank, Err(StoreError::Invalid(_))), "{blank:?}");
    let blank_index = Item::new(&pk, "d", b"x".to_vec()).with_gsi1("", "s");
    let blank = store.put(blank_index, Condition::None).await;
    assert!(matches!(blank, Err(StoreError::Invalid(_))), "{blank:?}");
    assert!(store.get("", "a", true).await.unwrap().is_none());
    assert!(
        store
            .query(Query::partition(""))
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn backend_failures_are_unavailable() {
    let Some(config) = moto().await else { return };
    let client = aws_sdk_dynamodb::Client::new(&config);
    let clock: Arc<dyn Clock> = Arc::new(ManualClock::starting_now());
    let store = DynamoStore::new(client, unique("missing-table"), clock);
    let result = store.get("a", "b", true).await;
    match result {
        Err(StoreError::Unavailable(message)) => {
            assert!(message.contains("ResourceNotFound"), "{message}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn ses_mailer_sends_from_a_verified_identity() {
    let Some(config) = moto().await else { return };
    let client = aws_sdk_sesv2::Client::new(&config);
    let from = format!("{}@example.com", uuid::Uuid::new_v4());
    client
        .create_email_identity()
        .email_identity(&from)
        .send()
        .await
        .unwrap();
    let mailer = SesMailer::new(client, from);
    mailer
        .send(OutboundEmail {
            attachments: Vec::new(),
            to: "someone@example.org".into(),
            subject: "Your code".into(),
            text: "123456".into(),
            html: Some("<p>123456</p>".into()),
            unsubscribe_url: Some(
                "https://mailward.example/notifications/unsubscribe?token=t".into(),
            ),
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn sqs_refuses_bodies_it_cannot_carry() {
    let Some(config) = moto().await else { return };
    let client = aws_sdk_sqs::Client::new(&config);
    let urls = create_queues(&client, &uuid::Uuid::new_v4().to_string(), 3)
        .await
        .unwrap();
    let queue = SqsQueue::new(client, urls);
    // (moto does not check SQS's allowed characters, so only the size limit is exercised.)
    let sent = queue
        .send(QueueName::Jobs, "x".repeat(2 * 1024 * 1024), 0)
        .await;
    assert!(matches!(sent, Err(QueueError::Invalid(_))), "{sent:?}");
}

#[tokio::test]
async fn s3_object_store_stores_and_accepts_signed_form_uploads() {
    use mailward_domain::objects::{ObjectStore, UploadPolicy};
    let Some(config) = moto().await else { return };
    let objects = mailward_aws::S3ObjectStore::new(&config, unique("mailward-objects"));
    objects.create_bucket().await.unwrap();

    objects
        .put("a/b.txt", bytes::Bytes::from_static(b"hello"), "text/plain")
        .await
        .unwrap();
    assert_eq!(
        objects.get("a/b.txt").await.unwrap(),
        Some(b"hello".to_vec())
    );
    let info = objects.head("a/b.txt").await.unwrap().unwrap();
    assert_eq!(
        (info.size, info.content_type.as_deref()),
        (5, Some("text/plain"))
    );
    objects.delete("a/b.txt").await.unwrap();
    assert_eq!(objects.head("a/b.txt").await.unwrap(), None);
    mailward_testkit::object_listing_conformance(&objects).await;
    assert_eq!(objects.get("a/b.txt").await.unwrap(), None);
    assert!(
        objects
            .put("../x", vec![1].into(), "text/plain")
            .await
            .is_err()
    );

    // The signed form uploads the file under the policy's key.
    let policy = UploadPolicy {
        key: "support/org/shot.png".into(),
        content_type: "image/png".into(),
        max_bytes: 1024,
        expires_at: time::OffsetDateTime::now_utc() + time::Duration::minutes(15),
    };
    let form = objects.presign_upload(&policy).await.unwrap();
    let upload = |bytes: Vec<u8>| {
        let mut multipart = reqwest::multipart::Form::new();
        for (name, value) in &form.fields {
            multipart = multipart.text(name.clone(), value.clone());
        }
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name("shot.png")
            .mime_str("image/png")
            .unwrap();
        let multipart = multipart.part("file", part);
        let url = form.url.clone();
        async move {
            reqwest::Client::new()
                .post(url)
                .multipart(multipart)
                .send()
                .await
                .unwrap()
        }
    };
    let res = upload(vec![7; 100]).await;
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    let stored = objects.head("support/org/shot.png").await.unwrap().unwrap();
    assert_eq!(stored.size, 100);
    // moto 5.2.5 does not evaluate POST policies (an oversized upload is stored too), so the
    // size and type conditions are checked on the signed document in the adapter's unit test;
    // real S3 refuses such uploads with EntityTooLarge.
}

#[tokio::test]
async fn route53_zone_upserts_reads_and_removes_record_sets() {
    use mailward_domain::hosted_zone::{HostedZone, ZoneError, ZoneRecord, ZoneRecordKind};
    let Some(config) = moto().await else { return };
    let client = aws_sdk_route53::Client::new(&config);
    let apex = format!("{}.example.com", uuid::Uuid::new_v4().simple());
    let created = client
        .create_hosted_zone()
        .name(&apex)
        .caller_reference(uuid::Uuid::new_v4().to_string())
        .send()
        .await
        .unwrap();
    let id = created.hosted_zone().unwrap().id().to_owned();
    let zones = mailward_aws::route53::parse_zones(&format!("{apex}={id}")).unwrap();
    let zone = mailward_aws::route53::Route53Zone::new(client, zones)
        .with_backoff(Duration::from_millis(1));

    let name = format!("client.test._dmarc.{apex}");
    let long = format!(
        "v=DMARC1; p=reject; rua=mailto:{}@x.example",
        "a".repeat(300)
    );
    zone.upsert(&[ZoneRecord::txt(&name, "v=DMARC1; p=none", 300)])
        .await
        .unwrap();
    let read = zone.records(&name).await.unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].kind, ZoneRecordKind::Txt);
    assert_eq!(read[0].values, ["v=DMARC1; p=none"]);
    assert_eq!(read[0].ttl, 300);
    // Replaced, with a value longer than one TXT string.
    zone.upsert(&[ZoneRecord::txt(&name, &long, 300)])
        .await
        .unwrap();
    assert_eq!(zone.records(&name).await.unwrap()[0].values, [long]);
    // Many record sets go out in batches.
    let many: Vec<ZoneRecord> = (0..450)
        .map(|i| ZoneRecord::txt(&format!("d{i}._report._dmarc.{apex}"), "v=DMARC1", 300))
        .collect();
    zone.upsert(&many).await.unwrap();
    assert_eq!(
        zone.records(&format!("d449._report._dmarc.{apex}"))
            .await
            .unwrap()[0]
            .values,
        ["v=DMARC1"]
    );
    // Removing, twice: the second is a no-op.
    let key = vec![(name.clone(), ZoneRecordKind::Txt)];
    zone.remove(&key).await.unwrap();
    assert!(zone.records(&name).await.unwrap().is_empty());
    zone.remove(&key).await.unwrap();
    // A name outside every zone is refused before any call.
    assert!(matches!(
        zone.upsert(&[ZoneRecord::txt("x.elsewhere.example", "v=DMARC1", 300)])
            .await,
        Err(ZoneError::Rejected(_))
    ));
}
