//! The `worker-queue` function: consumes the jobs and deliveries queues (SQS event source
//! mappings with partial-batch failures). The job handlers live in `mailward_http::jobs`, shared
//! with the local stack's in-process workers; the SQS batch handling in `mailward_lambda`.
