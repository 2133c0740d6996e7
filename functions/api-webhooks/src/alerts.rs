//! Alert rules and alerts (an extension beyond SPEC): `/alert-rules`, `/alert-rules/{id}`,
//! `/alert-rules/{id}/test` and `/alerts`.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::alerts::{
    AlertFilters, AlertList, AlertRule, AlertRuleList, AlertTest, CreateAlertRule, UpdateAlertRule,
};
use mailward_api_types::{ErrorBody, PageParams};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::alerts;

/// The organization's alert rules.
#[utoipa::path(get, path = "/alert-rules", tag = "alerts",
    description = "Extension beyond SPEC. Every alert rule the caller may see, oldest first (at \
most 100): its scope, condition with every parameter, destinations (never a Slack or Teams URL \
or a PagerDuty routing key: a `hint` of the URL's host and its last four characters, or the \
key's last four) and how many of its alerts are open. A member limited to groups sees the rules \
scoped to some of their groups and the rules listing domains they made. Any member or key reads.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = AlertRuleList)))]
pub async fn list_alert_rules(
    State(app): State<AppState>,
    principal: Principal,
) -> Result<axum::Json<AlertRuleList>, ApiError> {
    Ok(axum::Json(alerts::list(&app, &principal).await?))
}

/// Makes an alert rule.
#[utoipa::path(post, path = "/alert-rules", tag = "alerts",
    request_body = CreateAlertRule,
    description = "Extension beyond SPEC. Editors, administrators and read-write keys (a rule \
changes no DNS record and no domain's configuration; the people working the tasks are the \
ones to page). A rule watches a `scope` (`all`, the default; `groups` with `group_ids`; \
`domains` with `domain_ids`; a member limited to groups scopes only their groups' domains, and \
`all` is stored as their groups) for one `condition`, evaluated where its data is computed: \
`monitoring_problem` (monitoring `failed` or `drifted`) and `score_below` (`band`: the score's \
band is below `bad`, `good` (default) or `great`) and `dns_conflict` (one alert per conflict) \
at each sweep of the domain; `dmarc_pass_rate_below` (`threshold_pct` default 95, \
`window_days` default 7: the days ending today, `min_messages` default 100), \
`new_unknown_sender` (a sender no catalogue source identifies and nobody confirmed or \
discarded, first seen within `window_days` (default 7), with at least `min_messages` (default 1) \
in its recent 30 days; one alert per sender) and `sender_failure_rate_above` (a confirmed or \
recognised sender failing DMARC over `threshold_pct` (default 10) of its recent 30 days' mail, \
at least `min_messages` (default 100); one alert per sender) after each report import's sender \
identification; `tls_failure_rate_above` (`threshold_pct` default 10, `window_days` default 7, \
`min_sessions` default 100) when a TLS report arrives; `hosted_record_error` (one alert per \
hosted record in error) at the hourly reconciliation; `certificate_expiring` (`within_days` \
default 21: the BIMI mark certificate and the hosted MTA-STS policy host's by their expiry \
date, the MX hosts' when the daily probe finds one expired or expiring within its 30-day \
warning) at both. A new rule is also evaluated at once on its domains. `destinations` (1 to \
10): `email` (`emails`: 1 to 20 addresses, mailed when the organization's `alerts` \
notification switch is on, with a one-click unsubscribe that takes that address off this rule \
alone), `slack` \
(`url`: an incoming webhook; Block Kit with a plain-text fallback), `teams` (`url`: a \
workflow's \"When a Teams webhook request is received\" URL; an Adaptive Card 1.4), \
`pagerduty` (`routing_key`: an Events API v2 integration's; `trigger` with a stable \
`dedup_key` per alert, `resolve` with the same key), `webhook_endpoint` (`endpoint_id`: one of \
the organization's endpoints, which then receives this rule's signed `alert.opened`, \
`alert.updated` and `alert.resolved` events, and each once even when it is also subscribed to \
them). URLs must be https to public hosts (the webhook SSRF rules); secrets are sealed at rest \
and never answered. An alert opens once per domain (and sender, record, certificate or \
conflict), is repeated while it stays open at most every `repeat_interval_minutes` (5 to \
10080, default 240), and resolves when its condition stops holding. Deliveries are retried \
with the webhook backoff (up to 12 attempts), each destination on its own. 201 with the rule. \
400 names the field (`name`, `scope.type`, `scope.group_ids`, `scope.domain_ids`, \
`condition.type`, `condition.<parameter>`, `destinations`, `destinations[i].type`, \
`destinations[i].emails`, `destinations[i].url`, `destinations[i].routing_key`, \
`destinations[i].endpoint_id`, `repeat_interval_minutes`); 422 `alert_rule_limit` past 100 \
rules.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = AlertRule), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_alert_rule(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateAlertRule>,
) -> Result<(StatusCode, axum::Json<AlertRule>), ApiError> {
    Ok((
        StatusCode::CREATED,
        axum::Json(alerts::create(&app, &principal, body).await?),
    ))
}

