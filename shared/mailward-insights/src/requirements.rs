//! Mailbox providers' sender requirements, judged (pure): for Gmail, Yahoo and Outlook.com,
//! each requirement they publish as pass, fail or unknown with its evidence. The evidence is
//! live DNS (SPF and DMARC records), the aggregate reports that provider itself sent over the
//! last 30 days (its own receivers' view), the forward-confirmed reverse DNS of the addresses
//! in those reports, the organization's most recent header analysis of the domain's mail, and
//! the spam rates the organization supplied. Nothing is guessed: without evidence a
//! requirement is unknown.
//!
//! Only the domain's own mail is judged: rows that pass DMARC or come from an address of a
//! sender that is confirmed, or recognised and not discarded. Spoofed mail from strangers
//! failing SPF does not make the domain miss a requirement (the provider rejects it, as the
//! owner wants), and forwarded mail is left out (its SPF fails by nature).

use mailward_api_types::sender_requirements::{
    EvidenceView, ProviderRequirementsView, RequirementView,
};
use mailward_domain::sender_requirements::{
    Provider, ProviderFigures, Requirement, RequirementInputs, Status,
};
use time::OffsetDateTime;

/// Share (percent) of the domain's own mail that must pass for a report-based requirement to
/// pass: a little room for the odd message a receiver misjudged.
pub const PASS_SHARE_PCT: f64 = 98.0;
/// The spam rate Gmail and Yahoo require senders to stay below (percent).
pub const MAX_SPAM_RATE_PCT: f64 = 0.3;
/// Addresses named in a failing reverse-DNS evidence line, at most.
const NAMED_ADDRESSES: usize = 5;

/// What the live DNS says of a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Published {
    /// One valid record (its text).
    Valid(String),
    /// None published.
    Missing,
    /// Published but unusable (why).
    Invalid(String),
    /// The lookup failed.
    Unknown,
}

/// The live DNS evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveDns {
    pub spf: Published,
    pub dmarc: Published,
}

/// Everything one judgement knows.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    pub domain: &'a str,
    pub dns: &'a LiveDns,
    pub inputs: &'a RequirementInputs,
    pub now: OffsetDateTime,
    pub window_days: u32,
}

/// The requirements each provider publishes, with its rejection codes.
pub fn published(provider: Provider) -> &'static [(Requirement, &'static [&'static str])] {
    use Requirement::*;
    match provider {
        Provider::Gmail => &[
            (Spf, &["5.7.27"]),
            (Dkim, &["5.7.30"]),
            (Dmarc, &["5.7.26", "5.7.32"]),
            (ReverseDns, &["5.7.25"]),
            (Tls, &["4.7.29"]),
            (OneClickUnsubscribe, &[]),
            (SpamRate, &["4.7.28", "5.7.28"]),
        ],
        Provider::Yahoo => &[
            (Spf, &["5.7.9"]),
            (Dkim, &["5.7.9"]),
            (Dmarc, &["5.7.9"]),
            (ReverseDns, &[]),
            (OneClickUnsubscribe, &[]),
            (SpamRate, &["4.7.0 [TSS04]"]),
        ],
        Provider::Outlook => &[
            (Spf, &["5.7.515"]),
            (Dkim, &["5.7.515"]),
            (Dmarc, &["5.7.515", "5.7.509"]),
        ],
    }
}

fn evidence(source: &str, status: Status, detail: String) -> EvidenceView {
    EvidenceView {
        source: source.to_owned(),
        status: status.as_str().to_owned(),
        detail,
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 1000.0 / whole as f64).round() / 10.0
    }
}

/// Evidence from a pass count of the provider's reports.
fn share(
    provider: Provider,
    figures: Option<&ProviderFigures>,
    (passed, of): (u64, u64),
    what: &str,
    window_days: u32,
) -> EvidenceView {
    let name = provider.name();
    match figures {
        None => evidence(
            "reports",
            Status::Unknown,
            format!("no aggregate report from {name} in the last {window_days} days"),
        ),
        Some(_) if of == 0 => evidence(
            "reports",
            Status::Unknown,
            format!(
                "{name}'s reports of the last {window_days} days hold no {what} result for the domain's own mail"
            ),
        ),
        Some(_) => {
            let rate = pct(passed, of);
            let status = if rate >= PASS_SHARE_PCT {
                Status::Pass
            } else {
                Status::Fail
            };
            evidence(
                "reports",
                status,
                format!(
                    "{passed} of {of} messages {name} received from the domain's own senders passed {what} ({rate}%)"
                ),
            )
        }
    }
}

