//! Ingestion: one delivery (an email, a file) in, each report in it imported, exactly once, for
//! the domains the delivery was addressed to ([`Recipients`]). What cannot be imported says why.
//!
//! Attribution never trusts the report's text: a domain name is public and many organizations
//! may watch one, but a report belongs only to a domain whose own DMARC (or TLS-RPT) record
//! names that organization's address `rua+<domain id>@<report domain>`, which is where the
//! reporter sent it (the envelope recipient), or to the organization an operator names on an
//! import. The report's policy domain must be that domain or below it.
//!
//! Per organization a report becomes rows per UTC day and source ([`SourceDay`]); the raw
//! bytes are kept in object storage (never served by the API). Identity is reporter + report
//! id + policy domain + date range; importing the same report again changes nothing.

use mailward_domain::reports::{ReportIdentity, ReportKind, StoredReport};
use mailward_domain::store::WriteOp;
use mailward_domain::tls_reports::{StoredTlsReport, TlsFailure, TlsPolicyResult, cap_details};
use mailward_reports::fold::{FoldedReport, fold_aggregate};
use mailward_reports::tlsrpt::TlsReport;
use mailward_reports::{Content, Limits};
use mailward_services::error::ServiceError;
use mailward_services::reports::figures::{contribution, figures_window, update_figures};
use mailward_services::state::AppState;
use mailward_store::reports as stored;
use serde::Serialize;
use std::collections::BTreeMap;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

/// Writes per transaction when storing rows (well under the store's limit).
const OPS_PER_COMMIT: usize = 25;

/// Days an unattributed report's note is kept.
const UNATTRIBUTED_DAYS: i64 = 400;

/// Whom a delivery's reports may belong to: the only input that attributes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipients {
    /// Mail: the envelope recipients the mail server accepted (SMTP `RCPT TO`, the SES
    /// receipt's recipients). Each report address names one domain of one organization; one
    /// copy counts per named domain, so organizations listed together each get their own.
    Envelope(Vec<String>),
    /// An operator's import for one organization (`mailward import --org`): its domains only.
    Organization(Uuid),
}

/// What is known of a delivery besides its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub recipients: Recipients,
    /// How to tell whether the mail is authentic.
    pub authentication: Authentication,
}

/// How a delivery's authenticity is known: whether its mail passed DKIM aligned with its From
/// domain (the reporter's domain; RFC 7489 §7.2.1.1 has reporters sign report mail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authentication {
    /// Verified here: the message's DKIM signatures are checked against keys read through the
    /// resolver port (the local SMTP mailbox, imported messages). A bare file is not mail and
    /// is unauthenticated.
    Verify,
    /// The receiving service's verdict (SES: DKIM and DMARC both `PASS`).
    Verdict(bool),
}

impl Delivery {
    /// Mail to these envelope recipients, its authenticity checked here.
    pub fn mail_to<S: Into<String>>(recipients: impl IntoIterator<Item = S>) -> Self {
        Self {
            recipients: Recipients::Envelope(recipients.into_iter().map(Into::into).collect()),
            authentication: Authentication::Verify,
        }
    }

    /// An operator's import for `org`.
    pub fn import_for(org: Uuid) -> Self {
        Self {
            recipients: Recipients::Organization(org),
            authentication: Authentication::Verify,
        }
    }

    /// The receiving service's verdict on the mail, instead of checking it here.
    pub fn authenticated(self, verdict: bool) -> Self {
        Self {
            authentication: Authentication::Verdict(verdict),
            ..self
        }
    }
}

/// What happened to one report of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Imported for at least one organization.
    Imported,
    /// Every watching organization had it already.
    Duplicate,
    /// No domain the delivery was addressed to watches its policy domain (kept as a count for
    /// the operator, never for an organization).
    Unattributed,
    /// Not importable; `reason` says why.
    Refused,
}

