//! The alert rules on the groups page: each rule with its condition, scope, destinations and
//! open alerts; editors and administrators create one, edit it, turn it off and on, send it a
//! test and delete it. The same operations as `/alert-rules`, `/alert-rules/{id}` and
//! `/alert-rules/{id}/test`. A form reads only the parameters the chosen condition takes, and a
//! rule's Slack or Teams URL and PagerDuty key are never shown: an edit keeps the destinations
//! left ticked, with their stored secrets.

use crate::layout::{self, csrf};
use crate::posted::Posted;
use crate::session::{Fields, Person, redirect_with};
use axum::extract::{Path, State};
use axum::response::Response;
use mailward_api_types::alerts::{
    AlertConditionInput, AlertConditionView, AlertDestinationInput, AlertDestinationView,
    AlertRule, AlertRuleList, AlertScopeInput, AlertScopeView, AlertTest, CreateAlertRule,
    UpdateAlertRule,
};
use mailward_api_types::common::PageParams;
use mailward_api_types::webhooks::WebhookEndpoint;
use mailward_http::AppState;
use mailward_services::{Caller, ServiceError, alerts};
use maud::{Markup, html};
use uuid::Uuid;

const BACK: &str = "/app/organization/groups";

/// A condition: its word, its name on the page, what it watches, the parameters it takes.
struct Condition {
    kind: &'static str,
    label: &'static str,
    explains: &'static str,
    params: &'static [&'static str],
}

const CONDITIONS: &[Condition] = &[
    Condition {
        kind: "monitoring_problem",
        label: "Monitoring problem",
        explains: "A domain's monitoring failed, or its records drifted from what was set up.",
        params: &[],
    },
    Condition {
        kind: "score_below",
        label: "Score below a band",
        explains: "The domain's score drops below the band chosen (bad, good or great).",
        params: &["band"],
    },
    Condition {
        kind: "dmarc_pass_rate_below",
        label: "DMARC pass rate below",
        explains: "Less than the threshold of the domain's mail passed DMARC over the window, once at least the fewest messages arrived.",
        params: &["threshold_pct", "window_days", "min_messages"],
    },
    Condition {
        kind: "new_unknown_sender",
        label: "New unknown sender",
        explains: "A sender nobody identified or confirmed was first seen within the window, with at least the fewest messages.",
        params: &["window_days", "min_messages"],
    },
    Condition {
        kind: "sender_failure_rate_above",
        label: "Known sender failing DMARC",
        explains: "A confirmed or recognised sender fails DMARC for more than the threshold of its last 30 days' mail.",
        params: &["threshold_pct", "min_messages"],
    },
    Condition {
        kind: "tls_failure_rate_above",
        label: "TLS failures above",
        explains: "TLS reports show more than the threshold of sessions failing over the window.",
        params: &["threshold_pct", "window_days", "min_sessions"],
    },
    Condition {
        kind: "hosted_record_error",
        label: "Hosted record in error",
        explains: "A record Mailward hosts for the domain (DMARC, SPF, DKIM, BIMI, MTA-STS) is in error.",
        params: &[],
    },
    Condition {
        kind: "certificate_expiring",
        label: "Certificate expiring",
        explains: "The BIMI mark certificate, the MTA-STS policy host's or an MX host's certificate expires within the days given.",
        params: &["within_days"],
    },
    Condition {
        kind: "dns_conflict",
        label: "DNS conflict",
        explains: "Conflicting DNS records are found for the domain (one alert per conflict).",
        params: &[],
    },
];

/// The numeric parameters: field, label, which conditions read it.
const NUMBERS: &[(&str, &str, &str)] = &[
    (
        "threshold_pct",
        "Threshold (%)",
        "DMARC pass rate (default 95); sender and TLS failures (default 10).",
    ),
    (
        "window_days",
        "Window (days)",
        "DMARC pass rate, TLS failures, new sender: 1 to 90 (default 7).",
    ),
    (
        "min_messages",
        "Fewest messages",
        "DMARC pass rate, failing sender (default 100); new sender (default 1).",
    ),
    (
        "min_sessions",
        "Fewest TLS sessions",
        "TLS failures (default 100).",
    ),
    (
        "within_days",
        "Days before expiry",
        "Certificate expiring: 1 to 365 (default 21).",
    ),
];

