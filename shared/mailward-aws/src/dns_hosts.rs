//! The Route 53 adapter of the DNS-connections port: a customer's zones read with their own
//! access keys, or through a role in their account that Mailward's role assumes (STS
//! `AssumeRole`, with the external id their trust policy asks for). The service's own SDK
//! configuration supplies the region, the endpoint (moto in tests) and, for roles, the
//! identity that assumes them.

use async_trait::async_trait;
use aws_config::SdkConfig;
use aws_sdk_route53::config::Credentials;
use mailward_domain::dns_connections::{DnsHostCredentials, DnsHostError, DnsHostZone, DnsHosts};
use mailward_domain::hosted_zone::{HostedZone, normalize};

/// Session name of assumed roles (shows in the customer's CloudTrail).
const SESSION_NAME: &str = "mailward-dns-connection";
/// Zones read per connection at most (pages of 100).
const MAX_ZONES: usize = 5_000;

/// Route 53 for DNS connections.
pub struct Route53Hosts {
    base: tokio::sync::OnceCell<SdkConfig>,
}

impl Route53Hosts {
    /// Built from the service's SDK configuration.
    pub fn new(base: SdkConfig) -> Self {
        Self {
            base: tokio::sync::OnceCell::new_with(Some(base)),
        }
    }

    /// Built from the environment's AWS settings ([`crate::aws_config_from_env`]), loaded on
    /// first use (the local stack assembles its state outside any runtime).
    pub fn from_env() -> Self {
        Self {
            base: tokio::sync::OnceCell::new(),
        }
    }

    async fn base(&self) -> &SdkConfig {
        self.base.get_or_init(crate::aws_config_from_env).await
    }

    /// A Route 53 client acting with a connection's credentials.
    async fn client(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<aws_sdk_route53::Client, DnsHostError> {
        let creds = self.credentials(credentials).await?;
        let config = aws_sdk_route53::config::Builder::from(self.base().await)
            .credentials_provider(creds)
            .build();
        Ok(aws_sdk_route53::Client::from_conf(config))
    }

    /// Static credentials for a connection: the customer's keys, or an assumed role's.
    async fn credentials(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<Credentials, DnsHostError> {
        match credentials {
            DnsHostCredentials::Route53Keys {
                access_key_id,
                secret_access_key,
            } => Ok(Credentials::new(
                access_key_id,
                secret_access_key,
                None,
                None,
                "dns-connection",
            )),
            DnsHostCredentials::Route53Role {
                role_arn,
                external_id,
            } => {
                let sts = aws_sdk_sts::Client::new(self.base().await);
                let out = sts
                    .assume_role()
                    .role_arn(role_arn)
                    .role_session_name(SESSION_NAME)
                    .set_external_id(external_id.clone())
                    .send()
                    .await
                    .map_err(|e| DnsHostError::Denied(describe(&e)))?;
                let c = out
                    .credentials()
                    .ok_or_else(|| DnsHostError::Denied("the role gave no credentials".into()))?;
                Ok(Credentials::new(
                    c.access_key_id(),
                    c.secret_access_key(),
                    Some(c.session_token().to_owned()),
                    None,
                    "dns-connection-role",
                ))
            }
        }
    }
}

/// The service error's code and message, or the transport failure, at most 300 characters.
fn describe<E, R>(e: &aws_sdk_route53::error::SdkError<E, R>) -> String
where
    E: aws_sdk_route53::error::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let text = match e.as_service_error() {
        Some(s) => format!(
            "{}: {}",
            s.code().unwrap_or("error"),
            s.message().unwrap_or("no detail")
        ),
        None => aws_sdk_route53::error::DisplayErrorContext(e).to_string(),
    };
    text.replace('\n', " ").chars().take(300).collect()
}

#[async_trait]
impl DnsHosts for Route53Hosts {
    async fn zones(
        &self,
        credentials: &DnsHostCredentials,
    ) -> Result<Vec<DnsHostZone>, DnsHostError> {
        let client = self.client(credentials).await?;
        let mut zones = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let page = client
                .list_hosted_zones()
                .set_marker(marker.take())
                .max_items(100)
                .send()
                .await
                .map_err(|e| match &e {
                    aws_sdk_route53::error::SdkError::ServiceError(_) => {
                        DnsHostError::Denied(describe(&e))
                    }
                    _ => DnsHostError::Unavailable(describe(&e)),
                })?;
            for zone in page.hosted_zones() {
                zones.push(DnsHostZone {
                    id: zone.id().trim_start_matches("/hostedzone/").to_owned(),
                    name: normalize(zone.name()),
                    private: zone.config().is_some_and(|c| c.private_zone()),
                });
            }
            match page.next_marker() {
                Some(next) if page.is_truncated() && zones.len() < MAX_ZONES => {
                    marker = Some(next.to_owned());
                }
                _ => break,
            }
        }
        Ok(zones)
    }

    async fn zone(
        &self,
        credentials: &DnsHostCredentials,
        zone: &DnsHostZone,
    ) -> Result<Box<dyn HostedZone>, DnsHostError> {
        let client = self.client(credentials).await?;
        Ok(Box::new(crate::route53::Route53Zone::new(
            client,
            vec![(zone.name.clone(), zone.id.clone())],
        )))
    }
}
