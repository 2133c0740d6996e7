//! The S3 [`ObjectStore`]: objects in one bucket, and uploads through an S3 POST policy signed
//! with SigV4 (the SDK presigns GET/PUT but not POST; only a POST policy lets S3 itself enforce
//! a `content-length-range`, which a presigned PUT cannot).

use async_trait::async_trait;
use aws_credential_types::provider::ProvideCredentials as _;
use aws_sdk_s3::primitives::ByteStream;
use aws_sigv4::sign::v4::{calculate_signature, generate_signing_key};
use base64::Engine as _;
use mailward_domain::objects::{
    ObjectInfo, ObjectStore, ObjectStoreError, PresignedUpload, UploadPolicy, is_valid_key,
};
use serde_json::json;
use std::collections::BTreeMap;
use time::OffsetDateTime;
use time::macros::format_description;

/// Objects in one S3 bucket.
#[derive(Clone)]
pub struct S3ObjectStore {
    client: aws_sdk_s3::Client,
    bucket: String,
    /// Signs upload forms (the SDK client does not expose its provider).
    credentials: Option<aws_credential_types::provider::SharedCredentialsProvider>,
    region: String,
    /// Where upload forms POST: the bucket's virtual-hosted URL on AWS, or
    /// `<endpoint>/<bucket>` (path style) on an emulator.
    upload_url: String,
}

fn backend(e: impl std::fmt::Display) -> ObjectStoreError {
    ObjectStoreError::Backend(e.to_string())
}

fn checked(key: &str) -> Result<&str, ObjectStoreError> {
    if is_valid_key(key) {
        Ok(key)
    } else {
        Err(ObjectStoreError::InvalidKey(key.to_owned()))
    }
}

impl S3ObjectStore {
    /// A store on `bucket`. With an endpoint override (moto), requests use path-style URLs.
    pub fn new(config: &aws_config::SdkConfig, bucket: impl Into<String>) -> Self {
        let bucket = bucket.into();
        let endpoint = config
            .endpoint_url()
            .map(|e| e.trim_end_matches('/').to_owned());
        let mut builder = aws_sdk_s3::config::Builder::from(config);
        if endpoint.is_some() {
            builder = builder.force_path_style(true);
        }
        let region = config
            .region()
            .map(|r| r.as_ref().to_owned())
            .unwrap_or_else(|| "us-east-1".to_owned());
        let upload_url = match &endpoint {
            Some(endpoint) => format!("{endpoint}/{bucket}"),
            None => format!("https://{bucket}.s3.{region}.amazonaws.com/"),
        };
        Self {
            client: aws_sdk_s3::Client::from_conf(builder.build()),
            bucket,
            credentials: config.credentials_provider(),
            region,
            upload_url,
        }
    }

    /// Creates the bucket (tests against moto; production buckets come from the template).
    pub async fn create_bucket(&self) -> Result<(), ObjectStoreError> {
        self.client
            .create_bucket()
            .bucket(&self.bucket)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| backend(aws_sdk_s3::error::DisplayErrorContext(e)))
    }
}

