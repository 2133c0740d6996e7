//! An alert rule's input, checked field by field: every refusal names its field.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::outbound::client::check_url;
use crate::secret_box;
use crate::state::AppState;
use mailward_api_types::alerts as wire;
use mailward_domain::alerts::{
    AlertCondition, AlertScope, Destination, DestinationKind, MAX_DESTINATIONS,
};
use mailward_domain::domain::ScoreBand;
use mailward_domain::email::EmailAddress;
use mailward_store::{domains, groups, webhooks};
use uuid::Uuid;

fn invalid(param: &str, message: impl Into<String>) -> ServiceError {
    ServiceError::invalid(param.to_owned(), message.into())
}

/// The rule's name.
pub(super) fn name(value: &str) -> Result<String, ServiceError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > 100 || value.chars().any(char::is_control) {
        return Err(invalid(
            "name",
            "name must be 1 to 100 characters without control characters",
        ));
    }
    Ok(value.to_owned())
}

/// Minutes between repeats.
pub(super) fn repeat(value: u32) -> Result<u32, ServiceError> {
    if !(5..=10080).contains(&value) {
        return Err(invalid(
            "repeat_interval_minutes",
            "repeat_interval_minutes must be 5 to 10080",
        ));
    }
    Ok(value)
}

fn pct(value: Option<f64>, default: f64) -> Result<f64, ServiceError> {
    let v = value.unwrap_or(default);
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        return Err(invalid(
            "condition.threshold_pct",
            "threshold_pct must be 0 to 100",
        ));
    }
    Ok(v)
}

fn window(value: Option<u32>) -> Result<u32, ServiceError> {
    let v = value.unwrap_or(7);
    if !(1..=90).contains(&v) {
        return Err(invalid(
            "condition.window_days",
            "window_days must be 1 to 90",
        ));
    }
    Ok(v)
}

fn at_least_one(param: &str, value: Option<u64>, default: u64) -> Result<u64, ServiceError> {
    let v = value.unwrap_or(default);
    if !(1..=1_000_000_000).contains(&v) {
        return Err(invalid(param, format!("{param} must be 1 to 1000000000")));
    }
    Ok(v)
}

/// Refuses the parameters a condition type does not take.
fn only(input: &wire::AlertConditionInput, allowed: &[&str]) -> Result<(), ServiceError> {
    let given = [
        ("band", input.band.is_some()),
        ("threshold_pct", input.threshold_pct.is_some()),
        ("window_days", input.window_days.is_some()),
        ("min_messages", input.min_messages.is_some()),
        ("min_sessions", input.min_sessions.is_some()),
        ("within_days", input.within_days.is_some()),
    ];
    for (name, present) in given {
        if present && !allowed.contains(&name) {
            return Err(invalid(
                &format!("condition.{name}"),
                format!("{} does not take {name}", input.kind),
            ));
        }
    }
    Ok(())
}

/// The condition and its parameters.
pub(super) fn condition(input: &wire::AlertConditionInput) -> Result<AlertCondition, ServiceError> {
    const RATE: &[&str] = &["threshold_pct", "window_days", "min_messages"];
    let condition = match input.kind.as_str() {
        "monitoring_problem" => {
            only(input, &[])?;
            AlertCondition::MonitoringProblem
        }
        "score_below" => {
            only(input, &["band"])?;
            let band = match input.band.as_deref() {
                Some("bad") => ScoreBand::Bad,
                Some("good") | None => ScoreBand::Good,
                Some("great") => ScoreBand::Great,
                Some(_) => {
                    return Err(invalid("condition.band", "band must be bad, good or great"));
                }
            };
            AlertCondition::ScoreBelow { band }
        }
        "dmarc_pass_rate_below" => {
            only(input, RATE)?;
            AlertCondition::DmarcPassRateBelow {
                threshold_pct: pct(input.threshold_pct, 95.0)?,
                window_days: window(input.window_days)?,
                min_messages: at_least_one("condition.min_messages", input.min_messages, 100)?,
            }
        }
        "new_unknown_sender" => {
            only(input, &["window_days", "min_messages"])?;
            AlertCondition::NewUnknownSender {
                min_messages: at_least_one("condition.min_messages", input.min_messages, 1)?,
                window_days: window(input.window_days)?,
            }
        }
        "sender_failure_rate_above" => {
            only(input, &["threshold_pct", "min_messages"])?;
            AlertCondition::SenderFailureRateAbove {
                threshold_pct: pct(input.threshold_pct, 10.0)?,
                min_messages: at_least_one("condition.min_messages", input.min_messages, 100)?,
            }
        }
        "tls_failure_rate_above" => {
            only(input, &["threshold_pct", "window_days", "min_sessions"])?;
            AlertCondition::TlsFailureRateAbove {
                threshold_pct: pct(input.threshold_pct, 10.0)?,
                window_days: window(input.window_days)?,
                min_sessions: at_least_one("condition.min_sessions", input.min_sessions, 100)?,
            }
        }
        "hosted_record_error" => {
            only(input, &[])?;
            AlertCondition::HostedRecordError
        }
        "certificate_expiring" => {
            only(input, &["within_days"])?;
            let days = input.within_days.unwrap_or(21);
            if !(1..=365).contains(&days) {
                return Err(invalid(
                    "condition.within_days",
                    "within_days must be 1 to 365",
                ));
            }
            AlertCondition::CertificateExpiring { within_days: days }
        }
        "dns_conflict" => {
            only(input, &[])?;
            AlertCondition::DnsConflict
        }
        _ => {
            return Err(invalid(
                "condition.type",
                "condition.type must be monitoring_problem, score_below, dmarc_pass_rate_below, \
new_unknown_sender, sender_failure_rate_above, tls_failure_rate_above, hosted_record_error, \
certificate_expiring or dns_conflict",
            ));
        }
    };
    Ok(condition)
}

