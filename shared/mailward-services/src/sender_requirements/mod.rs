//! `GET /domains/{id}/sender-requirements` and `POST /domains/{id}/sender-requirements` (an
//! extension): mailbox providers' published sender requirements for one domain, judged by
//! `mailward_insights::requirements` from live DNS, the providers' own aggregate reports
//! (figures computed by sender identification after each import), the reverse DNS of their
//! sending addresses, the organization's latest header analysis and the spam rates it
//! supplied; and the `meet_sender_requirement` tasks of what fails.

pub mod headers;

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::sender_requirements::{
    ProviderRequirementsView, SenderRequirementsView, SupplySpamRateRequest,
};
use mailward_domain::domain::Domain;
use mailward_domain::reports::SourceDay;
use mailward_domain::sender_requirements::{
    MAX_ADDRESSES, Provider, ProviderFigures, Requirement, RequirementInputs, SuppliedSpamRate,
};
use mailward_insights::requirements::{Evidence, LiveDns, Published, judge};
use mailward_store::sender_requirements as stored;
use mailward_tasks::model::{priority, sequence};
use mailward_tasks::problems::Problem;
use mailward_tasks::{Findings, TaskType};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration as StdDuration;
use uuid::Uuid;

/// Days of aggregate reports judged.
pub const WINDOW_DAYS: u32 = 30;
/// Time limit of each live lookup.
const LOOKUP_TIMEOUT: StdDuration = StdDuration::from_secs(5);

/// Changes the domain's kept inputs with `change` (optimistic: retried when a concurrent
/// writer got there first).
pub(crate) async fn change_inputs(
    app: &AppState,
    domain: &Domain,
    change: impl Fn(&mut RequirementInputs),
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    for _ in 0..5 {
        let current = stored::get(store, domain.org_id, domain.id).await?;
        let version = current.as_ref().map(|c| c.version);
        let before = current.map(|c| c.value);
        let mut next = before
            .clone()
            .unwrap_or_else(|| RequirementInputs::new(domain.org_id, domain.id));
        change(&mut next);
        if before.as_ref() == Some(&next) {
            return Ok(());
        }
        match store.transact(vec![stored::save_op(&next, version)?]).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "the domain's sender requirements kept changing; try again",
    ))
}

/// The SPF and DMARC records as live DNS serves them.
async fn live_dns(app: &AppState, name: &str) -> LiveDns {
    let resolver = app.resolver.as_ref();
    let spf = tokio::time::timeout(
        LOOKUP_TIMEOUT,
        mailward_spf::select::lookup_spf_record(resolver, name),
    );
    let spf = match spf.await {
        Ok(mailward_spf::select::RecordLookup::Found { record, .. }) => {
            match mailward_spf::parse::parse_record(&record.text) {
                Ok(_) => Published::Valid(record.text),
                Err(e) => Published::Invalid(e.to_string()),
            }
        }
        Ok(mailward_spf::select::RecordLookup::NotFound) => Published::Missing,
        Ok(mailward_spf::select::RecordLookup::Multiple { records, .. }) => Published::Invalid(
            format!("{} SPF records (RFC 7208 §4.5: a permerror)", records.len()),
        ),
        _ => Published::Unknown,
    };
    let discovery = tokio::time::timeout(
        LOOKUP_TIMEOUT,
        mailward_dmarc::discover_policy(resolver, name),
    );
    let dmarc = match discovery.await {
        Ok(d) => match (d.status, d.record) {
            (mailward_dmarc::PolicyStatus::Found, Some(record)) => {
                use mailward_dmarc::RecordStatus;
                match record.status {
                    RecordStatus::Valid | RecordStatus::TreatAsPNone => {
                        Published::Valid(record.raw)
                    }
                    _ => Published::Invalid("it gives no DMARC policy".to_owned()),
                }
            }
            (mailward_dmarc::PolicyStatus::Indeterminate, _) => Published::Unknown,
            _ => Published::Missing,
        },
        Err(_) => Published::Unknown,
    };
    LiveDns { spf, dmarc }
}