fn condition(kind: &str) -> Option<&'static Condition> {
    CONDITIONS.iter().find(|c| c.kind == kind)
}

/// What the section shows besides the rules: the groups a rule can watch and the webhook
/// endpoints it can send to.
pub struct Rules {
    rules: Result<AlertRuleList, ServiceError>,
    endpoints: Vec<WebhookEndpoint>,
}

/// Reads the rules and the organization's webhook endpoints.
pub async fn read(app: &AppState, caller: &Caller) -> Rules {
    let rules = alerts::list(app, caller).await;
    let page = PageParams {
        page: Some(1),
        per_page: Some(100),
    };
    let endpoints = mailward_services::webhooks::endpoints::list(app, caller, page)
        .await
        .map(|l| l.data)
        .unwrap_or_default();
    Rules { rules, endpoints }
}

/// The alert rules section and, for those who may write rules, the form of a new one.
/// `groups` are the groups a rule may watch: `(id, name)`.
pub fn section(person: &Person, read: &Rules, groups: &[(Uuid, String)]) -> Markup {
    let write = person.can_write();
    html! {
        section.card #rules aria-labelledby="rules-h" {
            h2 #rules-h { "Alert rules" }
            p.muted { "A rule watches domains for one condition and tells its destinations when an alert opens, repeats while open, and resolves. " a href="/app/organization/people" { "Open alerts" } " are listed with the people." }
            details {
                summary { "What each condition watches" }
                dl.facts { @for c in CONDITIONS { dt { (c.label) } dd { (c.explains) } } }
            }
            @match &read.rules {
                Err(e) => p { (layout::refusal_text(e)) },
                Ok(list) if list.data.is_empty() => p { "No alert rule yet." },
                Ok(list) => {
                    @for rule in &list.data { (one(person, rule, groups, &read.endpoints)) }
                }
            }
        }
        @if write {
            form.card method="post" action="/app/organization/alert-rules" aria-labelledby="new-rule-h" {
                h2 #new-rule-h { "New alert rule" }
                (csrf(&person.csrf))
                (rule_fields("new", None, groups, &read.endpoints))
                p { button type="submit" { "Create rule" } }
            }
        }
    }
}

fn one(
    person: &Person,
    rule: &AlertRule,
    groups: &[(Uuid, String)],
    endpoints: &[WebhookEndpoint],
) -> Markup {
    let id = rule.id;
    let path = format!("/app/organization/alert-rules/{id}");
    html! {
        article.rule aria-labelledby={ "rule-" (id) "-h" } {
            h3 id={ "rule-" (id) "-h" } {
                (rule.name) " "
                @if rule.enabled { span.badge.ok { "on" } } @else { span.badge.neutral { "off" } }
            }
            dl.facts {
                dt { "Condition" } dd { (describe(&rule.condition)) }
                dt { "Watches" } dd { (scope_text(&rule.scope, groups)) }
                dt { "Destinations" } dd { @for d in &rule.destinations { div { (destination_text(d, endpoints)) } } }
                dt { "Repeats" } dd { "every " (rule.repeat_interval_minutes) " minutes while open" }
                dt { "Open alerts" } dd { (rule.open_alerts) }
            }
            @if person.can_write() {
                div.moves {
                    form.inline method="post" action={ (path) "/test" } {
                        (csrf(&person.csrf))
                        button.small.secondary type="submit" aria-label={ "Send a test of " (rule.name) } { "Send a test" }
                    }
                    form.inline method="post" action={ (path) (if rule.enabled { "/disable" } else { "/enable" }) } {
                        (csrf(&person.csrf))
                        @if rule.enabled { button.small.secondary type="submit" aria-label={ "Turn off " (rule.name) } { "Turn off" } }
                        @else { button.small.secondary type="submit" aria-label={ "Turn on " (rule.name) } { "Turn on" } }
                    }
                    form.inline method="post" action={ (path) "/delete" } data-confirm="Delete this alert rule? Its open alerts resolve." {
                        (csrf(&person.csrf))
                        button.small.danger type="submit" aria-label={ "Delete " (rule.name) } { "Delete" }
                    }
                }
                details {
                    summary aria-label={ "Edit " (rule.name) } { "Edit" }
                    form method="post" action={ (path) "/edit" } {
                        (csrf(&person.csrf))
                        (rule_fields(&id.to_string(), Some(rule), groups, endpoints))
                        p { button type="submit" { "Save rule" } }
                    }
                }
            }
        }
    }
}