/// The scope, within what the caller sees: a member limited to groups scopes only their
/// groups' domains (`all` becomes their groups).
pub(super) async fn scope(
    app: &AppState,
    caller: &Caller,
    input: Option<&wire::AlertScopeInput>,
) -> Result<AlertScope, ServiceError> {
    let kind = input.map_or("all", |s| s.kind.as_str());
    let (group_ids, domain_ids) = input.map_or((None, None), |s| {
        (s.group_ids.as_ref(), s.domain_ids.as_ref())
    });
    match kind {
        "all" => {
            if group_ids.is_some() || domain_ids.is_some() {
                return Err(invalid(
                    "scope.type",
                    "scope all takes neither group_ids nor domain_ids",
                ));
            }
            Ok(match &caller.groups {
                None => AlertScope::All,
                Some(mine) => AlertScope::Groups {
                    group_ids: mine.clone(),
                },
            })
        }
        "groups" => {
            let ids = listed("scope.group_ids", group_ids, domain_ids.is_some(), 50)?;
            for id in &ids {
                let exists = groups::get(app.store.as_ref(), caller.org_id, *id)
                    .await?
                    .is_some();
                if !exists || !caller.sees_group(Some(*id)) {
                    return Err(invalid(
                        "scope.group_ids",
                        format!("no group {id} in this organization"),
                    ));
                }
            }
            Ok(AlertScope::Groups { group_ids: ids })
        }
        "domains" => {
            let ids = listed("scope.domain_ids", domain_ids, group_ids.is_some(), 500)?;
            for id in &ids {
                let visible = domains::get(app.store.as_ref(), caller.org_id, *id)
                    .await?
                    .is_some_and(|d| caller.sees_group(d.value.group_id));
                if !visible {
                    return Err(invalid(
                        "scope.domain_ids",
                        format!("no domain {id} in this organization"),
                    ));
                }
            }
            Ok(AlertScope::Domains { domain_ids: ids })
        }
        _ => Err(invalid(
            "scope.type",
            "scope.type must be all, groups or domains",
        )),
    }
}

fn listed(
    param: &str,
    ids: Option<&Vec<Uuid>>,
    other_given: bool,
    max: usize,
) -> Result<Vec<Uuid>, ServiceError> {
    if other_given {
        return Err(invalid(
            param,
            "give group_ids with groups, domain_ids with domains",
        ));
    }
    let mut ids = ids.cloned().unwrap_or_default();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() || ids.len() > max {
        return Err(invalid(param, format!("{param} must list 1 to {max} ids")));
    }
    Ok(ids)
}

/// What may be shown of a webhook URL: its host and the last four characters.
fn url_hint(url: &url::Url) -> String {
    let raw = url.as_str();
    let tail: String = raw
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{}…{tail}", url.host_str().unwrap_or_default())
}

fn seal(app: &AppState, secret: &str) -> Result<String, ServiceError> {
    secret_box::seal(&app.config.secret_key, secret).map_err(ServiceError::internal)
}

/// The destinations, in order. `kept` are the rule's current ones: a destination given with
/// one's id and no new secret keeps that one's.
pub(super) async fn destinations(
    app: &AppState,
    caller: &Caller,
    input: &[wire::AlertDestinationInput],
    kept: &[Destination],
) -> Result<Vec<Destination>, ServiceError> {
    if input.is_empty() || input.len() > MAX_DESTINATIONS {
        return Err(invalid(
            "destinations",
            format!("destinations must list 1 to {MAX_DESTINATIONS} destinations"),
        ));
    }
    let mut out = Vec::with_capacity(input.len());
    for (i, d) in input.iter().enumerate() {
        let destination = one(app, caller, i, d, kept).await?;
        if out.iter().any(|o: &Destination| o.id == destination.id) {
            return Err(invalid(
                &format!("destinations[{i}].id"),
                "a destination is listed twice",
            ));
        }
        out.push(destination);
    }
    Ok(out)
}