/// One report's outcome (the JSON line `mailward import` prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The input file, when there is one (set by the caller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// dmarc, tlsrpt or failure; absent for what was not a report at all.
    pub kind: Option<ReportKind>,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub reporter: Option<String>,
    pub report_id: Option<String>,
    pub policy_domain: Option<String>,
    /// UTC, RFC 3339.
    pub begin: Option<String>,
    pub end: Option<String>,
    pub records: u64,
    /// Sum of the records' counts (TLS-RPT: sessions).
    pub messages: u64,
    /// Organizations it was imported for.
    pub organizations: usize,
    /// Whether its mail passed DKIM aligned with its From domain ([`Authentication`]).
    pub authenticated: bool,
}

impl Outcome {
    /// A refusal of a whole input before it was read (too large, unreadable).
    pub fn refused_file(reason: impl Into<String>) -> Self {
        Self::refused(None, reason)
    }

    fn refused(kind: Option<ReportKind>, reason: impl Into<String>) -> Self {
        Self {
            file: None,
            kind,
            status: Status::Refused,
            reason: Some(reason.into()),
            reporter: None,
            report_id: None,
            policy_domain: None,
            begin: None,
            end: None,
            records: 0,
            messages: 0,
            organizations: 0,
            authenticated: false,
        }
    }
}

fn rfc3339(t: i64) -> Option<String> {
    OffsetDateTime::from_unix_timestamp(t)
        .ok()?
        .format(&Rfc3339)
        .ok()
}

/// Commits writes: unconditional puts (row chunks, idempotent: the report's mark written after
/// them is what makes an import complete) as one non-atomic bulk write, billed once per item on
/// DynamoDB and retried item by item when the partition is throttled; anything else in
/// transactions of a bounded size.
async fn commit_all(app: &AppState, ops: Vec<WriteOp>) -> Result<(), ServiceError> {
    let (puts, ops): (Vec<_>, Vec<_>) = ops.into_iter().partition(|op| {
        matches!(
            op,
            WriteOp::Put {
                condition: mailward_domain::store::Condition::None,
                ..
            }
        )
    });
    let items = puts
        .into_iter()
        .filter_map(|op| match op {
            WriteOp::Put { item, .. } => Some(item),
            _ => None,
        })
        .collect();
    app.store.put_all(items).await?;
    let mut batch = Vec::with_capacity(OPS_PER_COMMIT);
    for op in ops {
        batch.push(op);
        if batch.len() == OPS_PER_COMMIT {
            app.store.transact(std::mem::take(&mut batch)).await?;
        }
    }
    if !batch.is_empty() {
        app.store.transact(batch).await?;
    }
    Ok(())
}

/// Keeps a note of a report no organization watches (a count for the operator, for
/// [`UNATTRIBUTED_DAYS`]).
async fn note_unattributed(
    app: &AppState,
    identity: &ReportIdentity,
    key: &str,
    mut outcome: Outcome,
) -> Result<Outcome, ServiceError> {
    let day = OffsetDateTime::from_unix_timestamp(identity.begin)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .date();
    let expires = (app.clock.now() + time::Duration::days(UNATTRIBUTED_DAYS)).unix_timestamp();
    let note = serde_json::to_value(&outcome)?;
    app.store
        .transact(vec![stored::unattributed_op(day, key, &note, expires)?])
        .await?;
    outcome.status = Status::Unattributed;
    Ok(outcome)
}

