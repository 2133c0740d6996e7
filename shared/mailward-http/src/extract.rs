//! Request extractors whose rejections are SPEC §7 error bodies naming the offending field.

use crate::error::ApiError;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use bytes_body::read_body;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// A JSON body. Malformed JSON is 400 `invalid_json`; a wrong type, missing or unknown field is
/// 400 `parameter_invalid_or_missing` with `param` set to the field's path (e.g.
/// `settings.email_notifications.domain_failed`); a non-JSON content type is 415; a body over
/// the configured limit is 413.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

mod bytes_body {
    use super::*;

    /// Reads the body, honouring the router's `DefaultBodyLimit`.
    pub async fn read_body(req: Request) -> Result<axum::body::Bytes, ApiError> {
        axum::body::Bytes::from_request(req, &())
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "payload_too_large",
                        "the request body is larger than the service accepts",
                    )
                } else {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "invalid_body",
                        "the request body could not be read",
                    )
                }
            })
    }
}

fn is_json_content_type(req: &Request) -> bool {
    req.headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false)
}

/// Parses JSON bytes into `T`, mapping serde's error to an [`ApiError`] naming the field.
/// Every body is a JSON object: an array is refused even where serde would read a struct from
/// one. A number with a zero fraction (`76.0`) is an integer in JSON (and in JSON Schema), so a
/// field that wants an integer takes it.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(value) => {
            de.end().map_err(|e| invalid_json(&e.to_string()))?;
            if bytes.trim_ascii_start().first() != Some(&b'{') {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "parameter_invalid_or_missing",
                    "the body must be a JSON object",
                ));
            }
            Ok(value)
        }
        Err(err)
            if err
                .inner()
                .to_string()
                .starts_with("invalid type: floating point") =>
        {
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                return Err(field_error(err));
            };
            integral_floats_as_integers(&mut value);
            serde_path_to_error::deserialize::<_, T>(value).map_err(field_error)
        }
        Err(err) => Err(field_error(err)),
    }
}

fn invalid_json(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "invalid_json",
        format!("the body is not valid JSON: {}", strip_position(message)),
    )
}

/// Rewrites every number with a zero fraction that an integer holds exactly as that integer.
fn integral_floats_as_integers(value: &mut serde_json::Value) {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is a float exactly
    match value {
        serde_json::Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < EXACT)
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        serde_json::Value::Object(map) => map.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// serde's error as a 400: `invalid_json` for a syntax error, otherwise
/// `parameter_invalid_or_missing` naming the field.
fn field_error<E: serde::de::Error + Into<serde_json::Error>>(
    err: serde_path_to_error::Error<E>,
) -> ApiError {
    let path = err.path().to_string();
    let inner: serde_json::Error = err.into_inner().into();
    if inner.is_syntax() || inner.is_eof() {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            format!("the body is not valid JSON: {inner}"),
        );
    }
    let message = inner.to_string();
    // serde reports a missing or unknown field at the parent path; name the field itself.
    let field = field_from_message(&message);
    let param = match (path.as_str(), field) {
        (".", Some(f)) | ("", Some(f)) => f,
        (".", None) | ("", None) => String::new(),
        // serde_path_to_error already ends an unknown field's path with the field.
        (p, Some(f)) if message.starts_with("missing field") => format!("{p}.{f}"),
        (p, _) => p.to_owned(),
    };
    let message = strip_position(&message);
    let mut e = ApiError::new(
        StatusCode::BAD_REQUEST,
        "parameter_invalid_or_missing",
        message,
    );
    if !param.is_empty() {
        e = e.param(param);
    }
    e
}

/// Pulls the field name out of serde's "missing field `x`" / "unknown field `x`" messages.
fn field_from_message(message: &str) -> Option<String> {
    if !(message.starts_with("missing field") || message.starts_with("unknown field")) {
        return None;
    }
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(message[start..end].to_owned())
}

fn strip_position(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

impl<S, T> FromRequest<S> for Json<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        if !is_json_content_type(&req) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with Content-Type: application/json",
            ));
        }
        let bytes = read_body(req).await?;
        parse_json(&bytes).map(Json)
    }
}

/// A body as it came, with its declared content type (lower-cased, parameters dropped): for
/// routes that take something other than JSON (TLS reports over HTTPS).
#[derive(Debug, Clone)]
pub struct RawBody {
    pub content_type: Option<String>,
    pub bytes: axum::body::Bytes,
}

impl<S> FromRequest<S> for RawBody
where
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let content_type = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            });
        let bytes = read_body(req).await?;
        Ok(RawBody {
            content_type,
            bytes,
        })
    }
}

