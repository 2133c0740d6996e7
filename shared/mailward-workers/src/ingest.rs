//! Ingestion: one delivery (an email, a file) in, each report in it imported for every
//! organization watching its policy domain, exactly once. What cannot be imported says why.
//!
//! Per organization a report becomes rows per UTC day and source ([`SourceDay`]); the raw
//! bytes are kept in object storage (never served by the API). Identity is reporter + report
//! id + policy domain + date range; importing the same report again changes nothing.

use mailward_domain::reports::{DaySpread, ReportIdentity, ReportKind, SourceDay, StoredReport};
use mailward_domain::store::WriteOp;
use mailward_domain::tls_reports::{StoredTlsReport, TlsFailure, TlsPolicyResult, cap_details};
use mailward_reports::aggregate::XmlInput;
use mailward_reports::aggregate::{
    self, AggregateError, AggregateReport, Aligned, Disposition, DkimResult, Header, OverrideKind,
    Record, Word,
};
use mailward_reports::tlsrpt::TlsReport;
use mailward_reports::{Content, Limits};
use mailward_services::error::ServiceError;
use mailward_services::reports::figures::{contribution, figures_window, update_figures};
use mailward_services::state::AppState;
use mailward_store::reports as stored;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Writes per transaction when storing rows (well under the store's limit).
const OPS_PER_COMMIT: usize = 25;

/// Days an unattributed report's note is kept.
const UNATTRIBUTED_DAYS: i64 = 400;

/// What happened to one report of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Imported for at least one organization.
    Imported,
    /// Every watching organization had it already.
    Duplicate,
    /// No organization watches its policy domain (kept as a count for the operator).
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
        }
    }
}

fn rfc3339(t: i64) -> Option<String> {
    OffsetDateTime::from_unix_timestamp(t)
        .ok()?
        .format(&Rfc3339)
        .ok()
}

/// The per-day, per-source rows of an aggregate report.
pub fn rows_of(report: &AggregateReport) -> BTreeMap<time::Date, Vec<SourceDay>> {
    let mut fold = RowFold::default();
    for record in &report.records {
        fold.fold(&report.header, record);
    }
    fold.rows()
}

/// An aggregate report as ingestion reads it: the header, and the records already folded into
/// the per-day rows ([`rows_of`]) as they were read, none of them kept.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedReport {
    pub header: Header,
    /// Records read.
    pub records: u64,
    /// The sum of their counts.
    pub messages: u64,
    pub rows: BTreeMap<time::Date, Vec<SourceDay>>,
}

/// Reads one aggregate report's XML as a stream, folding each record into its rows at once.
/// A record that comes before the report's date range (or, without its own header-from, before
/// the policy domain) waits for the end of the report; reporters write the metadata first.
pub fn fold_aggregate(
    input: XmlInput<'_>,
    limits: &Limits,
) -> Result<FoldedReport, AggregateError> {
    let mut fold = RowFold {
        rows_per_day: match input {
            XmlInput::Bytes(xml) => (xml.len() / BYTES_PER_RECORD).min(MAX_ROWS_RESERVED),
            XmlInput::Stream(_) => 0,
        },
        ..RowFold::default()
    };
    let (mut records, mut messages) = (0u64, 0u64);
    let mut early = Vec::new();
    let header = aggregate::parse_streaming_with(input, limits, |record, header| {
        records += 1;
        messages += record.count;
        let dated = header.begin.is_some() && header.end.is_some();
        if dated && (record.header_from.is_some() || header.policy.domain.is_some()) {
            fold.fold(header, record);
        } else {
            early.push(record.clone());
        }
    })?;
    for record in &early {
        fold.fold(&header, record);
    }
    Ok(FoldedReport {
        header,
        records,
        messages,
        rows: fold.rows(),
    })
}

/// Bytes of XML per record in the smallest reports of the usual shape (one DKIM and one SPF
/// result; pretty-printed ones run to 500-700): the rows a report in memory may need are
/// reserved from its size, so a day's rows and index are not grown and copied as they fill.
/// What is reserved and not used is address space, never touched.
const BYTES_PER_RECORD: usize = 384;

/// Rows reserved per day at most, whatever the report's size.
const MAX_ROWS_RESERVED: usize = 1 << 20;