/// One alert rule.
#[utoipa::path(get, path = "/alert-rules/{id}", tag = "alerts",
    params(("id" = uuid::Uuid, Path, description = "Alert rule id")),
    description = "Extension beyond SPEC. One rule, with its count of open alerts.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = AlertRule), (status = 404, body = ErrorBody)))]
pub async fn get_alert_rule(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<AlertRule>, ApiError> {
    Ok(axum::Json(alerts::get(&app, &principal, id).await?))
}

/// Changes an alert rule.
#[utoipa::path(post, path = "/alert-rules/{id}", tag = "alerts",
    params(("id" = uuid::Uuid, Path, description = "Alert rule id")),
    request_body = UpdateAlertRule,
    description = "Extension beyond SPEC. Editors, administrators and read-write keys. The \
fields given replace the rule's; `destinations` replaces the list whole, and a destination \
given with the `id` of one the rule has and without a new `url` or `routing_key` keeps the \
stored secret. A rule turned off, or whose `condition` or `scope` changed, has its open alerts \
resolved (their destinations hear so); it is evaluated again at once. 400 names the field; \
409 when the rule changed meanwhile.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = AlertRule), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_alert_rule(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateAlertRule>,
) -> Result<axum::Json<AlertRule>, ApiError> {
    Ok(axum::Json(
        alerts::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes an alert rule.
#[utoipa::path(delete, path = "/alert-rules/{id}", tag = "alerts",
    params(("id" = uuid::Uuid, Path, description = "Alert rule id")),
    description = "Extension beyond SPEC. Editors, administrators and read-write keys. Its \
open alerts are resolved first (PagerDuty and the chat tools hear so); its alerts stay listed \
until they expire, 90 days after they resolved.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_alert_rule(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    alerts::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a sample alert to every destination of a rule.
#[utoipa::path(post, path = "/alert-rules/{id}/test", tag = "alerts",
    params(("id" = uuid::Uuid, Path, description = "Alert rule id")),
    description = "Extension beyond SPEC. Editors, administrators and read-write keys. Sends a \
sample alert (on one of the rule's domains, saying nothing is wrong; `details.test` true) to \
every destination now and answers how each went: Slack, Teams and PagerDuty are posted once \
each, side by side (`delivered` with the receiver's status, or `failed` with its status or the \
error; PagerDuty's sample has its own `dedup_key`, so it opens an incident of its own to \
resolve by hand), `email` is mailed (`skipped` when the `alerts` switch is off), and a \
`webhook_endpoint` receives a signed `alert.opened` envelope whose `data.test` is true through \
its delivery queue (`queued`; its attempt is listed under the endpoint's deliveries). Nothing \
is stored on the rule and no alert opens.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = AlertTest), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn test_alert_rule(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<AlertTest>, ApiError> {
    Ok(axum::Json(alerts::test(&app, &principal, id).await?))
}

/// The organization's alerts.
#[utoipa::path(get, path = "/alerts", tag = "alerts",
    params(AlertFilters, PageParams),
    description = "Extension beyond SPEC. Alerts newest first (open ones, and resolved ones for \
90 days), filtered by `status` (`open` or `resolved`), `domain_id` and `rule_id`, each with its \
rule, domain, what it is about (`subject`), `severity`, one-line `summary`, the figures behind \
it (`details`), when it opened, was last notified and resolved, PagerDuty's `dedup_key`, the \
latest delivery attempts to its Slack, Teams and PagerDuty destinations (mail is not listed; a \
webhook endpoint's attempts are in its deliveries), and `links` to the domain and the rule in \
the API. A member limited to groups sees the alerts of their groups' domains.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = AlertList), (status = 400, body = ErrorBody)))]
pub async fn list_alerts(
    State(app): State<AppState>,
    principal: Principal,
    Query(filters): Query<AlertFilters>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<AlertList>, ApiError> {
    Ok(axum::Json(
        alerts::list_alerts(&app, &principal, &filters, page).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_alert_rules, create_alert_rule))
        .routes(utoipa_axum::routes!(
            get_alert_rule,
            update_alert_rule,
            delete_alert_rule
        ))
        .routes(utoipa_axum::routes!(test_alert_rule))
        .routes(utoipa_axum::routes!(list_alerts))
}