fn kind_of(i: usize, word: &str) -> Result<DestinationKind, ServiceError> {
    Ok(match word {
        "email" => DestinationKind::Email,
        "slack" => DestinationKind::Slack,
        "teams" => DestinationKind::Teams,
        "pagerduty" => DestinationKind::Pagerduty,
        "webhook_endpoint" => DestinationKind::WebhookEndpoint,
        _ => {
            return Err(invalid(
                &format!("destinations[{i}].type"),
                "type must be email, slack, teams, pagerduty or webhook_endpoint",
            ));
        }
    })
}

/// Refuses the fields a destination type does not take.
fn fields(
    i: usize,
    d: &wire::AlertDestinationInput,
    kind: DestinationKind,
) -> Result<(), ServiceError> {
    let given = [
        ("emails", d.emails.is_some(), DestinationKind::Email),
        ("url", d.url.is_some(), DestinationKind::Slack),
        (
            "routing_key",
            d.routing_key.is_some(),
            DestinationKind::Pagerduty,
        ),
        (
            "endpoint_id",
            d.endpoint_id.is_some(),
            DestinationKind::WebhookEndpoint,
        ),
    ];
    for (name, present, owner) in given {
        let allowed = owner == kind || (name == "url" && kind == DestinationKind::Teams);
        if present && !allowed {
            return Err(invalid(
                &format!("destinations[{i}].{name}"),
                format!("a {} destination does not take {name}", kind.as_str()),
            ));
        }
    }
    Ok(())
}

async fn one(
    app: &AppState,
    caller: &Caller,
    i: usize,
    d: &wire::AlertDestinationInput,
    kept: &[Destination],
) -> Result<Destination, ServiceError> {
    let kind = kind_of(i, &d.kind)?;
    fields(i, d, kind)?;
    let previous = match d.id {
        Some(id) => Some(
            kept.iter()
                .find(|k| k.id == id && k.kind == kind)
                .ok_or_else(|| {
                    invalid(
                        &format!("destinations[{i}].id"),
                        "no destination of this type with this id on the rule",
                    )
                })?,
        ),
        None => None,
    };
    let mut destination = Destination {
        id: d.id.unwrap_or_else(Uuid::new_v4),
        kind,
        emails: Vec::new(),
        endpoint_id: None,
        sealed_secret: None,
        hint: None,
    };
    match kind {
        DestinationKind::Email => destination.emails = emails(i, d)?,
        DestinationKind::Slack | DestinationKind::Teams | DestinationKind::Pagerduty => {
            let (hint, sealed) = secret(app, i, d, kind, previous)?;
            destination.hint = Some(hint);
            destination.sealed_secret = Some(sealed);
        }
        DestinationKind::WebhookEndpoint => {
            let param = format!("destinations[{i}].endpoint_id");
            let id = d
                .endpoint_id
                .ok_or_else(|| invalid(&param, "endpoint_id is required"))?;
            if webhooks::get(app.store.as_ref(), caller.org_id, id)
                .await?
                .is_none()
            {
                return Err(invalid(
                    &param,
                    format!("no webhook endpoint {id} in this organization"),
                ));
            }
            destination.endpoint_id = Some(id);
        }
    }
    Ok(destination)
}

/// An email destination's addresses, each once.
fn emails(i: usize, d: &wire::AlertDestinationInput) -> Result<Vec<String>, ServiceError> {
    let list = d.emails.as_deref().unwrap_or_default();
    let param = format!("destinations[{i}].emails");
    if list.is_empty() || list.len() > 20 {
        return Err(invalid(&param, "emails must list 1 to 20 addresses"));
    }
    let mut out: Vec<String> = Vec::new();
    for raw in list {
        let email = EmailAddress::parse(raw)
            .map_err(|_| invalid(&param, format!("{raw:?} is not an email address")))?;
        if !out.iter().any(|e| e == email.as_str()) {
            out.push(email.as_str().to_owned());
        }
    }
    Ok(out)
}

/// The hint and sealed secret of a Slack or Teams URL or a PagerDuty routing key: the one
/// given, or the kept destination's.
fn secret(
    app: &AppState,
    i: usize,
    d: &wire::AlertDestinationInput,
    kind: DestinationKind,
    previous: Option<&Destination>,
) -> Result<(String, String), ServiceError> {
    let (field, given) = if kind == DestinationKind::Pagerduty {
        ("routing_key", d.routing_key.as_deref())
    } else {
        ("url", d.url.as_deref())
    };
    let param = format!("destinations[{i}].{field}");
    let Some(given) = given else {
        return match previous.and_then(|p| Some((p.hint.clone()?, p.sealed_secret.clone()?))) {
            Some(kept) => Ok(kept),
            None => Err(invalid(&param, format!("{field} is required"))),
        };
    };
    if kind == DestinationKind::Pagerduty {
        let key = given.trim();
        if key.len() != 32 || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid(
                &param,
                "routing_key must be the integration's 32-character key",
            ));
        }
        return Ok((format!("…{}", &key[28..]), seal(app, key)?));
    }
    let url = check_url(given.trim(), app.config.outbound.allow_loopback)
        .map_err(|m| invalid(&param, format!("url: {m}")))?;
    Ok((url_hint(&url), seal(app, url.as_str())?))
}