fn dns_evidence(record: &str, published: &Published, host: &str) -> EvidenceView {
    match published {
        Published::Valid(text) => evidence(
            "dns",
            Status::Pass,
            format!("{record} record published at {host}: {text}"),
        ),
        Published::Missing => {
            evidence("dns", Status::Fail, format!("no {record} record at {host}"))
        }
        Published::Invalid(why) => evidence(
            "dns",
            Status::Fail,
            format!("the {record} record at {host} is unusable: {why}"),
        ),
        Published::Unknown => evidence(
            "dns",
            Status::Unknown,
            format!("the {record} lookup for {host} failed; checked again on the next pass"),
        ),
    }
}

/// The evidence lines of one requirement for one provider.
fn lines(e: &Evidence<'_>, provider: Provider, requirement: Requirement) -> Vec<EvidenceView> {
    let figures = e.inputs.reports.get(&provider);
    let days = e.window_days;
    let raw = |f: &ProviderFigures, n: u64| (n, f.raw_messages);
    match requirement {
        Requirement::Spf => vec![
            dns_evidence("SPF", &e.dns.spf, e.domain),
            share(
                provider,
                figures,
                figures.map_or((0, 0), |f| raw(f, f.spf_pass)),
                "SPF",
                days,
            ),
        ],
        Requirement::Dkim => vec![share(
            provider,
            figures,
            figures.map_or((0, 0), |f| raw(f, f.dkim_pass)),
            "DKIM",
            days,
        )],
        Requirement::Dmarc => vec![
            dns_evidence("DMARC", &e.dns.dmarc, &format!("_dmarc.{}", e.domain)),
            share(
                provider,
                figures,
                figures.map_or((0, 0), |f| (f.dmarc_pass, f.messages)),
                "DMARC aligned",
                days,
            ),
        ],
        Requirement::ReverseDns => vec![reverse_dns(provider, figures, days)],
        Requirement::Tls => vec![match e.inputs.header_check_at(e.now) {
            Some(c) => evidence("header_analysis", c.tls, c.tls_detail.clone()),
            None => no_header_analysis(days),
        }],
        Requirement::OneClickUnsubscribe => vec![match e.inputs.header_check_at(e.now) {
            Some(c) => evidence(
                "header_analysis",
                c.one_click_unsubscribe,
                format!(
                    "{} (required of subscribed, marketing mail only)",
                    c.one_click_detail
                ),
            ),
            None => no_header_analysis(days),
        }],
        Requirement::SpamRate => vec![spam_rate(e, provider)],
    }
}

fn no_header_analysis(days: u32) -> EvidenceView {
    evidence(
        "header_analysis",
        Status::Unknown,
        format!(
            "no header analysis of the domain's mail in the last {days} days: paste the headers of one of its bulk messages, as received at the provider, into POST /tools/header-analyze"
        ),
    )
}

fn spam_rate(e: &Evidence<'_>, provider: Provider) -> EvidenceView {
    match e.inputs.spam_rate_at(provider, e.now) {
        Some(r) => {
            let status = if r.rate_pct < MAX_SPAM_RATE_PCT {
                Status::Pass
            } else {
                Status::Fail
            };
            evidence(
                "supplied",
                status,
                format!(
                    "{}% supplied on {} (the limit is {MAX_SPAM_RATE_PCT}%)",
                    r.rate_pct,
                    r.supplied_at.date()
                ),
            )
        }
        None => evidence(
            "supplied",
            Status::Unknown,
            format!(
                "Mailward cannot see spam complaints; supply the rate {} shows you (POST /domains/{{id}}/sender-requirements)",
                match provider {
                    Provider::Gmail => "Google Postmaster Tools",
                    Provider::Yahoo => "Yahoo Sender Hub",
                    Provider::Outlook => "Microsoft SNDS",
                }
            ),
        ),
    }
}