/// The fields of a rule's form; `rule` fills them when editing.
fn rule_fields(
    prefix: &str,
    rule: Option<&AlertRule>,
    groups: &[(Uuid, String)],
    endpoints: &[WebhookEndpoint],
) -> Markup {
    let kind = rule.map_or("dmarc_pass_rate_below", |r| r.condition.kind.as_str());
    let band = rule
        .and_then(|r| r.condition.band.as_deref())
        .unwrap_or("good");
    let id = |name: &str| format!("{prefix}-{name}");
    html! {
        div.fields {
            div {
                label for=(id("name")) { "Name" }
                input id=(id("name")) type="text" name="name" required maxlength="100" value=(rule.map_or("", |r| r.name.as_str()));
            }
            div {
                label for=(id("scope")) { "Watches" }
                select id=(id("scope")) name="scope" { (scope_options(rule.map(|r| &r.scope), groups)) }
            }
            div {
                label for=(id("repeat")) { "Repeat while open, every (minutes)" }
                input id=(id("repeat")) type="text" inputmode="numeric" name="repeat_interval_minutes" value=(rule.map_or(String::new(), |r| r.repeat_interval_minutes.to_string())) aria-describedby={ (id("repeat")) "-hint" };
                p.hint id={ (id("repeat")) "-hint" } { "5 to 10080 (default 240)." }
            }
        }
        fieldset {
            legend { "Condition" }
            label for=(id("condition")) { "Alert when" }
            select id=(id("condition")) name="condition" aria-describedby=(id("condition-hint")) {
                @for c in CONDITIONS { option value=(c.kind) selected[c.kind == kind] { (c.label) } }
            }
            p.hint id=(id("condition-hint")) { "Only the parameters the condition takes are read; leave one empty for its default." }
            div.fields {
                div {
                    label for=(id("band")) { "Score band" }
                    select id=(id("band")) name="band" aria-describedby=(id("band-hint")) {
                        @for b in ["bad", "good", "great"] { option value=(b) selected[b == band] { (b) } }
                    }
                    p.hint id=(id("band-hint")) { "Score below a band (default good)." }
                }
                @for (field, label, hint) in NUMBERS {
                    div {
                        label for=(id(field)) { (label) }
                        input id=(id(field)) type="text" inputmode="decimal" name=(field) value=(rule.map(|r| param(&r.condition, field)).unwrap_or_default()) aria-describedby={ (id(field)) "-hint" };
                        p.hint id={ (id(field)) "-hint" } { (hint) }
                    }
                }
            }
        }
        fieldset {
            legend { "Destinations (at least one)" }
            @if let Some(rule) = rule {
                p.hint { "Untick a destination to remove it." }
                @for (i, d) in rule.destinations.iter().enumerate() {
                    div.check {
                        input id={ (prefix) "-keep-" (i) } type="checkbox" name="keep" value=(d.id) checked;
                        label for={ (prefix) "-keep-" (i) } { (destination_text(d, endpoints)) }
                    }
                }
                p.hint { "Add:" }
            }
            div.fields {
                div {
                    label for=(id("emails")) { "Email addresses" }
                    input id=(id("emails")) type="text" name="emails" autocomplete="off" aria-describedby={ (id("emails")) "-hint" };
                    p.hint id={ (id("emails")) "-hint" } { "Separated by commas; mailed while the organization's alert emails are on." }
                }
                div {
                    label for=(id("slack")) { "Slack incoming webhook URL" }
                    input id=(id("slack")) type="url" name="slack_url" placeholder="https://hooks.slack.com/…";
                }
                div {
                    label for=(id("teams")) { "Teams webhook URL" }
                    input id=(id("teams")) type="url" name="teams_url";
                }
                div {
                    label for=(id("pagerduty")) { "PagerDuty routing key" }
                    input id=(id("pagerduty")) type="text" name="routing_key" autocomplete="off" maxlength="32";
                }
                @if !endpoints.is_empty() {
                    div {
                        label for=(id("endpoint")) { "Webhook endpoint" }
                        select id=(id("endpoint")) name="endpoint_id" {
                            option value="" { "None" }
                            @for e in endpoints { option value=(e.id) { (e.url) } }
                        }
                    }
                }
            }
        }
    }
}

