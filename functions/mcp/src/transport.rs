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
use mailward_oauth::access;
use mailward_oauth::{DIRECTORY_SCOPES, Urls};
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

/// Whether `host` (a name or an address, IPv6 in brackets) is this machine's.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// DNS rebinding (the MCP transport's security rules): a page on another site can reach this
/// server under a name it controls, so `Host` must be the public base URL's authority and an
/// `Origin`, when sent, its origin; loopback names on any port are always accepted (the local
/// stack, a developer's machine). Anything else is 403.
fn rebinding_refused(base_url: &str, headers: &HeaderMap) -> Option<ApiError> {
    let base = url::Url::parse(base_url).ok()?;
    let base_host = base.host_str().unwrap_or_default();
    let base_port = base.port_or_known_default();
    let text = |name: header::HeaderName| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("\u{0}").trim().to_owned())
    };
    let refused = |what: &str, value: &str| {
        Some(
            ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                "forbidden",
                format!("{what} {value:?} is not this service's ({base_url}); MCP requests must come to the service's own address"),
            )
            .param(what.to_ascii_lowercase()),
        )
    };
    if let Some(host) = text(header::HOST) {
        let allowed = host.parse::<axum::http::uri::Authority>().is_ok_and(|a| {
            is_loopback(a.host())
                || (a.host().eq_ignore_ascii_case(base_host)
                    && a.port_u16().or(base_port) == base_port)
        });
        if !allowed {
            return refused("Host", &host);
        }
    }
    if let Some(origin) = text(header::ORIGIN) {
        let allowed = url::Url::parse(&origin)
            .is_ok_and(|o| o.host_str().is_some_and(is_loopback) || o.origin() == base.origin());
        if !allowed {
            return refused("Origin", &origin);
        }
    }
    None
}

/// A verified token: its caller and its scopes.
struct Token {
    caller: Caller,
    scopes: Vec<String>,
}

async fn authenticate(
    app: &AppState,
    urls: &Urls,
    endpoint: Endpoint,
    headers: &HeaderMap,
) -> Result<Token, ApiError> {
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
    let without = match endpoint {
        Endpoint::Directory => access::WithoutOrganization::SingleOrganization,
        _ => access::WithoutOrganization::Refuse,
    };
    let verified =
        match access::authenticate(app, &urls.issuer, &audiences, token.trim(), without).await {
            Ok(Ok(verified)) => verified,
            Ok(Err(rejection)) if rejection.is_forbidden() => {
                return Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    "forbidden",
                    rejection.to_string(),
                ));
            }
            Ok(Err(rejection)) => {
                return Err(mcp_unauthorized(
                    &metadata,
                    &rejection.to_string(),
                    Some("invalid_token"),
                    None,
                ));
            }
            Err(e) => return Err(ApiError::unavailable(e)),
        };
    let mut scopes: Vec<String> = verified
        .claims
        .scope
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if verified.claims.org.is_none() {
        if scopes == ["offline_access"] {
            // A hosted connector that chose no organization: the directory's reads, which the
            // member's role bounds as it bounds every caller.
            scopes.extend(DIRECTORY_SCOPES.iter().map(|s| (*s).to_owned()));
        } else if !DIRECTORY_SCOPES
            .iter()
            .all(|needed| scopes.iter().any(|s| s == needed))
        {
            return Err(mcp_unauthorized(
                &metadata,
                "a connection without an organization needs the four read scopes",
                Some("insufficient_scope"),
                Some(&DIRECTORY_SCOPES.join(" ")),
            ));
        }
    }
    Ok(Token {
        caller: verified.caller,
        scopes,
    })
}

