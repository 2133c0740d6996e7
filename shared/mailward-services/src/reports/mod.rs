//! Reports (the reports issue): ingestion, sender identification, and the summary and
//! sender views.

pub mod ingest;
pub mod senders;
pub mod views;
