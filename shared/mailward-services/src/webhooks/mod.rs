//! Webhooks: the endpoints API. Publishing and signed delivery are `mailward-workers`.
//!
//! Flow: a state change commits with its `OutboxEvent` (same transaction). The publisher (an
//! in-process poller locally; DynamoDB Streams on AWS) turns each event into one delivery job per
//! subscribed, enabled endpoint on the deliveries queue, then deletes the outbox row. The delivery
//! job POSTs the exact bytes it signs through the outbound-safe client, records the attempt, and
//! schedules a retry through a queue delay when the failure is retryable. Delivery is at least
//! once: receivers dedupe on `id`.

pub mod endpoints;
