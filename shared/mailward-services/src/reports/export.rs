//! Report data out (the notifications-and-exports issue, item 3): a domain's, or every visible
//! domain's, daily totals or per-source rows over a period, as CSV or JSON, produced one domain
//! at a time so a year of an organization's data never sits in memory at once.
//!
//! CSV cells an attacker controls (reported header-from, envelope and signer names) that a
//! spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) are
//! prefixed with `'` (OWASP's CSV-injection advice); JSON carries them unchanged.

use crate::caller::Caller;
use crate::error::ServiceError;
use crate::state::AppState;
use futures::stream::{self, BoxStream, StreamExt as _};
use mailward_domain::domain::Domain;
use mailward_domain::reports::{DayTotal, SourceDay};
use mailward_store::reports::{day_string, day_totals_between, rows_between};
use serde::Deserialize;
use time::Date;
use uuid::Uuid;

/// `format`, `period` and `data` of an export.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ExportParams {
    pub format: Option<String>,
    pub period: Option<String>,
    pub data: Option<String>,
}

/// What an export holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dataset {
    /// One line per domain and day.
    Daily,
    /// One line per domain, day, source IP and header-from.
    Sources,
}

/// An export ready to stream.
pub struct Export {
    /// `text/csv; charset=utf-8` or `application/json`.
    pub content_type: &'static str,
    /// The attachment's file name.
    pub filename: String,
    /// The body, in pieces.
    pub body: BoxStream<'static, Result<String, ServiceError>>,
}

const DAILY_COLUMNS: [&str; 11] = [
    "date",
    "domain",
    "volume",
    "compliant",
    "failing",
    "forwarded",
    "dmarc_pass",
    "spf_aligned_pass",
    "dkim_aligned_pass",
    "quarantined",
    "rejected",
];

const SOURCE_COLUMNS: [&str; 17] = [
    "date",
    "domain",
    "source_ip",
    "header_from",
    "envelope_from",
    "dkim_signers",
    "volume",
    "dmarc_pass",
    "spf_aligned_pass",
    "dkim_aligned_pass",
    "forwarded",
    "quarantined",
    "rejected",
    "ptr",
    "asn",
    "as_name",
    "country_code",
];

fn parse(params: &ExportParams) -> Result<(bool, i64, Dataset), ServiceError> {
    let csv = match params.format.as_deref().unwrap_or("csv") {
        "csv" => true,
        "json" => false,
        _ => {
            return Err(ServiceError::invalid(
                "format",
                "format must be csv or json",
            ));
        }
    };
    let days = super::window::long_period_days(params.period.as_deref())?;
    let data = match params.data.as_deref().unwrap_or("daily") {
        "daily" => Dataset::Daily,
        "sources" => Dataset::Sources,
        _ => {
            return Err(ServiceError::invalid(
                "data",
                "data must be daily or sources",
            ));
        }
    };
    Ok((csv, days, data))
}

/// A cell a spreadsheet will not run.
fn safe_cell(value: &str) -> String {
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{value}")
    } else {
        value.to_owned()
    }
}

