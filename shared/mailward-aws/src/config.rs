//! Loading the shared AWS SDK configuration.

use aws_config::{BehaviorVersion, SdkConfig};

/// Environment variable that overrides every service endpoint (e.g. a moto server), so the same
/// binary runs against AWS or a local emulator without code changes.
pub const ENDPOINT_ENV: &str = "MAILWARD_AWS_ENDPOINT";

/// The SDK configuration every adapter client is built from: the default provider chain
/// (region, credentials from the Lambda environment), with the endpoint overridden when
/// [`ENDPOINT_ENV`] is set and non-empty.
pub async fn aws_config_from_env() -> SdkConfig {
    let loader = aws_config::defaults(BehaviorVersion::latest());
    let loader = match std::env::var(ENDPOINT_ENV) {
        Ok(url) if !url.trim().is_empty() => loader.endpoint_url(url.trim()),
        _ => loader,
    };
    loader.load().await
}

/// The SDK configuration for a local AWS emulator (moto) at `endpoint`: an explicit region and
/// static test credentials, so nothing probes the instance metadata service. Tests use it.
pub async fn emulator_config(endpoint: &str) -> SdkConfig {
    use aws_sdk_dynamodb::config::{Credentials, Region};
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .load()
        .await
}
