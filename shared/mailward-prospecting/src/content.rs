//! From audits to the report's content: findings, risk, sending services, records, the
//! potential-loss estimate and the plan. Pure: the caller audits, this module only judges.

use crate::texts;
use mailward_api_types::prospecting::{
    CreateProspectingReport, Currency, DkimState, DomainExposure, DomainResult, Finding,
    FindingStatus, Language, PlanStep, PotentialLoss, ProspectingReportContent, ReportCover,
    ReportDnsRecord, RiskLevel, SendingService, SkippedDomain,
};
use mailward_audit::verdict::{Assessment, Verdict};
use mailward_audit::{AuditResult, AuditStatus};
use time::OffsetDateTime;

/// One requested name and what became of it.
pub enum Outcome {
    /// Audited (the result has status success).
    Audited(Box<AuditResult>),
    /// Left out, with a reason code.
    Skipped(&'static str),
}

/// The potential-loss reference incident cost in each currency (whole units).
pub fn reference_incident_cost(currency: Currency) -> u64 {
    match currency {
        Currency::USD => 50_000,
        Currency::CAD => 68_000,
        Currency::EUR => 46_000,
        Currency::GBP => 40_000,
        Currency::AUD => 76_000,
    }
}

fn format_money(lang: Language, currency: Currency, amount: u64) -> String {
    let digits = amount.to_string();
    let sep = match lang {
        Language::En => ',',
        Language::Fr => '\u{202f}',
    };
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(sep);
        }
        grouped.push(c);
    }
    let code = format!("{currency:?}");
    match lang {
        Language::En => format!("{code} {grouped}"),
        Language::Fr => format!("{grouped} {code}"),
    }
}

/// A money amount as the report writes it (`USD 12,300`, `12 300 EUR`).
pub fn money(lang: Language, currency: Currency, amount: u64) -> String {
    format_money(lang, currency, amount)
}

fn status_of(verdict: Verdict) -> FindingStatus {
    match verdict {
        Verdict::Pass => FindingStatus::Pass,
        Verdict::Warn | Verdict::InProgress | Verdict::Info => FindingStatus::Warn,
        Verdict::Fail => FindingStatus::Fail,
        Verdict::Error => FindingStatus::Error,
    }
}

fn finding(lang: Language, dimension: &str, a: &Assessment) -> Finding {
    let status = status_of(a.status);
    let codes: Vec<String> = a
        .errors
        .iter()
        .chain(a.warnings.iter())
        .chain(a.info.iter())
        .cloned()
        .collect();
    let mut detail = texts::why(lang, dimension);
    for code in &codes {
        if let Some(sentence) = texts::code_sentence(lang, code) {
            detail.push(' ');
            detail.push_str(&sentence);
        }
    }
    Finding {
        dimension: dimension.to_owned(),
        status,
        title: texts::finding_title(lang, dimension, status),
        detail,
        codes,
    }
}

fn severity(status: FindingStatus) -> u8 {
    match status {
        FindingStatus::Fail => 0,
        FindingStatus::Error => 1,
        FindingStatus::Warn => 2,
        FindingStatus::Pass => 3,
    }
}

/// The findings of one audit, most severe first (the order of dimensions breaks ties).
fn findings(lang: Language, audit: &AuditResult, include_bimi: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let parked = audit.summary.parked;
    if let Some(mx) = audit.mx.as_ref().filter(|_| !parked) {
        out.push(finding(lang, "mx", &mx.assessment));
    }
    if let Some(spf) = &audit.spf {
        out.push(finding(lang, "spf", &spf.assessment));
    }
    if let Some(dkim) = audit.dkim.as_ref().filter(|_| !parked) {
        out.push(finding(lang, "dkim", &dkim.assessment));
    }
    if let Some(dmarc) = &audit.dmarc {
        out.push(finding(lang, "dmarc", &dmarc.assessment));
    }
    if let Some(bimi) = audit.bimi.as_ref().filter(|_| include_bimi && !parked) {
        out.push(finding(lang, "bimi", &bimi.assessment));
    }
    if let Some(sts) = audit.mta_sts.as_ref().filter(|_| !parked) {
        out.push(finding(lang, "mta_sts", &sts.assessment));
    }
    if let Some(rpt) = audit.tls_rpt.as_ref().filter(|_| !parked) {
        out.push(finding(lang, "tls_rpt", &rpt.assessment));
    }
    // DANE: when published (its state is then news either way), or when MTA-STS does not
    // enforce encryption either (DANE is the other way to).
    let sts_enforces = audit
        .mta_sts
        .as_ref()
        .is_some_and(|s| s.assessment.status == Verdict::Pass);
    if let Some(dane) = audit
        .dane
        .as_ref()
        .filter(|d| !parked && (d.hosts.iter().any(|h| !h.records.is_empty()) || !sts_enforces))
    {
        out.push(finding(lang, "dane", &dane.assessment));
    }
    out.sort_by_key(|f| severity(f.status));
    out
}

