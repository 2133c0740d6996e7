//! The queue conformance suite.

use async_trait::async_trait;
use mailward_domain::queue::{Queue, QueueName, Received};
use std::sync::Arc;

/// How the suite lets time pass: a manual clock advances, a real backend sleeps.
#[async_trait]
pub trait TimeTravel: Send + Sync {
    /// Lets `secs` seconds pass for the queue under test.
    async fn pass(&self, secs: u64);
}

async fn receive_one(queue: &dyn Queue, name: QueueName, visibility: u64) -> Option<Received> {
    let mut got = queue.receive(name, 10, visibility).await.unwrap();
    assert!(
        got.len() <= 1,
        "expected at most one message, got {}",
        got.len()
    );
    got.pop()
}

/// Runs every queue case. The queue must be fresh (empty) and configured to dead-letter a
/// message after 3 receives without an ack.
pub async fn queue_conformance(queue: Arc<dyn Queue>, time: &dyn TimeTravel) {
    let q = &*queue;
    sent_messages_are_received_once_and_acked(q).await;
    queues_are_independent(q).await;
    delayed_messages_stay_hidden_until_due(q, time).await;
    unacked_messages_come_back_after_the_visibility_timeout(q, time).await;
    messages_dead_letter_after_three_receives(q, time).await;
    delays_beyond_the_native_maximum_are_refused(q).await;
    depth_counts_ready_waiting_and_dead(q).await;
}

/// Depth moves with sends, receives and acks (counted as deltas: earlier cases leave messages).
async fn depth_counts_ready_waiting_and_dead(q: &dyn Queue) {
    let before = q.depth(QueueName::Jobs).await.unwrap();
    q.send(QueueName::Jobs, "counted".into(), 0).await.unwrap();
    q.send(QueueName::Jobs, "later".into(), 600).await.unwrap();
    let after = q.depth(QueueName::Jobs).await.unwrap();
    assert_eq!(after.ready, before.ready + 1, "{before:?} {after:?}");
    assert_eq!(after.waiting, before.waiting + 1, "{before:?} {after:?}");
    let mut got = Vec::new();
    for _ in 0..5 {
        got.extend(q.receive(QueueName::Jobs, 10, 300).await.unwrap());
        if got.iter().any(|m| m.body == "counted") {
            break;
        }
    }
    let received = q.depth(QueueName::Jobs).await.unwrap();
    assert_eq!(received.ready, 0, "{received:?}");
    assert!(received.waiting > after.waiting - 1, "{received:?}");
    for m in got {
        q.ack(QueueName::Jobs, &m.receipt).await.unwrap();
    }
    let dead = q.depth(QueueName::Deliveries).await.unwrap().dead;
    assert!(
        dead >= 1,
        "the poison message of an earlier case is dead-lettered"
    );
}

async fn sent_messages_are_received_once_and_acked(q: &dyn Queue) {
    q.send(QueueName::Jobs, "hello".into(), 0).await.unwrap();
    let msg = receive_one(q, QueueName::Jobs, 30)
        .await
        .expect("message delivered");
    assert_eq!(msg.body, "hello");
    assert_eq!(msg.receive_count, 1);
    assert!(
        receive_one(q, QueueName::Jobs, 30).await.is_none(),
        "hidden while in flight"
    );
    q.ack(QueueName::Jobs, &msg.receipt).await.unwrap();
}

async fn queues_are_independent(q: &dyn Queue) {
    q.send(QueueName::Deliveries, "for deliveries".into(), 0)
        .await
        .unwrap();
    assert!(receive_one(q, QueueName::Jobs, 30).await.is_none());
    let msg = receive_one(q, QueueName::Deliveries, 30)
        .await
        .expect("delivered");
    assert_eq!(msg.body, "for deliveries");
    q.ack(QueueName::Deliveries, &msg.receipt).await.unwrap();
}

async fn delayed_messages_stay_hidden_until_due(q: &dyn Queue, time: &dyn TimeTravel) {
    q.send(QueueName::Jobs, "later".into(), 2).await.unwrap();
    assert!(
        receive_one(q, QueueName::Jobs, 30).await.is_none(),
        "delay must hold"
    );
    time.pass(3).await;
    let msg = receive_one(q, QueueName::Jobs, 30)
        .await
        .expect("due after the delay");
    assert_eq!(msg.body, "later");
    q.ack(QueueName::Jobs, &msg.receipt).await.unwrap();
}

async fn unacked_messages_come_back_after_the_visibility_timeout(
    q: &dyn Queue,
    time: &dyn TimeTravel,
) {
    q.send(QueueName::Jobs, "retry me".into(), 0).await.unwrap();
    let first = receive_one(q, QueueName::Jobs, 1).await.expect("delivered");
    assert_eq!(first.receive_count, 1);
    // The consumer "crashes": no ack.
    time.pass(2).await;
    let second = receive_one(q, QueueName::Jobs, 30)
        .await
        .expect("redelivered, never lost");
    assert_eq!(second.id, first.id);
    assert_eq!(second.body, "retry me");
    assert_eq!(second.receive_count, 2);
    q.ack(QueueName::Jobs, &second.receipt).await.unwrap();
    time.pass(31).await;
    assert!(
        receive_one(q, QueueName::Jobs, 30).await.is_none(),
        "acked means gone"
    );
}

async fn messages_dead_letter_after_three_receives(q: &dyn Queue, time: &dyn TimeTravel) {
    q.send(QueueName::Deliveries, "poison".into(), 0)
        .await
        .unwrap();
    for expected in 1..=3 {
        let msg = receive_one(q, QueueName::Deliveries, 1)
            .await
            .expect("delivered");
        assert_eq!(msg.receive_count, expected);
        time.pass(2).await;
    }
    assert!(
        receive_one(q, QueueName::Deliveries, 1).await.is_none(),
        "a fourth receive must not deliver the message"
    );
    let mut dead = Vec::new();
    for _ in 0..5 {
        dead = q
            .receive_dead_letters(QueueName::Deliveries, 10, 30)
            .await
            .unwrap();
        if !dead.is_empty() {
            break;
        }
        time.pass(1).await;
    }
    assert_eq!(dead.len(), 1, "the message is in the dead-letter queue");
    assert_eq!(dead[0].body, "poison");
    assert!(
        q.receive_dead_letters(QueueName::Jobs, 10, 30)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn delays_beyond_the_native_maximum_are_refused(q: &dyn Queue) {
    assert!(
        q.send(QueueName::Jobs, "too late".into(), 901)
            .await
            .is_err()
    );
}