/// Per-day rows under construction, found through an index by source IP and header-from (the
/// header-from interned), so folding a record hashes an address and allocates nothing. The
/// indexes hash with foldhash: seeded at random per process, so a report cannot be written to
/// collide, and several times cheaper than SipHash for these small keys.
#[derive(Default)]
struct RowFold {
    /// Rows to reserve for a day (an estimate from the report's size; 0: grown as needed).
    rows_per_day: usize,
    /// The hashing of the days' indexes.
    hasher: foldhash::fast::RandomState,
    by_day: BTreeMap<time::Date, DayRows>,
    /// Every header-from seen, numbered.
    header_froms: foldhash::HashMap<String, u32>,
    /// The days of the date range of the records being folded (one report's: worked out once).
    spread: Option<((i64, i64), DaySpread)>,
    /// The DKIM signer being looked up (the buffer is reused).
    signer: String,
}

/// One day's rows, and where each source IP and header-from's row is. An IPv4 source (nearly
/// all of them) is found by one 64-bit key, the address and the header-from's number, through
/// a table of row positions alone (4 bytes an entry; each key is kept in `keys`, beside its
/// row): a new source is an insert at a random place in the index, and an index of tens of
/// thousands of sources this small stays in the processor's cache, where one holding the keys
/// missed it on nearly every insert. Any other source by the whole key.
struct DayRows {
    by_v4: hashbrown::HashTable<u32>,
    /// The key of each row, by position (IPv4 rows only are looked up by it).
    keys: Vec<u64>,
    by_other: foldhash::HashMap<(Option<IpAddr>, u32), u32>,
    rows: Vec<SourceDay>,
}

impl DayRows {
    /// Room for `rows` rows (the index grows as it fills: reserved ahead, it would be larger
    /// than it needs to be, and miss the cache more).
    fn with_capacity(rows: usize) -> Self {
        Self {
            by_v4: hashbrown::HashTable::new(),
            keys: Vec::with_capacity(rows),
            by_other: foldhash::HashMap::default(),
            rows: Vec::with_capacity(rows),
        }
    }

    /// The position of the row of `source` and the header-from numbered `from_id`, added
    /// (empty) by `new_row` when there is none yet.
    fn row_of(
        &mut self,
        hasher: &foldhash::fast::RandomState,
        source: Option<IpAddr>,
        from_id: u32,
        new_row: impl FnOnce() -> SourceDay,
    ) -> &mut SourceDay {
        use std::hash::BuildHasher as _;
        let Self {
            by_v4,
            keys,
            by_other,
            rows,
        } = self;
        // One report's rows of a day: far fewer than 2^32.
        let next = rows.len() as u32;
        let found = match source {
            Some(IpAddr::V4(v4)) => {
                let key = u64::from(u32::from(v4)) << 32 | u64::from(from_id);
                let hash = hasher.hash_one(key);
                match by_v4.find(hash, |&at| keys[at as usize] == key) {
                    Some(&at) => Some(at),
                    None => {
                        keys.push(key);
                        by_v4.insert_unique(hash, next, |&at| hasher.hash_one(keys[at as usize]));
                        None
                    }
                }
            }
            other => match by_other.entry((other, from_id)) {
                std::collections::hash_map::Entry::Occupied(at) => Some(*at.get()),
                std::collections::hash_map::Entry::Vacant(vacant) => {
                    vacant.insert(next);
                    // Never looked up: IPv4 rows alone are found by their key.
                    keys.push(u64::MAX);
                    None
                }
            },
        };
        let at = match found {
            Some(at) => at as usize,
            None => {
                rows.push(new_row());
                next as usize
            }
        };
        &mut rows[at]
    }
}

