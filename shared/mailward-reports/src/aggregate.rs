//! DMARC aggregate reports (RFC 7489 appendix C, RFC 9990): a streaming, lenient reader over
//! quick-xml events.
//!
//! Lenient where the wild demands it (LESSONS.md): elements are matched by local name, so every
//! namespace (none, the 2.0 namespace, prefixed roots) reads the same; unknown elements are
//! skipped; enum words are compared case-insensitively and unknown ones are kept as
//! `Unknown(word)` with a warning; empty elements read as absent; a field that does not parse
//! loses that field, not the report. Never lenient about safety: no DTD is processed (no
//! entity of any kind beyond the XML predefined ones is expanded), nesting is capped, and the
//! records are handed to a callback one at a time so a report of any size reads in bounded
//! memory.

use crate::Limits;
use quick_xml::Reader;
use quick_xml::events::Event;
use std::io::BufRead;
use std::net::IpAddr;

/// An enum word the report used: known, or kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word<T> {
    /// One of the RFC's values.
    Known(T),
    /// Anything else (kept, lower-cased, for the operator; counted as unknown).
    Unknown(String),
}

/// `disposition`: what the receiver did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    None,
    Quarantine,
    Reject,
}

/// The DMARC-aligned result of `policy_evaluated/dkim` and `/spf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aligned {
    Pass,
    Fail,
}

/// A DKIM authentication result (RFC 8601 words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DkimResult {
    None,
    Pass,
    Fail,
    Policy,
    Neutral,
    TempError,
    PermError,
}

/// An SPF authentication result (RFC 7208 words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpfResult {
    None,
    Neutral,
    Pass,
    Fail,
    SoftFail,
    TempError,
    PermError,
}

/// Why a receiver overrode the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideKind {
    Forwarded,
    SampledOut,
    TrustedForwarder,
    MailingList,
    LocalPolicy,
    Other,
}

/// One `reason` of `policy_evaluated`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub kind: Word<OverrideKind>,
    pub comment: Option<String>,
}

/// One DKIM result of `auth_results`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DkimAuth {
    pub domain: Option<String>,
    pub selector: Option<String>,
    pub result: Option<Word<DkimResult>>,
    pub human_result: Option<String>,
}

/// One SPF result of `auth_results`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpfAuth {
    pub domain: Option<String>,
    /// `mfrom` or `helo` (RFC 7489); absent in RFC 9990.
    pub scope: Option<String>,
    pub result: Option<Word<SpfResult>>,
}

/// One `record`: a source IP and what happened to its messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub source_ip: Option<IpAddr>,
    /// Messages (0 when absent or unreadable).
    pub count: u64,
    pub disposition: Option<Word<Disposition>>,
    pub dkim: Option<Word<Aligned>>,
    pub spf: Option<Word<Aligned>>,
    pub reasons: Vec<Override>,
    pub header_from: Option<String>,
    pub envelope_from: Option<String>,
    pub envelope_to: Option<String>,
    pub dkim_results: Vec<DkimAuth>,
    pub spf_results: Vec<SpfAuth>,
}

impl Record {
    /// Whether DMARC passed: either aligned identifier passed.
    pub fn dmarc_pass(&self) -> bool {
        matches!(self.dkim, Some(Word::Known(Aligned::Pass)))
            || matches!(self.spf, Some(Word::Known(Aligned::Pass)))
    }
}

/// `policy_published`: the DMARC record the receiver found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PublishedPolicy {
    pub domain: Option<String>,
    pub adkim: Option<String>,
    pub aspf: Option<String>,
    pub p: Option<String>,
    pub sp: Option<String>,
    pub np: Option<String>,
    /// RFC 7489 only.
    pub pct: Option<u8>,
    pub fo: Option<String>,
    /// RFC 9990 `testing` (y/n).
    pub testing: Option<String>,
    /// RFC 9990 `discovery_method` (psl/treewalk).
    pub discovery_method: Option<String>,
}

/// Everything of a report but its records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    /// `version` as written (absent in RFC 7489 reports).
    pub version: Option<String>,
    /// The root element's default namespace (`xmlns`), when declared.
    pub namespace: Option<String>,
    pub org_name: Option<String>,
    pub email: Option<String>,
    pub extra_contact_info: Option<String>,
    pub report_id: Option<String>,
    /// Unix seconds, UTC.
    pub begin: Option<i64>,
    pub end: Option<i64>,
    pub errors: Vec<String>,
    pub policy: PublishedPolicy,
    /// What was odd but survivable (unknown words, unreadable fields, recovered damage).
    pub warnings: Vec<String>,
}

/// A whole report, records collected (for reports of ordinary size; large ones use
/// [`parse_streaming`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateReport {
    pub header: Header,
    pub records: Vec<Record>,
}

impl AggregateReport {
    /// Messages in the report (the sum of the records' counts).
    pub fn messages(&self) -> u64 {
        self.records.iter().map(|r| r.count).sum()
    }
}

/// Why a document is not a usable aggregate report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AggregateError {
    /// Not XML of the report's shape (the root is not `feedback`).
    #[error("not a DMARC aggregate report: {0}")]
    NotAReport(String),
    /// The XML broke before the report's identity was read.
    #[error("unreadable XML: {0}")]
    Xml(String),
    /// Nested deeper than the limit.
    #[error("XML nested deeper than {0} levels")]
    TooDeep(usize),
    /// A required field is missing: without it the report cannot be identified.
    #[error("the report has no {0}")]
    Missing(&'static str),
}

