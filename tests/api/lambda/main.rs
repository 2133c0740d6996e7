//! Every Lambda function's entry point, driven in process with the payloads AWS sends it
//! (`tests/api/fixtures/lambda`, whose README names the AWS shape of each): API Gateway HTTP API
//! events through `mailward_lambda::http_service` and `lambda_http`'s own adapter (`http`),
//! SQS batches with partial failures (`queue`), DynamoDB Streams records of outbox rows
//! (`stream`) and schedules (`schedule`). The state is the embedded adapters'; `worker-ingest`'s
//! SNS receipts are driven in `tests/api/api/reports.rs`, beside the ingestion they feed.

mod common;
mod http;
mod queue;
mod schedule;
mod stream;
mod web;
