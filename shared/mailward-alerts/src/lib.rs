//! What an alert says at each destination, in its own format: Slack Block Kit with a
//! plain-text fallback, an Adaptive Card for a Teams workflow, a PagerDuty Events API v2 event,
//! a mail. Pure: the alert in its REST shape in, the body out (sending is
//! `mailward_services::alerts::send`).

use mailward_api_types::alerts::Alert;
use mailward_domain::alerts::AlertAction;
use mailward_domain::html::escape;
use mailward_domain::mailer::OutboundEmail;
use serde_json::{Value, json};

/// One line saying what happened.
pub fn headline(alert: &Alert, action: AlertAction) -> String {
    let verb = match action {
        AlertAction::Opened => "Alert opened",
        AlertAction::Updated => "Alert still open",
        AlertAction::Resolved => "Alert resolved",
        AlertAction::Test => "Test alert",
    };
    format!("{verb}: {} on {}", alert.rule_name, alert.domain)
}

/// Cuts `text` to at most `max` characters (an ellipsis marks the cut).
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Slack's mrkdwn escaping: `&`, `<` and `>` are control characters there.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The figures of the alert as `(name, value)` lines, in a stable order.
fn facts(alert: &Alert) -> Vec<(String, String)> {
    let mut out = vec![
        ("Domain".to_owned(), alert.domain.clone()),
        ("Condition".to_owned(), alert.condition.clone()),
        ("Severity".to_owned(), alert.severity.clone()),
        ("Status".to_owned(), alert.status.clone()),
        ("Opened".to_owned(), alert.opened_at.clone()),
    ];
    if let Some(resolved) = &alert.resolved_at {
        out.push(("Resolved".to_owned(), resolved.clone()));
    }
    for (key, value) in &alert.details {
        if out.len() >= 10 {
            break;
        }
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push((key.clone(), text));
    }
    out
}

/// A Slack incoming-webhook message: Block Kit blocks, and `text` as the fallback shown in
/// notifications and by clients without blocks.
pub fn slack(alert: &Alert, action: AlertAction) -> Value {
    let headline = headline(alert, action);
    let fields: Vec<Value> = facts(alert)
        .into_iter()
        .map(|(k, v)| {
            json!({"type": "mrkdwn", "text": cut(&format!("*{}*\n{}", slack_escape(&k), slack_escape(&v)), 2000)})
        })
        .collect();
    json!({
        "text": cut(&format!("{headline}. {}", alert.summary), 3000),
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": cut(&headline, 150), "emoji": false}},
            {"type": "section", "text": {"type": "mrkdwn", "text": cut(&slack_escape(&alert.summary), 3000)}},
            {"type": "section", "fields": fields},
            {"type": "context", "elements": [
                {"type": "mrkdwn", "text": cut(&format!(
                    "Mailward alert `{}` · <{}|open the domain in Mailward> · <{}|alert rules> · <{}|the domain in the API>",
                    alert.id, alert.links.domain_page, alert.links.alerts_page, alert.links.domain
                ), 3000)}
            ]}
        ]
    })
}

/// A Teams workflow message: one Adaptive Card (version 1.4, what Teams renders).
pub fn teams(alert: &Alert, action: AlertAction) -> Value {
    let color = match action {
        AlertAction::Resolved => "Good",
        AlertAction::Test => "Accent",
        _ if alert.severity == "warning" => "Warning",
        _ => "Attention",
    };
    let facts: Vec<Value> = facts(alert)
        .into_iter()
        .map(|(title, value)| json!({"title": title, "value": value}))
        .collect();
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": [
                    {"type": "TextBlock", "text": headline(alert, action), "weight": "Bolder",
                     "size": "Medium", "color": color, "wrap": true},
                    {"type": "TextBlock", "text": alert.summary, "wrap": true},
                    {"type": "FactSet", "facts": facts}
                ],
                "actions": [
                    {"type": "Action.OpenUrl", "title": "Open the domain in Mailward", "url": alert.links.domain_page},
                    {"type": "Action.OpenUrl", "title": "The domain in the API", "url": alert.links.domain},
                    {"type": "Action.OpenUrl", "title": "The rule", "url": alert.links.rule}
                ]
            }
        }]
    })
}