/// An enum word of the report (its bytes, as read: the known words are ASCII, so they are
/// recognised without decoding; an unknown one is kept decoded, replacing what is not UTF-8).
fn word<T: Copy>(
    raw: &[u8],
    table: &[(&str, T)],
    what: &str,
    warnings: &mut Vec<String>,
) -> Word<T> {
    let trimmed = raw.trim_ascii();
    match table
        .iter()
        .find(|(w, _)| w.as_bytes().eq_ignore_ascii_case(trimmed))
    {
        Some((_, v)) => Word::Known(*v),
        None => {
            let trimmed = String::from_utf8_lossy(trimmed);
            warnings.push(format!("unknown {what} \"{trimmed}\""));
            Word::Unknown(trimmed.to_ascii_lowercase())
        }
    }
}

const DISPOSITIONS: [(&str, Disposition); 3] = [
    ("none", Disposition::None),
    ("quarantine", Disposition::Quarantine),
    ("reject", Disposition::Reject),
];
const ALIGNED: [(&str, Aligned); 2] = [("pass", Aligned::Pass), ("fail", Aligned::Fail)];
const DKIM_RESULTS: [(&str, DkimResult); 7] = [
    ("none", DkimResult::None),
    ("pass", DkimResult::Pass),
    ("fail", DkimResult::Fail),
    ("policy", DkimResult::Policy),
    ("neutral", DkimResult::Neutral),
    ("temperror", DkimResult::TempError),
    ("permerror", DkimResult::PermError),
];
/// `hardfail` is not an RFC word, but reporters send it for `fail` (LESSONS.md).
const SPF_RESULTS: [(&str, SpfResult); 8] = [
    ("none", SpfResult::None),
    ("neutral", SpfResult::Neutral),
    ("pass", SpfResult::Pass),
    ("fail", SpfResult::Fail),
    ("hardfail", SpfResult::Fail),
    ("softfail", SpfResult::SoftFail),
    ("temperror", SpfResult::TempError),
    ("permerror", SpfResult::PermError),
];
const OVERRIDES: [(&str, OverrideKind); 6] = [
    ("forwarded", OverrideKind::Forwarded),
    ("sampled_out", OverrideKind::SampledOut),
    ("trusted_forwarder", OverrideKind::TrustedForwarder),
    ("mailing_list", OverrideKind::MailingList),
    ("local_policy", OverrideKind::LocalPolicy),
    ("other", OverrideKind::Other),
];

/// Text as the report wrote it, trimmed of XML's whitespace (space, tab, CR, LF: ASCII, so
/// trimming does not decode characters), borrowed; `None` when empty.
fn present(raw: &[u8]) -> Option<&[u8]> {
    let t = raw.trim_ascii();
    (!t.is_empty()).then_some(t)
}

/// Text as the report wrote it, trimmed; `None` when empty.
fn text(raw: &[u8]) -> Option<String> {
    present(raw).map(|t| String::from_utf8_lossy(t).into_owned())
}

/// The element names the reader acts on, interned (matched case-insensitively by
/// [`known_name`]), so the path is a few bytes and comparing it is comparing integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum N {
    Feedback,
    Version,
    ReportMetadata,
    OrgName,
    Email,
    ExtraContactInfo,
    ReportId,
    Error,
    DateRange,
    Begin,
    End,
    PolicyPublished,
    Domain,
    Adkim,
    Aspf,
    P,
    Sp,
    Np,
    Pct,
    Fo,
    Testing,
    DiscoveryMethod,
    Record,
    Row,
    SourceIp,
    Count,
    PolicyEvaluated,
    Disposition,
    Dkim,
    Spf,
    Reason,
    Type,
    Comment,
    Identifiers,
    HeaderFrom,
    EnvelopeFrom,
    EnvelopeTo,
    AuthResults,
    Selector,
    Result,
    HumanResult,
    Scope,
    /// Any element the reader does not know.
    Other,
}

/// A name of up to 16 bytes as its length and one integer (the bytes, little-endian,
/// zero-padded), so that it is compared in registers rather than with a call to `memcmp`
/// (the length tells `p` from `p\0`). For the reader's own names, at compile time.
const fn key(name: &[u8]) -> (usize, u128) {
    assert!(name.len() <= 16, "names of the reader fit 16 bytes");
    let mut key = 0u128;
    let mut i = 0;
    while i < name.len() {
        key |= (name[i] as u128) << (8 * i);
        i += 1;
    }
    (name.len(), key)
}

/// [`key`] of a name as read, `None` beyond 16 bytes. Built from whole-word loads (two that
/// overlap, shifted into place) rather than byte by byte: bytes stored one at a time and read
/// back as a word stall the processor.
fn packed(name: &[u8]) -> Option<(usize, u128)> {
    let len = name.len();
    let word = |at: usize| -> u64 {
        let bytes: [u8; 8] = name[at..at + 8].try_into().unwrap_or_default();
        u64::from_le_bytes(bytes)
    };
    let half = |at: usize| -> u64 {
        let bytes: [u8; 4] = name[at..at + 4].try_into().unwrap_or_default();
        u64::from(u32::from_le_bytes(bytes))
    };
    let (lo, hi) = match len {
        0..=3 => {
            let mut lo = 0u64;
            for (i, b) in name.iter().enumerate() {
                lo |= u64::from(*b) << (8 * i);
            }
            (lo, 0)
        }
        // The second load overlaps the first; its overlapping bytes are the same ones.
        4..=7 => (half(0) | half(len - 4) << (8 * (len - 4)), 0),
        8 => (word(0), 0),
        9..=16 => (word(0), word(len - 8) >> (8 * (16 - len))),
        _ => return None,
    };
    Some((len, u128::from(lo) | u128::from(hi) << 64))
}

