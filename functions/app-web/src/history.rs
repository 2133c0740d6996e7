//! The domain page's lower sections: TLS-RPT (the daily successful and failed sessions as a
//! chart, the failure types and reporters), DNS conflicts (what they break and how to fix
//! them), and the DNS history (the latest snapshots, each with what changed since the one
//! before of the same record type). The same operations as `/domains/{id}/tls-reports/*` and
//! `/domains/{id}/dns-snapshots`, and the domain's `dns_conflicts`.

use crate::charts::{self, Day};
use crate::layout::{count, notice, pct};
use mailward_api_types::snapshots::{SnapshotFilters, SnapshotView};
use mailward_api_types::tls_reports::{TlsChart, TlsSummary, TlsWindowParams};
use mailward_http::AppState;
use mailward_services::domains::snapshots;
use mailward_services::reports::tls;
use mailward_services::{Caller, ServiceError};
use maud::{Markup, html};
use std::collections::BTreeSet;
use uuid::Uuid;

/// What the lower sections show, read in one go.
pub struct History {
    tls: Result<(TlsSummary, TlsChart), ServiceError>,
    snapshots: Result<Vec<SnapshotView>, ServiceError>,
}

/// Reads the TLS reports of the last 30 days and the latest 30 snapshots.
pub async fn read(app: &AppState, caller: &Caller, id: Uuid) -> History {
    let window = TlsWindowParams {
        period: Some("last_30_days".into()),
    };
    let tls = match (
        tls::summary(app, caller, id, &window).await,
        tls::chart(app, caller, id, &window).await,
    ) {
        (Ok(s), Ok(c)) => Ok((s, c)),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let filters = SnapshotFilters {
        record_type: None,
        page: Some(1),
        per_page: Some(30),
    };
    let snapshots = snapshots::list(app, caller, id, &filters)
        .await
        .map(|l| l.data);
    History { tls, snapshots }
}

/// The TLS-RPT section.
pub fn tls_card(history: &History) -> Markup {
    html! {
        section.card #tls aria-labelledby="tls-h" {
            h2 #tls-h { "TLS reports (last 30 days)" }
            @match &history.tls {
                Err(e) => (notice("bad", &crate::layout::refusal_text(e))),
                Ok((summary, _)) if summary.reports == 0 => p { "No TLS report yet. Senders that support TLS-RPT report here once the TLS-RPT record is published." },
                Ok((summary, chart)) => {
                    dl.grid.figure {
                        div { dt { "Reports" } dd { (count(summary.reports)) } }
                        div { dt { "Successful sessions" } dd { (count(summary.total_successful)) } }
                        div { dt { "Failed sessions" } dd { (count(summary.total_failure)) } }
                        div { dt { "Failure rate" } dd { (pct(summary.failure_pct)) } }
                    }
                    (charts::volume_and_pass("tls-chart", "TLS sessions and success rate, last 30 days", "TLS success rate", &tls_days(chart)))
                    @if !summary.failures_by_result_type.is_empty() {
                        h3 { "Failures by type" }
                        ul { @for f in &summary.failures_by_result_type { li { code { (f.result_type) } ": " (count(f.failed_session_count)) } } }
                    }
                }
            }
        }
    }
}

fn tls_days(chart: &TlsChart) -> Vec<Day> {
    chart
        .labels
        .iter()
        .zip(chart.successful.iter().zip(&chart.failed))
        .map(|(date, (ok, failed))| {
            let volume = ok + failed;
            Day {
                date: date.clone(),
                volume,
                pass_pct: (volume > 0).then(|| 100.0 * *ok as f64 / volume as f64),
            }
        })
        .collect()
}

