//! The words of each notification, as plain text and as HTML. Names people chose (the
//! organization's, a domain's) are escaped in the HTML.

use super::{Kind, Switch};
use mailward_domain::domain::{Domain, HostingErrorReason};
use mailward_domain::mailer::OutboundEmail;
use mailward_services::html::escape;
use mailward_services::state::AppState;

/// One task line of the digest.
pub(super) struct Line {
    pub priority: u8,
    pub domain: String,
    pub description: String,
}

/// One reminder mail's content, before it is addressed.
pub(super) struct Reminder {
    pub switch: Switch,
    pub subject: String,
    pub intro: String,
    pub items: Vec<String>,
    pub todo: String,
}

/// Builds the mail of `kind` about `domain` for `to`.
pub fn render(
    state: &AppState,
    organization: &str,
    domain: &Domain,
    kind: Kind,
    to: &str,
    unsubscribe_url: &str,
) -> OutboundEmail {
    let base = state.config.base_url.trim_end_matches('/');
    let name = &domain.url;
    let link = format!("{base}/domains/{}", domain.id);
    let (subject, happened, todo) = words(state, domain, kind);
    let switch = kind.switch().as_str();
    let text = format!(
        "{happened}\n\nWhat to do: {todo}\n\nThe domain: {link}\n\n--\nSent to {to} for {organization} because the \"{switch}\" notification is on.\nTurn it off: {unsubscribe_url}\n"
    );
    let html = format!(
        "<!doctype html>\n<html><body style=\"font-family:sans-serif;line-height:1.5\">\n<p>{}</p>\n<p><strong>What to do:</strong> {}</p>\n<p><a href=\"{}\">Open {}</a></p>\n<hr>\n<p style=\"color:#666;font-size:12px\">Sent to {} for {} because the &quot;{switch}&quot; notification is on. <a href=\"{}\">Turn it off</a>.</p>\n</body></html>\n",
        escape(&happened),
        escape(&todo),
        escape(&link),
        escape(name),
        escape(to),
        escape(organization),
        escape(unsubscribe_url),
    );
    OutboundEmail {
        attachments: Vec::new(),
        to: to.to_owned(),
        subject,
        text,
        html: Some(html),
        unsubscribe_url: Some(unsubscribe_url.to_owned()),
    }
}

/// The subject, what happened and what to do, for each kind of notification.
// Longer than 80 lines: one arm per kind, read best as one table of the mails' words.
fn words(state: &AppState, domain: &Domain, kind: Kind) -> (String, String, String) {
    let base = state.config.base_url.trim_end_matches('/');
    let name = &domain.url;
    let records = format!("{base}/domains/{}/dns-records", domain.id);
    let reason = domain
        .monitoring_failure_reason
        .map(|r| r.as_str().to_owned());
    match kind {
        Kind::DomainSetup => (
            format!("{name} is monitored: DMARC reports now come to Mailward"),
            format!(
                "{name} publishes a DMARC record that sends its aggregate reports to Mailward, so monitoring has started."
            ),
            format!(
                "Nothing to do now. Reports arrive within a day or two; the domain's senders and pass rates appear at {base}/domains/{}/reports/summary.",
                domain.id
            ),
        ),
        Kind::DomainRecovered => (
            format!("{name} is monitored again"),
            format!("{name} again publishes a DMARC record that sends its reports to Mailward."),
            "Nothing to do: monitoring resumed.".to_owned(),
        ),
        Kind::DomainFailed => (
            format!("{name}: DMARC monitoring could not be set up"),
            format!(
                "Mailward could not find the DMARC record it needs at _dmarc.{name} in time{}.",
                reason
                    .as_deref()
                    .map(|r| format!(" (reason: {r})"))
                    .unwrap_or_default()
            ),
            format!(
                "Publish the records listed at {records}, then verify them with POST {base}/domains/{}/verify.",
                domain.id
            ),
        ),
        Kind::DomainDrifted => (
            format!("{name}: DMARC monitoring stopped"),
            format!(
                "The DMARC record of {name} no longer sends its reports to Mailward{}.",
                reason
                    .as_deref()
                    .map(|r| format!(" (reason: {r})"))
                    .unwrap_or_default()
            ),
            format!(
                "Restore the record listed at {records}; monitoring resumes at the next check once it is back."
            ),
        ),
        Kind::DelegationMissing => {
            let target = mailward_services::domains::hosting::dmarc::dmarc_target(state, domain);
            let why = match domain.managed_dmarc.error_reason {
                Some(HostingErrorReason::SetupTimeout) => "was never published".to_owned(),
                _ => "was removed".to_owned(),
            };
            (
                format!("{name}: the hosted DMARC delegation is missing"),
                format!(
                    "Mailward hosts the DMARC record of {name}, but the CNAME at _dmarc.{name} that points receivers to it {why}, so receivers no longer find the domain's DMARC policy."
                ),
                format!(
                    "Publish _dmarc.{name} as a CNAME to {target} (and no TXT record at that name). The next check marks it ready again; the records are listed at {records}."
                ),
            )
        }
        Kind::HostedSpfLive => (
            format!("{name}: hosted SPF is live"),
            format!(
                "The SPF record of {name} now includes {}, where Mailward serves the domain's senders flattened into IP ranges, within the ten-lookup limit. Mailward re-resolves the senders' ranges every hour.",
                mailward_services::domains::hosting::spf::chain_name(state, domain, 0)
            ),
            format!(
                "Nothing to do. Keep the include in the record; add or remove senders through Mailward (target_spf or the domain's senders), not in DNS. The state is at {base}/domains/{}/spf.",
                domain.id
            ),
        ),
        Kind::FirstReport => (
            format!("{name}: the first DMARC report arrived"),
            format!("Mailward received the first DMARC aggregate report for {name}."),
            format!(
                "See who sends mail as {name} at {base}/domains/{}/sources and confirm the senders you know.",
                domain.id
            ),
        ),
    }
}