impl RowFold {
    /// Adds one record, spread over the days of the header's date range.
    fn fold(&mut self, header: &Header, record: &Record) {
        let Self {
            rows_per_day,
            hasher,
            by_day,
            header_froms,
            spread,
            signer,
        } = self;
        let range = (header.begin.unwrap_or(0), header.end.unwrap_or(0));
        let spread = match spread {
            Some((r, days)) if *r == range => days,
            _ => &spread.insert((range, DaySpread::new(range.0, range.1))).1,
        };
        // Forwarded: the receiver's own override says so, or it overrode by local policy
        // because an ARC chain vouched for the forwarder (Gmail and Microsoft write
        // `local_policy` with a comment such as `arc=pass`).
        let forwarded = record.reasons.iter().any(|r| match r.kind {
            Word::Known(
                OverrideKind::Forwarded
                | OverrideKind::TrustedForwarder
                | OverrideKind::MailingList,
            ) => true,
            Word::Known(OverrideKind::LocalPolicy) => r
                .comment
                .as_deref()
                .is_some_and(|c| c.to_ascii_lowercase().contains("arc=pass")),
            _ => false,
        });
        let header_from = record
            .header_from
            .as_deref()
            .or(header.policy.domain.as_deref())
            .unwrap_or_default();
        let from_id = match header_froms.get(header_from) {
            Some(id) => *id,
            None => {
                let id = header_froms.len() as u32;
                header_froms.insert(header_from.to_owned(), id);
                id
            }
        };
        let dkim = matches!(record.dkim, Some(Word::Known(Aligned::Pass)));
        let spf = matches!(record.spf, Some(Word::Known(Aligned::Pass)));
        let evaluated = |w: &Option<Word<Aligned>>| matches!(w, Some(Word::Known(_)));
        let undetermined = !evaluated(&record.dkim) && !evaluated(&record.spf);
        for (day, count) in spread.split(record.count) {
            let row = by_day
                .entry(day)
                .or_insert_with(|| DayRows::with_capacity(*rows_per_day))
                .row_of(hasher, record.source_ip, from_id, || SourceDay {
                    source_ip: record.source_ip.map(ip_text).unwrap_or_default(),
                    header_from: header_from.to_owned(),
                    ..SourceDay::default()
                });
            if row.envelope_from.is_none() {
                row.envelope_from = record.envelope_from.clone();
            }
            // Passing signatures first: they say who really sent the mail.
            for passing in [true, false] {
                for d in &record.dkim_results {
                    if matches!(d.result, Some(Word::Known(DkimResult::Pass))) != passing {
                        continue;
                    }
                    let Some(domain) = &d.domain else { continue };
                    signer.clear();
                    signer.push_str(domain);
                    if let Some(s) = &d.selector {
                        signer.push('/');
                        signer.push_str(s);
                    }
                    if !row.dkim_signers.iter().any(|s| s == signer) {
                        row.dkim_signers.push(signer.clone());
                    }
                    if passing && !row.dkim_passing.iter().any(|s| s == signer) {
                        row.dkim_passing.push(signer.clone());
                    }
                }
            }
            row.volume += count;
            if dkim || spf {
                row.dmarc_pass += count;
            }
            if dkim {
                row.dkim_aligned_pass += count;
            }
            if spf {
                row.spf_aligned_pass += count;
            }
            match record.disposition {
                Some(Word::Known(Disposition::Quarantine)) => row.quarantined += count,
                Some(Word::Known(Disposition::Reject)) => row.rejected += count,
                _ => {}
            }
            if forwarded {
                row.forwarded += count;
            }
            if undetermined {
                row.undetermined += count;
            }
        }
    }

    /// Each day's rows, in the order the report first named them (the same report always
    /// gives the same rows in the same order, so its stored chunks are the same items).
    fn rows(self) -> BTreeMap<time::Date, Vec<SourceDay>> {
        self.by_day
            .into_iter()
            .map(|(day, DayRows { rows, .. })| (day, rows))
            .collect()
    }
}

/// An address as text, as `Display` writes it; IPv4 (most sources) without the formatting
/// machinery, which was a measurable share of folding a report whose sources are all new.
fn ip_text(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        return ip.to_string();
    };
    let mut text = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            text.push('.');
        }
        if octet >= 100 {
            text.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            text.push(char::from(b'0' + octet / 10 % 10));
        }
        text.push(char::from(b'0' + octet % 10));
    }
    text
}

