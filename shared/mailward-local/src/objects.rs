//! The object store of the local stack: a directory, and a signed upload form that the local
//! stack's `POST /uploads` route checks exactly as S3 checks a presigned POST policy (key,
//! content type, size range, expiry, signature).

use async_trait::async_trait;
use base64::Engine as _;
use mailward_domain::Clock;
use mailward_domain::objects::{
    ObjectInfo, ObjectStore, ObjectStoreError, PresignedUpload, UploadPolicy, is_valid_key,
};
use mailward_domain::secrets;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use time::OffsetDateTime;

/// Objects under a directory: `data/<key>` holds the bytes, `meta/<key>` the content type.
pub struct DirObjectStore {
    root: PathBuf,
    upload_url: String,
    secret: Vec<u8>,
    clock: Arc<dyn Clock>,
}

/// Why an upload form was refused (each maps to the status S3 would answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadRefused {
    /// Missing or forged policy or signature (403).
    #[error("the upload form's policy or signature is missing or invalid")]
    BadSignature,
    /// The form expired (403).
    #[error("the upload form has expired; ask for a new one")]
    Expired,
    /// A field differs from what the policy allows (403).
    #[error("the form field {0} does not match the upload policy")]
    Mismatch(&'static str),
    /// The file is larger than the policy allows (400).
    #[error("the file is larger than the {0} bytes allowed")]
    TooLarge(u64),
    /// The file is empty or missing (400).
    #[error("the upload carries no file")]
    Empty,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SignedPolicy {
    key: String,
    content_type: String,
    max_bytes: u64,
    expires: i64,
}

fn backend(e: impl std::fmt::Display) -> ObjectStoreError {
    ObjectStoreError::Backend(e.to_string())
}

impl DirObjectStore {
    /// A store under `root` whose upload forms POST to `upload_url`, signed with `secret`.
    pub fn new(
        root: impl Into<PathBuf>,
        upload_url: impl Into<String>,
        secret: Vec<u8>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            root: root.into(),
            upload_url: upload_url.into(),
            secret,
            clock,
        }
    }

    fn paths(&self, key: &str) -> Result<(PathBuf, PathBuf), ObjectStoreError> {
        if !is_valid_key(key) {
            return Err(ObjectStoreError::InvalidKey(key.to_owned()));
        }
        Ok((
            self.root.join("data").join(key),
            self.root.join("meta").join(key),
        ))
    }

    fn sign(&self, policy: &str) -> String {
        secrets::hmac_sha256_hex(&self.secret, format!("upload-policy:{policy}").as_bytes())
    }

    fn sign_download(&self, key: &str, expires: i64) -> String {
        secrets::hmac_sha256_hex(&self.secret, format!("download:{key}:{expires}").as_bytes())
    }

    /// Checks a download link's fields: the bytes and content type of its object while the
    /// link is valid; `Err` with why not (a forged, changed or expired link).
    pub async fn verify_download(
        &self,
        key: &str,
        expires: i64,
        signature: &str,
    ) -> Result<Option<(Vec<u8>, String)>, UploadRefused> {
        if !secrets::constant_time_eq(
            self.sign_download(key, expires).as_bytes(),
            signature.as_bytes(),
        ) {
            return Err(UploadRefused::BadSignature);
        }
        if self.clock.now().unix_timestamp() > expires {
            return Err(UploadRefused::Expired);
        }
        let content_type = self
            .head(key)
            .await
            .ok()
            .flatten()
            .and_then(|i| i.content_type)
            .unwrap_or_else(|| "application/octet-stream".into());
        Ok(self
            .get(key)
            .await
            .ok()
            .flatten()
            .map(|b| (b, content_type)))
    }

    /// Checks a submitted form's fields (everything but the file) against their signature and
    /// the clock; the policy they grant. The file's size is checked by [`Self::accept`].
    pub fn verify_form(
        &self,
        fields: &BTreeMap<String, String>,
    ) -> Result<UploadPolicy, UploadRefused> {
        let policy_b64 = fields.get("policy").ok_or(UploadRefused::BadSignature)?;
        let signature = fields.get("signature").ok_or(UploadRefused::BadSignature)?;
        if !secrets::constant_time_eq(self.sign(policy_b64).as_bytes(), signature.as_bytes()) {
            return Err(UploadRefused::BadSignature);
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(policy_b64)
            .map_err(|_| UploadRefused::BadSignature)?;
        let policy: SignedPolicy =
            serde_json::from_slice(&raw).map_err(|_| UploadRefused::BadSignature)?;
        if self.clock.now().unix_timestamp() > policy.expires {
            return Err(UploadRefused::Expired);
        }
        if fields.get("key") != Some(&policy.key) {
            return Err(UploadRefused::Mismatch("key"));
        }
        if fields.get("Content-Type") != Some(&policy.content_type) {
            return Err(UploadRefused::Mismatch("Content-Type"));
        }
        Ok(UploadPolicy {
            key: policy.key,
            content_type: policy.content_type,
            max_bytes: policy.max_bytes,
            expires_at: OffsetDateTime::from_unix_timestamp(policy.expires)
                .map_err(|_| UploadRefused::BadSignature)?,
        })
    }

    /// Stores an upload's file under its verified policy, refusing sizes outside 1 to
    /// `max_bytes`.
    pub async fn accept(&self, policy: &UploadPolicy, file: Vec<u8>) -> Result<(), UploadAccept> {
        if file.is_empty() {
            return Err(UploadAccept::Refused(UploadRefused::Empty));
        }
        if file.len() as u64 > policy.max_bytes {
            return Err(UploadAccept::Refused(UploadRefused::TooLarge(
                policy.max_bytes,
            )));
        }
        self.put(&policy.key, file.into(), &policy.content_type)
            .await
            .map_err(UploadAccept::Store)
    }
}

/// What [`DirObjectStore::accept`] can fail with.
#[derive(Debug, thiserror::Error)]
pub enum UploadAccept {
    /// The upload breaks its policy.
    #[error(transparent)]
    Refused(UploadRefused),
    /// Writing failed.
    #[error(transparent)]
    Store(ObjectStoreError),
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`, so a reader
/// never sees half an object. The bytes are moved to the blocking thread, not copied (objects
/// such as raw reports run to tens of MB), and large objects skip the page cache
/// ([`crate::archive_write`]).
async fn write_atomically(path: &Path, bytes: bytes::Bytes) -> std::io::Result<()> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = path.with_extension(format!("tmp-{}", uuid::Uuid::new_v4()));
        crate::archive_write::write_file(&tmp, &bytes)?;
        std::fs::rename(&tmp, &path)
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Every file below `dir`, as keys relative to `base`, skipping the temporary files of
/// writes in progress.
fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(base, &path, out)?;
        } else if let Ok(relative) = path.strip_prefix(base) {
            let key = relative.to_string_lossy().replace('\\', "/");
            if is_valid_key(&key) && !key.contains(".tmp-") {
                out.push(key);
            }
        }
    }
    Ok(())
}

#[async_trait]
impl ObjectStore for DirObjectStore {
    async fn presign_upload(
        &self,
        policy: &UploadPolicy,
    ) -> Result<PresignedUpload, ObjectStoreError> {
        if !is_valid_key(&policy.key) {
            return Err(ObjectStoreError::InvalidKey(policy.key.clone()));
        }
        let signed = SignedPolicy {
            key: policy.key.clone(),
            content_type: policy.content_type.clone(),
            max_bytes: policy.max_bytes,
            expires: policy.expires_at.unix_timestamp(),
        };
        let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&signed).map_err(backend)?);
        let mut fields = BTreeMap::new();
        fields.insert("key".to_owned(), policy.key.clone());
        fields.insert("Content-Type".to_owned(), policy.content_type.clone());
        fields.insert("signature".to_owned(), self.sign(&encoded));
        fields.insert("policy".to_owned(), encoded);
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
        let (data, meta) = self.paths(key)?;
        write_atomically(&data, bytes).await.map_err(backend)?;
        write_atomically(
            &meta,
            bytes::Bytes::copy_from_slice(content_type.as_bytes()),
        )
        .await
        .map_err(backend)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectStoreError> {
        let (data, _) = self.paths(key)?;
        match tokio::fs::read(&data).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(backend(e)),
        }
    }

    async fn presign_download(
        &self,
        key: &str,
        expires_at: OffsetDateTime,
    ) -> Result<String, ObjectStoreError> {
        if !is_valid_key(key) {
            return Err(ObjectStoreError::InvalidKey(key.to_owned()));
        }
        // The download route sits beside the upload route (`…/uploads` → `…/downloads`).
        let base = self.upload_url.trim_end_matches("/uploads");
        let expires = expires_at.unix_timestamp();
        Ok(format!(
            "{base}/downloads?key={key}&expires={expires}&signature={}",
            self.sign_download(key, expires)
        ))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, ObjectStoreError> {
        let base = self.root.join("data");
        // The deepest directory the prefix names whole; its files are then filtered by prefix.
        let dir = match prefix.rfind('/') {
            Some(i) if is_valid_key(&prefix[..i]) => base.join(&prefix[..i]),
            Some(_) => return Err(ObjectStoreError::InvalidKey(prefix.to_owned())),
            None => base.clone(),
        };
        let prefix = prefix.to_owned();
        tokio::task::spawn_blocking(move || {
            let mut keys = Vec::new();
            walk(&base, &dir, &mut keys)?;
            keys.retain(|k| k.starts_with(&prefix));
            keys.sort_unstable();
            Ok::<_, std::io::Error>(keys)
        })
        .await
        .map_err(backend)?
        .map_err(backend)
    }

    async fn head(&self, key: &str) -> Result<Option<ObjectInfo>, ObjectStoreError> {
        let (data, meta) = self.paths(key)?;
        match tokio::fs::metadata(&data).await {
            Ok(m) => Ok(Some(ObjectInfo {
                size: m.len(),
                content_type: tokio::fs::read_to_string(&meta).await.ok(),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(backend(e)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectStoreError> {
        let (data, meta) = self.paths(key)?;
        for path in [data, meta] {
            match tokio::fs::remove_file(&path).await {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(backend(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_domain::clock::ManualClock;

    fn store(dir: &Path) -> (DirObjectStore, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::starting_now());
        (
            DirObjectStore::new(dir, "http://local/uploads", vec![7; 32], clock.clone()),
            clock,
        )
    }

    fn policy(clock: &ManualClock) -> UploadPolicy {
        UploadPolicy {
            key: "support/o/a.png".into(),
            content_type: "image/png".into(),
            max_bytes: 10,
            expires_at: clock.now() + time::Duration::minutes(15),
        }
    }

    #[tokio::test]
    async fn keys_are_listed_by_prefix_as_s3_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store(dir.path());
        mailward_testkit::object_listing_conformance(&store).await;
    }

    #[tokio::test]
    async fn a_signed_form_is_accepted_once_within_its_limits() {
        let dir = tempfile::tempdir().unwrap();
        let (store, clock) = store(dir.path());
        let form = store.presign_upload(&policy(&clock)).await.unwrap();
        let granted = store.verify_form(&form.fields).unwrap();
        assert!(matches!(
            store.accept(&granted, vec![0; 11]).await,
            Err(UploadAccept::Refused(UploadRefused::TooLarge(10)))
        ));
        assert!(matches!(
            store.accept(&granted, Vec::new()).await,
            Err(UploadAccept::Refused(UploadRefused::Empty))
        ));
        store.accept(&granted, vec![1; 10]).await.unwrap();
        let info = store.head("support/o/a.png").await.unwrap().unwrap();
        assert_eq!(
            (info.size, info.content_type.as_deref()),
            (10, Some("image/png"))
        );
        assert_eq!(
            store.get("support/o/a.png").await.unwrap(),
            Some(vec![1; 10])
        );
        store.delete("support/o/a.png").await.unwrap();
        assert_eq!(store.head("support/o/a.png").await.unwrap(), None);
    }

    #[tokio::test]
    async fn forged_changed_or_expired_forms_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (store, clock) = store(dir.path());
        let form = store.presign_upload(&policy(&clock)).await.unwrap();
        let mut forged = form.fields.clone();
        forged.insert("signature".into(), "00".into());
        assert_eq!(store.verify_form(&forged), Err(UploadRefused::BadSignature));
        let mut other_key = form.fields.clone();
        other_key.insert("key".into(), "support/o/evil.png".into());
        assert_eq!(
            store.verify_form(&other_key),
            Err(UploadRefused::Mismatch("key"))
        );
        let mut other_type = form.fields.clone();
        other_type.insert("Content-Type".into(), "text/html".into());
        assert_eq!(
            store.verify_form(&other_type),
            Err(UploadRefused::Mismatch("Content-Type"))
        );
        clock.advance(time::Duration::minutes(16));
        assert_eq!(store.verify_form(&form.fields), Err(UploadRefused::Expired));
        assert!(matches!(
            store.put("../escape", vec![1].into(), "image/png").await,
            Err(ObjectStoreError::InvalidKey(_))
        ));
    }
}
