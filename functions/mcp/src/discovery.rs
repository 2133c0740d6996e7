//! The public discovery documents: the protected-resource metadata of each MCP endpoint
//! (RFC 9728; each names exactly its own URL, as a client reached through a challenge checks),
//! `/.well-known/mcp` (server, transport and every tool's input schema) and the server card.

use crate::server::{PROTOCOL_VERSIONS, listed};
use crate::tools::Endpoint;
use crate::transport::transport_note;
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use mailward_http::{AppState, Routes, links};
use mailward_oauth::{DIRECTORY_SCOPES, SCOPES, Urls};
use serde_json::{Value, json};

fn urls(app: &AppState) -> Urls {
    Urls::new(app, &links::base_url(&app.config))
}

fn cached(body: Value) -> Response {
    ([(header::CACHE_CONTROL, "public, max-age=300")], Json(body)).into_response()
}

fn protected(urls: &Urls, resource: &str, scopes: &[&str], name: &str) -> Value {
    json!({
        "resource": resource,
        "resource_name": name,
        "authorization_servers": [urls.issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_documentation": format!("{}/docs", urls.base),
    })
}

/// Protected-resource metadata of `{mcp_url}`.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource", tag = "mcp", security(()),
    description = "RFC 9728 metadata of the main MCP endpoint: `resource` is `{mcp_url}`, the authorization server `{auth_url}`, and every supported scope.",
    responses((status = 200, description = "The metadata", body = Object)))]
pub async fn protected_resource(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    cached(protected(&urls, &urls.mcp, &SCOPES, "Mailward MCP"))
}

/// The same, at the path a client derives from `{mcp_url}`.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/mcp", tag = "mcp", security(()),
    description = "RFC 9728 metadata of `{mcp_url}` at its path-inserted location (the `resource_metadata` of the endpoint's 401).",
    responses((status = 200, description = "The metadata", body = Object)))]
pub async fn protected_resource_mcp(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    cached(protected(&urls, &urls.mcp, &SCOPES, "Mailward MCP"))
}

/// Protected-resource metadata of the directory endpoint.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/mcp/directory", tag = "mcp", security(()),
    description = "RFC 9728 metadata of `{mcp_url}/directory`: its own URL as `resource`, and the four read scopes it needs.",
    responses((status = 200, description = "The metadata", body = Object)))]
pub async fn protected_resource_directory(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    let mut scopes: Vec<&str> = DIRECTORY_SCOPES.to_vec();
    scopes.push("offline_access");
    cached(protected(
        &urls,
        &urls.directory(),
        &scopes,
        "Mailward MCP directory (read-only)",
    ))
}

/// Metadata of the public endpoint.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/mcp/public", tag = "mcp", security(()),
    description = "Metadata of `{mcp_url}/public`: its own URL as `resource` and no authorization server, because it takes no credentials.",
    responses((status = 200, description = "The metadata", body = Object)))]
pub async fn protected_resource_public(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    cached(json!({
        "resource": urls.public(),
        "resource_name": "Mailward MCP public tools (no credentials)",
        "authorization_servers": [],
        "bearer_methods_supported": [],
        "resource_documentation": format!("{}/docs", urls.base),
    }))
}

fn tools_of(endpoint: Endpoint) -> Vec<Value> {
    listed(endpoint, None)
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": *t.input_schema,
            })
        })
        .collect()
}

/// The MCP discovery document.
#[utoipa::path(get, path = "/.well-known/mcp", tag = "mcp", security(()),
    description = "The MCP server: its endpoints, each with its transport, authentication and tools (with their input schemas).",
    responses((status = 200, description = "The document", body = Object)))]
pub async fn well_known_mcp(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    let versions: Vec<&str> = PROTOCOL_VERSIONS.iter().map(|v| v.as_str()).collect();
    let endpoint = |url: String, endpoint: Endpoint, auth: Value| {
        json!({
            "url": url,
            "transport": {"type": "streamable-http", "stateless": true, "protocol_versions": versions, "note": transport_note()},
            "authentication": auth,
            "tools": tools_of(endpoint),
        })
    };
    let oauth = |metadata: String| {
        json!({
            "type": "oauth2",
            "authorization_server": urls.issuer,
            "protected_resource_metadata": metadata,
            "client_id": app.config.oauth_client_id,
            "pkce": "S256",
        })
    };
    cached(json!({
        "name": "mailward",
        "title": "Mailward",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Email authentication (DMARC, SPF, DKIM, BIMI, MTA-STS, TLS-RPT) for an organization's domains: audits, records to publish, verification, remediation tasks and DMARC report data.",
        "documentation": format!("{}/docs", urls.base),
        "endpoints": [
            endpoint(urls.mcp.clone(), Endpoint::Main, oauth(format!("{}/.well-known/oauth-protected-resource/mcp", urls.base))),
            endpoint(urls.directory(), Endpoint::Directory, oauth(format!("{}/.well-known/oauth-protected-resource/mcp/directory", urls.base))),
            endpoint(urls.public(), Endpoint::Public, json!({"type": "none"})),
        ],
    }))
}

/// The server card.
#[utoipa::path(get, path = "/.well-known/mcp/server-card.json", tag = "mcp", security(()),
    description = "A short card for MCP registries: the server's identity, the main endpoint, its authentication and its tool names.",
    responses((status = 200, description = "The card", body = Object)))]
pub async fn server_card(State(app): State<AppState>) -> Response {
    let urls = urls(&app);
    let names: Vec<String> = listed(Endpoint::Main, None)
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    cached(json!({
        "serverInfo": {"name": "mailward", "title": "Mailward", "version": env!("CARGO_PKG_VERSION")},
        "description": "Get your domains to DMARC enforcement and keep them there.",
        "transport": {"type": "streamable-http", "url": urls.mcp},
        "authentication": {
            "required": true,
            "schemes": ["oauth2"],
            "authorization_server": urls.issuer,
            "client_id": app.config.oauth_client_id,
            "fixed_callback_port": mailward_oauth::FIXED_CALLBACK_PORT,
        },
        "public_endpoint": urls.public(),
        "capabilities": {"tools": {"listChanged": false}},
        "tools": names,
    }))
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(protected_resource))
        .routes(utoipa_axum::routes!(protected_resource_mcp))
        .routes(utoipa_axum::routes!(protected_resource_directory))
        .routes(utoipa_axum::routes!(protected_resource_public))
        .routes(utoipa_axum::routes!(well_known_mcp))
        .routes(utoipa_axum::routes!(server_card))
}