fn reverse_dns(provider: Provider, figures: Option<&ProviderFigures>, days: u32) -> EvidenceView {
    let name = provider.name();
    let Some(f) = figures.filter(|f| !f.addresses.is_empty()) else {
        return evidence(
            "reverse_dns",
            Status::Unknown,
            format!(
                "no address of the domain's own senders in {name}'s reports of the last {days} days"
            ),
        );
    };
    let missing: Vec<&str> = f
        .addresses
        .iter()
        .filter(|(_, v)| **v == Some(false))
        .map(|(ip, _)| ip.as_str())
        .collect();
    let unchecked = f.addresses.values().filter(|v| v.is_none()).count();
    let total = f.addresses.len();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(NAMED_ADDRESSES).copied().collect();
        let more = missing.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return evidence(
            "reverse_dns",
            Status::Fail,
            format!(
                "{} of {total} sending addresses have no forward-confirmed reverse DNS: {}{more}",
                missing.len(),
                shown.join(", ")
            ),
        );
    }
    if unchecked > 0 {
        return evidence(
            "reverse_dns",
            Status::Unknown,
            format!("{unchecked} of {total} sending addresses not looked up yet"),
        );
    }
    evidence(
        "reverse_dns",
        Status::Pass,
        format!("all {total} sending addresses have forward-confirmed reverse DNS"),
    )
}

/// A requirement's status from its evidence: failing evidence fails it; otherwise it passes
/// when the decisive evidence passes (for SPF and DMARC both the record and the reports).
fn combine(lines: &[EvidenceView]) -> Status {
    if lines.iter().any(|l| l.status == "fail") {
        Status::Fail
    } else if lines.iter().all(|l| l.status == "pass") {
        Status::Pass
    } else {
        Status::Unknown
    }
}

fn summary(provider: Provider, requirement: Requirement, status: Status) -> String {
    let what = match requirement {
        Requirement::Spf => "SPF must pass for the sending domain",
        Requirement::Dkim => "mail must carry a DKIM signature that verifies",
        Requirement::Dmarc => {
            "a DMARC record (p=none at least) must be published and mail must pass it aligned with the From domain"
        }
        Requirement::ReverseDns => {
            "sending addresses must have forward-confirmed reverse DNS (PTR)"
        }
        Requirement::Tls => "mail must be sent over TLS",
        Requirement::OneClickUnsubscribe => {
            "subscribed mail must offer RFC 8058 one-click unsubscribe, its List-Unsubscribe and List-Unsubscribe-Post headers signed by DKIM"
        }
        Requirement::SpamRate => "reported spam must stay below 0.3%",
    };
    let verdict = match status {
        Status::Pass => "met",
        Status::Fail => "not met",
        Status::Unknown => "not known",
    };
    format!("{}: {what} ({verdict})", provider.name())
}

