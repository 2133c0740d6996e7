//! The AWS adapter of the MTA-STS policy-front port: an ACM certificate validated by DNS and a
//! CloudFront distribution per policy host.
//!
//! - CloudFront takes certificates from ACM in `us-east-1` only, so the ACM client is pinned
//!   there whatever the function's region.
//! - ACM renews a DNS-validated certificate by itself while the validation CNAME stays
//!   published: there is no renewal machinery here.
//! - The distribution has the policy host as its alias, presents the certificate by SNI
//!   (TLS 1.2 or later), answers HTTPS only (RFC 8461 §3.3 fetches over HTTPS), caches nothing
//!   (an edited policy must be visible with its new id) and forwards to the API's policy route,
//!   naming the host in [`FRONT_HOST_HEADER`] since the origin sees its own `Host`.
//! - Closing disables the distribution, deletes it once the disabling is deployed, then
//!   deletes the certificate (ACM refuses while a distribution uses it): several passes.

use async_trait::async_trait;
use aws_config::{Region, SdkConfig};
use aws_sdk_acm::types::{CertificateStatus, ValidationMethod};
use aws_sdk_cloudfront::types::{
    Aliases, CustomHeaders, CustomOriginConfig, DefaultCacheBehavior, DistributionConfig, Method,
    MinimumProtocolVersion, OriginCustomHeader, OriginProtocolPolicy, Origins, SslSupportMethod,
    ViewerCertificate, ViewerProtocolPolicy,
};
use mailward_domain::hosted_zone::normalize;
use mailward_domain::policy_fronts::{
    Closing, FRONT_HOST_HEADER, FrontError, FrontStage, PolicyFront, PolicyFronts, ValidationRecord,
};
use time::OffsetDateTime;

/// CloudFront's managed cache policy `CachingDisabled`.
const CACHING_DISABLED: &str = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad";
/// The origin's id inside a distribution.
const ORIGIN_ID: &str = "mailward-policy-route";

/// ACM certificates and CloudFront distributions.
#[derive(Clone)]
pub struct CloudFrontFronts {
    acm: aws_sdk_acm::Client,
    cloudfront: aws_sdk_cloudfront::Client,
    /// The API's host name the distributions forward to (`<api>.execute-api.<region>.amazonaws.com`).
    origin: String,
}

impl CloudFrontFronts {
    /// Fronts forwarding to `origin` (the API's host name), with clients from `sdk` (ACM
    /// pinned to `us-east-1`).
    pub fn new(sdk: &SdkConfig, origin: &str) -> Self {
        let acm = aws_sdk_acm::config::Builder::from(sdk)
            .region(Region::new("us-east-1"))
            .build();
        Self {
            acm: aws_sdk_acm::Client::from_conf(acm),
            cloudfront: aws_sdk_cloudfront::Client::new(sdk),
            origin: normalize(origin),
        }
    }

    /// The distribution for `front`, whose certificate is issued.
    fn distribution(&self, front: &PolicyFront) -> Result<DistributionConfig, FrontError> {
        let built = |e: aws_sdk_cloudfront::error::BuildError| {
            FrontError::Unavailable(format!("distribution not built: {e}"))
        };
        let origin = aws_sdk_cloudfront::types::Origin::builder()
            .id(ORIGIN_ID)
            .domain_name(&self.origin)
            .custom_headers(
                CustomHeaders::builder()
                    .quantity(1)
                    .items(
                        OriginCustomHeader::builder()
                            .header_name(FRONT_HOST_HEADER)
                            .header_value(&front.host)
                            .build()
                            .map_err(built)?,
                    )
                    .build()
                    .map_err(built)?,
            )
            .custom_origin_config(
                CustomOriginConfig::builder()
                    .http_port(80)
                    .https_port(443)
                    .origin_protocol_policy(OriginProtocolPolicy::HttpsOnly)
                    .build()
                    .map_err(built)?,
            )
            .build()
            .map_err(built)?;
        let methods = aws_sdk_cloudfront::types::AllowedMethods::builder()
            .quantity(2)
            .items(Method::Get)
            .items(Method::Head)
            .build()
            .map_err(built)?;
        DistributionConfig::builder()
            .caller_reference(caller_reference(front))
            .comment(format!("Mailward MTA-STS policy host {}", front.host))
            .enabled(true)
            .aliases(
                Aliases::builder()
                    .quantity(1)
                    .items(&front.host)
                    .build()
                    .map_err(built)?,
            )
            .origins(
                Origins::builder()
                    .quantity(1)
                    .items(origin)
                    .build()
                    .map_err(built)?,
            )
            .default_cache_behavior(
                DefaultCacheBehavior::builder()
                    .target_origin_id(ORIGIN_ID)
                    .viewer_protocol_policy(ViewerProtocolPolicy::HttpsOnly)
                    .cache_policy_id(CACHING_DISABLED)
                    .allowed_methods(methods)
                    .compress(false)
                    .build()
                    .map_err(built)?,
            )
            .viewer_certificate(
                ViewerCertificate::builder()
                    .acm_certificate_arn(&front.certificate_id)
                    .ssl_support_method(SslSupportMethod::SniOnly)
                    .minimum_protocol_version(MinimumProtocolVersion::TlSv122021)
                    .build(),
            )
            .build()
            .map_err(built)
    }
}

/// The distribution's caller reference: one per certificate, so a repeated creation is
/// recognised.
fn caller_reference(front: &PolicyFront) -> String {
    let arn = &front.certificate_id;
    let id = arn.rsplit('/').next().unwrap_or(arn);
    format!("mailward-mta-sts-{id}")
}