/// The judgement for a domain (no access check: callers have loaded it).
async fn judged(
    app: &AppState,
    domain: &Domain,
) -> Result<(Vec<ProviderRequirementsView>, RequirementInputs), ServiceError> {
    let inputs = stored::get(app.store.as_ref(), domain.org_id, domain.id)
        .await?
        .map(|v| v.value)
        .unwrap_or_else(|| RequirementInputs::new(domain.org_id, domain.id));
    let dns = live_dns(app, &domain.url).await;
    let evidence = Evidence {
        domain: &domain.url,
        dns: &dns,
        inputs: &inputs,
        now: app.clock.now(),
        window_days: WINDOW_DAYS,
    };
    Ok((judge(&evidence), inputs))
}

fn rfc3339(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The domain's requirements, with the open task of each failing one.
async fn view_of(app: &AppState, domain: &Domain) -> Result<SenderRequirementsView, ServiceError> {
    let (mut providers, inputs) = judged(app, domain).await?;
    let tasks =
        mailward_store::tasks::list_for_domain(app.store.as_ref(), domain.org_id, domain.id)
            .await?;
    let open: HashMap<String, Uuid> = tasks
        .iter()
        .map(|t| &t.value)
        .filter(|t| t.task_type == TaskType::MeetSenderRequirement && t.status.is_active())
        .map(|t| (t.problem_key.clone(), t.id))
        .collect();
    for requirement in providers.iter_mut().flat_map(|p| p.requirements.iter_mut()) {
        if requirement.status == "fail" {
            requirement.task_id = open.get(&problem_key(&requirement.requirement)).copied();
        }
    }
    let now = app.clock.now();
    Ok(SenderRequirementsView {
        domain_id: domain.id,
        domain: domain.url.clone(),
        window_days: WINDOW_DAYS,
        evaluated_at: rfc3339(now),
        header_analysis_at: inputs.header_check_at(now).map(|c| rfc3339(c.analyzed_at)),
        providers,
    })
}

/// `GET /domains/{id}/sender-requirements`.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
) -> Result<SenderRequirementsView, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    view_of(app, &domain).await
}

/// `POST /domains/{id}/sender-requirements`: sets (or clears) a provider's spam rate.
pub async fn supply_spam_rate(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: SupplySpamRateRequest,
) -> Result<SenderRequirementsView, ServiceError> {
    caller.require_write()?;
    let raw = input
        .provider
        .as_deref()
        .ok_or_else(|| ServiceError::invalid("provider", "provider is required"))?;
    let provider = Provider::parse(raw).ok_or_else(|| {
        ServiceError::invalid("provider", "provider must be gmail, yahoo or outlook")
    })?;
    if let Some(rate) = input.spam_rate_pct
        && !(rate.is_finite() && (0.0..=100.0).contains(&rate))
    {
        return Err(ServiceError::invalid(
            "spam_rate_pct",
            "spam_rate_pct must be a percentage from 0 to 100",
        ));
    }
    let domain = crate::access::load(app, caller, id).await?.value;
    let now = app.clock.now();
    change_inputs(app, &domain, |inputs| {
        inputs.spam_rates.retain(|r| r.provider != provider);
        if let Some(rate_pct) = input.spam_rate_pct {
            inputs.spam_rates.push(SuppliedSpamRate {
                provider,
                rate_pct,
                supplied_at: now,
            });
        }
    })
    .await?;
    let summary = match input.spam_rate_pct {
        Some(rate) => format!(
            "{} spam rate of {} set to {rate}%",
            provider.name(),
            domain.url
        ),
        None => format!("{} spam rate of {} cleared", provider.name(), domain.url),
    };
    let change = crate::activity::Change::new(
        "domain.spam_rate_supplied",
        "domain",
        Some(domain.id),
        summary,
    );
    app.store
        .transact(crate::activity::ops(app, caller, change)?)
        .await?;
    reconcile_tasks(app, &domain).await?;
    view_of(app, &domain).await
}