/// The domains (organization, domain id) a report for `policy_domain` is imported into: those
/// watching the policy domain or a name above it that the delivery is addressed to.
async fn attribute(
    app: &AppState,
    recipients: &Recipients,
    policy_domain: &str,
) -> Result<Vec<(Uuid, Uuid)>, ServiceError> {
    let named: Vec<Uuid> = match recipients {
        Recipients::Envelope(addresses) => addresses
            .iter()
            .filter_map(|a| {
                mailward_domain::domain::report_address_domain(a, &app.config.report_domain)
            })
            .collect(),
        Recipients::Organization(_) => Vec::new(),
    };
    if named.is_empty() && matches!(recipients, Recipients::Envelope(_)) {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let mut name = policy_domain;
    loop {
        for (org, domain) in stored::watchers(app.store.as_ref(), name).await? {
            let addressed = match recipients {
                Recipients::Envelope(_) => named.contains(&domain),
                Recipients::Organization(only) => org == *only,
            };
            if addressed && !found.contains(&(org, domain)) {
                found.push((org, domain));
            }
        }
        match name.split_once('.') {
            Some((_, parent)) if parent.contains('.') => name = parent,
            _ => break,
        }
    }
    Ok(found)
}

/// One report of a delivery, identified, with the domains it is addressed to.
struct Identified {
    identity: ReportIdentity,
    outcome: Outcome,
    /// (organization, domain id) pairs ([`attribute`]).
    targets: Vec<(Uuid, Uuid)>,
}

/// A report's content, as it is stored.
enum Body<'a> {
    Dmarc(&'a FoldedReport),
    Tls(&'a TlsReport),
}

/// Writes one domain's copy of a report (its rows, then the report item that marks it
/// complete), in place of `replacing` when given; false when another delivery of it finished
/// first.
async fn write_report(
    app: &AppState,
    report: &StoredReport,
    replacing: Option<&StoredReport>,
    rows: &BTreeMap<time::Date, Vec<mailward_domain::reports::SourceDay>>,
    tls: Option<&TlsReport>,
) -> Result<bool, ServiceError> {
    if let Some(old) = replacing {
        commit_all(app, stored::row_deletes(app.store.as_ref(), old).await?).await?;
    }
    let mut ops = Vec::new();
    for (day, day_rows) in rows {
        ops.extend(stored::day_ops(report, *day, day_rows)?);
    }
    if let Some(tls) = tls {
        ops.push(mailward_store::tls_reports::put_op(&stored_tls(
            report, tls,
        ))?);
    }
    commit_all(app, ops).await?;
    let mark = stored::report_op(report, replacing.is_some())?;
    match app.store.transact(vec![mark]).await {
        Ok(()) => {
            let (org, domain_id) = (report.org_id, report.domain_id);
            let first_day = rows.keys().next().copied();
            let added = contribution(rows, figures_window(app));
            // A replaced report's figures are recomputed from the rows now stored.
            let added = replacing.is_none().then_some(&added);
            update_figures(app, org, domain_id, first_day, added).await?;
            if report.kind == ReportKind::Dmarc {
                crate::identify::enqueue_identify(app, org, domain_id).await;
            }
            Ok(true)
        }
        // Another delivery of the same report finished first: it is a duplicate.
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Imports one identified report for the domains its delivery was addressed to;
/// `authenticated`: whether its mail passed DKIM aligned with its From domain.
async fn import(
    app: &AppState,
    authenticated: bool,
    report: Identified,
    body: Body<'_>,
    raw_key: Option<&str>,
) -> Result<Outcome, ServiceError> {
    let Identified {
        identity,
        mut outcome,
        targets: watchers,
    } = report;
    let identity = &identity;
    let no_rows = BTreeMap::new();
    let (rows, warnings, tls) = match body {
        Body::Dmarc(r) => (&r.rows, r.header.warnings.as_slice(), None),
        Body::Tls(r) => (&no_rows, &[][..], Some(r)),
    };
    let store = app.store.as_ref();
    let key = identity.key();
    let domain = policy_name(identity);
    if watchers.is_empty() {
        return note_unattributed(app, identity, &key, outcome).await;
    }
    let mut imported = 0;
    for (org, domain_id) in watchers {
        let existing = stored::get(store, org, domain_id, identity.kind, &key).await?;
        // First identity wins, except that an authenticated report takes the place of an
        // unauthenticated one (which anyone could have mailed first to suppress it).
        let replacing = match &existing {
            None => None,
            Some(old) if authenticated && !old.authenticated => Some(old),
            Some(_) => continue,
        };
        let report = StoredReport {
            key: key.clone(),
            org_id: org,
            domain_id,
            kind: identity.kind,
            reporter: identity.reporter.clone(),
            report_id: identity.report_id.clone(),
            policy_domain: domain.clone(),
            begin: identity.begin,
            end: identity.end,
            records: outcome.records,
            messages: outcome.messages,
            raw_key: raw_key.map(str::to_owned),
            warnings: warnings.to_vec(),
            imported_at: app.clock.now(),
            authenticated,
        };
        if write_report(app, &report, replacing, rows, tls).await? {
            imported += 1;
            if tls.is_some() {
                tls_alerts(app, org, domain_id).await;
            }
        }
    }
    outcome.organizations = imported;
    outcome.authenticated = authenticated;
    outcome.status = if imported > 0 {
        Status::Imported
    } else {
        Status::Duplicate
    };
    Ok(outcome)
}

/// Judges the TLS-report alert rules of a domain whose TLS report was just stored (one lost
/// here is judged again at its next TLS report).
async fn tls_alerts(app: &AppState, org: Uuid, domain_id: Uuid) {
    let trigger = mailward_domain::alerts::Trigger::TlsReports;
    if let Err(e) = mailward_services::alerts::evaluate(app, org, domain_id, trigger).await {
        tracing::warn!(domain.id = %domain_id, error = %e, "alert rules could not be evaluated");
    }
}

/// The stored form of a TLS report for one organization's domain.
fn stored_tls(report: &StoredReport, tls: &TlsReport) -> StoredTlsReport {
    let policies = tls
        .policies
        .iter()
        .map(|p| {
            let details = p
                .failure_details
                .iter()
                .map(|d| TlsFailure {
                    result_type: d.result_type.clone(),
                    sending_mta_ip: d.sending_mta_ip.clone(),
                    receiving_mx_hostname: d.receiving_mx_hostname.clone(),
                    receiving_mx_helo: d.receiving_mx_helo.clone(),
                    receiving_ip: d.receiving_ip.clone(),
                    failed_session_count: d.failed_session_count,
                    additional_information: d.additional_information.clone(),
                    failure_reason_code: d.failure_reason_code.clone(),
                })
                .collect();
            let (failure_details, failure_details_truncated) = cap_details(details);
            TlsPolicyResult {
                policy_type: p.policy.policy_type.clone(),
                policy_string: p.policy.policy_string.clone(),
                policy_domain: p.policy.policy_domain.clone(),
                mx_host: p.policy.mx_host.clone(),
                total_successful: p.summary.successful,
                total_failure: p.summary.failed,
                failure_details,
                failure_details_truncated,
            }
        })
        .collect();
    StoredTlsReport {
        id: StoredTlsReport::id_for(report.domain_id, &report.key),
        org_id: report.org_id,
        domain_id: report.domain_id,
        key: report.key.clone(),
        organization_name: report.reporter.clone(),
        report_id: report.report_id.clone(),
        contact_info: tls.contact_info.clone(),
        begin: report.begin,
        end: report.end,
        total_successful: tls.successful(),
        total_failure: tls.failed(),
        policies,
        imported_at: report.imported_at,
        authenticated: report.authenticated,
    }
}

/// The identity and outcome of an aggregate report, or why it cannot be imported.
fn aggregate_outcome(report: &FoldedReport) -> Result<(ReportIdentity, Outcome), String> {
    let h = &report.header;
    let (Some(begin), Some(end)) = (h.begin, h.end) else {
        return Err("the report has no date range".into());
    };
    let reporter = h
        .org_name
        .clone()
        .or_else(|| {
            h.email
                .as_ref()
                .and_then(|e| e.rsplit_once('@').map(|(_, d)| d.to_owned()))
        })
        .unwrap_or_else(|| "unknown".into());
    let identity = ReportIdentity {
        kind: ReportKind::Dmarc,
        reporter: reporter.clone(),
        report_id: h.report_id.clone().unwrap_or_default(),
        policy_domain: h.policy.domain.clone().unwrap_or_default(),
        begin,
        end,
    };
    let outcome = Outcome {
        file: None,
        kind: Some(ReportKind::Dmarc),
        status: Status::Imported,
        reason: None,
        reporter: Some(reporter),
        report_id: h.report_id.clone(),
        policy_domain: h.policy.domain.clone(),
        begin: rfc3339(begin),
        end: rfc3339(end),
        records: report.records,
        messages: report.messages,
        organizations: 0,
        authenticated: false,
    };
    Ok((identity, outcome))
}

/// The identity and outcome of a TLS report, or why it cannot be imported.
fn tls_outcome(report: &TlsReport) -> Result<(ReportIdentity, Outcome), String> {
    let parse = |s: &str| OffsetDateTime::parse(s.trim(), &Rfc3339).map(|t| t.unix_timestamp());
    let (Ok(begin), Ok(end)) = (
        parse(&report.date_range.start),
        parse(&report.date_range.end),
    ) else {
        return Err("the report's date-range is not RFC 3339".into());
    };
    let Some(domain) = report
        .policies
        .iter()
        .find_map(|p| p.policy.policy_domain.clone())
    else {
        return Err("no policy names a policy-domain".into());
    };
    let reporter = report
        .organization_name
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let identity = ReportIdentity {
        kind: ReportKind::Tlsrpt,
        reporter: reporter.clone(),
        report_id: report.report_id.clone(),
        policy_domain: domain.clone(),
        begin,
        end,
    };
    let outcome = Outcome {
        file: None,
        kind: Some(ReportKind::Tlsrpt),
        status: Status::Imported,
        reason: None,
        reporter: Some(reporter),
        report_id: Some(report.report_id.clone()),
        policy_domain: Some(domain),
        begin: rfc3339(begin),
        end: rfc3339(end),
        records: report.policies.len() as u64,
        messages: report.successful() + report.failed(),
        organizations: 0,
        authenticated: false,
    };
    Ok((identity, outcome))
}

/// The name of a delivery's raw object: the identity of the report it holds (the key that
/// makes a second delivery of it a duplicate: one object, however often it comes, and no pass
/// over tens of MB to hash them), or of the reports, hashed together; a delivery holding
/// anything unidentified (refused, a failure report) is named by its content's BLAKE3 hash.
fn raw_name(extracted: &[mailward_reports::Extracted<FoldedReport>], bytes: &[u8]) -> String {
    let identity = |content: &Content<FoldedReport>| match content {
        Content::Aggregate(report) => aggregate_outcome(report).ok().map(|(id, _)| id.key()),
        Content::TlsRpt(report) => tls_outcome(report).ok().map(|(id, _)| id.key()),
        Content::Refused(_) | Content::Failure => None,
    };
    let keys: Option<Vec<String>> = extracted.iter().map(|e| identity(&e.content)).collect();
    match keys.as_deref() {
        Some([key]) => key.clone(),
        Some(keys) if !keys.is_empty() => blake3::hash(keys.join("\n").as_bytes())
            .to_hex()
            .to_string(),
        _ => blake3::hash(bytes).to_hex().to_string(),
    }
}

/// The policy domain a report names, as the name index keeps names.
fn policy_name(identity: &ReportIdentity) -> String {
    identity
        .policy_domain
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Keeps the raw delivery in object storage under `name` ([`raw_name`]), handing the bytes
/// over rather than copying them. The first delivery under a name is kept: a later one with
/// the same report identity (anyone can mail the report address, and report ids are often
/// guessable) never replaces it.
async fn keep_raw(app: &AppState, bytes: bytes::Bytes, name: &str) -> Option<String> {
    let objects = app.objects.as_ref()?;
    let day = stored::day_string(app.clock.now().date());
    let key = format!("reports/raw/{day}/{name}");
    match objects.head(&key).await {
        Ok(Some(_)) => return Some(key),
        Ok(None) => {}
        // Unknown: writing is the safe side (the object is then kept at least once).
        Err(e) => tracing::warn!(error = %e, "could not check for a kept raw report"),
    }
    match objects.put(&key, bytes, "application/octet-stream").await {
        Ok(()) => Some(key),
        Err(e) => {
            tracing::warn!(error = %e, "could not keep a raw report");
            None
        }
    }
}

/// A part of a delivery: a report identified and addressed, or an outcome already known.
enum Part {
    Done(Outcome),
    /// A failure report, read, with the domains it is addressed to.
    Failure(
        Vec<(Uuid, Uuid)>,
        Box<mailward_reports::failure::FailureReport>,
    ),
    Dmarc(Identified, Box<FoldedReport>),
    Tls(Identified, Box<TlsReport>),
}

/// Imports a failure report for its domains ([`crate::failures`]) and says what happened.
async fn failure_outcome(
    app: &AppState,
    authenticated: bool,
    targets: Vec<(Uuid, Uuid)>,
    report: mailward_reports::failure::FailureReport,
    content_hash: &str,
) -> Result<Outcome, ServiceError> {
    let mut outcome = Outcome::refused(Some(ReportKind::Failure), "");
    outcome.reason = None;
    outcome.policy_domain = report.reported_domain.clone();
    outcome.authenticated = authenticated;
    (outcome.records, outcome.messages) = (1, 1);
    if targets.is_empty() {
        outcome.status = Status::Unattributed;
        return Ok(outcome);
    }
    let imported =
        crate::failures::import(app, authenticated, targets, report, content_hash).await?;
    outcome.organizations = imported;
    outcome.status = if imported > 0 {
        Status::Imported
    } else {
        Status::Duplicate
    };
    Ok(outcome)
}

/// A failure report read from the whole delivery, addressed like the other reports by its
/// `Reported-Domain`.
async fn identify_failure(
    app: &AppState,
    delivery: &Delivery,
    bytes: &[u8],
) -> Result<Part, ServiceError> {
    let refused = |why: &str| Part::Done(Outcome::refused(Some(ReportKind::Failure), why));
    let Some(report) = mailward_reports::failure::parse(bytes) else {
        return Ok(refused("the failure report could not be read"));
    };
    let Some(domain) = report
        .reported_domain
        .as_deref()
        .map(str::to_ascii_lowercase)
    else {
        return Ok(refused("the failure report names no Reported-Domain"));
    };
    let targets = attribute(app, &delivery.recipients, domain.trim_end_matches('.')).await?;
    Ok(Part::Failure(targets, Box::new(report)))
}

/// Each report of a delivery identified, with the domains it is addressed to.
async fn identify_parts(
    app: &AppState,
    delivery: &Delivery,
    extracted: Vec<mailward_reports::Extracted<FoldedReport>>,
    bytes: &[u8],
) -> Result<Vec<Part>, ServiceError> {
    let mut parts = Vec::with_capacity(extracted.len());
    for extracted in extracted {
        parts.push(match extracted.content {
            Content::Refused(why) => Part::Done(Outcome::refused(None, why)),
            Content::Failure => identify_failure(app, delivery, bytes).await?,
            Content::Aggregate(report) => match aggregate_outcome(&report) {
                Ok((identity, outcome)) => {
                    let targets =
                        attribute(app, &delivery.recipients, &policy_name(&identity)).await?;
                    Part::Dmarc(
                        Identified {
                            identity,
                            outcome,
                            targets,
                        },
                        Box::new(report),
                    )
                }
                Err(why) => Part::Done(Outcome::refused(Some(ReportKind::Dmarc), why)),
            },
            Content::TlsRpt(report) => match tls_outcome(&report) {
                Ok((identity, outcome)) => {
                    let targets =
                        attribute(app, &delivery.recipients, &policy_name(&identity)).await?;
                    Part::Tls(
                        Identified {
                            identity,
                            outcome,
                            targets,
                        },
                        report,
                    )
                }
                Err(why) => Part::Done(Outcome::refused(Some(ReportKind::Tlsrpt), why)),
            },
        });
    }
    Ok(parts)
}

/// Ingests one delivery: every report in it, each with its outcome. Failures of one report
/// never stop the others; only a store outage fails the call. An owned `Vec` is handed over to
/// be kept raw as it is, a borrowed one copied once ([`ingest_shared`] copies nothing).
pub async fn ingest(
    app: &AppState,
    bytes: impl Into<std::borrow::Cow<'_, [u8]>>,
    delivery: &Delivery,
    limits: &Limits,
) -> Result<Vec<Outcome>, ServiceError> {
    let bytes = match bytes.into() {
        std::borrow::Cow::Owned(owned) => bytes::Bytes::from(owned),
        std::borrow::Cow::Borrowed(borrowed) => bytes::Bytes::copy_from_slice(borrowed),
    };
    ingest_shared(app, bytes, delivery, limits).await
}

/// Reads all of `file` (of about `size` bytes) into `buffer`, reusing its memory: a caller
/// importing many files reads each into the buffer the last one was taken back in (see
/// [`ingest_shared`]). A buffer too small is replaced, not grown: growing copies the old
/// contents into fresh memory for nothing, and it is given an eighth more room, so that files
/// of about the same size, as one reporter's are, find it large enough.
pub fn read_reusing(
    buffer: &mut Vec<u8>,
    file: &mut impl std::io::Read,
    size: u64,
) -> std::io::Result<()> {
    buffer.clear();
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    if buffer.capacity() < size {
        *buffer = Vec::with_capacity(size.saturating_add(size / 8));
    }
    file.read_to_end(buffer)?;
    Ok(())
}

/// [`ingest`] of a shared buffer: read in place, and kept raw by handing the same buffer to
/// object storage. A caller reading many files can take its buffer back when this returns
/// (`Bytes::try_into_mut`: the store has let go of it) and read the next file into it, and
/// one message of an mbox is a slice of the file's buffer.
pub async fn ingest_shared(
    app: &AppState,
    bytes: bytes::Bytes,
    delivery: &Delivery,
    limits: &Limits,
) -> Result<Vec<Outcome>, ServiceError> {
    let extracted = mailward_reports::extract_with(&bytes, limits, fold_aggregate);
    let mut name = raw_name(&extracted, &bytes);
    let parts = identify_parts(app, delivery, extracted, &bytes).await?;
    // Only what is addressed to some domain is checked, kept and imported: junk, refusals and
    // reports for no domain of the recipients cost no DNS and leave no copy behind.
    let addressed = parts.iter().any(|p| match p {
        Part::Dmarc(r, _) | Part::Tls(r, _) => !r.targets.is_empty(),
        Part::Failure(targets, _) => !targets.is_empty(),
        Part::Done(_) => false,
    });
    let authenticated = addressed
        && match delivery.authentication {
            Authentication::Verdict(verdict) => verdict,
            Authentication::Verify => {
                mailward_services::header_analysis::dkim_aligned_with_from(app, &bytes).await
            }
        };
    // A failure report has no identity of its own: the delivery's content names it, so the
    // same message delivered again is a duplicate.
    let content_hash = if parts.iter().any(|p| matches!(p, Part::Failure(..))) {
        blake3::hash(&bytes).to_hex().to_string()
    } else {
        String::new()
    };
    // A failure report's delivery holds the original message, body and all (personal data):
    // only its headers are kept, in the report, never the raw mail.
    let keeps_raw = parts.iter().any(|p| match p {
        Part::Dmarc(r, _) | Part::Tls(r, _) => !r.targets.is_empty(),
        Part::Failure(..) | Part::Done(_) => false,
    });
    let raw_key = if keeps_raw {
        if authenticated {
            // Its own object: an unauthenticated delivery of the same identity kept first
            // (the copy a forger would want shown) never stands for it.
            name.push_str(".authenticated");
        }
        keep_raw(app, bytes, &name).await
    } else {
        None
    };
    let mut outcomes = Vec::with_capacity(parts.len());
    for part in parts {
        outcomes.push(match part {
            Part::Done(outcome) => outcome,
            Part::Dmarc(report, body) => {
                import(
                    app,
                    authenticated,
                    report,
                    Body::Dmarc(&body),
                    raw_key.as_deref(),
                )
                .await?
            }
            Part::Failure(targets, report) => {
                failure_outcome(app, authenticated, targets, *report, &content_hash).await?
            }
            Part::Tls(report, body) => {
                import(
                    app,
                    authenticated,
                    report,
                    Body::Tls(&body),
                    raw_key.as_deref(),
                )
                .await?
            }
        });
    }
    for outcome in &outcomes {
        mailward_services::metrics::ingested(outcome.status.as_str());
    }
    Ok(outcomes)
}

impl Status {
    /// The outcome's name, as the JSON line and the metrics write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Imported => "imported",
            Status::Duplicate => "duplicate",
            Status::Unattributed => "unattributed",
            Status::Refused => "refused",
        }
    }
}

/// Imports a report uploaded over HTTPS (the job [`IngestUpload`](mailward_app::jobs::IngestUpload)):
/// as mail to the report address its path named, unauthenticated (nothing signs an upload), so
/// it never displaces an authenticated copy. The upload object goes once imported; a missing
/// one was imported by an earlier run.
pub async fn ingest_upload(
    app: &AppState,
    job: mailward_app::jobs::IngestUpload,
) -> anyhow::Result<()> {
    let Some(objects) = app.objects.as_ref() else {
        anyhow::bail!("no object store is configured");
    };
    let Some(bytes) = objects.get(&job.object_key).await? else {
        return Ok(());
    };
    let delivery = Delivery::mail_to([job.recipient.clone()]).authenticated(false);
    let outcomes = ingest(app, bytes, &delivery, &Limits::default()).await?;
    for outcome in &outcomes {
        tracing::info!(upload = %job.object_key, status = outcome.status.as_str(), reason = outcome.reason.as_deref().unwrap_or(""), "uploaded report");
    }
    objects.delete(&job.object_key).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_delivery_is_named_by_the_identity_of_its_report_else_by_its_content() {
        let xml = br#"<feedback><report_metadata><org_name>R</org_name><report_id>7</report_id>
          <date_range><begin>1700006400</begin><end>1700092799</end></date_range></report_metadata>
          <policy_published><domain>example.com</domain></policy_published>
          <record><row><source_ip>192.0.2.1</source_ip><count>1</count></row></record></feedback>"#;
        let limits = Limits::default();
        let name = |bytes: &[u8]| {
            raw_name(
                &mailward_reports::extract_with(bytes, &limits, fold_aggregate),
                bytes,
            )
        };
        let identity = ReportIdentity {
            kind: ReportKind::Dmarc,
            reporter: "R".into(),
            report_id: "7".into(),
            policy_domain: "example.com".into(),
            begin: 1_700_006_400,
            end: 1_700_092_799,
        };
        assert_eq!(name(xml), identity.key());
        // The same report in another wrapping is the same object.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, xml).unwrap();
        assert_eq!(name(&gz.finish().unwrap()), identity.key());
        // What holds no identified report is named by its bytes.
        assert_eq!(name(b"unused"), blake3::hash(b"unused").to_hex().as_str());
        let no_range = br#"<feedback><report_metadata><report_id>7</report_id></report_metadata>
          <policy_published><domain>example.com</domain></policy_published></feedback>"#;
        assert_eq!(name(no_range), blake3::hash(no_range).to_hex().as_str());
    }

    #[test]
    fn a_read_buffer_is_reused_when_large_enough_and_replaced_with_room_when_not() {
        let mut buffer = Vec::new();
        read_reusing(&mut buffer, &mut &[7u8; 800][..], 800).unwrap();
        assert_eq!(buffer, [7u8; 800]);
        assert!(buffer.capacity() >= 900, "an eighth more room");
        let at = buffer.as_ptr();
        read_reusing(&mut buffer, &mut &[1u8; 850][..], 850).unwrap();
        assert_eq!((buffer.as_slice(), buffer.as_ptr()), (&[1u8; 850][..], at));
        // A size that was wrong (the file grew) still reads all of it.
        read_reusing(&mut buffer, &mut &[2u8; 5000][..], 10).unwrap();
        assert_eq!(buffer, [2u8; 5000]);
    }
}