/// How exposed a domain is: DMARC decides first (without an enforced policy anyone can send as
/// the domain), the score refines.
pub fn risk(audit: &AuditResult) -> RiskLevel {
    let score = audit.summary.score;
    match audit.summary.dmarc {
        Verdict::Fail | Verdict::Error => RiskLevel::Critical,
        Verdict::Pass if score >= 80 => RiskLevel::Low,
        Verdict::Pass => RiskLevel::Moderate,
        _ if score >= 60 => RiskLevel::Moderate,
        _ => RiskLevel::High,
    }
}

fn sending_services(audit: &AuditResult) -> Vec<SendingService> {
    let Some(spf) = &audit.spf else {
        return Vec::new();
    };
    let catalogue = mailward_domain::sources::catalogue();
    let dkim = audit.dkim.as_ref();
    let mut out: Vec<SendingService> = Vec::new();
    for node in spf
        .tree
        .iter()
        .filter(|n| n.kind == "include" && n.depth == 0)
    {
        let include = node.operand.trim_end_matches('.').to_ascii_lowercase();
        if out.iter().any(|s| s.spf_include == include) {
            continue;
        }
        let source = catalogue.match_spf_include(&format!("include:{include}"));
        let state = match (source, dkim) {
            (Some(source), Some(dkim)) if dkim.catalogue_available => {
                let signed = dkim.selectors.iter().any(|sel| {
                    sel.found
                        && sel.usable
                        && (source.dkim_discovery_selectors.contains(&sel.selector)
                            || sel.cname_target.as_deref().is_some_and(|t| {
                                catalogue
                                    .match_dkim_target(t)
                                    .is_some_and(|s| s.id == source.id)
                            }))
                });
                if signed {
                    DkimState::Signed
                } else if source.dkim_discovery_selectors.is_empty() {
                    DkimState::Unknown
                } else {
                    DkimState::Missing
                }
            }
            _ => DkimState::Unknown,
        };
        out.push(SendingService {
            name: source
                .map(|s| s.display_name.clone().unwrap_or_else(|| s.name.clone()))
                .unwrap_or_else(|| include.clone()),
            source_id: source.map(|s| s.id),
            spf_include: include,
            dkim: state,
        });
    }
    out
}

fn dns_records(audit: &AuditResult, include_bimi: bool) -> Vec<ReportDnsRecord> {
    let domain = &audit.summary.domain;
    let mut out = Vec::new();
    let mut push = |t: &str, name: String, value: String| {
        out.push(ReportDnsRecord {
            record_type: t.to_owned(),
            name,
            value,
        })
    };
    if let Some(mx) = &audit.mx {
        for r in &mx.records {
            push(
                "MX",
                domain.clone(),
                format!("{} {}", r.preference, r.exchange),
            );
        }
    }
    if let Some(record) = audit.spf.as_ref().and_then(|s| s.record.clone()) {
        push("TXT", domain.clone(), record);
    }
    if let Some(dmarc) = &audit.dmarc {
        let name = format!("_dmarc.{domain}");
        if let Some(target) = dmarc.cname_target.clone().filter(|_| dmarc.is_cname) {
            push("CNAME", name.clone(), target);
        }
        if let Some(record) = dmarc.record.clone() {
            push("TXT", name, record);
        }
    }
    if let Some(dkim) = &audit.dkim {
        for sel in dkim.selectors.iter().filter(|s| s.found) {
            if let Some(target) = sel.cname_target.clone().filter(|_| sel.is_cname) {
                push("CNAME", sel.name.clone(), target);
            } else if let Some(record) = sel.record.clone() {
                push("TXT", sel.name.clone(), record);
            }
        }
    }
    if include_bimi && let Some(record) = audit.bimi.as_ref().and_then(|b| b.record.clone()) {
        push("TXT", format!("default._bimi.{domain}"), record);
    }
    if let Some(record) = audit.mta_sts.as_ref().and_then(|m| m.record.clone()) {
        push("TXT", format!("_mta-sts.{domain}"), record);
    }
    if let Some(record) = audit.tls_rpt.as_ref().and_then(|t| t.record.clone()) {
        push("TXT", format!("_smtp._tls.{domain}"), record);
    }
    for host in audit.dane.iter().flat_map(|d| d.hosts.iter()) {
        for record in &host.records {
            push("TLSA", format!("_25._tcp.{}", host.host), record.clone());
        }
    }
    out
}

fn domain_result(
    lang: Language,
    audit: &AuditResult,
    request: &CreateProspectingReport,
) -> DomainResult {
    let risk = risk(audit);
    DomainResult {
        domain: audit.summary.domain.clone(),
        score: audit.summary.score,
        parked: audit.summary.parked,
        risk,
        risk_word: texts::risk_word(lang, risk),
        findings: findings(lang, audit, request.include_bimi),
        dns_records: request
            .include_dns_records
            .then(|| dns_records(audit, request.include_bimi)),
        sending_services: sending_services(audit),
    }
}

fn round_hundred(value: f64) -> u64 {
    ((value / 100.0).round() as u64) * 100
}