/// Every provider's requirements for the domain.
pub fn judge(e: &Evidence<'_>) -> Vec<ProviderRequirementsView> {
    Provider::ALL
        .into_iter()
        .map(|provider| {
            let requirements: Vec<RequirementView> = published(provider)
                .iter()
                .map(|(requirement, codes)| {
                    let evidence = lines(e, provider, *requirement);
                    let status = combine(&evidence);
                    RequirementView {
                        requirement: requirement.as_str().to_owned(),
                        status: status.as_str().to_owned(),
                        summary: summary(provider, *requirement, status),
                        evidence,
                        error_codes: codes.iter().map(|c| (*c).to_owned()).collect(),
                        task_id: None,
                    }
                })
                .collect();
            let statuses: Vec<&str> = requirements.iter().map(|r| r.status.as_str()).collect();
            let status = if statuses.contains(&"fail") {
                Status::Fail
            } else if statuses.iter().all(|s| *s == "pass") {
                Status::Pass
            } else {
                Status::Unknown
            };
            let figures = e.inputs.reports.get(&provider);
            ProviderRequirementsView {
                provider: provider.as_str().to_owned(),
                name: provider.name().to_owned(),
                status: status.as_str().to_owned(),
                reports: figures.map_or(0, |f| f.reports),
                messages: figures.map_or(0, |f| f.messages),
                other_messages: figures.map_or(0, |f| f.others),
                requirements,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mailward_domain::sender_requirements::{HeaderCheck, SuppliedSpamRate};
    use std::collections::BTreeMap;
    use uuid::Uuid;

    fn now() -> OffsetDateTime {
        time::macros::datetime!(2026-11-27 12:00 UTC)
    }

    fn dns() -> LiveDns {
        LiveDns {
            spf: Published::Valid("v=spf1 include:_spf.google.com -all".into()),
            dmarc: Published::Valid("v=DMARC1; p=none".into()),
        }
    }

    fn judged(inputs: &RequirementInputs, dns: &LiveDns) -> Vec<ProviderRequirementsView> {
        judge(&Evidence {
            domain: "example.com",
            dns,
            inputs,
            now: now(),
            window_days: 30,
        })
    }

    fn status_of<'a>(views: &'a [ProviderRequirementsView], p: &str, r: &str) -> &'a str {
        let provider = views.iter().find(|v| v.provider == p).unwrap();
        &provider
            .requirements
            .iter()
            .find(|x| x.requirement == r)
            .unwrap()
            .status
    }

    #[test]
    fn the_providers_own_reports_decide_and_nothing_is_guessed() {
        let mut reports = BTreeMap::new();
        reports.insert(
            Provider::Gmail,
            ProviderFigures {
                reports: 3,
                messages: 1000,
                dmarc_pass: 995,
                raw_messages: 1000,
                spf_pass: 999,
                dkim_pass: 900,
                others: 50,
                addresses: [("192.0.2.1".to_owned(), Some(true))].into(),
            },
        );
        let mut inputs = RequirementInputs::new(Uuid::nil(), Uuid::nil());
        inputs.reports = reports;
        let views = judged(&inputs, &dns());
        assert_eq!(status_of(&views, "gmail", "spf"), "pass");
        assert_eq!(status_of(&views, "gmail", "dkim"), "fail");
        assert_eq!(status_of(&views, "gmail", "dmarc"), "pass");
        assert_eq!(status_of(&views, "gmail", "reverse_dns"), "pass");
        assert_eq!(status_of(&views, "gmail", "spam_rate"), "unknown");
        assert_eq!(
            status_of(&views, "gmail", "one_click_unsubscribe"),
            "unknown"
        );
        // No report from Yahoo: published records alone leave it unknown, never a pass.
        assert_eq!(status_of(&views, "yahoo", "spf"), "unknown");
        assert_eq!(views[0].status, "fail");
        let dkim = &views[0].requirements[1];
        assert_eq!(dkim.error_codes, ["5.7.30"]);
        assert!(dkim.evidence[0].detail.contains("900 of 1000"), "{dkim:?}");
    }

    #[test]
    fn a_missing_record_fails_without_reports_and_supplied_figures_count() {
        let mut inputs = RequirementInputs::new(Uuid::nil(), Uuid::nil());
        inputs.spam_rates.push(SuppliedSpamRate {
            provider: Provider::Gmail,
            rate_pct: 0.5,
            supplied_at: now(),
        });
        inputs.header_check = Some(HeaderCheck {
            analyzed_at: now(),
            receiver: Some("mx.google.com".into()),
            one_click_unsubscribe: Status::Pass,
            one_click_detail: "ok".into(),
            tls: Status::Fail,
            tls_detail: "received without TLS".into(),
        });
        let live = LiveDns {
            spf: Published::Valid("v=spf1 -all".into()),
            dmarc: Published::Missing,
        };
        let views = judged(&inputs, &live);
        for p in ["gmail", "yahoo", "outlook"] {
            assert_eq!(status_of(&views, p, "dmarc"), "fail");
        }
        assert_eq!(status_of(&views, "gmail", "spam_rate"), "fail");
        assert_eq!(status_of(&views, "yahoo", "spam_rate"), "unknown");
        assert_eq!(status_of(&views, "gmail", "tls"), "fail");
        assert_eq!(status_of(&views, "yahoo", "one_click_unsubscribe"), "pass");
    }

    #[test]
    fn addresses_without_reverse_dns_are_named() {
        let mut reports = BTreeMap::new();
        reports.insert(
            Provider::Yahoo,
            ProviderFigures {
                reports: 1,
                messages: 10,
                addresses: [
                    ("192.0.2.1".to_owned(), Some(false)),
                    ("192.0.2.2".to_owned(), None),
                ]
                .into(),
                ..ProviderFigures::default()
            },
        );
        let mut inputs = RequirementInputs::new(Uuid::nil(), Uuid::nil());
        inputs.reports = reports;
        let views = judged(&inputs, &dns());
        assert_eq!(status_of(&views, "yahoo", "reverse_dns"), "fail");
        let yahoo = views.iter().find(|v| v.provider == "yahoo").unwrap();
        assert!(
            yahoo.requirements[3].evidence[0]
                .detail
                .contains("192.0.2.1")
        );
        // Rows imported before the raw results were kept: SPF unknown, not failed.
        assert_eq!(status_of(&views, "yahoo", "spf"), "unknown");
    }
}