/// The names the reader acts on, as reporters write them (lower case), but for
/// `extra_contact_info`, the one longer than 16 bytes (matched apart, in [`exact_name`]).
const NAMES: [(&[u8], N); 41] = [
    (b"feedback", N::Feedback),
    (b"version", N::Version),
    (b"report_metadata", N::ReportMetadata),
    (b"org_name", N::OrgName),
    (b"email", N::Email),
    (b"report_id", N::ReportId),
    (b"error", N::Error),
    (b"date_range", N::DateRange),
    (b"begin", N::Begin),
    (b"end", N::End),
    (b"policy_published", N::PolicyPublished),
    (b"domain", N::Domain),
    (b"adkim", N::Adkim),
    (b"aspf", N::Aspf),
    (b"p", N::P),
    (b"sp", N::Sp),
    (b"np", N::Np),
    (b"pct", N::Pct),
    (b"fo", N::Fo),
    (b"testing", N::Testing),
    (b"discovery_method", N::DiscoveryMethod),
    (b"record", N::Record),
    (b"row", N::Row),
    (b"source_ip", N::SourceIp),
    (b"count", N::Count),
    (b"policy_evaluated", N::PolicyEvaluated),
    (b"disposition", N::Disposition),
    (b"dkim", N::Dkim),
    (b"spf", N::Spf),
    (b"reason", N::Reason),
    (b"type", N::Type),
    (b"comment", N::Comment),
    (b"identifiers", N::Identifiers),
    (b"header_from", N::HeaderFrom),
    (b"envelope_from", N::EnvelopeFrom),
    (b"envelope_to", N::EnvelopeTo),
    (b"auth_results", N::AuthResults),
    (b"selector", N::Selector),
    (b"result", N::Result),
    (b"human_result", N::HumanResult),
    (b"scope", N::Scope),
];

/// The slot of a [`packed`] name in [`NAME_SLOTS`]: the top byte of a multiplicative hash.
const fn name_slot((len, key): (usize, u128), multiplier: u64) -> usize {
    let mixed = key as u64 ^ ((key >> 64) as u64).rotate_left(29) ^ len as u64;
    (mixed.wrapping_mul(multiplier) >> 56) as usize
}

/// A multiplier that gives every name of [`NAMES`] a slot of its own, found at compile time
/// (from the golden ratio's, in a few tries: 41 names in 256 slots).
const NAME_MULTIPLIER: u64 = {
    let mut multiplier = 0x9E37_79B9_7F4A_7C15u64;
    loop {
        let mut taken = [false; 256];
        let mut i = 0;
        while i < NAMES.len() {
            let slot = name_slot(key(NAMES[i].0), multiplier);
            if taken[slot] {
                break;
            }
            taken[slot] = true;
            i += 1;
        }
        if i == NAMES.len() {
            break multiplier;
        }
        // The next candidate, well apart from this one (a step of an LCG, kept odd).
        multiplier = multiplier
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407)
            | 1;
    }
};

/// Each slot's name (its [`key`] and what it is), `None` for the slots no name has.
const NAME_SLOTS: [Option<((usize, u128), N)>; 256] = {
    let mut slots = [None; 256];
    let mut i = 0;
    while i < NAMES.len() {
        let key = key(NAMES[i].0);
        slots[name_slot(key, NAME_MULTIPLIER)] = Some((key, NAMES[i].1));
        i += 1;
    }
    slots
};

/// The name as written in lower case (what reporters send), if it is one the reader knows.
/// Found by a perfect hash of the name as one integer ([`packed`]) and one comparison: this
/// runs for every element of a report, and a `match` over the names branched on each, which
/// the processor mispredicted about as often as the names change.
fn exact_name(local: &[u8]) -> Option<N> {
    let Some(packed) = packed(local) else {
        return (local == b"extra_contact_info").then_some(N::ExtraContactInfo);
    };
    match NAME_SLOTS[name_slot(packed, NAME_MULTIPLIER)] {
        Some((key, name)) if key == packed => Some(name),
        _ => None,
    }
}

/// The element's name, compared case-insensitively, as one the reader acts on, or
/// [`N::Other`].
fn known_name(local: &[u8]) -> N {
    if let Some(name) = exact_name(local) {
        return name;
    }
    let mut lowered = [0u8; 24];
    let Some(lowered) = lowered.get_mut(..local.len()) else {
        return N::Other;
    };
    lowered.copy_from_slice(local);
    lowered.make_ascii_lowercase();
    exact_name(lowered).unwrap_or(N::Other)
}

/// A record under construction, with the auth result being read. It is reused from record to
/// record: the strings of the last one become this one's values, so reading a record of the
/// usual shape allocates nothing once a few records have been read.
#[derive(Default)]
struct Building {
    record: Record,
    dkim: Option<DkimAuth>,
    spf: Option<SpfAuth>,
    reason: Option<(Option<String>, Option<String>)>,
    /// Strings of earlier records, for this one's values.
    spare: Vec<String>,
}

/// Strings kept for reuse at most (a record with thousands of auth results does not leave
/// them all behind).
const MAX_SPARE: usize = 32;

