//! The local stack's upload route, the stand-in for S3's presigned POST: `POST /uploads` takes
//! the signed form from `POST /support/presigned-url` (its fields, then the file in a part named
//! `file`) and enforces the same policy S3 would: signature, expiry, key, declared type, and a
//! size of 1 byte to the policy's maximum. Answers 204 like S3; refusals carry S3's codes.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mailward_local::objects::{DirObjectStore, UploadAccept, UploadRefused};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The largest request the route reads at all (the policy's limit is checked on the file).
const BODY_CAP: usize = 32 * 1024 * 1024;

fn refusal(status: StatusCode, code: &str, message: impl std::fmt::Display) -> Response {
    (
        status,
        axum::Json(json!({"code": code, "message": message.to_string()})),
    )
        .into_response()
}

fn refused(why: &UploadRefused) -> Response {
    match why {
        UploadRefused::TooLarge(_) => refusal(StatusCode::BAD_REQUEST, "EntityTooLarge", why),
        UploadRefused::Empty => refusal(StatusCode::BAD_REQUEST, "EntityTooSmall", why),
        UploadRefused::Expired => refusal(StatusCode::FORBIDDEN, "AccessDenied", why),
        UploadRefused::BadSignature | UploadRefused::Mismatch(_) => {
            refusal(StatusCode::FORBIDDEN, "AccessDenied", why)
        }
    }
}

async fn upload(State(store): State<Arc<DirObjectStore>>, mut form: Multipart) -> Response {
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return refusal(StatusCode::BAD_REQUEST, "MalformedPOSTRequest", e),
        };
        let name = field.name().unwrap_or_default().to_owned();
        if name != "file" {
            match field.text().await {
                Ok(value) => {
                    fields.insert(name, value);
                }
                Err(e) => return refusal(StatusCode::BAD_REQUEST, "MalformedPOSTRequest", e),
            }
            continue;
        }
        // The file comes last: the policy is known now, so oversize bodies stop early.
        let policy = match store.verify_form(&fields) {
            Ok(policy) => policy,
            Err(why) => return refused(&why),
        };
        let mut field = field;
        let mut bytes: Vec<u8> = Vec::new();
        loop {
            match field.chunk().await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() as u64 > policy.max_bytes {
                        return refused(&UploadRefused::TooLarge(policy.max_bytes));
                    }
                }
                Ok(None) => break,
                Err(e) => return refusal(StatusCode::BAD_REQUEST, "MalformedPOSTRequest", e),
            }
        }
        return match store.accept(&policy, bytes).await {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(UploadAccept::Refused(why)) => refused(&why),
            Err(UploadAccept::Store(e)) => {
                tracing::error!(error = %e, "storing an upload failed");
                refusal(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "InternalError",
                    "storing the file failed",
                )
            }
        };
    }
    refused(&UploadRefused::Empty)
}

/// A signed download link's fields.
#[derive(serde::Deserialize)]
struct DownloadLink {
    key: String,
    expires: i64,
    signature: String,
}

/// `GET /downloads`: the stand-in for S3's presigned GET (an organization's export archive).
async fn download(
    State(store): State<Arc<DirObjectStore>>,
    axum::extract::Query(link): axum::extract::Query<DownloadLink>,
) -> Response {
    match store
        .verify_download(&link.key, link.expires, &link.signature)
        .await
    {
        Ok(Some((bytes, content_type))) => {
            ([(axum::http::header::CONTENT_TYPE, content_type)], bytes).into_response()
        }
        Ok(None) => refusal(StatusCode::NOT_FOUND, "NoSuchKey", "no such object"),
        Err(why) => refused(&why),
    }
}

/// The upload and download routes over `store`.
pub fn router(store: Arc<DirObjectStore>) -> Router {
    Router::new()
        .route("/uploads", axum::routing::post(upload))
        .route("/downloads", axum::routing::get(download))
        .layer(DefaultBodyLimit::max(BODY_CAP))
        .with_state(store)
}