/// A JSON body that may be absent: an empty body (with or without a content type) or a JSON
/// `null` reads as `T::default()`; anything else is parsed like [`Json`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OptionalJson<T>(pub T);

impl<S, T> FromRequest<S> for OptionalJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Default,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let json_type = is_json_content_type(&req);
        let bytes = read_body(req).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        if !json_type {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with Content-Type: application/json",
            ));
        }
        if bytes.trim_ascii() == b"null" {
            return Ok(OptionalJson(T::default()));
        }
        parse_json(&bytes).map(OptionalJson)
    }
}

/// Query parameters (repeated keys such as `expand[]=a&expand[]=b` become arrays). A bad value
/// is 400 `parameter_invalid_or_missing` naming the parameter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<T>(pub T);

impl<S, T> FromRequestParts<S> for Query<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_html_form::Deserializer::from_bytes(query.as_bytes());
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|err| {
                let path = err.path().to_string();
                let message = err.into_inner().to_string();
                let param = field_from_message(&message).unwrap_or(path);
                let mut e = ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "parameter_invalid_or_missing",
                    message,
                );
                if !param.is_empty() && param != "." {
                    e = e.param(param);
                }
                e
            })
    }
}

/// One path segment parsed as a UUID; anything else is 400 naming `param` (for routes with
/// two ids, where [`PathId`] does not fit).
pub fn path_uuid(raw: &str, param: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| {
        ApiError::invalid_param(
            param.to_owned(),
            format!("{param} in the path is not a valid UUID"),
        )
    })
}

/// The `{id}` path segment parsed as a UUID; anything else is 400 naming `id`.
#[derive(Debug, Clone, Copy)]
pub struct PathId(pub Uuid);

impl<S> FromRequestParts<S> for PathId
where
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw): axum::extract::Path<String> =
            axum::extract::Path::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::invalid_param("id", "the path must carry one id"))?;
        Uuid::parse_str(&raw)
            .map(PathId)
            .map_err(|_| ApiError::invalid_param("id", "the id in the path is not a valid UUID"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        flag: bool,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        inner: Option<Inner>,
    }

    fn param_of(json: &str) -> (String, Option<String>) {
        let e = parse_json::<Body>(json.as_bytes()).unwrap_err();
        (e.code.into_owned(), e.param.map(|p| p.into_owned()))
    }

    #[test]
    fn json_errors_name_the_field() {
        assert_eq!(param_of("{"), ("invalid_json".into(), None));
        assert_eq!(
            param_of("{}"),
            ("parameter_invalid_or_missing".into(), Some("name".into()))
        );
        assert_eq!(
            param_of(r#"{"name": 3}"#),
            ("parameter_invalid_or_missing".into(), Some("name".into()))
        );
        assert_eq!(
            param_of(r#"{"name": "a", "nmae": 1}"#).1,
            Some("nmae".into())
        );
        assert_eq!(
            param_of(r#"{"name": "a", "inner": {"flag": "yes"}}"#).1,
            Some("inner.flag".into())
        );
        assert_eq!(
            param_of(r#"{"name": "a", "inner": {}}"#).1,
            Some("inner.flag".into())
        );
        assert_eq!(param_of(r#"{"name": "a"} trailing"#).0, "invalid_json");
        assert_eq!(param_of("[]").0, "parameter_invalid_or_missing");
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Counts {
        weeks: u8,
        nested: Option<Vec<u32>>,
    }

    #[test]
    fn bodies_are_objects_and_integers_may_carry_a_zero_fraction() {
        // serde would read a struct from an array of its fields: a body is an object.
        let e = parse_json::<Counts>(b"[6, null]").unwrap_err();
        assert_eq!(e.code, "parameter_invalid_or_missing");
        // 6.0 is an integer in JSON and in JSON Schema.
        assert_eq!(
            parse_json::<Counts>(br#"{"weeks": 6.0, "nested": [1.0, 2]}"#).unwrap(),
            Counts {
                weeks: 6,
                nested: Some(vec![1, 2])
            }
        );
        // A fraction is still refused, naming the field.
        let e = parse_json::<Counts>(br#"{"weeks": 6.5}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("weeks"));
        let e = parse_json::<Counts>(br#"{"weeks": 1, "nested": [1.0, 2.5]}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("nested[1]"));
        // An integer out of range stays refused.
        let e = parse_json::<Counts>(br#"{"weeks": 300.0}"#).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("weeks"));
    }
}
