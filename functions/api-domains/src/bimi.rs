//! Hosted BIMI assets: `POST /domains/{id}/bimi/assets`.

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use mailward_api_types::ErrorBody;
use mailward_api_types::bimi::{BimiAssets, BimiAssetsBody, BimiAssetsRequest};
use mailward_http::extract::{PathId, parse_json};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::hosting::bimi::{self, CertificateSource};

fn invalid(param: &str, message: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "parameter_invalid_or_missing",
        message.to_owned(),
    )
    .param(param.to_owned())
}

/// The bundle of a request: JSON (`certificate_pem` or `certificate_url`) or multipart (a
/// `certificate` file part).
async fn source(app: &AppState, req: Request) -> Result<CertificateSource, ApiError> {
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("multipart/form-data"));
    if multipart {
        let mut form = Multipart::from_request(req, app)
            .await
            .map_err(|e| invalid("certificate", &format!("unreadable multipart body: {e}")))?;
        while let Some(field) = form
            .next_field()
            .await
            .map_err(|e| invalid("certificate", &format!("unreadable multipart body: {e}")))?
        {
            if field.name() == Some("certificate") {
                let bytes = field.bytes().await.map_err(|e| {
                    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                        ApiError::new(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            "payload_too_large",
                            "the request body is larger than the service accepts",
                        )
                    } else {
                        invalid("certificate", &format!("unreadable certificate part: {e}"))
                    }
                })?;
                return Ok(CertificateSource::Pem(bytes.to_vec()));
            }
        }
        return Err(invalid(
            "certificate",
            "the multipart body has no `certificate` file part",
        ));
    }
    let bytes = axum::body::to_bytes(req.into_body(), app.config.max_body_bytes)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the service accepts",
            )
        })?;
    let body: BimiAssetsRequest = parse_json(&bytes)?;
    match (body.certificate_pem, body.certificate_url) {
        (Some(pem), None) => Ok(CertificateSource::Pem(pem.into_bytes())),
        (None, Some(url)) => Ok(CertificateSource::Url(url)),
        _ => Err(invalid(
            "certificate_pem",
            "give exactly one of certificate_pem and certificate_url",
        )),
    }
}

/// Validates a mark certificate and hosts it with its logo.
#[utoipa::path(post, path = "/domains/{id}/bimi/assets", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    request_body(content = BimiAssetsBody, description = "JSON with `certificate_pem` or `certificate_url`; or `multipart/form-data` with a `certificate` file part."),
    description = "Editors, administrators or read-write keys. Validates the VMC or CMC bundle \
in full at the service clock: a private key anywhere refuses it; the first certificate must \
carry the BIMI extended key usage; its RFC 3709 logotype must embed the logo (gunzipped) \
matching every listed hash, and the logo must be SVG Tiny PS; the chain is built by issuer \
from the bundle and completed from Mailward's mark-certificate trust store (`chain_repaired`) \
up to a mark-verifying root (mvarcs and the postalsys/vmc root store), every signature and \
validity checked; a DNS name of the certificate must be the domain or a parent of it. A \
refusal is 422 `bimi_certificate_invalid` with `details.reason` one of pem_parse_failed, \
not_a_vmc, logotype_missing, logo_hash_mismatch, svg_not_tiny_ps, incomplete_chain, \
chain_untrusted, chain_expired, chain_signature_invalid, certificate_not_yet_valid, \
san_mismatch, contains_private_key. `certificate_pem` over 256 KiB is 400; a body over the \
request limit (1 MiB) is 413 `payload_too_large`. `certificate_url` must be https on a public \
address (400 naming it otherwise) and is fetched once (422 `certificate_url_unreachable`). \
Accepted: the chain (leaf and intermediates) and the logo are hosted at \
`/bimi/<domain>/<version>/certificate.pem` and `/logo.svg`, the version derived from their \
content (the same PEM gives the same URLs); `bimi_options` point at them; Mailward serves \
`v=BIMI1; l=…; a=…` at `bimi_cname_target` and the customer publishes `default._bimi.<domain>` \
as a CNAME to it (`record`). `managed_dns_status.bimi` is syncing until live DNS shows the \
CNAME, then ready; error with `drift`, `setup_timeout`, `record_conflict` (a BIMI TXT of the \
customer's own where the CNAME belongs), `publish_failed` or \
`certificate_invalid` (the certificate expired), with `domain.hosted_record.*` (`record` \
bimi). Nothing is stored when validation, storage or publishing fails.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = BimiAssets), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn upload_bimi_assets(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    req: Request,
) -> Result<axum::Json<BimiAssets>, ApiError> {
    let source = source(&app, req).await?;
    Ok(axum::Json(
        bimi::upload(&app, &principal, id, source).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(upload_bimi_assets))
}