/// Commits writes in transactions of a bounded size.
async fn commit_all(app: &AppState, ops: Vec<WriteOp>) -> Result<(), ServiceError> {
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

/// Imports one identified report for every organization watching its domain.
async fn import(
    app: &AppState,
    identity: &ReportIdentity,
    mut outcome: Outcome,
    rows: &BTreeMap<time::Date, Vec<SourceDay>>,
    warnings: &[String],
    raw_key: Option<&str>,
    tls: Option<&TlsReport>,
) -> Result<Outcome, ServiceError> {
    let store = app.store.as_ref();
    let key = identity.key();
    let domain = identity
        .policy_domain
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let watchers = stored::watchers(store, &domain).await?;
    if watchers.is_empty() {
        let day = OffsetDateTime::from_unix_timestamp(identity.begin)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
            .date();
        let expires = (app.clock.now() + time::Duration::days(UNATTRIBUTED_DAYS)).unix_timestamp();
        let note = serde_json::to_value(&outcome)?;
        app.store
            .transact(vec![stored::unattributed_op(day, &key, &note, expires)?])
            .await?;
        outcome.status = Status::Unattributed;
        return Ok(outcome);
    }
    let mut imported = 0;
    for (org, domain_id) in watchers {
        if stored::exists(store, org, domain_id, identity.kind, &key).await? {
            continue;
        }
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
        };
        let mut ops = Vec::new();
        for (day, day_rows) in rows {
            ops.extend(stored::day_ops(&report, *day, day_rows)?);
        }
        if let Some(tls) = tls {
            ops.push(mailward_store::tls_reports::put_op(&stored_tls(
                &report, tls,
            ))?);
        }
        commit_all(app, ops).await?;
        match app.store.transact(vec![stored::report_op(&report)?]).await {
            Ok(()) => {
                imported += 1;
                let first_day = rows.keys().next().copied();
                let added = contribution(rows, figures_window(app));
                update_figures(app, org, domain_id, first_day, Some(&added)).await?;
                if identity.kind == ReportKind::Dmarc {
                    crate::identify::enqueue_identify(app, org, domain_id).await;
                }
            }
            // Another delivery of the same report finished first: it is a duplicate.
            Err(e) if e.is_conflict() => {}
            Err(e) => return Err(e.into()),
        }
    }
    outcome.organizations = imported;
    outcome.status = if imported > 0 {
        Status::Imported
    } else {
        Status::Duplicate
    };
    Ok(outcome)
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

/// Ingests one delivery: every report in it, each with its outcome. Failures of one report
/// never stop the others; only a store outage fails the call. An owned `Vec` is handed over to
/// be kept raw as it is, a borrowed one copied once ([`ingest_shared`] copies nothing).
pub async fn ingest(
    app: &AppState,
    bytes: impl Into<std::borrow::Cow<'_, [u8]>>,
    limits: &Limits,
) -> Result<Vec<Outcome>, ServiceError> {
    let bytes = match bytes.into() {
        std::borrow::Cow::Owned(owned) => bytes::Bytes::from(owned),
        std::borrow::Cow::Borrowed(borrowed) => bytes::Bytes::copy_from_slice(borrowed),
    };
    ingest_shared(app, bytes, limits).await
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
    limits: &Limits,
) -> Result<Vec<Outcome>, ServiceError> {
    let extracted = mailward_reports::extract_with(&bytes, limits, fold_aggregate);
    let name = raw_name(&extracted, &bytes);
    let raw_key = keep_raw(app, bytes, &name).await;
    let mut outcomes = Vec::new();
    for extracted in extracted {
        let outcome = match extracted.content {
            Content::Refused(why) => Outcome::refused(None, why),
            Content::Failure => Outcome::refused(
                Some(ReportKind::Failure),
                "failure reports (ARF) are recognised and counted, not imported",
            ),
            Content::Aggregate(report) => match aggregate_outcome(&report) {
                Ok((identity, outcome)) => {
                    import(
                        app,
                        &identity,
                        outcome,
                        &report.rows,
                        &report.header.warnings,
                        raw_key.as_deref(),
                        None,
                    )
                    .await?
                }
                Err(why) => Outcome::refused(Some(ReportKind::Dmarc), why),
            },
            Content::TlsRpt(report) => match tls_outcome(&report) {
                Ok((identity, outcome)) => {
                    import(
                        app,
                        &identity,
                        outcome,
                        &BTreeMap::new(),
                        &[],
                        raw_key.as_deref(),
                        Some(&report),
                    )
                    .await?
                }
                Err(why) => Outcome::refused(Some(ReportKind::Tlsrpt), why),
            },
        };
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_display_writes_them() {
        for n in (0..=u32::MAX)
            .step_by(65_521)
            .chain([0, 1, 9, 10, 99, 100, 255, u32::MAX])
        {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(n));
            assert_eq!(ip_text(ip), ip.to_string());
        }
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(ip_text(v6), "2001:db8::1");
    }

    #[test]
    fn an_arc_vouched_local_policy_override_counts_as_forwarded() {
        let xml = br#"<feedback><report_metadata><org_name>google.com</org_name><report_id>2</report_id>
          <date_range><begin>1700006400</begin><end>1700092799</end></date_range></report_metadata>
          <policy_published><domain>example.com</domain><p>reject</p></policy_published>
          <record><row><source_ip>192.0.2.7</source_ip><count>3</count><policy_evaluated>
            <disposition>none</disposition><dkim>fail</dkim><spf>fail</spf>
            <reason><type>local_policy</type><comment>arc=pass as.1.google.com=pass</comment></reason></policy_evaluated></row>
            <identifiers><header_from>example.com</header_from></identifiers></record>
          <record><row><source_ip>192.0.2.8</source_ip><count>2</count><policy_evaluated>
            <disposition>none</disposition><dkim>fail</dkim><spf>fail</spf>
            <reason><type>local_policy</type><comment>sampled</comment></reason></policy_evaluated></row>
            <identifiers><header_from>example.com</header_from></identifiers></record>
        </feedback>"#;
        let report = mailward_reports::aggregate::parse(xml, &Limits::default()).unwrap();
        let rows = rows_of(&report);
        let all: Vec<&SourceDay> = rows.values().flatten().collect();
        let of = |ip: &str| all.iter().find(|r| r.source_ip == ip).unwrap().forwarded;
        assert_eq!((of("192.0.2.7"), of("192.0.2.8")), (3, 0));
    }

    #[test]
    fn rows_group_by_day_and_source_and_spread_long_reports() {
        let xml = br#"<feedback><report_metadata><org_name>R</org_name><report_id>1</report_id>
          <date_range><begin>1700006400</begin><end>1700179199</end></date_range></report_metadata>
          <policy_published><domain>example.com</domain><p>none</p></policy_published>
          <record><row><source_ip>192.0.2.1</source_ip><count>5</count><policy_evaluated>
            <disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
            <identifiers><header_from>example.com</header_from></identifiers>
            <auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>pass</result></dkim></auth_results></record>
          <record><row><source_ip>192.0.2.1</source_ip><count>1</count><policy_evaluated>
            <disposition>reject</disposition><dkim>fail</dkim><spf>fail</spf>
            <reason><type>forwarded</type></reason></policy_evaluated></row>
            <identifiers><header_from>example.com</header_from></identifiers></record>
        </feedback>"#;
        let report = mailward_reports::aggregate::parse(xml, &Limits::default()).unwrap();
        let rows = rows_of(&report);
        assert_eq!(rows.len(), 2, "two UTC days");
        let total: u64 = rows.values().flatten().map(|r| r.volume).sum();
        assert_eq!(total, 6);
        let first = &rows.values().next().unwrap()[0];
        assert_eq!(
            (first.volume, first.dmarc_pass, first.dkim_aligned_pass),
            (4, 3, 3)
        );
        assert_eq!((first.rejected, first.forwarded), (1, 1));
        assert_eq!(first.dkim_signers, ["example.com/s1"]);
    }

    #[test]
    fn a_source_is_one_row_per_address_and_header_from_whatever_its_address() {
        let record = |ip: &str, from: &str| {
            let ip = if ip.is_empty() {
                String::new()
            } else {
                format!("<source_ip>{ip}</source_ip>")
            };
            format!(
                "<record><row>{ip}<count>1</count></row>\
                 <identifiers><header_from>{from}</header_from></identifiers></record>"
            )
        };
        let mut xml = String::from(
            "<feedback><report_metadata><report_id>1</report_id><date_range>\
             <begin>1700006400</begin><end>1700092799</end></date_range></report_metadata>\
             <policy_published><domain>example.com</domain></policy_published>",
        );
        for (ip, from) in [
            ("192.0.2.1", "example.com"),
            ("2001:db8::1", "example.com"),
            ("", "example.com"),
            ("192.0.2.1", "example.com"),
            ("192.0.2.1", "news.example.com"),
            ("2001:db8::1", "example.com"),
            ("", "example.com"),
            ("0.0.0.1", "example.com"),
            ("::1", "example.com"),
        ] {
            xml.push_str(&record(ip, from));
        }
        xml.push_str("</feedback>");
        let report =
            mailward_reports::aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap();
        let rows = rows_of(&report);
        let day = rows.values().next().unwrap();
        let got: Vec<(&str, &str, u64)> = day
            .iter()
            .map(|r| (r.source_ip.as_str(), r.header_from.as_str(), r.volume))
            .collect();
        assert_eq!(
            got,
            [
                ("192.0.2.1", "example.com", 2),
                ("2001:db8::1", "example.com", 2),
                ("", "example.com", 2),
                ("192.0.2.1", "news.example.com", 1),
                ("0.0.0.1", "example.com", 1),
                ("::1", "example.com", 1),
            ]
        );
    }

    #[test]
    fn thousands_of_sources_keep_one_row_each_as_the_index_grows() {
        let mut xml = String::from(
            "<feedback><report_metadata><report_id>1</report_id><date_range>\
             <begin>1700006400</begin><end>1700092799</end></date_range></report_metadata>\
             <policy_published><domain>example.com</domain></policy_published>",
        );
        // 3,000 IPv4 sources under two header-froms, each named three times, in an order that
        // revisits early sources after the index has grown many times; and IPv6 among them.
        let source = |i: u32| -> String {
            if i.is_multiple_of(97) {
                format!("2001:db8::{i:x}")
            } else {
                std::net::Ipv4Addr::from(0x0a00_0000 + i * 7919).to_string()
            }
        };
        for round in 1..=3u32 {
            for i in 0..3000u32 {
                let from = if i % 2 == 0 {
                    "example.com"
                } else {
                    "news.example.com"
                };
                xml.push_str(&format!(
                    "<record><row><source_ip>{}</source_ip><count>{round}</count></row>\
                     <identifiers><header_from>{from}</header_from></identifiers></record>",
                    source(i)
                ));
            }
        }
        xml.push_str("</feedback>");
        let folded = fold_aggregate(xml.as_bytes().into(), &Limits::default()).unwrap();
        let day = folded.rows.values().next().unwrap();
        assert_eq!(day.len(), 3000, "one row per source and header-from");
        for (i, row) in (0..3000u32).zip(day) {
            let from = if i % 2 == 0 {
                "example.com"
            } else {
                "news.example.com"
            };
            let ip: IpAddr = source(i).parse().unwrap();
            assert_eq!(
                (row.source_ip.as_str(), row.header_from.as_str(), row.volume),
                (ip.to_string().as_str(), from, 6),
                "source {i}, in the order first named"
            );
        }
        assert_eq!(
            folded.rows,
            rows_of(
                &mailward_reports::aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap()
            )
        );
    }

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

    #[test]
    fn the_streaming_fold_gives_the_whole_reports_rows_even_with_records_first() {
        let metadata = r#"<report_metadata><org_name>R</org_name><report_id>1</report_id>
          <date_range><begin>1700006400</begin><end>1700179199</end></date_range></report_metadata>
          <policy_published><domain>example.com</domain><p>none</p></policy_published>"#;
        let records = r#"<record><row><source_ip>192.0.2.1</source_ip><count>5</count><policy_evaluated>
            <disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
            <identifiers><header_from>example.com</header_from></identifiers></record>
          <record><row><source_ip>192.0.2.2</source_ip><count>3</count><policy_evaluated>
            <disposition>quarantine</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row></record>"#;
        for xml in [
            format!("<feedback>{metadata}{records}</feedback>"),
            format!("<feedback>{records}{metadata}</feedback>"),
        ] {
            let whole =
                mailward_reports::aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap();
            let folded = fold_aggregate(xml.as_bytes().into(), &Limits::default()).unwrap();
            assert_eq!(folded.rows, rows_of(&whole), "{xml}");
            assert_eq!((folded.records, folded.messages), (2, 8));
            assert_eq!(folded.header, whole.header);
            let days: Vec<_> = folded.rows.values().map(Vec::len).collect();
            assert_eq!(
                days,
                [2, 2],
                "spread over both days, the policy domain as header-from"
            );
        }
    }
}