fn problem_key(requirement: &str) -> String {
    format!("{}#{requirement}", TaskType::MeetSenderRequirement.as_str())
}

/// One task per failing requirement, naming each provider that requires it with its codes. A
/// provider counts for the requirements its reports judge (SPF, DKIM, DMARC, reverse DNS) only
/// when its reports show the domain's own mail: a domain that sends it nothing is not held to
/// its rules, and a missing record alone is already the set-up tasks' matter. What a header
/// analysis or a supplied figure shows counts as it is. A parked domain sends no mail at all.
pub fn findings(providers: &[ProviderRequirementsView], parked: bool) -> Findings {
    let mut findings = Findings::default();
    if parked {
        findings
            .not_applicable
            .insert(TaskType::MeetSenderRequirement);
        return findings;
    }
    findings.judged.insert(TaskType::MeetSenderRequirement);
    for requirement in Requirement::ALL {
        let from_reports = matches!(
            requirement,
            Requirement::Spf | Requirement::Dkim | Requirement::Dmarc | Requirement::ReverseDns
        );
        let failing: Vec<(&ProviderRequirementsView, &_)> = providers
            .iter()
            .filter(|p| !from_reports || p.messages > 0)
            .filter_map(|p| {
                let r = p
                    .requirements
                    .iter()
                    .find(|r| r.requirement == requirement.as_str())?;
                (r.status == "fail").then_some((p, r))
            })
            .collect();
        let Some((_, first)) = failing.first() else {
            continue;
        };
        let who: Vec<String> = failing
            .iter()
            .map(|(p, r)| match r.error_codes.is_empty() {
                true => p.name.clone(),
                false => format!("{} ({})", p.name, r.error_codes.join(", ")),
            })
            .collect();
        let why = first
            .evidence
            .iter()
            .find(|e| e.status == "fail")
            .map_or(String::new(), |e| format!(": {}", e.detail));
        let (priority, sequence) = match requirement {
            Requirement::Spf | Requirement::Dkim | Requirement::Dmarc => {
                (priority::HIGH, sequence::ALIGNMENT)
            }
            Requirement::ReverseDns => (priority::HIGH, sequence::FOUNDATION),
            _ => (priority::MEDIUM, sequence::HARDENING),
        };
        findings.problems.push(Problem {
            task_type: TaskType::MeetSenderRequirement,
            key: problem_key(requirement.as_str()),
            priority,
            sequence,
            description: format!(
                "{} require {} and reject or defer mail that fails it{why}.",
                who.join(", "),
                requirement_phrase(requirement),
            ),
            codes: Vec::new(),
            sending_domain: None,
            source_id: None,
        });
    }
    findings
}

fn requirement_phrase(requirement: Requirement) -> &'static str {
    match requirement {
        Requirement::Spf => "SPF to pass for the sending domain",
        Requirement::Dkim => "a DKIM signature that verifies",
        Requirement::Dmarc => "a published DMARC record and mail aligned with it",
        Requirement::ReverseDns => "forward-confirmed reverse DNS for every sending address",
        Requirement::Tls => "mail sent over TLS",
        Requirement::OneClickUnsubscribe => {
            "RFC 8058 one-click unsubscribe on subscribed mail, its headers signed by DKIM"
        }
        Requirement::SpamRate => "a spam rate below 0.3%",
    }
}

/// Reconciles the domain's `meet_sender_requirement` tasks (and only those) with a fresh
/// judgement.
pub async fn reconcile_tasks(app: &AppState, domain: &Domain) -> Result<(), ServiceError> {
    let (providers, _) = judged(app, domain).await?;
    let findings = findings(&providers, domain.is_parked);
    crate::reports::senders::reconcile_findings(app, domain, |_, _| findings.clone()).await
}