/// The daily digest of open tasks, by priority.
pub fn digest(
    state: &AppState,
    organization: &str,
    lines: &[Line],
    to: &str,
    unsubscribe_url: &str,
) -> OutboundEmail {
    const LEVELS: [(u8, &str); 4] = [(0, "Critical"), (1, "High"), (2, "Medium"), (3, "Low")];
    let base = state.config.base_url.trim_end_matches('/');
    let mut text = format!(
        "{} open task{} for {organization}, most urgent first.\n",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" }
    );
    let mut html = format!(
        "<!doctype html>\n<html><body style=\"font-family:sans-serif;line-height:1.5\">\n<p>{} open task{} for {}, most urgent first.</p>\n",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        escape(organization)
    );
    for (level, label) in LEVELS {
        let at: Vec<&Line> = lines
            .iter()
            .filter(|l| l.priority.min(3) == level)
            .collect();
        if at.is_empty() {
            continue;
        }
        text.push_str(&format!("\n{label} ({}):\n", at.len()));
        html.push_str(&format!("<h3>{label} ({})</h3>\n<ul>\n", at.len()));
        for line in at {
            text.push_str(&format!("- {}: {}\n", line.domain, line.description));
            html.push_str(&format!(
                "<li><strong>{}</strong>: {}</li>\n",
                escape(&line.domain),
                escape(&line.description)
            ));
        }
        html.push_str("</ul>\n");
    }
    let tasks = format!("{base}/tasks");
    text.push_str(&format!(
        "\nWhat to do: work through them from the top; each task says what to change. The list: {tasks}\n\n--\nSent to {to} for {organization} because the \"tasks_digests\" notification is on.\nTurn it off: {unsubscribe_url}\n"
    ));
    html.push_str(&format!(
        "<p><a href=\"{}\">All tasks</a></p>\n<hr>\n<p style=\"color:#666;font-size:12px\">Sent to {} for {} because the &quot;tasks_digests&quot; notification is on. <a href=\"{}\">Turn it off</a>.</p>\n</body></html>\n",
        escape(&tasks),
        escape(to),
        escape(organization),
        escape(unsubscribe_url)
    ));
    OutboundEmail {
        attachments: Vec::new(),
        to: to.to_owned(),
        subject: format!(
            "{organization}: {} open task{} on your domains",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        ),
        text,
        html: Some(html),
        unsubscribe_url: Some(unsubscribe_url.to_owned()),
    }
}

/// A reminder: what is due, listed, and what to do.
pub fn reminder(
    organization: &str,
    reminder: &Reminder,
    to: &str,
    unsubscribe_url: &str,
) -> OutboundEmail {
    let switch = reminder.switch.as_str();
    let mut text = format!("{}\n\n", reminder.intro);
    let mut html = format!(
        "<!doctype html>\n<html><body style=\"font-family:sans-serif;line-height:1.5\">\n<p>{}</p>\n<ul>\n",
        escape(&reminder.intro)
    );
    for item in &reminder.items {
        text.push_str(&format!("- {item}\n"));
        html.push_str(&format!("<li>{}</li>\n", escape(item)));
    }
    text.push_str(&format!(
        "\nWhat to do: {}\n\n--\nSent to {to} for {organization} because the \"{switch}\" notification is on.\nTurn it off: {unsubscribe_url}\n",
        reminder.todo
    ));
    html.push_str(&format!(
        "</ul>\n<p><strong>What to do:</strong> {}</p>\n<hr>\n<p style=\"color:#666;font-size:12px\">Sent to {} for {} because the &quot;{switch}&quot; notification is on. <a href=\"{}\">Turn it off</a>.</p>\n</body></html>\n",
        escape(&reminder.todo),
        escape(to),
        escape(organization),
        escape(unsubscribe_url)
    ));
    OutboundEmail {
        attachments: Vec::new(),
        to: to.to_owned(),
        subject: reminder.subject.clone(),
        text,
        html: Some(html),
        unsubscribe_url: Some(unsubscribe_url.to_owned()),
    }
}
