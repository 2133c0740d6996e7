//! The OpenAPI document's assembly: the top-level description, the security schemes, and the
//! parts every operation shares because of the conventions (the version header, 401/429/5xx,
//! 413/415 on JSON bodies, a description on every response). The routes themselves live in the
//! function crates; `mailward openapi` merges them all and writes the document `api-public`
//! serves, and a test keeps that file equal to what the routes generate.

use mailward_api_types::{ErrorBody, RateLimitBody};
use mailward_services::AppState;
use utoipa::Modify;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{
    OpenApi, Required,
    path::{Parameter, ParameterBuilder, ParameterIn},
};
use utoipa_axum::router::OpenApiRouter;

/// Top-level document: info, tags, security schemes.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Mailward API",
        version = "2025-04-30",
        description = "Mailward gets an organization's domains into a protected email-authentication \
state and keeps them there: it watches DMARC, SPF, DKIM, BIMI, MTA-STS, TLS-RPT and MX in live DNS \
and in aggregate reports, scores every domain, says which records to publish and verifies them, \
opens remediation tasks and delivers signed webhooks.\n\n\
# Quick start\n\n\
1. Sign up: `POST /signup` with `{\"email\": \"you@example.com\", \"organization_name\": \"Example\"}` \
answers a `signup_id`; a six-digit code is emailed (locally: `.mailward/outbox/*.eml`).\n\
2. Verify: `POST /signup/verify` with `{\"signup_id\": \"…\", \"code\": \"123456\"}` answers the \
organization and an API key (`api_key.key`, shown once).\n\
3. Add a domain: `POST /domains` with `{\"url\": \"example.com\"}` (Basic auth with the key, header \
`Mailward-Version: 2025-04-30`).\n\
4. Publish its records: `GET /domains/{id}/dns-records` lists each record with its host, value and \
the action to take.\n\
5. Verify them: `POST /domains/{id}/verify` once published; the sweep keeps checking afterwards.\n\
6. Get told: `POST /webhook-endpoints` with an https `url` answers the signing secret once; events \
such as `domain.monitoring.activated` and `task.opened` follow.\n\n\
```sh\n\
curl -u \"$MAILWARD_KEY:\" -H 'Mailward-Version: 2025-04-30' https://api.example/domains\n\
```\n\n\
# Authentication\n\n\
API keys: HTTP Basic with the key as user name and an empty password. Dashboard sessions: \
`Authorization: Bearer <JWT>` (HS256, claims `sub` account, `org`, `role` admin|editor|viewer, \
`amr`, `sid` the stored session, `iss`=mailward, `aud`=mailward-api), from `POST /oauth/session`; \
sign-out (`DELETE /oauth/session`) and revocation end it at its next request. The organization \
always comes from the credential. An organization with `require_mfa` holds a person's session \
that did not complete a second factor at its door: every route answers 403 \
`mfa_enrollment_required` (no authenticator yet: enrol at `POST /account/mfa/totp`) or \
`mfa_required` (confirm the session at `POST /account/mfa/verify`), except the person's own \
`/account/mfa*` and `/oauth/session(s)` routes. API keys are not people: MFA never applies to them. \
Requests that arrived over plain HTTP (`X-Forwarded-Proto: http`) answer 403 `https_required`. \
Viewers and read-only keys never write (403 `forbidden`).\n\n\
# Versioning\n\n\
API-key requests carry `Mailward-Version` (`2025-04-30` or `unstable`; `Service-Version` is \
accepted as an alias): a missing version answers 400 `api_version_missing`, an unknown one 400 \
`api_version_invalid`. For sessions the header is optional and defaults to 2025-04-30. Webhook \
endpoints keep the version they were created with.\n\n\
# Errors\n\n\
Bodies are `{code, message, param?, details?}`. 401 carries `WWW-Authenticate: Basic \
realm=\"Mailward\", Bearer realm=\"Mailward\"` (Bearer alone for browser fetches) and \
`details.documentation`; an unknown route answers 404 `not_found` with `details.documentation` and \
`details.openapi`; `Accept: text/plain` or `text/html` gets the plain status line for 401 and 404. \
Malformed JSON answers 400 `invalid_json`; a wrong type, missing or unknown field 400 \
`parameter_invalid_or_missing` with `param` naming the field path; a malformed id in a path 400 \
naming it; a non-JSON body 415; a body over 1 MiB 413; a concurrent update 409 `conflict`; 5xx \
bodies carry `details.request_id` (also in `X-Request-Id`).\n\n\
# Rate limits\n\n\
Fixed windows shared by every instance. Every response carries `RateLimit-Limit`, \
`RateLimit-Remaining` and `RateLimit-Reset` for the bucket closest to exhaustion. Buckets: `global` \
(every request; per API key, session subject or client IP, IPv6 clients per /64; default 1200/60 s), `api_key` (per key; \
600/60 s), `dns` and `api_key_dns` (DNS-resolving endpoints; 120/60 s and 60/60 s), `signup` (per IP; \
10/3600 s), `signin` (every sign-in step, per client address, IPv6 per /64; 30/600 s; also \
an address's daily budget of 20 wrong codes per client, see `POST /oauth/session`), `invite` (adding members and inviting people, per caller; 30/3600 s), `mcp_oauth` (MCP calls, per person; 600/60 s) and `mcp_dns` (the MCP tools that resolve \
DNS, per person, per client address on the public endpoint; 120/60 s; such a call counts in `dns` too, \
and either bucket exceeded is reported as a tool error naming it). Limits are configuration (`MAILWARD_RATE_<SCOPE>=<limit>/<seconds>`): do not hard-code \
them. 429 bodies: `{error: rate_limit_exceeded, scope, message, limit, window_seconds, \
retry_after_seconds}` with `Retry-After`.\n\n\
# Pagination\n\n\
`page` (1-based, default 1) and `per_page` (1-100, default 25); lists return `page_info` \
`{total_count, page, per_page, has_more}`.\n\n\
# Webhook signatures\n\n\
Each delivery is a `POST` of `{id, type, api_version, created, data: {object, \
previous_attributes?}}` with `Mailward-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \
\"<t>.<raw body>\" keyed by the endpoint's secret>`, `Mailward-Event-Id` and \
`Mailward-Delivery-Attempt`. Verify against the raw bytes (re-serialised JSON breaks the \
signature), compare in constant time, refuse timestamps more than five minutes away, answer 2xx \
within 10 seconds and deduplicate on `id`: delivery is at least once and unordered. Rotating the \
secret (`POST /webhook-endpoints/{id}/rotate-secret`) stops the old one at once."
    ),
    modifiers(&SecuritySchemes),
    components(schemas(ErrorBody, RateLimitBody, mailward_api_types::identity::ScimErrorBody)),
    tags(
        (name = "health", description = "Liveness"),
        (name = "signup", description = "Headless signup"),
        (name = "api-keys", description = "API keys"),
        (name = "organizations", description = "Organizations"),
        (name = "meta", description = "This document"),
        (name = "staff", description = "An extension beyond SPEC §5, for Mailward staff (the accounts on the deployment's staff list, signed in with their authenticator app): the support queue across organizations with replies and attachments, organization search, and suspension (read-only API, not swept, billed or mailed until lifted; separate from the customer's own `is_active`). Each action is in the organization's activity log as `SERVICE_STAFF`. The `staff_session` credential opens these routes only; no customer credential opens them."),
        (name = "operations", description = "An extension beyond SPEC §5, for whoever runs a deployment: `GET /metrics` for Prometheus, behind its own `metrics_token` scheme."),
        (name = "billing", description = "An extension beyond SPEC §4: subscriptions on Stripe's hosted pages (the REST side of the `get_subscription`, `start_checkout` and `start_billing_portal` MCP tools) and Stripe's webhook. Entitlements follow what is paid, never the plan chosen at signup: free (30 days of reports, 50 domains, no agent proposals) until a checkout completes; it_teams (365 days, 1,000 domains, agent add-on) and msp (365 days, 25,000 domains, agent add-on) while trialing (14 days from checkout), active, or past due for up to 7 days. After a downgrade the paid retention window is kept 30 days. The subscription's item quantities are GET /usage's line items, reported to Stripe after each billing event, daily and when domains are added, removed, or become active or inactive, so invoice lines equal the line items. Taxes and receipts are Stripe's settings (automatic tax, invoice emails)."),
        (name = "scim", description = "An extension beyond SPEC §5: SCIM 2.0 provisioning (RFC 7643/7644) for the organization's identity provider. An administrator creates a SCIM token (`POST /scim-tokens`, shown once); the provider calls `/scim/v2` with `Authorization: Bearer mwscim_…` (the `scim_token` scheme, which opens nothing else), SCIM's own methods (PUT replaces, PATCH modifies), media type (`application/scim+json`) and error body. Users are the people it provisions (members while `active`), Groups are Mailward's groups and their members the members' group limits. Deprovisioning ends the person's sessions and MCP connections for the organization at once and never removes the last administrator. Changes reach the activity log as `API_KEY` actions whose actor is the SCIM token's id, and the member webhooks fire as for any change. The `Mailward-Version` header is not used here."),
        (name = "oauth", description = "The OAuth 2.1 authorization server of the MCP endpoints (its own function on AWS). People sign in with a one-time code emailed to them (no passwords), pick an organization and consent; the one public connector client (no secret) trades the authorization code with PKCE S256 for an ES256 access token (15 minutes, audience `{base_url}/mcp`, verifiable with `/oauth/jwks`) and a refresh token that rotates on every use (an old one presented again revokes its connection). Loopback redirect URIs on any port (8765 for Claude-Code-style clients) are the only ones accepted. Dynamic client registration and client-ID metadata documents are refused with 403 naming the connector client. People list and revoke their connections with `GET`/`DELETE /oauth/connections`; a revoked connection answers 401 on its next MCP call. The same sign-in gives dashboard sessions: `POST /oauth/session/start`, then `POST /oauth/session`."),
        (name = "mcp", description = "The Model Context Protocol endpoints for AI agents: `/mcp` (every tool; OAuth tokens only), `/mcp/directory` (fourteen read-only tools) and `/mcp/public` (no credentials: `audit_domain`, `validate_spf_include`), with the discovery documents (`/.well-known/oauth-protected-resource*`, `/.well-known/mcp`, `/.well-known/mcp/server-card.json`). The tools call the same services as the REST routes and answer the same shapes as structured content."),
        (name = "alerts", description = "An extension beyond SPEC: alert rules page the right channel when something about a domain's mail changes. A rule has a scope (all domains, groups, listed domains), one typed condition with its parameters (monitoring failed or drifted, score below a band, DMARC pass rate under a threshold over a window, a new unknown sender above a volume, a known sender's failure rate above a threshold, TLS-RPT failure rate above a threshold, a hosted record in error, a certificate expiring within N days, a DNS conflict), evaluated where its data is computed (the sweep, sender identification after each import, each TLS report, the hourly reconciliation), and destinations: email addresses, a Slack incoming webhook (Block Kit with a plain-text fallback), a Microsoft Teams workflow webhook (an Adaptive Card), a PagerDuty Events API v2 routing key (`trigger` and `resolve` with one `dedup_key` per alert) or one of the organization's webhook endpoints (the signed `alert.opened`, `alert.updated` and `alert.resolved` events, once each). An alert opens once, is repeated while it holds at most every `repeat_interval_minutes`, and resolves when it stops holding; each change is in the activity log (`alert.opened`, `alert.resolved`) and the events. Delivery reuses the webhook machinery: the outbound policy (https to public hosts), retries with backoff, and each attempt listed on the alert."),
        (name = "notifications", description = "Email notifications follow `settings.email_notifications` of the organization: `domain_setup` (monitoring established, or back after a drift), `domain_failed`, `domain_drifted` and `first_report` (a domain's first aggregate report) are sent to the administrators and to members limited to the domain's group, at most once per occurrence, as plain text and HTML with a one-click unsubscribe link (RFC 8058) for their setting. Daily, with the first sweep of the day, the administrators receive `tasks_digests` (the open tasks by priority; skipped when no task changed since the last digest), `setup_reminders` (domains still `pending` a day after they started waiting for their DMARC record; each domain once per wait) and `invitation_reminders` (pending invitations expiring within two days; each invitation once per expiry). `delegation_missing` (hosted DMARC's `_dmarc` CNAME removed after working, or never published in time) and `hosted_spf_live` (the domain's SPF record now includes the hosted, flattened chain) follow the `domain.hosted_record.error` and `.ready` events, once per event. `alerts` (an extension: the mail of alert rules' `email` destinations, to the addresses the rule lists; its unsubscribe link takes the address off that rule alone), `scheduled_reports` (an extension: the weekly or monthly PDF report of `/report-settings`, to its recipients; its unsubscribe link takes the address off that report alone) and `billing_notices` (paid subscriptions only, with the daily reminders, once each: the trial ending within three days with what the invoices will then bill, the trial ended with the tiers the next invoice bills, and the active domains reaching a new volume tier: 11, 101 or 1001 of them; and, at once, a failed payment with the grace period before the free entitlements apply)."),
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
        components.add_security_scheme(
            "scim_token",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An extension: a SCIM token (mwscim_…) an administrator creates with POST /scim-tokens, for the organization's identity provider; it opens /scim/v2 and nothing else",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "stripe_signature",
            SecurityScheme::ApiKey(utoipa::openapi::security::ApiKey::Header(
                utoipa::openapi::security::ApiKeyValue::with_description(
                    "Stripe-Signature",
                    "An extension: Stripe's webhook signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of \"t.body\" under the endpoint's signing secret>); it opens /billing/stripe-webhook and nothing else",
                ),
            )),
        );
        components.add_security_scheme(
            "staff_session",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "An extension: a Mailward staff token from POST /staff/session (the emailed code and the authenticator app; the account on the deployment's staff list); it opens /staff/... and nothing else, and lives one hour",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "metrics_token",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An extension: the operator's metrics token (MAILWARD_METRICS_TOKEN); it opens /metrics and nothing else. Without one configured, /metrics answers loopback clients only",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "mcp_oauth",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "OAuth 2.1 access token from the authorization server (authorization code with PKCE S256, the public connector client): ES256 JWT, audience {base_url}/mcp",
                    ))
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
fn add_version_header(op: &mut Operation) {
    // SCIM's own routes (`scim_…`) take SCIM's credential and no version header.
    let scim_only = op
        .operation_id
        .as_deref()
        .is_some_and(|id| id.starts_with("scim_"));
    if !scim_only && op.security.as_ref().is_some_and(|s| !s.is_empty()) {
        op.parameters
            .get_or_insert_with(Vec::new)
            .push(utoipa::openapi::RefOr::T(version_header()));
    }
}