/// The conflicts section.
pub fn conflicts_card(domain: &mailward_api_types::domains::Domain) -> Markup {
    html! {
        section.card #conflicts aria-labelledby="conflicts-h" {
            h2 #conflicts-h { "DNS conflicts" }
            @if domain.dns_conflicts.is_empty() {
                p { "No conflict: the authoritative servers and public resolvers agree." }
            } @else {
                @for c in &domain.dns_conflicts {
                    div.notice.warn {
                        p { strong { (c.conflict.label) } " — " (c.conflict.summary) }
                        p { (c.conflict.consequence) }
                        p { "Fix: " (c.conflict.remediation) " (" (c.conflict.rfc) ")" }
                        @if !c.conflict.conflicting_records.is_empty() {
                            ul { @for r in &c.conflict.conflicting_records { li { code { (r) } } } }
                        }
                        p.hint { "Seen " (c.occurrence_count) " time(s) since " (c.first_detected_at.date()) "." }
                    }
                }
            }
        }
    }
}

/// One snapshot with what changed since the previous one of its type (older in the list).
struct Change<'a> {
    snapshot: &'a SnapshotView,
    added: Vec<&'a str>,
    removed: Vec<&'a str>,
    first: bool,
}

/// The list is newest first: each snapshot is compared with the next older one of its type.
fn changes(list: &[SnapshotView]) -> Vec<Change<'_>> {
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            let older = list[i + 1..]
                .iter()
                .find(|o| o.record_type == s.record_type);
            let now: BTreeSet<&str> = s.values.iter().map(String::as_str).collect();
            let before: BTreeSet<&str> = older
                .map(|o| o.values.iter().map(String::as_str).collect())
                .unwrap_or_default();
            Change {
                snapshot: s,
                added: now.difference(&before).copied().collect(),
                removed: before.difference(&now).copied().collect(),
                first: older.is_none(),
            }
        })
        .collect()
}

/// The DNS history section.
pub fn snapshots_card(history: &History) -> Markup {
    html! {
        section.card #history aria-labelledby="history-h" {
            h2 #history-h { "DNS history" }
            @match &history.snapshots {
                Err(e) => (notice("bad", &crate::layout::refusal_text(e))),
                Ok(list) if list.is_empty() => p { "No snapshot yet: the monitoring sweep records what DNS serves for each record type." },
                Ok(list) => {
                    table.responsive {
                        thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "Record" } th scope="col" { "Change" } } }
                        tbody { @for c in changes(list) { tr {
                            td data-label="When (UTC)" { (c.snapshot.captured_at.date()) " " (format!("{:02}:{:02}", c.snapshot.captured_at.hour(), c.snapshot.captured_at.minute())) }
                            td data-label="Record" { (c.snapshot.record_type) }
                            td data-label="Change" {
                                @if c.first { span.muted { "first seen" } br; }
                                @for v in &c.added { span.badge.ok { "+" } " " code { (v) } br; }
                                @for v in &c.removed { span.badge.bad { "−" } " " code { (v) } br; }
                                @if c.snapshot.values.is_empty() && c.removed.is_empty() { span.muted { "nothing published" } }
                            }
                        } } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(kind: &str, values: &[&str], minute: i64) -> SnapshotView {
        SnapshotView {
            id: Uuid::new_v4(),
            domain_id: Uuid::nil(),
            record_type: kind.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
            captured_at: time::OffsetDateTime::UNIX_EPOCH + time::Duration::minutes(minute),
            diff: None,
        }
    }

    #[test]
    fn each_snapshot_is_compared_with_the_older_one_of_its_type() {
        let list = vec![
            snap("dmarc", &["v=DMARC1; p=reject"], 3),
            snap("spf", &["v=spf1 -all"], 2),
            snap("dmarc", &["v=DMARC1; p=none"], 1),
        ];
        let c = changes(&list);
        assert_eq!(c[0].added, vec!["v=DMARC1; p=reject"]);
        assert_eq!(c[0].removed, vec!["v=DMARC1; p=none"]);
        assert!(!c[0].first);
        assert!(c[1].first && c[2].first);
    }
}
