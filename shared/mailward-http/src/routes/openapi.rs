//! `GET /swagger.json`: the OpenAPI document, generated from the routes themselves.

use crate::state::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use std::sync::OnceLock;
use utoipa::Modify;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{
    OpenApi, Required,
    path::{Parameter, ParameterBuilder, ParameterIn},
};

/// Top-level document: info, tags, security schemes.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Mailward API",
        version = "2025-04-30",
        description = "Mailward gets an organization's domains into a protected email-authentication \
state and keeps them there.\n\n\
**Authentication.** API keys: HTTP Basic with the key as user name and an empty password, plus the \
`Mailward-Version` header (`2025-04-30` or `unstable`; `Service-Version` is accepted as an alias) on \
every request: a missing version answers 400 `api_version_missing`, an unknown one 400 \
`api_version_invalid`. Dashboard sessions: `Authorization: Bearer <JWT>` (HS256, claims `sub` \
account, `org`, `role` admin|editor|viewer, `amr`, `iss`=mailward, `aud`=mailward-api); the version \
header is optional and defaults to 2025-04-30. Requests that arrived over plain HTTP \
(`X-Forwarded-Proto: http`) answer 403 `https_required`.\n\n\
**Errors.** `{code, message, param?, details?}`. 401 carries `WWW-Authenticate: Basic realm=\"Mailward\", \
Bearer realm=\"Mailward\"` (Bearer alone for browser fetches) and `details.documentation`; an unknown \
route answers 404 `not_found` with `details.documentation` and `details.openapi`; `Accept: text/plain` \
or `text/html` gets the plain status line for 401 and 404. Malformed JSON answers 400 `invalid_json`; \
a wrong type, missing or unknown field 400 `parameter_invalid_or_missing` with `param` naming the \
field path; a malformed id in a path 400 naming `id`; a non-JSON body 415; a body over 1 MiB 413; a \
concurrent update 409 `conflict`; 5xx bodies carry `details.request_id` (also in `X-Request-Id`).\n\n\
**Rate limits.** Fixed windows shared by every instance. Every response carries `RateLimit-Limit`, \
`RateLimit-Remaining` and `RateLimit-Reset` for the bucket closest to exhaustion. Buckets: `global` \
(every request; per API key, session subject or client IP; default 1200/60 s), `api_key` (per key; \
600/60 s), `dns` and `api_key_dns` (DNS-resolving endpoints; 120/60 s and 60/60 s), `signup` (per IP; \
10/3600 s). Limits are configuration (`MAILWARD_RATE_<SCOPE>=<limit>/<seconds>`): do not hard-code \
them. 429 bodies: `{error: rate_limit_exceeded, scope, message, limit, window_seconds, \
retry_after_seconds}` with `Retry-After`.\n\n\
**Pagination.** `page` (1-based, default 1) and `per_page` (1-100, default 25); lists return \
`page_info` `{total_count, page, per_page, has_more}`."
    ),
    modifiers(&SecuritySchemes),
    tags(
        (name = "health", description = "Liveness"),
        (name = "signup", description = "Headless signup"),
        (name = "api-keys", description = "API keys"),
        (name = "organizations", description = "Organizations"),
        (name = "meta", description = "This document"),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "API key as the user name, empty password; send Mailward-Version too",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some("Dashboard session token"))
                    .build(),
            ),
        );
    }
}

fn version_header() -> Parameter {
    ParameterBuilder::new()
        .name("Mailward-Version")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "API version: 2025-04-30 or unstable. Required with an API key; optional (default 2025-04-30) with a session. Alias: Service-Version.",
        ))
        .schema(Some(
            utoipa::openapi::schema::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .enum_values(Some(["2025-04-30", "unstable"]))
                .build(),
        ))
        .build()
}

/// Adds the version header to every operation that takes credentials.
fn add_version_header(doc: &mut OpenApi) {
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            if op.security.as_ref().is_some_and(|s| !s.is_empty()) {
                op.parameters
                    .get_or_insert_with(Vec::new)
                    .push(utoipa::openapi::RefOr::T(version_header()));
            }
        }
    }
}

fn error_response(
    description: &str,
    schema: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::Response> {
    utoipa::openapi::RefOr::T(
        utoipa::openapi::ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                utoipa::openapi::content::ContentBuilder::new()
                    .schema(Some(utoipa::openapi::Ref::from_schema_name(schema)))
                    .build(),
            )
            .build(),
    )
}

/// Adds the responses every route can give because of the shared conventions: 429 (global
/// bucket), 500/503 (with a request id), 401 on credentialed routes, 413/415 on routes with a
/// JSON body.
fn add_convention_responses(doc: &mut OpenApi) {
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            let credentialed = op.security.as_ref().is_some_and(|s| !s.is_empty());
            let has_body = op.request_body.is_some();
            let responses = &mut op.responses.responses;
            let mut add = |code: &str, description: &str, schema: &str| {
                responses
                    .entry(code.to_owned())
                    .or_insert_with(|| error_response(description, schema));
            };
            add(
                "429",
                "Rate limit exceeded (`Retry-After`)",
                "RateLimitBody",
            );
            add(
                "500",
                "Internal error; `details.request_id` identifies the request",
                "ErrorBody",
            );
            add(
                "503",
                "A backing service is unavailable; `details.request_id` identifies the request",
                "ErrorBody",
            );
            if credentialed {
                add("401", "Missing or rejected credential", "ErrorBody");
                add(
                    "400",
                    "Invalid input or version header; `param` names the field",
                    "ErrorBody",
                );
            }
            if has_body {
                add(
                    "400",
                    "Invalid JSON or field; `param` names the field",
                    "ErrorBody",
                );
                add("413", "Body larger than 1 MiB", "ErrorBody");
                add("415", "Body is not JSON", "ErrorBody");
            }
        }
    }
}

/// The complete document: every group's routes, whichever function serves the request.
pub fn document() -> &'static OpenApi {
    static DOC: OnceLock<OpenApi> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = <ApiDoc as utoipa::OpenApi>::openapi();
        doc.merge(crate::all_routes().into_openapi());
        add_version_header(&mut doc);
        add_convention_responses(&mut doc);
        if let Some(op) = doc
            .paths
            .paths
            .get_mut("/tools/audit")
            .and_then(|item| item.get.as_mut())
        {
            op.description = Some(crate::routes::audit::scoring_description());
        }
        doc
    })
}

fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| serde_json::to_string(document()).unwrap_or_else(|_| "{}".into()))
}

/// Serves the OpenAPI document.
#[utoipa::path(get, path = "/swagger.json", tag = "meta",
    responses((status = 200, description = "The OpenAPI 3.1 description of every served route", content_type = "application/json")))]
pub async fn get_openapi() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        document_json(),
    )
}

/// Routes of this module.
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(get_openapi))
}
