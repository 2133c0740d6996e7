//! `POST {mcp_url}`, `POST {mcp_url}/directory` and `POST {mcp_url}/public`: Streamable HTTP,
//! stateless (every request stands alone, so it runs on Lambda), served by the official SDK
//! (`rmcp`) after this module authenticated the caller: OAuth access tokens only on the first
//! two (API keys refused), nothing on the public one (a credential sent is ignored).

use crate::server::McpServer;
use crate::tools::Endpoint;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_http::middleware::ClientIp;
use mailward_http::oauth::mcp_unauthorized;
use mailward_http::rate_limit::{RateLimitLog, enforce_logged};
use mailward_http::{ApiError, AppState, Routes, links};
use mailward_oauth::Urls;
use mailward_oauth::access;
use mailward_services::caller::Caller;
use mailward_services::config::Scope;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// The protected-resource metadata URL of an endpoint (RFC 9728 §3.1: the well-known path
/// inserted before the resource's path).
pub fn metadata_url(urls: &Urls, endpoint: Endpoint) -> String {
    match endpoint {
        Endpoint::Directory => format!(
            "{}/.well-known/oauth-protected-resource/mcp/directory",
            urls.base
        ),
        _ => format!("{}/.well-known/oauth-protected-resource/mcp", urls.base),
    }
}

async fn authenticate(
    app: &AppState,
    urls: &Urls,
    endpoint: Endpoint,
    headers: &HeaderMap,
) -> Result<Caller, ApiError> {
    let metadata = metadata_url(urls, endpoint);
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(mcp_unauthorized(
            &metadata,
            "the MCP endpoint needs an OAuth access token: sign in through the authorization server named in the protected-resource metadata",
            None,
            None,
        ));
    };
    let value = value.to_str().unwrap_or_default().trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(mcp_unauthorized(
            &metadata,
            "API keys are not accepted by the MCP endpoint: connect with OAuth (Authorization: Bearer <access token>); API keys work on the REST API",
            Some("invalid_token"),
            None,
        ));
    }
    let audiences = match endpoint {
        Endpoint::Directory => vec![urls.directory(), urls.mcp.clone()],
        _ => vec![urls.mcp.clone()],
    };
    match access::authenticate(app, &urls.issuer, &audiences, token.trim()).await {
        Ok(Ok(verified)) => Ok(verified.caller),
        Ok(Err(rejection)) => Err(mcp_unauthorized(
            &metadata,
            &rejection.to_string(),
            Some("invalid_token"),
            None,
        )),
        Err(e) => Err(ApiError::unavailable(e)),
    }
}

/// What the SDK wants to read in `Accept`: both types, named. A request that sends no `Accept`,
/// or a wildcard (`*/*`, as HTTP clients do by default), accepts both by HTTP's own rules
/// (RFC 9110 §12.5.1), so it is given the explicit list instead of a 406.
fn accept_both(headers: &mut HeaderMap) {
    let accepts_anything = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|range| range.split(';').next().unwrap_or("").trim())
        .any(|range| range == "*/*");
    if accepts_anything || !headers.contains_key(header::ACCEPT) {
        headers.insert(
            header::ACCEPT,
            header::HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
}

/// Hands the request to the SDK's stateless Streamable HTTP service.
async fn serve(server: McpServer, mut request: Request) -> Response {
    accept_both(request.headers_mut());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(server.app.config.max_body_bytes)
        // Host checks guard unauthenticated servers on a developer's machine against DNS
        // rebinding; every call here is authenticated or public, and behind API Gateway the
        // host is not known in advance.
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    service.handle(request).await.map(Body::new)
}

async fn endpoint(
    app: AppState,
    endpoint: Endpoint,
    ip: String,
    log: Option<&RateLimitLog>,
    request: Request,
) -> Result<Response, ApiError> {
    let urls = Urls::new(&app, &links::base_url(&app.config));
    let caller = match endpoint {
        Endpoint::Public => None,
        _ => {
            let caller = authenticate(&app, &urls, endpoint, request.headers()).await?;
            enforce_logged(&app, log, Scope::McpOauth, &caller.subject()).await?;
            Some(caller)
        }
    };
    let server = McpServer {
        app,
        endpoint,
        caller,
        client_ip: ip,
    };
    Ok(serve(server, request).await)
}

mailward_api_types::schema_type!(
    /// A JSON-RPC 2.0 request (with `id`) or notification (without) of the Model Context
    /// Protocol; anything else answers 415.
    pub JsonRpcMessage = {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .required("jsonrpc")
            .required("method")
            .property("jsonrpc", mailward_api_types::constraints::one_of(["2.0"]))
            .property("method", ObjectBuilder::new().schema_type(Type::String))
            .property(
                "id",
                OneOfBuilder::new()
                    .item(ObjectBuilder::new().schema_type(Type::String))
                    .item(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(i64::MIN))
                            .maximum(Some(i64::MAX)),
                    ),
            )
            .property(
                "params",
                ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::Object, Type::Null])),
            )
    }
);