/// Which provider sent each of the domain's reports of the window (by report key), and how
/// many each sent.
pub async fn providers_by_report(
    app: &AppState,
    domain: &Domain,
    from: time::Date,
) -> Result<(HashMap<String, Provider>, BTreeMap<Provider, u32>), ServiceError> {
    let reports =
        mailward_store::reports::list(app.store.as_ref(), domain.org_id, domain.id).await?;
    let start = from.midnight().assume_utc().unix_timestamp();
    let mut by_key = HashMap::new();
    let mut counts = BTreeMap::new();
    for report in reports {
        if report.kind != mailward_domain::reports::ReportKind::Dmarc || report.end < start {
            continue;
        }
        if let Some(provider) = Provider::of_reporter(&report.reporter) {
            by_key.insert(report.key.clone(), provider);
            *counts.entry(provider).or_insert(0) += 1;
        }
    }
    Ok((by_key, counts))
}

/// Adds one row of a provider's report to its figures; `own` says whether it is the domain's
/// own mail.
pub fn add_row(figures: &mut ProviderFigures, row: &SourceDay, own: bool) {
    let direct = row.volume - row.forwarded.min(row.volume);
    if !own {
        figures.others += direct;
        return;
    }
    figures.messages += direct;
    figures.dmarc_pass += row.dmarc_pass.min(direct);
    if let (Some(spf), Some(dkim)) = (row.spf_pass, row.dkim_pass) {
        figures.raw_messages += direct;
        figures.spf_pass += spf.min(direct);
        figures.dkim_pass += dkim.min(direct);
    }
    if !row.source_ip.is_empty() && figures.addresses.len() < MAX_ADDRESSES {
        figures
            .addresses
            .entry(row.source_ip.clone())
            .or_insert(None);
    }
}

/// Stores the figures identification computed, with the reverse DNS of each address from the
/// shared cache (`confirmed` holds the forward-confirmed ones), then reconciles the tasks.
pub async fn store_figures(
    app: &AppState,
    domain: &Domain,
    mut figures: BTreeMap<Provider, ProviderFigures>,
    confirmed: &HashMap<String, String>,
    through: &str,
) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    for f in figures.values_mut() {
        for (ip, state) in f.addresses.iter_mut() {
            *state = if confirmed.contains_key(ip) {
                Some(true)
            } else {
                match mailward_store::senders::cached_ptr(store, ip).await {
                    Ok(Some(cached)) => Some(cached.name.is_some()),
                    _ => None,
                }
            };
        }
    }
    change_inputs(app, domain, |inputs| {
        inputs.reports = figures.clone();
        inputs.reports_through = Some(through.to_owned());
    })
    .await?;
    reconcile_tasks(app, domain).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views(messages: u64) -> Vec<ProviderRequirementsView> {
        let mut inputs = RequirementInputs::new(Uuid::nil(), Uuid::nil());
        inputs.reports.insert(
            Provider::Gmail,
            ProviderFigures {
                reports: 1,
                messages,
                ..ProviderFigures::default()
            },
        );
        judge(&Evidence {
            domain: "example.com",
            dns: &LiveDns {
                spf: Published::Missing,
                dmarc: Published::Missing,
            },
            inputs: &inputs,
            now: time::macros::datetime!(2026-11-27 12:00 UTC),
            window_days: WINDOW_DAYS,
        })
    }

    #[test]
    fn only_providers_that_receive_the_domains_mail_hold_it_to_their_record_rules() {
        let keys = |f: Findings| -> Vec<String> { f.problems.into_iter().map(|p| p.key).collect() };
        // Records missing, but no provider saw the domain's mail: the set-up tasks cover it.
        assert!(keys(findings(&views(0), false)).is_empty());
        let found = findings(&views(10), false);
        let problem = found
            .problems
            .iter()
            .find(|p| p.key == "meet_sender_requirement#dmarc")
            .expect("Gmail received the domain's mail");
        assert!(
            problem.description.starts_with("Gmail (5.7.26, 5.7.32)"),
            "{problem:?}"
        );
        assert!(!problem.description.contains("Yahoo"), "{problem:?}");
        let parked = findings(&views(10), true);
        assert!(parked.problems.is_empty());
        assert!(
            parked
                .not_applicable
                .contains(&TaskType::MeetSenderRequirement)
        );
    }
}