/// A provider error as the port's.
fn unavailable(e: impl std::fmt::Display) -> FrontError {
    FrontError::Unavailable(e.to_string())
}

/// An SDK call's error (ACM or CloudFront) as the port's, with its whole source chain.
fn sdk(e: impl std::error::Error) -> FrontError {
    unavailable(aws_sdk_acm::error::DisplayErrorContext(e))
}

/// A time from the SDK.
fn at(t: &aws_sdk_acm::primitives::DateTime) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp(t.secs()).ok()
}

#[async_trait]
impl PolicyFronts for CloudFrontFronts {
    async fn open(&self, host: &str, now: OffsetDateTime) -> Result<PolicyFront, FrontError> {
        let host = normalize(host);
        let requested = self
            .acm
            .request_certificate()
            .domain_name(&host)
            .validation_method(ValidationMethod::Dns)
            .send()
            .await
            .map_err(sdk)?;
        let arn = requested
            .certificate_arn()
            .ok_or_else(|| unavailable("ACM answered no certificate ARN"))?;
        let front = PolicyFront::requested(&host, FrontStage::PendingValidation, arn, now);
        // ACM fills the validation record a moment after the request: when it is not there
        // yet, the next pass reads it.
        Ok(self.advance(&front).await.unwrap_or(front))
    }

    async fn advance(&self, front: &PolicyFront) -> Result<PolicyFront, FrontError> {
        let mut next = front.clone();
        if front.front_id.is_none() {
            let described = self
                .acm
                .describe_certificate()
                .certificate_arn(&front.certificate_id)
                .send()
                .await
                .map_err(sdk)?;
            let Some(cert) = described.certificate() else {
                return Err(unavailable("ACM described no certificate"));
            };
            let records: Vec<ValidationRecord> = cert
                .domain_validation_options()
                .iter()
                .filter_map(|o| o.resource_record())
                .map(|r| ValidationRecord {
                    name: normalize(r.name()),
                    record_type: r.r#type().as_str().to_owned(),
                    value: normalize(r.value()),
                })
                .collect();
            if !records.is_empty() {
                next.validation = records;
            }
            next.not_after = cert.not_after().and_then(at);
            match cert.status() {
                Some(CertificateStatus::Issued) => {}
                Some(CertificateStatus::PendingValidation) | None => {
                    next.stage = FrontStage::PendingValidation;
                    return Ok(next);
                }
                Some(other) => {
                    next.stage = FrontStage::Failed;
                    next.failure = Some(match cert.failure_reason() {
                        Some(reason) => format!(
                            "the certificate authority answered {}: {}",
                            other.as_str(),
                            reason.as_str()
                        ),
                        None => format!("the certificate authority answered {}", other.as_str()),
                    });
                    return Ok(next);
                }
            }
            let created = self
                .cloudfront
                .create_distribution()
                .distribution_config(self.distribution(front)?)
                .send()
                .await
                .map_err(sdk)?;
            let distribution = created
                .distribution()
                .ok_or_else(|| unavailable("CloudFront answered no distribution"))?;
            next.front_id = Some(distribution.id().to_owned());
            next.target = Some(normalize(distribution.domain_name()));
            next.stage = FrontStage::Deploying;
            return Ok(next);
        }
        let id = front.front_id.clone().unwrap_or_default();
        let got = self
            .cloudfront
            .get_distribution()
            .id(&id)
            .send()
            .await
            .map_err(sdk)?;
        let distribution = got
            .distribution()
            .ok_or_else(|| unavailable("CloudFront answered no distribution"))?;
        next.target = Some(normalize(distribution.domain_name()));
        next.stage = if distribution.status() == "Deployed" {
            FrontStage::Active
        } else {
            FrontStage::Deploying
        };
        Ok(next)
    }

    async fn close(&self, front: &PolicyFront) -> Result<Closing, FrontError> {
        if let Some(id) = &front.front_id {
            let config = match self
                .cloudfront
                .get_distribution_config()
                .id(id)
                .send()
                .await
            {
                Ok(config) => Some(config),
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|s| s.is_no_such_distribution()) =>
                {
                    None
                }
                Err(e) => {
                    return Err(sdk(e));
                }
            };
            if let Some(config) = config {
                let etag = config.e_tag().unwrap_or_default().to_owned();
                let Some(mut distribution) = config.distribution_config().cloned() else {
                    return Err(unavailable("CloudFront answered no distribution config"));
                };
                if distribution.enabled() {
                    distribution.enabled = false;
                    self.cloudfront
                        .update_distribution()
                        .id(id)
                        .if_match(etag)
                        .distribution_config(distribution)
                        .send()
                        .await
                        .map_err(sdk)?;
                    return Ok(Closing::InProgress);
                }
                let got = self
                    .cloudfront
                    .get_distribution()
                    .id(id)
                    .send()
                    .await
                    .map_err(sdk)?;
                if got.distribution().is_none_or(|d| d.status() != "Deployed") {
                    return Ok(Closing::InProgress);
                }
                self.cloudfront
                    .delete_distribution()
                    .id(id)
                    .if_match(got.e_tag().unwrap_or_default())
                    .send()
                    .await
                    .map_err(sdk)?;
            }
        }
        if front.certificate_id.is_empty() {
            return Ok(Closing::Closed);
        }
        match self
            .acm
            .delete_certificate()
            .certificate_arn(&front.certificate_id)
            .send()
            .await
        {
            Ok(_) => Ok(Closing::Closed),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(Closing::Closed)
            }
            // A distribution still releasing it: later.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_in_use_exception()) =>
            {
                Ok(Closing::InProgress)
            }
            Err(e) => Err(sdk(e)),
        }
    }
}