/// The options of the scope select: every domain, or one group; a scope the select cannot
/// show (several groups, listed domains) is kept as it is.
fn scope_options(current: Option<&AlertScopeView>, groups: &[(Uuid, String)]) -> Markup {
    let one_group = current
        .filter(|s| s.kind == "groups" && s.group_ids.len() == 1)
        .map(|s| s.group_ids[0]);
    let other = current.filter(|s| s.kind != "all" && one_group.is_none());
    html! {
        @if let Some(s) = other { option value="keep" selected { "Unchanged: " (scope_count(s)) } }
        option value="all" selected[current.is_some_and(|s| s.kind == "all")] { "All domains" }
        @for (gid, name) in groups {
            option value={ "group:" (gid) } selected[one_group == Some(*gid)] { "Group " (name) }
        }
    }
}

fn scope_count(s: &AlertScopeView) -> String {
    match s.kind.as_str() {
        "groups" => format!("{} groups", s.group_ids.len()),
        _ => format!("{} domains", s.domain_ids.len()),
    }
}

fn scope_text(s: &AlertScopeView, groups: &[(Uuid, String)]) -> String {
    match s.kind.as_str() {
        "all" => "All domains".to_owned(),
        "groups" => {
            let names: Vec<&str> = s
                .group_ids
                .iter()
                .filter_map(|g| groups.iter().find(|(id, _)| id == g))
                .map(|(_, n)| n.as_str())
                .collect();
            if names.len() == s.group_ids.len() {
                format!("Group {}", names.join(", "))
            } else {
                scope_count(s)
            }
        }
        _ => scope_count(s),
    }
}

/// A parameter of a condition as the form shows it (empty when the condition does not take it).
fn param(c: &AlertConditionView, field: &str) -> String {
    match field {
        "threshold_pct" => c.threshold_pct.map(|v| v.to_string()),
        "window_days" => c.window_days.map(|v| v.to_string()),
        "min_messages" => c.min_messages.map(|v| v.to_string()),
        "min_sessions" => c.min_sessions.map(|v| v.to_string()),
        "within_days" => c.within_days.map(|v| v.to_string()),
        _ => None,
    }
    .unwrap_or_default()
}

