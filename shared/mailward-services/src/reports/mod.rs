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

/// Who owns each address a domain's senders keep (their `networks`), by address.
pub async fn networks_of(
    app: &crate::state::AppState,
    org: uuid::Uuid,
    domain: uuid::Uuid,
) -> Result<
    std::collections::HashMap<String, mailward_domain::senders::SourceNetwork>,
    crate::error::ServiceError,
> {
    Ok(
        mailward_store::senders::list(app.store.as_ref(), org, domain)
            .await?
            .into_iter()
            .flat_map(|s| s.value.networks)
            .map(|n| (n.ip.clone(), n))
            .collect(),
    )
}
