//! The MCP server of one request: `tools/list` shows the endpoint's tools, `tools/call` checks
//! the caller may call it, throttles the public endpoint, and runs the tool. Errors a tool
//! meets (bad arguments, refusals, throttling) are tool results with `isError` and a structured
//! `error`, which agents read; unknown tools are protocol errors, as MCP asks.

use crate::tools::{self, Context, Endpoint, ToolError};
use mailward_domain::model::Role;
use mailward_http::AppState;
use mailward_http::rate_limit::hit;
use mailward_services::caller::{Caller, Credential};
use mailward_services::config::Scope;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::Arc;

/// The protocol revisions negotiated (current clients speak these three).
pub static PROTOCOL_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// One request's server.
#[derive(Clone)]
pub struct McpServer {
    /// The service state.
    pub app: AppState,
    /// Which endpoint was called.
    pub endpoint: Endpoint,
    /// The verified caller (none on the public endpoint).
    pub caller: Option<Caller>,
    /// The token's scopes (none on the public endpoint).
    pub scopes: Option<Vec<String>>,
    /// The client address (the public endpoint's throttle key).
    pub client_ip: String,
}

/// Whether `caller` is a viewer (who can change nothing through MCP).
fn is_viewer(caller: Option<&Caller>) -> bool {
    matches!(
        caller,
        Some(Caller {
            credential: Credential::Session {
                role: Role::Viewer,
                ..
            },
            ..
        })
    )
}

/// The tools `endpoint` lists: to the caller of a token with its scopes, only what both allow;
/// without a token (the public endpoint, the discovery documents), every tool it serves.
pub fn listed(endpoint: Endpoint, token: Option<(Option<&Caller>, &[String])>) -> Vec<Tool> {
    tools::TOOLS
        .iter()
        .filter(|t| t.served_by(endpoint))
        .filter(|t| match token {
            None => true,
            Some((caller, scopes)) => {
                t.scope_allows(Some(scopes)) && !(t.writes() && is_viewer(caller))
            }
        })
        .map(|t| {
            let input = match (t.input)() {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let output = match (t.output)() {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let description = if t.untrusted.is_empty() {
                t.description.to_owned()
            } else {
                format!("{} {}", t.description, tools::untrusted_notice(t.untrusted))
            };
            Tool::new(t.name, description, Arc::new(input))
                .with_title(t.title)
                .with_raw_output_schema(Arc::new(output))
                .with_annotations(
                    ToolAnnotations::with_title(t.title)
                        .read_only(!t.writes())
                        .destructive(t.writes() && t.destructive)
                        .idempotent(t.idempotent)
                        .open_world(t.open_world),
                )
        })
        .collect()
}

fn tool_error(error: Value) -> CallToolResult {
    let message = error["message"]
        .as_str()
        .unwrap_or("the tool failed")
        .to_owned();
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "Error ({}): {message}",
        error["code"].as_str().unwrap_or("error")
    ))]);
    result.structured_content = Some(json!({ "error": error }));
    result
}

impl McpServer {
    async fn run(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let Some(def) = tools::find(&request.name).filter(|d| d.served_by(self.endpoint)) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; tools/list shows the tools",
                    request.name
                ),
                None,
            ));
        };
        if def.writes() && is_viewer(self.caller.as_ref()) {
            return Ok(tool_error(
                ToolError::new(
                    "forbidden",
                    "a viewer cannot change anything through MCP; ask an administrator or editor",
                    None,
                )
                .0,
            ));
        }
        if self.endpoint != Endpoint::Public && !def.scope_allows(self.scopes.as_deref()) {
            let needed = def.scope.unwrap_or_default();
            let mut error = ToolError::new(
                "insufficient_scope",
                format!(
                    "this connection was not granted {needed:?}, which {} needs; reconnect and allow it",
                    def.name
                ),
                None,
            )
            .0;
            error["scope"] = Value::String(needed.to_owned());
            return Ok(tool_error(error));
        }
        if def.dns
            && let Some(error) = self.dns_quota().await
        {
            return Ok(tool_error(error));
        }
        let ctx = Context {
            app: self.app.clone(),
            caller: self.caller.clone(),
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(match (def.call)(&ctx, args).await {
            Ok(value) => {
                let text = serde_json::to_string(&value).unwrap_or_default();
                let mut content = vec![ContentBlock::text(text)];
                if !def.untrusted.is_empty() {
                    content.push(ContentBlock::text(tools::untrusted_notice(def.untrusted)));
                }
                let mut result = CallToolResult::success(content);
                result.structured_content = Some(value);
                if !def.untrusted.is_empty() {
                    let mut meta = serde_json::Map::new();
                    meta.insert("mailward/untrusted_fields".into(), json!(def.untrusted));
                    result.meta = Some(rmcp::model::MetaObject(meta));
                }
                result
            }
            Err(ToolError(error)) => tool_error(error),
        })
    }
}

impl McpServer {
    /// Counts a DNS tool call in the `dns` bucket its REST route counts in and in `mcp_dns`, per
    /// person (per client address on the public endpoint); the error of the first bucket
    /// exceeded, naming it.
    async fn dns_quota(&self) -> Option<Value> {
        let subject = match &self.caller {
            Some(caller) => caller.subject(),
            None => mailward_domain::rate_limits::client_subject(&self.client_ip),
        };
        for scope in [Scope::Dns, Scope::McpDns] {
            if let Some(bucket) = hit(&self.app, scope, &subject).await
                && bucket.exceeded
            {
                let retry = bucket.reset_secs.max(1);
                return Some(json!({
                    "code": "rate_limit_exceeded",
                    "scope": scope.as_str(),
                    "message": format!("too many DNS lookups by this caller ({}); retry in {retry} seconds", scope.as_str()),
                    "limit": bucket.limit,
                    "window_seconds": bucket.window_secs,
                    "retry_after_seconds": retry,
                }));
            }
        }
        None
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mailward", env!("CARGO_PKG_VERSION")))
            .with_instructions(match self.endpoint {
                Endpoint::Public => "Mailward's public tools: audit any domain's email authentication (DMARC, SPF, DKIM, BIMI, MTA-STS, TLS-RPT, MX) and check SPF includes. No account needed.",
                Endpoint::Directory => "Mailward, read-only: the organization's domains, their DNS records and plans, tasks, DMARC report summaries and senders.",
                Endpoint::Main => "Mailward gets an organization's domains to DMARC enforcement and keeps them there. Start with get_account, then list_domains; get_dns_records says what to publish, verify_domain checks it, list_tasks says what to fix next.",
            })
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let token = self
            .scopes
            .as_deref()
            .map(|scopes| (self.caller.as_ref(), scopes));
        Ok(ListToolsResult::with_all_items(listed(
            self.endpoint,
            token,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run(request).await.map(CallToolResponse::from)
    }
}