/// A condition in words: "DMARC pass rate below: 95%, over 7 days, at least 100 messages".
fn describe(c: &AlertConditionView) -> String {
    let label = condition(&c.kind).map_or_else(|| c.kind.replace('_', " "), |k| k.label.into());
    let mut parts = Vec::new();
    if let Some(b) = &c.band {
        parts.push(format!("below {b}"));
    }
    if let Some(v) = c.threshold_pct {
        parts.push(format!("{v}%"));
    }
    if let Some(v) = c.window_days {
        parts.push(format!("over {v} days"));
    }
    if let Some(v) = c.min_messages {
        parts.push(format!("at least {} messages", layout::count(v)));
    }
    if let Some(v) = c.min_sessions {
        parts.push(format!("at least {} sessions", layout::count(v)));
    }
    if let Some(v) = c.within_days {
        parts.push(format!("within {v} days"));
    }
    if parts.is_empty() {
        label
    } else {
        format!("{label}: {}", parts.join(", "))
    }
}

fn destination_text(d: &AlertDestinationView, endpoints: &[WebhookEndpoint]) -> String {
    let hint = d.hint.as_deref().unwrap_or_default();
    match d.kind.as_str() {
        "email" => format!("Email {}", d.emails.join(", ")),
        "slack" => format!("Slack {hint}"),
        "teams" => format!("Teams {hint}"),
        "pagerduty" => format!("PagerDuty key {hint}"),
        "webhook_endpoint" => {
            let url = d
                .endpoint_id
                .and_then(|id| endpoints.iter().find(|e| e.id == id))
                .map_or_else(
                    || d.endpoint_id.map(|i| i.to_string()).unwrap_or_default(),
                    |e| e.url.clone(),
                );
            format!("Webhook endpoint {url}")
        }
        other => other.to_owned(),
    }
}

/// A number field: `None` when empty, my own refusal naming it when it does not parse.
fn number<T: std::str::FromStr>(fields: &Fields, name: &str) -> Result<Option<T>, String> {
    match fields.get(name) {
        None => Ok(None),
        Some(raw) => raw
            .parse()
            .map(Some)
            .map_err(|_| format!("{raw:?} is not a number (field: {name}).")),
    }
}

/// The condition of a form: only the parameters its type takes.
fn condition_input(fields: &Fields) -> Result<AlertConditionInput, String> {
    let kind = fields.get("condition").unwrap_or_default();
    let takes = |p: &str| condition(kind).is_some_and(|c| c.params.contains(&p));
    let mut input = AlertConditionInput {
        kind: kind.to_owned(),
        ..AlertConditionInput::default()
    };
    if takes("band") {
        input.band = fields.get("band").map(str::to_owned);
    }
    if takes("threshold_pct") {
        input.threshold_pct = number(fields, "threshold_pct")?;
    }
    if takes("window_days") {
        input.window_days = number(fields, "window_days")?;
    }
    if takes("min_messages") {
        input.min_messages = number(fields, "min_messages")?;
    }
    if takes("min_sessions") {
        input.min_sessions = number(fields, "min_sessions")?;
    }
    if takes("within_days") {
        input.within_days = number(fields, "within_days")?;
    }
    Ok(input)
}

/// The scope of a form; `None` keeps the rule's (or, for a new rule, every domain).
fn scope_input(fields: &Fields) -> Result<Option<AlertScopeInput>, String> {
    match fields.get("scope") {
        None | Some("keep") => Ok(None),
        Some("all") => Ok(Some(AlertScopeInput {
            kind: "all".into(),
            ..AlertScopeInput::default()
        })),
        Some(other) => match other.strip_prefix("group:").map(str::parse::<Uuid>) {
            Some(Ok(id)) => Ok(Some(AlertScopeInput {
                kind: "groups".into(),
                group_ids: Some(vec![id]),
                domain_ids: None,
            })),
            _ => Err("Unknown group (field: scope).".into()),
        },
    }
}