fn csv_line(cells: &[String]) -> Result<String, ServiceError> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer
        .write_record(cells)
        .map_err(|e| ServiceError::internal(format!("csv: {e}")))?;
    let bytes = writer
        .into_inner()
        .map_err(|e| ServiceError::internal(format!("csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| ServiceError::internal(format!("csv: {e}")))
}

fn daily_values(date: &str, domain: &str, t: &DayTotal) -> Vec<serde_json::Value> {
    let forwarded = t.forwarded.min(t.volume);
    let compliant = t.dmarc_pass.min(t.volume - forwarded);
    vec![
        date.into(),
        domain.into(),
        t.volume.into(),
        compliant.into(),
        (t.volume - forwarded - compliant).into(),
        forwarded.into(),
        t.dmarc_pass.into(),
        t.spf_aligned_pass.into(),
        t.dkim_aligned_pass.into(),
        t.quarantined.into(),
        t.rejected.into(),
    ]
}

fn source_values(
    date: &str,
    domain: &str,
    r: &SourceDay,
    network: Option<&mailward_domain::senders::SourceNetwork>,
) -> Vec<serde_json::Value> {
    // Unknown is null in JSON and an empty cell in CSV.
    let text = |v: Option<&String>| v.cloned().map_or(serde_json::Value::Null, Into::into);
    vec![
        date.into(),
        domain.into(),
        r.source_ip.clone().into(),
        r.header_from.clone().into(),
        r.envelope_from.clone().unwrap_or_default().into(),
        r.dkim_signers.join(" ").into(),
        r.volume.into(),
        r.dmarc_pass.into(),
        r.spf_aligned_pass.into(),
        r.dkim_aligned_pass.into(),
        r.forwarded.into(),
        r.quarantined.into(),
        r.rejected.into(),
        text(network.and_then(|n| n.ptr.as_ref())),
        network
            .and_then(|n| n.asn)
            .map_or(serde_json::Value::Null, Into::into),
        text(network.and_then(|n| n.as_name.as_ref())),
        text(network.and_then(|n| n.country_code.as_ref())),
    ]
}

/// One domain's lines (rows of values), oldest day first.
async fn domain_lines(
    app: &AppState,
    org: Uuid,
    domain: &Domain,
    (from, to): (Date, Date),
    data: Dataset,
) -> Result<Vec<Vec<serde_json::Value>>, ServiceError> {
    let store = app.store.as_ref();
    Ok(match data {
        Dataset::Daily => day_totals_between(store, org, domain.id, from, to)
            .await?
            .iter()
            .map(|(day, t)| daily_values(day, &domain.url, t))
            .collect(),
        Dataset::Sources => {
            let mut rows = rows_between(store, org, domain.id, from, to).await?;
            rows.sort_by(|a, b| {
                (&a.0, &a.1.source_ip, &a.1.header_from).cmp(&(
                    &b.0,
                    &b.1.source_ip,
                    &b.1.header_from,
                ))
            });
            let networks = super::networks_of(app, org, domain.id).await?;
            rows.iter()
                .map(|(day, r)| source_values(day, &domain.url, r, networks.get(&r.source_ip)))
                .collect()
        }
    })
}

/// Renders lines in the export's format (`first` says whether a JSON item comes first).
fn render(
    lines: &[Vec<serde_json::Value>],
    columns: &[&str],
    csv: bool,
    first: &mut bool,
) -> Result<String, ServiceError> {
    let mut out = String::new();
    for line in lines {
        if csv {
            let cells: Vec<String> = line
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => safe_cell(s),
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                })
                .collect();
            out.push_str(&csv_line(&cells)?);
        } else {
            let object: serde_json::Map<String, serde_json::Value> = columns
                .iter()
                .map(|c| (*c).to_owned())
                .zip(line.iter().cloned())
                .collect();
            if !*first {
                out.push(',');
            }
            *first = false;
            out.push('\n');
            out.push_str(&serde_json::to_string(&object)?);
        }
    }
    Ok(out)
}

/// Builds the streamed export of `domains` (already filtered to what the caller sees).
async fn export(
    app: &AppState,
    caller: &Caller,
    domains: Vec<Domain>,
    name: String,
    params: &ExportParams,
) -> Result<Export, ServiceError> {
    let (csv, days, data) = parse(params)?;
    let window = super::window::org_window(app, caller.org_id, days).await?;
    let columns: &'static [&'static str] = match data {
        Dataset::Daily => &DAILY_COLUMNS,
        Dataset::Sources => &SOURCE_COLUMNS,
    };
    let head = if csv {
        csv_line(&columns.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>())?
    } else {
        "[".to_owned()
    };
    let tail = if csv {
        String::new()
    } else {
        "\n]\n".to_owned()
    };
    let (app, org) = (app.clone(), caller.org_id);
    let mut first = true;
    let body = stream::iter(domains)
        .then(move |domain| {
            let app = app.clone();
            async move { domain_lines(&app, org, &domain, window, data).await }
        })
        .map(move |lines| lines.and_then(|l| render(&l, columns, csv, &mut first)));
    let body = stream::once(async move { Ok(head) })
        .chain(body)
        .chain(stream::once(async move { Ok(tail) }))
        .boxed();
    let suffix = if csv { "csv" } else { "json" };
    let data_name = match data {
        Dataset::Daily => "daily",
        Dataset::Sources => "sources",
    };
    Ok(Export {
        content_type: if csv {
            "text/csv; charset=utf-8"
        } else {
            "application/json"
        },
        filename: format!(
            "mailward-{name}-{data_name}-{}-{}.{suffix}",
            day_string(window.0),
            day_string(window.1)
        ),
        body,
    })
}

/// `GET /domains/{id}/reports/export`.
pub async fn domain_export(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    params: &ExportParams,
) -> Result<Export, ServiceError> {
    let domain = crate::access::load(app, caller, id).await?.value;
    let name = domain.url.clone();
    export(app, caller, vec![domain], name, params).await
}

/// `GET /report-data/export`: every domain the caller sees, by name.
pub async fn organization_export(
    app: &AppState,
    caller: &Caller,
    params: &ExportParams,
) -> Result<Export, ServiceError> {
    let mut domains = crate::access::visible(app, caller).await?;
    domains.sort_by(|a, b| a.url.cmp(&b.url));
    export(app, caller, domains, "organization".into(), params).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_a_spreadsheet_would_run_are_defused_and_quoting_is_csv() {
        assert_eq!(safe_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(safe_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(safe_cell("example.com"), "example.com");
        let line = csv_line(&["a,b".into(), "say \"hi\"".into(), "plain".into()]).unwrap();
        assert_eq!(line, "\"a,b\",\"say \"\"hi\"\"\",plain\r\n");
    }
}
