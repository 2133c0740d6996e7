//! Reports (the reports issue): ingestion, and the summary and sender views.

pub mod ingest;
pub mod views;