/// The destinations of a form: the kept ones of `rule` (by id, with their stored secrets),
/// then the ones added.
fn destinations_input(
    fields: &Fields,
    rule: Option<&AlertRule>,
) -> Result<Vec<AlertDestinationInput>, String> {
    let keep = fields.all("keep");
    let mut out: Vec<AlertDestinationInput> = rule
        .into_iter()
        .flat_map(|r| &r.destinations)
        .filter(|d| keep.contains(&d.id.to_string()))
        .map(|d| AlertDestinationInput {
            kind: d.kind.clone(),
            id: Some(d.id),
            emails: (d.kind == "email").then(|| d.emails.clone()),
            endpoint_id: d.endpoint_id,
            ..AlertDestinationInput::default()
        })
        .collect();
    let new = |kind: &str| AlertDestinationInput {
        kind: kind.to_owned(),
        ..AlertDestinationInput::default()
    };
    if let Some(raw) = fields.get("emails") {
        let emails = raw
            .split([',', ';', ' ', '\n'])
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::to_owned)
            .collect();
        out.push(AlertDestinationInput {
            emails: Some(emails),
            ..new("email")
        });
    }
    for (field, kind) in [("slack_url", "slack"), ("teams_url", "teams")] {
        if let Some(url) = fields.get(field) {
            out.push(AlertDestinationInput {
                url: Some(url.to_owned()),
                ..new(kind)
            });
        }
    }
    if let Some(key) = fields.get("routing_key") {
        out.push(AlertDestinationInput {
            routing_key: Some(key.to_owned()),
            ..new("pagerduty")
        });
    }
    if let Some(raw) = fields.get("endpoint_id") {
        let Ok(id) = raw.parse::<Uuid>() else {
            return Err("Unknown webhook endpoint (field: endpoint_id).".into());
        };
        out.push(AlertDestinationInput {
            endpoint_id: Some(id),
            ..new("webhook_endpoint")
        });
    }
    Ok(out)
}