impl Building {
    /// Starts the next record, keeping the last one's strings and vectors for reuse.
    fn restart(&mut self) {
        let Building {
            record,
            dkim,
            spf,
            reason,
            spare,
        } = self;
        let Record {
            source_ip,
            count,
            disposition,
            dkim: dkim_aligned,
            spf: spf_aligned,
            reasons,
            header_from,
            envelope_from,
            envelope_to,
            dkim_results,
            spf_results,
        } = record;
        let mut keep = |s: Option<String>| {
            if let Some(s) = s
                && spare.len() < MAX_SPARE
            {
                spare.push(s);
            }
        };
        keep(header_from.take());
        keep(envelope_from.take());
        keep(envelope_to.take());
        for d in dkim_results.drain(..).chain(dkim.take()) {
            keep(d.domain);
            keep(d.selector);
            keep(d.human_result);
        }
        for s in spf_results.drain(..).chain(spf.take()) {
            keep(s.domain);
            keep(s.scope);
        }
        for o in reasons.drain(..) {
            keep(o.comment);
        }
        if let Some((kind, comment)) = reason.take() {
            keep(kind);
            keep(comment);
        }
        *source_ip = None;
        *count = 0;
        *disposition = None;
        *dkim_aligned = None;
        *spf_aligned = None;
    }
}

/// [`text`] of the bytes read, in a spare string when there is one (decoded here, once per
/// value kept, not per piece of text read; what is not UTF-8 is replaced).
fn spare_text(spare: &mut Vec<String>, raw: &[u8]) -> Option<String> {
    let t = present(raw)?;
    let mut s = spare.pop().unwrap_or_default();
    s.clear();
    match std::str::from_utf8(t) {
        Ok(t) => s.push_str(t),
        Err(_) => s.push_str(&String::from_utf8_lossy(t)),
    }
    Some(s)
}

/// The trimmed text of a value to be parsed, `None` when empty; text that is not UTF-8 is
/// returned decoded lossily (and then fails to parse, with a readable warning).
fn parse_text(raw: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    present(raw).map(String::from_utf8_lossy)
}

/// [`spare_text`] in lower case.
fn spare_lower(spare: &mut Vec<String>, raw: &[u8]) -> Option<String> {
    let mut s = spare_text(spare, raw)?;
    s.make_ascii_lowercase();
    Some(s)
}

/// Where a report's XML comes from.
pub enum XmlInput<'a> {
    /// The whole document in memory: read in place, each event borrowing it (nothing copied).
    Bytes(&'a [u8]),
    /// A stream (XML being decompressed), read through a buffer.
    Stream(&'a mut dyn BufRead),
}

impl<'a> From<&'a [u8]> for XmlInput<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a, const L: usize> From<&'a [u8; L]> for XmlInput<'a> {
    fn from(bytes: &'a [u8; L]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a mut dyn BufRead> for XmlInput<'a> {
    fn from(stream: &'a mut dyn BufRead) -> Self {
        Self::Stream(stream)
    }
}

/// Reads a report from `input`, handing each record to `on_record` as soon as it is complete.
/// The header is returned at the end (reporters put the metadata first, but nothing requires
/// it). Damage after the report's identity was read ends the report with a warning and keeps
/// what was read; damage before it refuses the report.
pub fn parse_streaming<'a>(
    input: impl Into<XmlInput<'a>>,
    limits: &Limits,
    mut on_record: impl FnMut(Record),
) -> Result<Header, AggregateError> {
    parse_streaming_with(input, limits, |record, _| on_record(record.clone()))
}

/// [`parse_streaming`], lending each record (the reader reuses it and its strings for the
/// next one: clone what must outlive the call) with the header as read so far (reporters put
/// the metadata first, so it is usually complete; a caller folding records by the date range
/// must check).
pub fn parse_streaming_with<'a>(
    input: impl Into<XmlInput<'a>>,
    limits: &Limits,
    on_record: impl FnMut(&Record, &Header),
) -> Result<Header, AggregateError> {
    fn configure<R>(reader: &mut Reader<R>) {
        let config = reader.config_mut();
        config.trim_text(false);
        // Mismatched end tags happen (an unclosed wrapper); the path is kept by depth.
        config.check_end_names = false;
        config.expand_empty_elements = true;
    }
    let mut parser = Parser {
        limits,
        on_record,
        header: Header::default(),
        path: Vec::new(),
        text: Vec::new(),
        building: Building::default(),
        in_record: false,
        saw_root: false,
    };
    // What the reader read is matched where it was written (moving an event out stalls on
    // store forwarding) and is forgotten, not dropped, when it is an event: events borrow the
    // input or `buf` (quick-xml's are zero-copy), so that drop would do nothing, yet the drop
    // of a `Result` that may hold an error was a call per event. An error is dropped as usual.
    match input.into() {
        XmlInput::Bytes(bytes) => {
            let mut reader = Reader::from_reader(bytes);
            configure(&mut reader);
            loop {
                let read = reader.read_event();
                let flow = match &read {
                    Ok(event) => {
                        skip_leading_whitespace(&mut reader, is_tag(event));
                        parser.step(event)?
                    }
                    Err(e) => parser.damaged(e, reader.buffer_position())?,
                };
                if read.is_ok() {
                    std::mem::forget(read);
                }
                if flow == Flow::Stop {
                    break;
                }
            }
        }
        XmlInput::Stream(stream) => {
            let mut reader = Reader::from_reader(stream);
            configure(&mut reader);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                let read = reader.read_event_into(&mut buf);
                let flow = match &read {
                    Ok(event) => {
                        let after_tag = is_tag(event);
                        let flow = parser.step(event)?;
                        skip_leading_whitespace(&mut reader, after_tag);
                        flow
                    }
                    Err(e) => parser.damaged(e, reader.buffer_position())?,
                };
                if read.is_ok() {
                    std::mem::forget(read);
                }
                if flow == Flow::Stop {
                    break;
                }
            }
        }
    }
    parser.finish()
}