fn potential_loss(
    lang: Language,
    currency: Currency,
    domains: &[DomainResult],
) -> Option<PotentialLoss> {
    let reference = reference_incident_cost(currency);
    let exposures: Vec<DomainExposure> = domains
        .iter()
        .map(|d| {
            let lacking = f64::from(100 - d.score.min(100)) / 100.0;
            let weight = if d.parked { 0.2 } else { 1.0 };
            DomainExposure {
                domain: d.domain.clone(),
                amount: round_hundred(reference as f64 * lacking * weight),
            }
        })
        .collect();
    Some(PotentialLoss {
        currency,
        total: exposures.iter().map(|e| e.amount).sum(),
        domains: exposures,
        reference_incident_cost: reference,
        explanation: texts::loss_explanation(lang, &money(lang, currency, reference)),
    })
}

/// The plan's five steps, spread evenly so the last one lands on the deadline week.
fn plan(lang: Language, weeks: u8) -> Vec<PlanStep> {
    let steps = texts::plan_steps(lang);
    let count = steps.len() as u32;
    steps
        .into_iter()
        .enumerate()
        .map(|(i, title)| {
            let week = (u32::from(weeks) * (i as u32 + 1)).div_ceil(count).max(1);
            PlanStep {
                week: u8::try_from(week).unwrap_or(weeks),
                title,
            }
        })
        .collect()
}

/// The reason an audit that ran says the domain could not be audited, if it did.
pub fn unusable(audit: &AuditResult) -> Option<&'static str> {
    if audit.status == AuditStatus::Success {
        return None;
    }
    Some(match audit.summary.error_code.as_deref() {
        Some("domain_not_found") => "domain_not_found",
        _ => "nameservers_unresolvable",
    })
}

/// Builds the content from the outcomes, in request order.
pub fn build(
    request: &CreateProspectingReport,
    outcomes: Vec<(String, Outcome)>,
    prepared_by: Option<String>,
    now: OffsetDateTime,
) -> ProspectingReportContent {
    let lang = request.language;
    let mut domains = Vec::new();
    let mut skipped = Vec::new();
    for (name, outcome) in outcomes {
        match outcome {
            Outcome::Audited(audit) => domains.push(domain_result(lang, &audit, request)),
            Outcome::Skipped(reason) => skipped.push(SkippedDomain {
                domain: name,
                reason: reason.to_owned(),
                message: texts::skipped_message(lang, reason),
            }),
        }
    }
    let date = now.date();
    let deadline = date + time::Duration::weeks(i64::from(request.deadline_weeks));
    let average = if domains.is_empty() {
        0
    } else {
        let sum: u32 = domains.iter().map(|d| u32::from(d.score)).sum();
        u8::try_from((sum as f64 / domains.len() as f64).round() as u32).unwrap_or(100)
    };
    let overall = domains.iter().map(|d| d.risk).max();
    let unprotected = domains
        .iter()
        .filter(|d| {
            d.findings
                .iter()
                .any(|f| f.dimension == "dmarc" && f.status != FindingStatus::Pass)
        })
        .count();
    let cover = ReportCover {
        title: texts::title(lang),
        subtitle: texts::subtitle(lang),
        generated_for: request.generated_for.clone(),
        prepared_by,
        date: date.to_string(),
        deadline: deadline.to_string(),
        average_score: average,
        overall_risk: overall,
        overall_risk_word: overall.map(|r| texts::risk_word(lang, r)),
        summary: texts::summary(
            lang,
            domains.len(),
            unprotected,
            &request.generated_for,
            &deadline.to_string(),
        ),
    };
    let loss = if request.include_potential_loss && !domains.is_empty() {
        potential_loss(lang, request.currency, &domains)
    } else {
        None
    };
    ProspectingReportContent {
        language: lang,
        theme: request.theme,
        deadline_weeks: request.deadline_weeks,
        cover,
        risk_words: [
            RiskLevel::Low,
            RiskLevel::Moderate,
            RiskLevel::High,
            RiskLevel::Critical,
        ]
        .into_iter()
        .map(|r| texts::risk_word(lang, r))
        .collect(),
        potential_loss: loss,
        plan: plan(lang, request.deadline_weeks),
        domains,
        skipped_domains: skipped,
        generated_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_grouped_per_language() {
        assert_eq!(
            money(Language::En, Currency::USD, 1_234_500),
            "USD 1,234,500"
        );
        assert_eq!(
            money(Language::Fr, Currency::EUR, 46_000),
            "46\u{202f}000 EUR"
        );
        assert_eq!(money(Language::En, Currency::GBP, 0), "GBP 0");
    }

    #[test]
    fn plan_ends_on_the_deadline_and_never_before_week_one() {
        let weeks: Vec<u8> = plan(Language::En, 6).iter().map(|s| s.week).collect();
        assert_eq!(weeks, [2, 3, 4, 5, 6]);
        let weeks: Vec<u8> = plan(Language::Fr, 1).iter().map(|s| s.week).collect();
        assert_eq!(weeks, [1, 1, 1, 1, 1]);
        let weeks: Vec<u8> = plan(Language::En, 52).iter().map(|s| s.week).collect();
        assert_eq!(weeks.last(), Some(&52));
    }
}
