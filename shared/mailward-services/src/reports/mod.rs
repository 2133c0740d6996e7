//! Reports (the reports issue): ingestion, sender identification, and the summary and
//! sender views.

pub use mailward_insights::by_sender;
pub mod data;
pub mod export;
pub mod failures;
pub mod figures;
pub mod impact;
pub mod senders;
pub mod tls;
pub mod uploads;
pub mod views;
pub mod window;