/// Whether the event was a start or end tag.
fn is_tag(event: &Event<'_>) -> bool {
    matches!(event, Event::Start(_) | Event::End(_))
}

/// Has the reader skip the whitespace that starts the next text when it follows a tag: a
/// value's leading whitespace is trimmed anyway, and the indentation between elements is then
/// not an event at all (a third of a report's events). After a reference, CDATA or a comment
/// the whitespace is inside a value (`a &amp; b`) and is kept.
fn skip_leading_whitespace<R>(reader: &mut Reader<R>, after_tag: bool) {
    if reader.config().trim_text_start != after_tag {
        reader.config_mut().trim_text_start = after_tag;
    }
}

/// Whether to read on.
#[derive(PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// The reader's state between events: the same whether the events borrow the input or a
/// buffer.
struct Parser<'l, F> {
    limits: &'l Limits,
    on_record: F,
    header: Header,
    /// The open elements, outermost first (the wrapper around `feedback`, if any, excluded).
    path: Vec<N>,
    /// The text of the element being read, as bytes (decoded only where a value is kept).
    text: Vec<u8>,
    /// The record being read (reused: see [`Building`]).
    building: Building,
    /// Whether a record is open.
    in_record: bool,
    saw_root: bool,
}

impl<F: FnMut(&Record, &Header)> Parser<'_, F> {
    /// Takes the reader's error at `position`: the end of the report, kept as far
    /// as it was read once its identity is known, refused before.
    fn damaged(&mut self, e: &quick_xml::Error, position: u64) -> Result<Flow, AggregateError> {
        if self.header.report_id.is_some() {
            self.header.warnings.push(format!(
                "XML damaged at byte {position} ({e}); records after it are lost"
            ));
            return Ok(Flow::Stop);
        }
        Err(AggregateError::Xml(format!("at byte {position}: {e}")))
    }

    /// Takes one event, borrowed where the reader wrote it.
    fn step(&mut self, event: &Event<'_>) -> Result<Flow, AggregateError> {
        match event {
            Event::Start(start) => {
                let name = known_name(start.local_name().as_ref());
                if self.path.is_empty() {
                    if name != N::Feedback {
                        // A wrapper (an unclosed `xs:schema`, a SOAP-ish envelope) may hold the
                        // feedback element: look inside, but only one level.
                        if self.saw_root {
                            let name = String::from_utf8_lossy(start.local_name().as_ref())
                                .to_ascii_lowercase();
                            return Err(AggregateError::NotAReport(format!(
                                "root element <{name}>"
                            )));
                        }
                        self.saw_root = true;
                        return Ok(Flow::Go);
                    }
                    self.saw_root = true;
                    for attr in start.attributes().flatten() {
                        // The default namespace: the report format the root declares.
                        if attr.key.as_ref() == b"xmlns" {
                            self.header.namespace =
                                Some(String::from_utf8_lossy(&attr.value).into_owned());
                        }
                    }
                }
                self.path.push(name);
                if self.path.len() > self.limits.max_xml_depth {
                    return Err(AggregateError::TooDeep(self.limits.max_xml_depth));
                }
                self.text.clear();
                self.open();
            }
            Event::Text(t) => {
                let raw: &[u8] = t.as_ref();
                // Whitespace before a value (the indentation between elements, mostly) is
                // trimmed from every value anyway: not copied.
                if self.text.is_empty() && raw.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Flow::Go);
                }
                self.text.extend_from_slice(raw);
            }
            Event::GeneralRef(r) => {
                // Predefined and character references only; anything else stays literal.
                let name = String::from_utf8_lossy(r.as_ref()).into_owned();
                let resolved = match name.as_str() {
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "amp" => Some('&'),
                    "apos" => Some('\''),
                    "quot" => Some('"'),
                    _ => r.resolve_char_ref().ok().flatten(),
                };
                match resolved {
                    Some(c) => self
                        .text
                        .extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                    None => {
                        self.text.push(b'&');
                        self.text.extend_from_slice(name.as_bytes());
                        self.text.push(b';');
                    }
                }
            }
            Event::CData(c) => self.text.extend_from_slice(c),
            Event::End(_) => {
                if self.path.is_empty() {
                    return Ok(Flow::Go);
                }
                end_element(
                    &self.path,
                    &self.text,
                    &mut self.header,
                    &mut self.building,
                    &mut self.in_record,
                    &mut self.on_record,
                );
                self.text.clear();
                self.path.pop();
                if self.path.is_empty() {
                    // The feedback element closed: anything after it is ignored.
                    return Ok(Flow::Stop);
                }
            }
            Event::Eof => {
                if !self.path.is_empty() {
                    if self.header.report_id.is_none() {
                        return Err(AggregateError::Xml(
                            "the document ends inside the report".into(),
                        ));
                    }
                    self.header
                        .warnings
                        .push("the document ends before the report closes".into());
                }
                return Ok(Flow::Stop);
            }
            // Declarations, comments, processing instructions and DTDs are ignored: no DTD
            // is ever read, so no entity is ever defined.
            _ => {}
        }
        Ok(Flow::Go)
    }

    /// Starts what the element just opened begins.
    fn open(&mut self) {
        if !self.in_record {
            if self.path == [N::Feedback, N::Record] {
                self.in_record = true;
                self.building.restart();
            }
            return;
        }
        let b = &mut self.building;
        match self.path.as_slice() {
            [N::Feedback, N::Record] => b.restart(),
            [N::Feedback, N::Record, N::AuthResults, N::Dkim] => b.dkim = Some(DkimAuth::default()),
            [N::Feedback, N::Record, N::AuthResults, N::Spf] => b.spf = Some(SpfAuth::default()),
            [
                N::Feedback,
                N::Record,
                N::Row,
                N::PolicyEvaluated,
                N::Reason,
            ] => b.reason = Some((None, None)),
            _ => {}
        }
    }

    /// The header, once the document is read.
    fn finish(self) -> Result<Header, AggregateError> {
        if !self.saw_root {
            return Err(AggregateError::NotAReport("no XML element".into()));
        }
        if self.header.report_id.is_none() {
            return Err(AggregateError::Missing("report_id"));
        }
        if self.header.policy.domain.is_none() {
            return Err(AggregateError::Missing("policy_published/domain"));
        }
        Ok(self.header)
    }
}

