//! The `worker-publisher` function: reads the table's DynamoDB stream and publishes outbox events
//! (one webhook delivery job per subscribed endpoint), the AWS counterpart of the local stack's
//! in-process outbox poller. The logic lives in `mailward_http::webhooks::publisher`; the stream
//! batch handling in `mailward_lambda::handle_stream_batch`.
