//! Reports (the reports issue): ingestion now; summaries, senders and the API to follow.

pub mod ingest;