/// Applies the text of the element at the end of `path`.
fn end_element(
    path: &[N],
    value: &[u8],
    header: &mut Header,
    building: &mut Building,
    in_record: &mut bool,
    on_record: &mut impl FnMut(&Record, &Header),
) {
    let warnings = &mut header.warnings;
    let [N::Feedback, rest @ ..] = path else {
        return;
    };
    match rest {
        [N::Version] => header.version = text(value),
        [N::ReportMetadata, N::OrgName] => header.org_name = text(value),
        [N::ReportMetadata, N::Email] => header.email = text(value),
        [N::ReportMetadata, N::ExtraContactInfo] => header.extra_contact_info = text(value),
        [N::ReportMetadata, N::ReportId] => header.report_id = text(value),
        [N::ReportMetadata, N::Error] => {
            if let Some(e) = text(value) {
                header.errors.push(e);
            }
        }
        [N::ReportMetadata, N::DateRange, edge @ (N::Begin | N::End)] => {
            let v = parse_text(value).unwrap_or_default();
            match v.parse::<i64>() {
                Ok(t) if *edge == N::Begin => header.begin = Some(t),
                Ok(t) => header.end = Some(t),
                Err(_) => {
                    let edge = if *edge == N::Begin { "begin" } else { "end" };
                    warnings.push(format!("unreadable date_range/{edge} \"{v}\""))
                }
            }
        }
        [N::PolicyPublished, field] => {
            let v = text(value);
            let policy = &mut header.policy;
            match field {
                N::Domain => {
                    policy.domain = v.map(|d| d.trim_end_matches('.').to_ascii_lowercase())
                }
                N::Adkim => policy.adkim = v,
                N::Aspf => policy.aspf = v,
                N::P => policy.p = v.map(|s| s.to_ascii_lowercase()),
                N::Sp => policy.sp = v.map(|s| s.to_ascii_lowercase()),
                N::Np => policy.np = v.map(|s| s.to_ascii_lowercase()),
                N::Pct => policy.pct = v.and_then(|s| s.parse().ok()),
                N::Fo => policy.fo = v,
                N::Testing => policy.testing = v,
                N::DiscoveryMethod => policy.discovery_method = v,
                _ => {}
            }
        }
        [N::Record] if *in_record => {
            *in_record = false;
            on_record(&building.record, header);
        }
        [N::Record, rest @ ..] if *in_record => record_field(rest, value, building, warnings),
        _ => {}
    }
}

/// Applies the text of an element inside a `record` (`path` below the record).
fn record_field(path: &[N], value: &[u8], b: &mut Building, warnings: &mut Vec<String>) {
    match path {
        [N::Row, N::SourceIp] => {
            if let Some(v) = parse_text(value) {
                match v.parse::<IpAddr>() {
                    Ok(ip) => b.record.source_ip = Some(ip),
                    Err(_) => warnings.push(format!("unreadable source_ip \"{v}\"")),
                }
            }
        }
        [N::Row, N::Count] => {
            if let Some(v) = parse_text(value) {
                match v.parse::<u64>() {
                    Ok(n) => b.record.count = n,
                    Err(_) => warnings.push(format!("unreadable count \"{v}\"")),
                }
            }
        }
        [N::Row, N::PolicyEvaluated, N::Disposition] => {
            b.record.disposition =
                present(value).map(|v| word(v, &DISPOSITIONS, "disposition", warnings));
        }
        [N::Row, N::PolicyEvaluated, f @ (N::Dkim | N::Spf)] => {
            let w = present(value).map(|v| word(v, &ALIGNED, "policy_evaluated result", warnings));
            if *f == N::Dkim {
                b.record.dkim = w;
            } else {
                b.record.spf = w;
            }
        }
        [
            N::Row,
            N::PolicyEvaluated,
            N::Reason,
            f @ (N::Type | N::Comment),
        ] => {
            if let Some(reason) = b.reason.as_mut() {
                if *f == N::Type {
                    reason.0 = spare_text(&mut b.spare, value);
                } else {
                    reason.1 = spare_text(&mut b.spare, value);
                }
            }
        }
        [N::Row, N::PolicyEvaluated, N::Reason] => {
            if let Some((kind, comment)) = b.reason.take()
                && let Some(kind) = kind
            {
                b.record.reasons.push(Override {
                    kind: word(kind.as_bytes(), &OVERRIDES, "override reason", warnings),
                    comment,
                });
            }
        }
        [N::Identifiers, f] => {
            let v = spare_lower(&mut b.spare, value);
            match f {
                N::HeaderFrom => b.record.header_from = v,
                N::EnvelopeFrom => b.record.envelope_from = v,
                N::EnvelopeTo => b.record.envelope_to = v,
                _ => {}
            }
        }
        [N::AuthResults, N::Dkim, f] => {
            if let Some(d) = b.dkim.as_mut() {
                match f {
                    N::Domain => d.domain = spare_lower(&mut b.spare, value),
                    N::Selector => d.selector = spare_text(&mut b.spare, value),
                    N::Result => {
                        d.result =
                            present(value).map(|v| word(v, &DKIM_RESULTS, "DKIM result", warnings))
                    }
                    N::HumanResult => d.human_result = spare_text(&mut b.spare, value),
                    _ => {}
                }
            }
        }
        [N::AuthResults, N::Dkim] => {
            if let Some(d) = b.dkim.take() {
                b.record.dkim_results.push(d);
            }
        }
        [N::AuthResults, N::Spf, f] => {
            if let Some(s) = b.spf.as_mut() {
                match f {
                    N::Domain => s.domain = spare_lower(&mut b.spare, value),
                    N::Scope => s.scope = spare_lower(&mut b.spare, value),
                    N::Result => {
                        s.result =
                            present(value).map(|v| word(v, &SPF_RESULTS, "SPF result", warnings))
                    }
                    _ => {}
                }
            }
        }
        [N::AuthResults, N::Spf] => {
            if let Some(s) = b.spf.take() {
                b.record.spf_results.push(s);
            }
        }
        _ => {}
    }
}