/// `POST /app/organization/alert-rules`.
pub async fn create(State(app): State<AppState>, Posted { person, fields }: Posted) -> Response {
    let input = (|| {
        Ok::<_, String>(CreateAlertRule {
            name: fields.get("name").unwrap_or_default().to_owned(),
            enabled: None,
            scope: scope_input(&fields)?,
            condition: condition_input(&fields)?,
            destinations: destinations_input(&fields, None)?,
            repeat_interval_minutes: number(&fields, "repeat_interval_minutes")?,
        })
    })();
    let input = match input {
        Ok(input) => input,
        Err(text) => return redirect_with(&app, BACK, "bad", &text),
    };
    match alerts::create(&app, &person.caller, input).await {
        Ok(rule) => redirect_with(
            &app,
            BACK,
            "ok",
            &format!("Alert rule {} created.", rule.name),
        ),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// `POST /app/organization/alert-rules/{id}/{move}`: edit, enable, disable, test or delete.
pub async fn change(
    State(app): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    Posted { person, fields }: Posted,
) -> Response {
    let id = match layout::path_id(&person, &id, "alert rule") {
        Ok(id) => id,
        Err(page) => return *page,
    };
    let caller = &person.caller;
    let done = match action.as_str() {
        "edit" => match edit(&app, caller, id, &fields).await {
            Ok(done) => done,
            Err(text) => return redirect_with(&app, BACK, "bad", &text),
        },
        "enable" | "disable" => {
            let on = action == "enable";
            let input = UpdateAlertRule {
                enabled: Some(on),
                ..UpdateAlertRule::default()
            };
            alerts::update(&app, caller, id, input).await.map(|r| {
                format!(
                    "Alert rule {} turned {}.",
                    r.name,
                    if on { "on" } else { "off" }
                )
            })
        }
        "test" => match alerts::test(&app, caller, id).await {
            Ok(test) => {
                let kind = if test.results.iter().any(|r| r.status == "failed") {
                    "bad"
                } else {
                    "ok"
                };
                return redirect_with(&app, BACK, kind, &tested(&test));
            }
            Err(e) => Err(e),
        },
        "delete" => alerts::delete(&app, caller, id)
            .await
            .map(|()| "Alert rule deleted.".to_owned()),
        _ => Err(ServiceError::not_found("page")),
    };
    match done {
        Ok(text) => redirect_with(&app, BACK, "ok", &text),
        Err(e) => redirect_with(&app, BACK, "bad", &layout::refusal_text(&e)),
    }
}

/// Saves an edited rule: `Err` is a refusal of the form itself, before the operation.
async fn edit(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    fields: &Fields,
) -> Result<Result<String, ServiceError>, String> {
    let rule = match alerts::get(app, caller, id).await {
        Ok(rule) => rule,
        Err(e) => return Ok(Err(e)),
    };
    let input = UpdateAlertRule {
        name: Some(fields.get("name").unwrap_or_default().to_owned()),
        enabled: None,
        scope: scope_input(fields)?,
        condition: Some(condition_input(fields)?),
        destinations: Some(destinations_input(fields, Some(&rule))?),
        repeat_interval_minutes: number(fields, "repeat_interval_minutes")?,
    };
    Ok(alerts::update(app, caller, id, input)
        .await
        .map(|r| format!("Alert rule {} saved.", r.name)))
}

/// What a test answered, destination by destination.
fn tested(test: &AlertTest) -> String {
    let each: Vec<String> = test
        .results
        .iter()
        .map(|r| {
            let mut line = format!("{}: {}", r.kind.replace('_', " "), r.status);
            if let Some(code) = r.response_status {
                line.push_str(&format!(" (HTTP {code})"));
            }
            if let Some(e) = &r.error {
                line.push_str(&format!(" ({e})"));
            }
            line
        })
        .collect();
    format!("Test sent. {}.", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_reads_only_its_own_parameters() {
        let fields = Fields::parse(b"condition=score_below&band=great&threshold_pct=abc");
        let input = condition_input(&fields).unwrap();
        assert_eq!(input.band.as_deref(), Some("great"));
        assert_eq!(input.threshold_pct, None);
        let fields = Fields::parse(b"condition=dmarc_pass_rate_below&window_days=two&band=bad");
        let refused = condition_input(&fields).unwrap_err();
        assert!(refused.ends_with("(field: window_days)."), "{refused}");
        let fields =
            Fields::parse(b"condition=dmarc_pass_rate_below&threshold_pct=90&min_messages=");
        let input = condition_input(&fields).unwrap();
        assert_eq!(
            (input.threshold_pct, input.min_messages, input.band),
            (Some(90.0), None, None)
        );
    }

    #[test]
    fn destinations_are_the_kept_ones_then_the_added_ones() {
        let kept = Uuid::new_v4();
        let rule: AlertRule = serde_json::from_value(serde_json::json!({
            "id": Uuid::new_v4(), "object": "alert_rule", "name": "r", "enabled": true,
            "scope": {"type": "all", "group_ids": [], "domain_ids": []},
            "condition": {"type": "dns_conflict"},
            "destinations": [
                {"id": kept, "type": "slack", "hint": "hooks.slack.com…abcd"},
                {"id": Uuid::new_v4(), "type": "email", "emails": ["a@x.example"]},
            ],
            "repeat_interval_minutes": 240, "open_alerts": 0, "created_at": "", "updated_at": "",
        }))
        .unwrap();
        let body = format!("keep={kept}&emails=b%40x.example%2C+c%40x.example&routing_key=k");
        let out = destinations_input(&Fields::parse(body.as_bytes()), Some(&rule)).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(
            (out[0].kind.as_str(), out[0].id, out[0].url.as_deref()),
            ("slack", Some(kept), None)
        );
        assert_eq!(
            out[1].emails.as_deref(),
            Some(&["b@x.example".to_owned(), "c@x.example".to_owned()][..])
        );
        assert_eq!(out[2].routing_key.as_deref(), Some("k"));
        let refused = destinations_input(&Fields::parse(b"endpoint_id=nope"), None).unwrap_err();
        assert!(refused.contains("(field: endpoint_id)"), "{refused}");
        assert_eq!(describe(&rule.condition), "DNS conflict");
    }
}
