//! What each condition finds on one domain, from what the service already computed and stored:
//! the domain item (monitoring, score, conflicts, hosted records, certificates), its report rows
//! and senders, its TLS reports, its hosted MTA-STS policy.

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_domain::alerts::{AlertCondition, Finding};
use mailward_domain::domain::{Domain, ManagedRecord, ManagedStatus, MonitoringStatus, ScoreBand};
use mailward_domain::senders::ConfirmationStatus;
use mailward_insights::figures::pct;
use serde_json::{Map, Value, json};
use time::{Duration, OffsetDateTime};

fn finding(subject: impl Into<String>, summary: String, details: Value) -> Finding {
    Finding {
        subject: subject.into(),
        summary,
        details: match details {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    }
}

fn rank(band: ScoreBand) -> u8 {
    match band {
        ScoreBand::Critical => 0,
        ScoreBand::Bad => 1,
        ScoreBand::Good => 2,
        ScoreBand::Great => 3,
    }
}

/// The days `[today - (days - 1), today]`.
fn window(now: OffsetDateTime, days: u32) -> (time::Date, time::Date) {
    let today = now.date();
    (today - Duration::days(i64::from(days) - 1), today)
}

/// The findings of `condition` on `domain` now.
pub(super) async fn findings(
    app: &AppState,
    domain: &Domain,
    condition: &AlertCondition,
) -> Result<Vec<Finding>, ServiceError> {
    let now = app.clock.now();
    let name = &domain.url;
    Ok(match condition {
        AlertCondition::MonitoringProblem => monitoring(domain),
        AlertCondition::ScoreBelow { band } => {
            let current = ScoreBand::of(domain.score);
            if rank(current) < rank(*band) {
                vec![finding(
                    "",
                    format!(
                        "{name} scores {} ({}), below the {} band",
                        domain.score,
                        current.as_str(),
                        band.as_str()
                    ),
                    json!({"score": domain.score, "band": current.as_str(), "below": band.as_str()}),
                )]
            } else {
                Vec::new()
            }
        }
        AlertCondition::DmarcPassRateBelow {
            threshold_pct,
            window_days,
            min_messages,
        } => pass_rate(app, domain, (*threshold_pct, *window_days, *min_messages)).await?,
        AlertCondition::NewUnknownSender {
            min_messages,
            window_days,
        } => new_senders(app, domain, *min_messages, *window_days).await?,
        AlertCondition::SenderFailureRateAbove {
            threshold_pct,
            min_messages,
        } => failing_senders(app, domain, *threshold_pct, *min_messages).await?,
        AlertCondition::TlsFailureRateAbove {
            threshold_pct,
            window_days,
            min_sessions,
        } => tls_failures(app, domain, (*threshold_pct, *window_days, *min_sessions)).await?,
        AlertCondition::HostedRecordError => hosted_errors(domain),
        AlertCondition::CertificateExpiring { within_days } => {
            certificates(domain, *within_days, now)
        }
        AlertCondition::DnsConflict => domain
            .dns_conflicts
            .iter()
            .map(|c| {
                finding(
                    format!("{}:{}", c.conflict.kind.as_str(), c.conflict.label),
                    format!(
                        "DNS conflict at {}: {}",
                        c.conflict.label, c.conflict.summary
                    ),
                    json!({
                        "label": c.conflict.label,
                        "kind": c.conflict.kind.as_str(),
                        "rfc": c.conflict.rfc,
                        "consequence": c.conflict.consequence,
                    }),
                )
            })
            .collect(),
    })
}

fn monitoring(domain: &Domain) -> Vec<Finding> {
    let status = match domain.monitoring_status {
        MonitoringStatus::Failed => "failed",
        MonitoringStatus::Drifted => "drifted",
        _ => return Vec::new(),
    };
    let reason = domain.monitoring_failure_reason.map(|r| r.as_str());
    vec![finding(
        "",
        match reason {
            Some(r) => format!("Monitoring of {} {status}: {r}", domain.url),
            None => format!("Monitoring of {} {status}", domain.url),
        },
        json!({"monitoring_status": status, "monitoring_failure_reason": reason}),
    )]
}

async fn pass_rate(
    app: &AppState,
    domain: &Domain,
    (threshold, days, min_messages): (f64, u32, u64),
) -> Result<Vec<Finding>, ServiceError> {
    let (from, to) = window(app.clock.now(), days);
    let rows = mailward_store::reports::rows_between(
        app.store.as_ref(),
        domain.org_id,
        domain.id,
        from,
        to,
    )
    .await?;
    let figures = mailward_insights::figures::figures(from, to, &rows);
    if figures.volume < min_messages || figures.dmarc_pass_pct >= threshold {
        return Ok(Vec::new());
    }
    Ok(vec![finding(
        "",
        format!(
            "{}: {}% of {} messages passed DMARC over {days} days (threshold {threshold}%)",
            domain.url, figures.dmarc_pass_pct, figures.volume
        ),
        json!({
            "dmarc_pass_pct": figures.dmarc_pass_pct,
            "spf_pass_pct": figures.spf_pass_pct,
            "dkim_pass_pct": figures.dkim_pass_pct,
            "volume": figures.volume,
            "threshold_pct": threshold,
            "date_from": figures.date_from,
            "date_to": figures.date_to,
        }),
    )])
}

async fn new_senders(
    app: &AppState,
    domain: &Domain,
    min_messages: u64,
    days: u32,
) -> Result<Vec<Finding>, ServiceError> {
    let since = app.clock.now() - Duration::days(i64::from(days));
    let senders =
        mailward_store::senders::list(app.store.as_ref(), domain.org_id, domain.id).await?;
    Ok(senders
        .into_iter()
        .map(|s| s.value)
        .filter(|s| {
            s.source_id.is_none()
                && s.confirmation_status == ConfirmationStatus::RequiresConfirmation
                && s.created_at >= since
                && s.recent.volume >= min_messages
        })
        .map(|s| {
            let who = s
                .sending_domain
                .clone()
                .or_else(|| s.ips.first().cloned())
                .unwrap_or_else(|| s.key.clone());
            finding(
                s.id.to_string(),
                format!(
                    "{}: new unknown sender {who} sent {} messages ({}% passed DMARC)",
                    domain.url,
                    s.recent.volume,
                    pct(s.recent.dmarc_pass, s.recent.volume)
                ),
                json!({
                    "sender_id": s.id,
                    "sender": who,
                    "ips": s.ips.iter().take(10).collect::<Vec<_>>(),
                    "volume": s.recent.volume,
                    "dmarc_pass_pct": pct(s.recent.dmarc_pass, s.recent.volume),
                    "first_seen_at": crate::alerts::at(s.created_at),
                }),
            )
        })
        .collect())
}

async fn failing_senders(
    app: &AppState,
    domain: &Domain,
    threshold: f64,
    min_messages: u64,
) -> Result<Vec<Finding>, ServiceError> {
    let senders =
        mailward_store::senders::list(app.store.as_ref(), domain.org_id, domain.id).await?;
    Ok(senders
        .into_iter()
        .map(|s| s.value)
        .filter(|s| {
            s.confirmation_status != ConfirmationStatus::Discarded
                && (s.source_id.is_some()
                    || s.confirmation_status == ConfirmationStatus::Confirmed)
                && s.recent.volume >= min_messages
        })
        .filter_map(|s| {
            let failing = 100.0 - pct(s.recent.dmarc_pass, s.recent.volume);
            let failing = (failing * 100.0).round() / 100.0;
            (failing > threshold).then(|| {
                let who = s
                    .source_name
                    .clone()
                    .or_else(|| s.sending_domain.clone())
                    .unwrap_or_else(|| s.key.clone());
                finding(
                    s.id.to_string(),
                    format!(
                        "{}: {failing}% of {who}'s {} messages failed DMARC (threshold {threshold}%)",
                        domain.url, s.recent.volume
                    ),
                    json!({
                        "sender_id": s.id,
                        "sender": who,
                        "volume": s.recent.volume,
                        "dmarc_fail_pct": failing,
                        "spf_pass_pct": pct(s.recent.spf_aligned_pass, s.recent.volume),
                        "dkim_pass_pct": pct(s.recent.dkim_aligned_pass, s.recent.volume),
                        "threshold_pct": threshold,
                    }),
                )
            })
        })
        .collect())
}

async fn tls_failures(
    app: &AppState,
    domain: &Domain,
    (threshold, days, min_sessions): (f64, u32, u64),
) -> Result<Vec<Finding>, ServiceError> {
    let (from, to) = window(app.clock.now(), days);
    let reports =
        mailward_store::tls_reports::list(app.store.as_ref(), domain.org_id, domain.id).await?;
    let (mut ok, mut failed) = (0u64, 0u64);
    for (s, f) in crate::reports::tls::per_day(&reports, from, to).values() {
        ok += s;
        failed += f;
    }
    let failure_pct = pct(failed, ok + failed);
    if ok + failed < min_sessions || failure_pct <= threshold {
        return Ok(Vec::new());
    }
    Ok(vec![finding(
        "",
        format!(
            "{}: {failure_pct}% of {} TLS sessions to its MX hosts failed over {days} days (threshold {threshold}%)",
            domain.url,
            ok + failed
        ),
        json!({
            "failure_pct": failure_pct,
            "total_successful": ok,
            "total_failure": failed,
            "threshold_pct": threshold,
            "date_from": mailward_domain::reports::day_string(from),
            "date_to": mailward_domain::reports::day_string(to),
        }),
    )])
}

fn hosted_errors(domain: &Domain) -> Vec<Finding> {
    let records: [(&str, bool, &ManagedRecord); 5] = [
        ("dmarc", domain.is_dmarc_managed, &domain.managed_dmarc),
        ("spf", domain.is_spf_managed, &domain.managed_spf),
        ("dkim", domain.is_dkim_managed, &domain.managed_dkim),
        ("bimi", domain.is_bimi_managed, &domain.managed_bimi),
        (
            "mta_sts",
            domain.is_mta_sts_managed,
            &domain.managed_mta_sts,
        ),
    ];
    records
        .into_iter()
        .filter(|(_, hosted, r)| *hosted && r.status == ManagedStatus::Error)
        .map(|(record, _, r)| {
            let reason = r.error_reason.map(|e| e.as_str());
            finding(
                record,
                format!(
                    "{}: the hosted {record} record is in error ({})",
                    domain.url,
                    reason.unwrap_or("unknown reason")
                ),
                json!({"record": record, "error_reason": reason}),
            )
        })
        .collect()
}

fn certificates(domain: &Domain, within_days: u32, now: OffsetDateTime) -> Vec<Finding> {
    let horizon = now + Duration::days(i64::from(within_days));
    let mut dated: Vec<(String, &str, OffsetDateTime)> = Vec::new();
    if let Some(vmc) = &domain.vmc_check {
        dated.push((
            "bimi".into(),
            "BIMI mark certificate",
            vmc.finding.not_after,
        ));
    } else if let Some(assets) = domain
        .bimi_assets
        .as_ref()
        .filter(|_| domain.is_bimi_managed)
    {
        dated.push(("bimi".into(), "BIMI mark certificate", assets.not_after));
    }
    if let Some(not_after) = domain
        .mta_sts
        .as_ref()
        .filter(|_| domain.is_mta_sts_managed)
        .and_then(|h| h.front.as_ref())
        .and_then(|f| f.not_after)
    {
        dated.push((
            "mta_sts".into(),
            "MTA-STS policy host certificate",
            not_after,
        ));
    }
    let mut out: Vec<Finding> = dated
        .into_iter()
        .filter(|(_, _, not_after)| *not_after <= horizon)
        .map(|(subject, what, not_after)| {
            let state = if not_after <= now {
                "expired"
            } else {
                "expires"
            };
            finding(
                subject.clone(),
                format!("{}: the {what} {state} on {}", domain.url, not_after.date()),
                json!({"certificate": subject, "not_after": crate::alerts::at(not_after)}),
            )
        })
        .collect();
    // MX hosts: the daily probe keeps problems only (an expired certificate, or one expiring
    // within its 30-day warning), not every host's expiry date.
    if let Some(mx) = &domain.mx_tls_check {
        for f in &mx.findings {
            if f.problem.contains("expir") {
                out.push(finding(
                    format!("mx:{}", f.host),
                    format!(
                        "{}: the certificate of MX host {}: {}",
                        domain.url, f.host, f.problem
                    ),
                    json!({"certificate": format!("mx:{}", f.host), "problem": f.problem}),
                ));
            }
        }
    }
    out
}