/// Reads a whole report into memory.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<AggregateReport, AggregateError> {
    let mut records = Vec::new();
    let header = parse_streaming(bytes, limits, |r| records.push(r))?;
    Ok(AggregateReport { header, records })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    const MINIMAL: &str = r#"<?xml version="1.0"?>
<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0">
  <report_metadata><org_name>R</org_name><report_id>id-1</report_id>
    <date_range><begin> 100 </begin><end>200</end></date_range></report_metadata>
  <policy_published><domain>Example.COM.</domain><p>Reject</p></policy_published>
  <record><row><source_ip>192.0.2.1</source_ip><count>3</count>
    <policy_evaluated><disposition>PASS</disposition><dkim>pass</dkim><spf>fail</spf>
      <reason><type>Forwarded</type><comment>via list</comment></reason></policy_evaluated></row>
    <identifiers><header_from>Example.com</header_from></identifiers>
    <auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>pass</result></dkim>
      <spf><domain>example.com</domain><result>hardfail</result></spf></auth_results></record>
</feedback>"#;

    #[test]
    fn names_pack_from_word_loads_as_they_do_byte_by_byte() {
        let bytes: Vec<u8> = (1..=17u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for len in 0..=16 {
            for start in 0..=(17 - len) {
                let name = &bytes[start..start + len];
                assert_eq!(packed(name), Some(key(name)), "{name:?}");
            }
        }
        assert_eq!(packed(&bytes), None);
        assert_ne!(packed(b"p\0"), packed(b"p"));
    }

    #[test]
    fn every_element_name_is_known_in_any_case_and_nothing_else_is() {
        let names = [
            ("feedback", N::Feedback),
            ("version", N::Version),
            ("report_metadata", N::ReportMetadata),
            ("org_name", N::OrgName),
            ("email", N::Email),
            ("extra_contact_info", N::ExtraContactInfo),
            ("report_id", N::ReportId),
            ("error", N::Error),
            ("date_range", N::DateRange),
            ("begin", N::Begin),
            ("end", N::End),
            ("policy_published", N::PolicyPublished),
            ("domain", N::Domain),
            ("adkim", N::Adkim),
            ("aspf", N::Aspf),
            ("p", N::P),
            ("sp", N::Sp),
            ("np", N::Np),
            ("pct", N::Pct),
            ("fo", N::Fo),
            ("testing", N::Testing),
            ("discovery_method", N::DiscoveryMethod),
            ("record", N::Record),
            ("row", N::Row),
            ("source_ip", N::SourceIp),
            ("count", N::Count),
            ("policy_evaluated", N::PolicyEvaluated),
            ("disposition", N::Disposition),
            ("dkim", N::Dkim),
            ("spf", N::Spf),
            ("reason", N::Reason),
            ("type", N::Type),
            ("comment", N::Comment),
            ("identifiers", N::Identifiers),
            ("header_from", N::HeaderFrom),
            ("envelope_from", N::EnvelopeFrom),
            ("envelope_to", N::EnvelopeTo),
            ("auth_results", N::AuthResults),
            ("selector", N::Selector),
            ("result", N::Result),
            ("human_result", N::HumanResult),
            ("scope", N::Scope),
        ];
        for (name, n) in names {
            assert_eq!(known_name(name.as_bytes()), n, "{name}");
            assert_eq!(
                known_name(name.to_ascii_uppercase().as_bytes()),
                n,
                "{name}"
            );
            // One letter off, one short, one long: not this name.
            let mut near = name.as_bytes().to_vec();
            *near.last_mut().unwrap() ^= 0x01;
            assert_eq!(known_name(&near), N::Other, "{name}");
            assert_ne!(known_name(&name.as_bytes()[1..]), n, "{name}");
            assert_eq!(
                known_name(format!("{name}s").as_bytes()),
                N::Other,
                "{name}"
            );
        }
        for other in [
            "",
            "x",
            "policy",
            "records",
            "feedbacks",
            "sourceip",
            "é",
            "p\0",
            "\0p",
        ] {
            assert_eq!(known_name(other.as_bytes()), N::Other, "{other}");
        }
    }

    #[test]
    fn reads_a_namespaced_report_leniently() {
        let report = parse(MINIMAL.as_bytes(), &limits()).unwrap();
        let h = &report.header;
        assert_eq!(
            h.namespace.as_deref(),
            Some("urn:ietf:params:xml:ns:dmarc-2.0")
        );
        assert_eq!((h.begin, h.end), (Some(100), Some(200)));
        assert_eq!(h.policy.domain.as_deref(), Some("example.com"));
        assert_eq!(h.policy.p.as_deref(), Some("reject"));
        let r = &report.records[0];
        assert_eq!(r.count, 3);
        assert!(r.dmarc_pass());
        assert_eq!(r.disposition, Some(Word::Unknown("pass".into())));
        assert_eq!(r.reasons[0].kind, Word::Known(OverrideKind::Forwarded));
        assert_eq!(r.spf_results[0].result, Some(Word::Known(SpfResult::Fail)));
        assert_eq!(r.dkim_results[0].selector.as_deref(), Some("s1"));
        assert!(h.warnings.iter().any(|w| w.contains("disposition")));
    }

    #[test]
    fn refuses_what_is_not_a_report_and_caps_depth() {
        assert!(matches!(
            parse(b"unused", &limits()),
            Err(AggregateError::NotAReport(_))
        ));
        assert!(matches!(
            parse(b"<html><body>hi</body></html>", &limits()),
            Err(AggregateError::NotAReport(_))
        ));
        let deep = format!(
            "<feedback>{}{}</feedback>",
            "<a>".repeat(100),
            "</a>".repeat(100)
        );
        assert_eq!(
            parse(deep.as_bytes(), &limits()),
            Err(AggregateError::TooDeep(64))
        );
        let no_id =
            "<feedback><policy_published><domain>x.org</domain></policy_published></feedback>";
        assert_eq!(
            parse(no_id.as_bytes(), &limits()),
            Err(AggregateError::Missing("report_id"))
        );
    }

    #[test]
    fn external_entities_are_never_resolved() {
        let xxe = r#"<?xml version="1.0"?>
<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<feedback><report_metadata><org_name>&xxe;</org_name><report_id>x</report_id></report_metadata>
<policy_published><domain>x.org</domain></policy_published></feedback>"#;
        let report = parse(xxe.as_bytes(), &limits()).unwrap();
        assert_eq!(report.header.org_name.as_deref(), Some("&xxe;"));
    }

    #[test]
    fn whitespace_around_references_is_kept_inside_values_and_trimmed_around_them() {
        let xml = "<feedback>\n  <report_metadata>\n    <org_name>\n      A &amp; B  </org_name>\n    \
            <report_id> &#65; x</report_id></report_metadata>\n  \
            <policy_published><domain>x.org</domain></policy_published></feedback>";
        let report = parse(xml.as_bytes(), &limits()).unwrap();
        assert_eq!(report.header.org_name.as_deref(), Some("A & B"));
        assert_eq!(report.header.report_id.as_deref(), Some("A x"));
        let xml = "<feedback><report_metadata><org_name> A<!-- c --> B</org_name>\n\
            <email><![CDATA[a@b]]> c</email><report_id>1</report_id></report_metadata>\n\
            <policy_published><domain>x.org</domain></policy_published></feedback>";
        let report = parse(xml.as_bytes(), &limits()).unwrap();
        assert_eq!(report.header.org_name.as_deref(), Some("A B"));
        assert_eq!(report.header.email.as_deref(), Some("a@b c"));
    }

    #[test]
    fn an_unclosed_schema_wrapper_is_looked_through() {
        let wrapped = format!(
            "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">{}",
            MINIMAL.trim_start_matches(r#"<?xml version="1.0"?>"#)
        );
        let report = parse(wrapped.as_bytes(), &limits()).unwrap();
        assert_eq!(report.header.report_id.as_deref(), Some("id-1"));
        assert_eq!(report.messages(), 3);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced_in_kept_values_and_refuse_numbers() {
        let xml = b"<feedback><report_metadata><report_id>r\xff</report_id></report_metadata>\
            <policy_published><domain>x.org</domain></policy_published>\
            <record><row><source_ip>192.0.2.\xff</source_ip><count>3\xfe</count>\
            <policy_evaluated><dkim>pa\xffss</dkim></policy_evaluated></row>\
            <identifiers><header_from>\xc3\xa9x&amp;\xc3\xa9\xff.org</header_from></identifiers>\
            </record></feedback>";
        let report = parse(xml, &limits()).unwrap();
        assert_eq!(report.header.report_id.as_deref(), Some("r\u{fffd}"));
        let record = &report.records[0];
        assert_eq!(
            record.header_from.as_deref(),
            Some("\u{e9}x&\u{e9}\u{fffd}.org")
        );
        assert_eq!((record.source_ip, record.count), (None, 0));
        assert_eq!(record.dkim, Some(Word::Unknown("pa\u{fffd}ss".into())));
        let warnings = report.header.warnings.join("; ");
        assert!(
            warnings.contains("unreadable source_ip \"192.0.2.\u{fffd}\""),
            "{warnings}"
        );
        assert!(
            warnings.contains("unreadable count \"3\u{fffd}\""),
            "{warnings}"
        );
    }

    #[test]
    fn damage_after_the_identity_keeps_what_was_read() {
        let damaged = MINIMAL.replace(
            "</feedback>",
            "<record><row><count>1</count></row><oops <<</record>",
        );
        let report = parse(damaged.as_bytes(), &limits()).unwrap();
        assert_eq!(report.records.len(), 1);
        assert!(
            report
                .header
                .warnings
                .iter()
                .any(|w| w.contains("damaged") || w.contains("ends"))
        );
    }
}