const TRANSPORT: &str = "Streamable HTTP (JSON-RPC 2.0), stateless: `initialize`, `tools/list` and `tools/call` each stand alone (no session id); protocol revisions 2025-06-18, 2025-11-25 and 2026-07-28 (an unsupported `MCP-Protocol-Version` header is 400). Send `Accept: application/json, text/event-stream`; answers are JSON.";

/// The main MCP endpoint.
#[utoipa::path(post, path = "/mcp", tag = "mcp",
    request_body(content = JsonRpcMessage, description = "A JSON-RPC 2.0 request or notification"),
    security(("mcp_oauth" = [])),
    description = "Every Mailward tool for AI agents. OAuth access tokens only (from the authorization server of `/.well-known/oauth-authorization-server`); API keys are refused. Without a token: 401 with `WWW-Authenticate: Bearer resource_metadata=\"…\"` (RFC 9728). A viewer cannot call writing tools. Throttled per person in the `mcp_oauth` bucket.",
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Malformed JSON-RPC or an unsupported MCP-Protocol-Version"),
        (status = 406, description = "`Accept` does not name both application/json and text/event-stream"),
        (status = 415, description = "The body is not `application/json`, or not a JSON-RPC 2.0 message"),
        (status = 401, description = "No, an expired, revoked or wrong-audience token, or an API key", body = ErrorBody),
        (status = 429, description = "The `mcp_oauth` bucket is exhausted"),
    ))]
pub async fn mcp(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    request: Request,
) -> Response {
    endpoint(app, Endpoint::Main, ip, log.as_deref(), request)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// The read-only directory endpoint.
#[utoipa::path(post, path = "/mcp/directory", tag = "mcp",
    request_body(content = JsonRpcMessage, description = "A JSON-RPC 2.0 request or notification"),
    security(("mcp_oauth" = [])),
    description = "The fourteen read-only monitoring and diagnosis tools (get_account, audit_domain, validate_spf_include, list_domains, get_domain, get_dns_records, get_domain_plan, get_spf, preview_dns_change, list_tasks, get_task, get_dmarc_summary, list_dmarc_senders, list_groups), for directory listings of connectors. Accepts tokens issued for `{mcp_url}/directory` or `{mcp_url}`; every token carries the organization the person picked at sign-in.",
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Malformed JSON-RPC or an unsupported MCP-Protocol-Version"),
        (status = 406, description = "`Accept` does not name both application/json and text/event-stream"),
        (status = 415, description = "The body is not `application/json`, or not a JSON-RPC 2.0 message"),
        (status = 401, description = "No or a refused token", body = ErrorBody),
    ))]
pub async fn mcp_directory(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    log: Option<axum::Extension<RateLimitLog>>,
    request: Request,
) -> Response {
    endpoint(app, Endpoint::Directory, ip, log.as_deref(), request)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// The public endpoint.
#[utoipa::path(post, path = "/mcp/public", tag = "mcp",
    request_body(content = JsonRpcMessage, description = "A JSON-RPC 2.0 request or notification"),
    security(()),
    description = "No account or credential (a credential sent is ignored): `audit_domain` and `validate_spf_include`. Each call counts per client address in the `dns` bucket of the REST DNS endpoints and in `mcp_dns`; over either limit a call answers a tool error whose `error.scope` names the bucket (`dns` or `mcp_dns`), with `retry_after_seconds`. `audit_domain` answers from the ten-minute cache here: `refresh` needs a signed-in caller.",
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Malformed JSON-RPC or an unsupported MCP-Protocol-Version"),
        (status = 406, description = "`Accept` does not name both application/json and text/event-stream"),
        (status = 415, description = "The body is not `application/json`, or not a JSON-RPC 2.0 message"),
    ))]
pub async fn mcp_public(
    State(app): State<AppState>,
    axum::Extension(ClientIp(ip)): axum::Extension<ClientIp>,
    request: Request,
) -> Response {
    endpoint(app, Endpoint::Public, ip, None, request)
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

/// The transport's description, for the discovery documents.
pub fn transport_note() -> &'static str {
    TRANSPORT
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(mcp))
        .routes(utoipa_axum::routes!(mcp_directory))
        .routes(utoipa_axum::routes!(mcp_public))
}
