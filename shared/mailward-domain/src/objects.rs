//! The object-store port: files too large or too binary for the item store (support
//! attachments now; report archives and hosted assets later).
//!
//! Clients upload straight to storage through a signed form ([`PresignedUpload`]): the service
//! never proxies the bytes, and the storage itself enforces the policy (key, content type, size
//! range, expiry). Adapters: S3 with a SigV4 presigned POST on AWS; a directory plus a signed
//! upload route on the local stack, which enforces the same policy.

use async_trait::async_trait;
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// What one upload may be: the object key, its content type, a size range and an expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadPolicy {
    /// The object key the upload must use.
    pub key: String,
    /// The exact `Content-Type` the upload must declare.
    pub content_type: String,
    /// The largest accepted body, in bytes (the smallest is 1).
    pub max_bytes: u64,
    /// After this instant the form is refused.
    pub expires_at: OffsetDateTime,
}

/// A signed form: POST `url` as `multipart/form-data` with every field of `fields`, then the
/// file itself in a part named `file` (last, as S3 requires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresignedUpload {
    /// Where to POST.
    pub url: String,
    /// Form fields to send before the file, verbatim.
    pub fields: BTreeMap<String, String>,
}

/// What is stored under a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Size in bytes.
    pub size: u64,
    /// The content type it was stored with, when known.
    pub content_type: Option<String>,
}

/// Object-store failures.
#[derive(Debug, thiserror::Error)]
pub enum ObjectStoreError {
    /// The key is not one this store accepts (empty, absolute, `..`, odd characters).
    #[error("invalid object key: {0}")]
    InvalidKey(String),
    /// The backend failed.
    #[error("object store failure: {0}")]
    Backend(String),
}

/// Longest object key, in bytes (S3's limit).
pub const MAX_KEY_BYTES: usize = 1024;

/// Whether `key` is a safe, portable object key: relative, no `.`/`..` segments, no empty
/// segment, and only letters, digits and `-_.!()/` (so it is also a safe relative path).
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && !key.starts_with('/')
        && !key.ends_with('/')
        && key
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.!()/".contains(&b))
}

/// The object-store port.
#[async_trait]
pub trait ObjectStore: Send + Sync {
    /// A signed form for one upload under `policy`.
    async fn presign_upload(
        &self,
        policy: &UploadPolicy,
    ) -> Result<PresignedUpload, ObjectStoreError>;

    /// Stores `bytes` under `key` (replacing what was there). `Bytes`, so that a caller can
    /// hand over part of a larger buffer (one message of an mbox) or keep using its buffer
    /// afterwards (`Bytes::try_into_mut` once the store let go of it), without a copy.
    async fn put(
        &self,
        key: &str,
        bytes: bytes::Bytes,
        content_type: &str,
    ) -> Result<(), ObjectStoreError>;

    /// The bytes under `key`, if any.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectStoreError>;

    /// What is under `key`, if anything.
    async fn head(&self, key: &str) -> Result<Option<ObjectInfo>, ObjectStoreError>;

    /// Removes `key` (nothing there is not an error).
    async fn delete(&self, key: &str) -> Result<(), ObjectStoreError>;

    /// A link that downloads `key` until `expires_at` and not after (S3's presigned GET; the
    /// local stack's signed `/downloads` route).
    async fn presign_download(
        &self,
        key: &str,
        expires_at: OffsetDateTime,
    ) -> Result<String, ObjectStoreError>;

    /// Every key under `prefix` (a folder path ending in `/`), in byte order: what the
    /// retention job and an organization's purge walk.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectStoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_relative_and_plain() {
        for good in ["support/org/abc/file.png", "a", "x/y_z-1.(2).pdf"] {
            assert!(is_valid_key(good), "{good}");
        }
        for bad in [
            "",
            "/abs",
            "a/../b",
            "a//b",
            "./a",
            "a/",
            "sp ace",
            "uni\u{e9}",
            "back\\slash",
            &"k".repeat(1025),
        ] {
            assert!(!is_valid_key(bad), "{bad}");
        }
    }
}