/// Calls `change` on every operation of the document.
fn for_each_operation(doc: &mut OpenApi, mut change: impl FnMut(&mut Operation)) {
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
            change(op);
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
fn add_convention_responses(op: &mut Operation) {
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

/// Gives every response without one a description (OpenAPI requires it): the status's reason
/// phrase, which is what a reader would guess, so the document stays valid whatever a route
/// forgot to say.
fn add_missing_descriptions(op: &mut Operation) {
    for (code, response) in op.responses.responses.iter_mut() {
        if let utoipa::openapi::RefOr::T(response) = response
            && response.description.trim().is_empty()
        {
            response.description = code
                .parse::<u16>()
                .ok()
                .and_then(|c| axum::http::StatusCode::from_u16(c).ok())
                .and_then(|s| s.canonical_reason())
                .unwrap_or("Response")
                .to_owned();
        }
    }
}

/// The complete document for the routes of every function (the caller merges them).
pub fn document(routes: OpenApiRouter<AppState>) -> OpenApi {
    let mut doc = <ApiDoc as utoipa::OpenApi>::openapi();
    doc.merge(routes.into_openapi());
    for_each_operation(&mut doc, |op| {
        add_version_header(op);
        add_convention_responses(op);
        add_missing_descriptions(op);
    });
    doc
}

/// The document as the committed `openapi.json` holds it: pretty JSON and a final newline.
pub fn to_json(doc: &OpenApi) -> String {
    let mut json = serde_json::to_string_pretty(doc).unwrap_or_else(|_| "{}".into());
    json.push('\n');
    json
}