/// The POST policy document and its form fields, signed with `secret` at `now`. Pure, so the
/// signing is testable without credentials lookups.
#[allow(clippy::too_many_arguments)]
fn signed_form(
    bucket: &str,
    policy: &UploadPolicy,
    access_key: &str,
    secret: &str,
    session_token: Option<&str>,
    region: &str,
    now: OffsetDateTime,
) -> Result<BTreeMap<String, String>, ObjectStoreError> {
    let date = now
        .format(format_description!("[year][month][day]"))
        .map_err(backend)?;
    let amz_date = now
        .format(format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .map_err(backend)?;
    let expiration = policy
        .expires_at
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(backend)?;
    let credential = format!("{access_key}/{date}/{region}/s3/aws4_request");
    let mut conditions = vec![
        json!({"bucket": bucket}),
        json!({"key": policy.key}),
        json!({"Content-Type": policy.content_type}),
        json!(["content-length-range", 1, policy.max_bytes]),
        json!({"x-amz-algorithm": "AWS4-HMAC-SHA256"}),
        json!({"x-amz-credential": credential}),
        json!({"x-amz-date": amz_date}),
    ];
    if let Some(token) = session_token {
        conditions.push(json!({"x-amz-security-token": token}));
    }
    let document = json!({"expiration": expiration, "conditions": conditions});
    let encoded = base64::engine::general_purpose::STANDARD
        .encode(serde_json::to_vec(&document).map_err(backend)?);
    let key = generate_signing_key(secret, now.into(), region, "s3");
    let signature = calculate_signature(key, encoded.as_bytes());
    let mut fields = BTreeMap::new();
    fields.insert("key".to_owned(), policy.key.clone());
    fields.insert("Content-Type".to_owned(), policy.content_type.clone());
    fields.insert("x-amz-algorithm".to_owned(), "AWS4-HMAC-SHA256".to_owned());
    fields.insert("x-amz-credential".to_owned(), credential);
    fields.insert("x-amz-date".to_owned(), amz_date);
    if let Some(token) = session_token {
        fields.insert("x-amz-security-token".to_owned(), token.to_owned());
    }
    fields.insert("policy".to_owned(), encoded);
    fields.insert("x-amz-signature".to_owned(), signature);
    Ok(fields)
}

#[async_trait]
impl ObjectStore for S3ObjectStore {
    async fn presign_upload(
        &self,
        policy: &UploadPolicy,
    ) -> Result<PresignedUpload, ObjectStoreError> {
        checked(&policy.key)?;
        let provider = self
            .credentials
            .as_ref()
            .ok_or_else(|| backend("no AWS credentials provider"))?;
        let credentials = provider.provide_credentials().await.map_err(backend)?;
        let region = &self.region;
        let fields = signed_form(
            &self.bucket,
            policy,
            credentials.access_key_id(),
            credentials.secret_access_key(),
            credentials.session_token(),
            region,
            OffsetDateTime::now_utc(),
        )?;
        Ok(PresignedUpload {
            url: self.upload_url.clone(),
            fields,
        })
    }

    async fn put(
        &self,
        key: &str,
        bytes: bytes::Bytes,
        content_type: &str,
    ) -> Result<(), ObjectStoreError> {
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(checked(key)?)
            .content_type(content_type)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| backend(aws_sdk_s3::error::DisplayErrorContext(e)))
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectStoreError> {
        match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(checked(key)?)
            .send()
            .await
        {
            Ok(out) => Ok(Some(
                out.body
                    .collect()
                    .await
                    .map_err(backend)?
                    .into_bytes()
                    .to_vec(),
            )),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => Ok(None),
            Err(e) => Err(backend(aws_sdk_s3::error::DisplayErrorContext(e))),
        }
    }

    async fn head(&self, key: &str) -> Result<Option<ObjectInfo>, ObjectStoreError> {
        match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(checked(key)?)
            .send()
            .await
        {
            Ok(out) => Ok(Some(ObjectInfo {
                size: out
                    .content_length()
                    .and_then(|l| u64::try_from(l).ok())
                    .unwrap_or(0),
                content_type: out.content_type().map(str::to_owned),
            })),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_not_found()) => Ok(None),
            Err(e) => Err(backend(aws_sdk_s3::error::DisplayErrorContext(e))),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectStoreError> {
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(checked(key)?)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| backend(aws_sdk_s3::error::DisplayErrorContext(e)))
    }

    async fn presign_download(
        &self,
        key: &str,
        expires_at: OffsetDateTime,
    ) -> Result<String, ObjectStoreError> {
        let seconds = (expires_at - OffsetDateTime::now_utc())
            .whole_seconds()
            .max(1);
        let config = aws_sdk_s3::presigning::PresigningConfig::expires_in(
            std::time::Duration::from_secs(seconds.unsigned_abs()),
        )
        .map_err(backend)?;
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(checked(key)?)
            .presigned(config)
            .await
            .map_err(|e| backend(aws_sdk_s3::error::DisplayErrorContext(e)))?;
        Ok(request.uri().to_owned())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectStoreError> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| backend(aws_sdk_s3::error::DisplayErrorContext(e)))?;
            keys.extend(
                out.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_owned)),
            );
            match out.next_continuation_token() {
                Some(next) if out.is_truncated() == Some(true) => token = Some(next.to_owned()),
                _ => break,
            }
        }
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy document carries every condition S3 must enforce (bucket, key, type, size
    /// range, algorithm, credential scope, date) and the form is signed with SigV4 over the
    /// encoded policy.
    #[test]
    fn the_policy_carries_every_condition_and_a_sigv4_signature() {
        let now = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        let policy = UploadPolicy {
            key: "support/org/file.pdf".into(),
            content_type: "application/pdf".into(),
            max_bytes: 10 * 1024 * 1024,
            expires_at: now + time::Duration::minutes(15),
        };
        let fields = signed_form(
            "attachments",
            &policy,
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
            "us-east-1",
            now,
        )
        .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(&fields["policy"])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(doc["expiration"], "2023-11-14T22:28:20Z");
        let conditions = doc["conditions"].as_array().unwrap();
        assert!(conditions.contains(&json!(["content-length-range", 1, 10_485_760])));
        assert!(conditions.contains(&json!({"key": "support/org/file.pdf"})));
        assert!(conditions.contains(&json!({"Content-Type": "application/pdf"})));
        assert_eq!(
            fields["x-amz-credential"],
            "AKIDEXAMPLE/20231114/us-east-1/s3/aws4_request"
        );
        assert_eq!(fields["x-amz-date"], "20231114T221320Z");
        // The signature is HMAC-SHA256 of the encoded policy under the derived key.
        let key = generate_signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            now.into(),
            "us-east-1",
            "s3",
        );
        assert_eq!(
            fields["x-amz-signature"],
            calculate_signature(key, fields["policy"].as_bytes())
        );
        assert_eq!(fields["x-amz-signature"].len(), 64);
    }
}