/// A PagerDuty Events API v2 event: `trigger` while open (a repeat updates the same incident,
/// by its `dedup_key`), `resolve` when resolved.
pub fn pagerduty(alert: &Alert, action: AlertAction, routing_key: &str, client_url: &str) -> Value {
    if action == AlertAction::Resolved {
        return json!({
            "routing_key": routing_key,
            "event_action": "resolve",
            "dedup_key": alert.dedup_key,
        });
    }
    let severity = match alert.severity.as_str() {
        s @ ("critical" | "error" | "warning" | "info") => s,
        _ => "error",
    };
    let mut details = serde_json::Map::new();
    details.insert("rule".into(), json!(alert.rule_name));
    details.insert("subject".into(), json!(alert.subject));
    details.insert("alert_id".into(), json!(alert.id));
    for (k, v) in &alert.details {
        details.insert(k.clone(), v.clone());
    }
    json!({
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": alert.dedup_key,
        "client": "Mailward",
        "client_url": client_url,
        "payload": {
            "summary": cut(&format!("{}: {}", headline(alert, action), alert.summary), 1024),
            "source": alert.domain,
            "severity": severity,
            "timestamp": alert.opened_at,
            "component": alert.domain,
            "group": alert.rule_name,
            "class": alert.condition,
            "custom_details": Value::Object(details),
        },
        "links": [
            {"href": alert.links.domain_page, "text": "The domain in Mailward"},
            {"href": alert.links.domain, "text": "The domain in the Mailward API"},
            {"href": alert.links.rule, "text": "The alert rule"}
        ]
    })
}

/// The mail of an alert to one address, with its one-click unsubscribe.
pub fn email(
    organization: &str,
    alert: &Alert,
    action: AlertAction,
    to: &str,
    unsubscribe_url: &str,
) -> OutboundEmail {
    let headline = headline(alert, action);
    let mut text = format!("{headline}\n\n{}\n\n", alert.summary);
    let mut html = format!(
        "<!doctype html>\n<html><body style=\"font-family:sans-serif;line-height:1.5\">\n<h2>{}</h2>\n<p>{}</p>\n<table>\n",
        escape(&headline),
        escape(&alert.summary)
    );
    for (k, v) in facts(alert) {
        text.push_str(&format!("{k}: {v}\n"));
        html.push_str(&format!(
            "<tr><th align=\"left\">{}</th><td>{}</td></tr>\n",
            escape(&k),
            escape(&v)
        ));
    }
    text.push_str(&format!(
        "\nOpen the domain in Mailward: {}\nThe alert rules: {}\nThe domain in the API: {}\n\n--\nSent to {to} for {organization} by the alert rule \"{}\".\nStop this rule's mail to this address: {unsubscribe_url}\n",
        alert.links.domain_page, alert.links.alerts_page, alert.links.domain, alert.rule_name
    ));
    html.push_str(&format!(
        "</table>\n<p><a href=\"{}\">Open the domain in Mailward</a> · <a href=\"{}\">The alert rules</a> · <a href=\"{}\">The domain in the API</a></p>\n<hr>\n<p style=\"color:#666;font-size:12px\">Sent to {} for {} by the alert rule &quot;{}&quot;. <a href=\"{}\">Stop this rule's mail to this address</a>.</p>\n</body></html>\n",
        escape(&alert.links.domain_page),
        escape(&alert.links.alerts_page),
        escape(&alert.links.domain),
        escape(to),
        escape(organization),
        escape(&alert.rule_name),
        escape(unsubscribe_url)
    ));
    OutboundEmail {
        attachments: Vec::new(),
        to: to.to_owned(),
        subject: cut(&format!("[Mailward] {headline}"), 200),
        text,
        html: Some(html),
        unsubscribe_url: Some(unsubscribe_url.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_api_types::alerts::AlertLinks;

    fn alert() -> Alert {
        Alert {
            id: uuid::Uuid::nil(),
            object: "alert".into(),
            rule_id: uuid::Uuid::nil(),
            rule_name: "Pass rate <95%".into(),
            condition: "dmarc_pass_rate_below".into(),
            domain_id: uuid::Uuid::nil(),
            domain: "example.com".into(),
            subject: String::new(),
            status: "open".into(),
            severity: "error".into(),
            summary: "example.com: 50% of 10 messages passed DMARC & <b>".into(),
            details: serde_json::Map::new(),
            opened_at: "2026-11-28T00:00:00Z".into(),
            updated_at: "2026-11-28T00:00:00Z".into(),
            resolved_at: None,
            notified_at: "2026-11-28T00:00:00Z".into(),
            notifications: 1,
            dedup_key: "mailward-alert-x".into(),
            deliveries: Vec::new(),
            links: AlertLinks::new("https://api.example", uuid::Uuid::nil(), uuid::Uuid::nil()),
        }
    }

    #[test]
    fn slack_escapes_its_control_characters() {
        let body = slack(&alert(), AlertAction::Opened);
        let section = body["blocks"][1]["text"]["text"].as_str().unwrap();
        assert!(section.contains("&amp; &lt;b&gt;"), "{section}");
        assert!(body["text"].as_str().unwrap().starts_with("Alert opened"));
    }

    #[test]
    fn pagerduty_resolves_by_the_same_key() {
        let open = pagerduty(&alert(), AlertAction::Opened, "k", "https://x");
        let resolved = pagerduty(&alert(), AlertAction::Resolved, "k", "https://x");
        assert_eq!(open["dedup_key"], resolved["dedup_key"]);
        assert_eq!(open["event_action"], "trigger");
        assert_eq!(resolved["event_action"], "resolve");
        assert_eq!(open["payload"]["severity"], "error");
    }
}