/// 403 for a token whose scopes allow nothing asked (RFC 6750 §3.1), naming what would.
fn insufficient_scope(scope: &str) -> ApiError {
    let mut e = ApiError::new(
        axum::http::StatusCode::FORBIDDEN,
        "insufficient_scope",
        format!(
            "this connection was granted none of the scopes this endpoint serves ({scope}); reconnect and allow them"
        ),
    );
    if let Ok(value) = header::HeaderValue::from_str(&format!(
        "Bearer error=\"insufficient_scope\", scope=\"{scope}\""
    )) {
        e = e.header(header::WWW_AUTHENTICATE, value);
    }
    e
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
    let base_url = links::base_url(&app.config);
    if let Some(refused) = rebinding_refused(&base_url, request.headers()) {
        return Err(refused);
    }
    let urls = Urls::new(&app, &base_url);
    let token = match endpoint {
        Endpoint::Public => None,
        _ => {
            let token = authenticate(&app, &urls, endpoint, request.headers()).await?;
            enforce_logged(&app, log, Scope::McpOauth, &token.caller.subject()).await?;
            Some(token)
        }
    };
    // The directory serves reads of the four areas: a token granted none of them can call
    // nothing there but `get_account` and the public tools.
    if endpoint == Endpoint::Directory
        && let Some(token) = &token
        && !DIRECTORY_SCOPES
            .iter()
            .any(|needed| token.scopes.iter().any(|s| s == needed))
    {
        return Err(insufficient_scope(&DIRECTORY_SCOPES.join(" ")));
    }
    let (caller, scopes) = match token {
        Some(t) => (Some(t.caller), Some(t.scopes)),
        None => (None, None),
    };
    let server = McpServer {
        app,
        endpoint,
        caller,
        scopes,
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
    description = "Every Mailward tool for AI agents. OAuth access tokens only (from the authorization server of `/.well-known/oauth-authorization-server`); API keys are refused. Without a token: 401 with `WWW-Authenticate: Bearer resource_metadata=\"…\"` (RFC 9728). Each tool needs one scope (extension: the write scopes `domains:write`, `groups:write`, `tasks:write`, `webhooks:write`, `prospecting:write` and the reads `webhooks:read`, `prospecting:read`, `activity:read` beside SPEC's four); `tools/list` shows only the tools the token's scopes and the member's role allow, and a call beyond them is a tool error `insufficient_scope` naming the scope (`error.scope`). Tools carry MCP annotations (`title`, `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). A viewer cannot call writing tools. Throttled per person in the `mcp_oauth` bucket.",
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Malformed JSON-RPC or an unsupported MCP-Protocol-Version"),
        (status = 406, description = "`Accept` does not name both application/json and text/event-stream"),
        (status = 415, description = "The body is not `application/json`, or not a JSON-RPC 2.0 message"),
        (status = 401, description = "No, an expired, revoked or wrong-audience token, or an API key", body = ErrorBody),
        (status = 403, description = "`Host` or `Origin` is not the service's public base URL (nor a loopback name, any port): refused against DNS rebinding; or a token without an organization (SPEC §5 rule 8: it serves only the directory endpoint)", body = ErrorBody),
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
    description = "The fourteen read-only monitoring and diagnosis tools (get_account, audit_domain, validate_spf_include, list_domains, get_domain, get_dns_records, get_domain_plan, get_spf, preview_dns_change, list_tasks, get_task, get_dmarc_summary, list_dmarc_senders, list_groups), for directory listings of connectors. Accepts tokens issued for `{mcp_url}/directory` or `{mcp_url}`. A token carries the organization the person picked at sign-in, except a hosted connector's (an allow-listed HTTPS callback) that asked only for `offline_access` and chose none: the directory then serves the person's single active organization (403 when there are none or several) with the reads the member's role allows; any other token without an organization that lacks one of the four read scopes gets 401 with `WWW-Authenticate` naming them. A token granted none of `domains:read`, `groups:read`, `tasks:read` and `dmarc_reports:read` is refused with 403 and `WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"…\"` naming them; otherwise `tools/list` shows the tools its scopes allow.",
    responses(
        (status = 200, description = "The JSON-RPC response", body = Object),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Malformed JSON-RPC or an unsupported MCP-Protocol-Version"),
        (status = 406, description = "`Accept` does not name both application/json and text/event-stream"),
        (status = 415, description = "The body is not `application/json`, or not a JSON-RPC 2.0 message"),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "`Host` or `Origin` is not the service's (DNS rebinding); the token holds none of the four read scopes (`insufficient_scope`); or a token without an organization while the person has none or several", body = ErrorBody),
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
        (status = 403, description = "`Host` or `Origin` is not the service's public base URL (nor a loopback name, any port): refused against DNS rebinding", body = ErrorBody),
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
