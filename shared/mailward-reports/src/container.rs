//! Unwrapping what arrives: emails (with attached `message/rfc822` messages), gzip (also
//! gzip in gzip), zip, and the XML or JSON inside, each recognised by its first bytes.

use crate::Limits;
use crate::aggregate::{self, AggregateError, AggregateReport, XmlInput};
use crate::tlsrpt::{self, TlsReport};
use mail_parser::MimeHeaders as _;
use std::io::{BufRead, Read as _};

/// What the first bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Gzip,
    Zip,
    Xml,
    Json,
    Email,
    Unknown,
}

/// Recognises a payload by its first bytes (after a UTF-8 byte-order mark and whitespace for
/// the text formats).
pub fn sniff(bytes: &[u8]) -> Sniffed {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Sniffed::Gzip;
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return Sniffed::Zip;
    }
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let text = &text[start..];
    match text.first() {
        Some(b'<') => Sniffed::Xml,
        Some(b'{') => Sniffed::Json,
        _ if looks_like_headers(text) => Sniffed::Email,
        _ => Sniffed::Unknown,
    }
}

/// An RFC 5322 header line first (`Name: value`), or an mbox `From ` line.
fn looks_like_headers(text: &[u8]) -> bool {
    let line_end = text.iter().position(|b| *b == b'\n').unwrap_or(text.len());
    let line = &text[..line_end];
    if line.starts_with(b"From ") {
        return true;
    }
    let Some(colon) = line.iter().position(|b| *b == b':') else {
        return false;
    };
    colon > 0
        && line[..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
}

/// What one payload turned out to be. `A` is what an aggregate report was read into: the
/// whole report by [`extract`], the caller's choice with [`extract_with`].
#[derive(Debug, Clone, PartialEq)]
pub enum Content<A = Box<AggregateReport>> {
    /// A DMARC aggregate report.
    Aggregate(A),
    /// An SMTP TLS report.
    TlsRpt(Box<TlsReport>),
    /// A failure report (ARF, RFC 6591): recognised and counted, not parsed further.
    Failure,
    /// Not usable, and why.
    Refused(String),
}

/// One payload found in an input: where it was, and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted<A = Box<AggregateReport>> {
    /// The attachment or archive entry name, when it had one.
    pub name: Option<String>,
    /// The declared content type, when it came from an email part (informative only).
    pub content_type: Option<String>,
    pub content: Content<A>,
}

struct Walk<'a, A, F> {
    limits: &'a Limits,
    /// Decompressed bytes still allowed for this input.
    budget: u64,
    /// Reads one aggregate report's XML.
    read_aggregate: F,
    out: Vec<Extracted<A>>,
}

/// Everything `bytes` holds. Never fails as a whole: each payload is a report or a refusal.
pub fn extract(bytes: &[u8], limits: &Limits) -> Vec<Extracted> {
    extract_with(bytes, limits, |xml, limits| {
        let mut records = Vec::new();
        let header = aggregate::parse_streaming(xml, limits, |r| records.push(r))?;
        Ok(Box::new(AggregateReport { header, records }))
    })
}

/// [`extract`], with each aggregate report's XML handed to `read_aggregate` (e.g.
/// [`aggregate::parse_streaming`] folding records as they come), so that no report's records
/// need to be held at once. XML already in memory is handed over in place
/// ([`XmlInput::Bytes`]); XML inside gzip is read as it is decompressed ([`XmlInput::Stream`]),
/// the whole stream still checked against the decompression limit and for damage, as
/// [`extract`] does.
pub fn extract_with<A, F>(bytes: &[u8], limits: &Limits, read_aggregate: F) -> Vec<Extracted<A>>
where
    F: FnMut(XmlInput<'_>, &Limits) -> Result<A, AggregateError>,
{
    let mut walk = Walk {
        limits,
        budget: limits.max_decompressed_bytes,
        read_aggregate,
        out: Vec::new(),
    };
    walk.visit(bytes, None, None, 0);
    walk.out
}

/// What a gzip's trailer says it holds (the size of its last member, modulo 2^32: a hint,
/// never trusted further than deciding how to read).
fn gzip_size_hint(bytes: &[u8]) -> Option<usize> {
    let trailer: [u8; 4] = bytes.get(bytes.len().checked_sub(4)?..)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(trailer)).ok()
}

/// How decompressing into a buffer went.
enum Inflated {
    /// The whole stream, this many bytes.
    Done(usize),
    /// More than the cap.
    TooLarge,
    /// The stream is damaged.
    Damaged(String),
}

/// Decompresses all of `gzip` into `buffer` (whose length is the part already zeroed, kept
/// from use to use: only growth is initialised), at most `cap` bytes.
fn inflate_into(gzip: &[u8], buffer: &mut Vec<u8>, cap: usize) -> Inflated {
    let mut decoder = flate2::read::MultiGzDecoder::new(gzip);
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            if buffer.len() > cap {
                return Inflated::TooLarge;
            }
            let grown = (buffer.len() * 2).max(1024 * 1024).min(cap + 1);
            buffer.resize(grown, 0);
        }
        match decoder.read(&mut buffer[filled..]) {
            Ok(0) => return Inflated::Done(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Inflated::Damaged(e.to_string()),
        }
    }
}

/// Buffers for gzip decompressed whole, kept for the next report (two at most: one per
/// report read at a time on a small machine; more readers at once allocate their own).
mod inflate_pool {
    use std::sync::Mutex;

    static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    const KEPT: usize = 2;

    /// A buffer from the pool, or a new one.
    pub(super) fn take() -> Vec<u8> {
        POOL.lock()
            .map(|mut p| p.pop())
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Returns `buffer` to the pool, unless the pool is full.
    pub(super) fn give_back(buffer: Vec<u8>) {
        if let Ok(mut pool) = POOL.lock()
            && pool.len() < KEPT
        {
            pool.push(buffer);
        }
    }
}

/// A decompressing reader held to the remaining budget, remembering why it stopped.
struct Capped<R> {
    inner: R,
    /// Bytes still allowed.
    left: u64,
    /// Bytes produced.
    used: u64,
    exceeded: bool,
    damage: Option<String>,
}

impl<R: std::io::Read> std::io::Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) if n as u64 > self.left => {
                self.exceeded = true;
                Err(std::io::Error::other("decompression limit"))
            }
            Ok(n) => {
                self.left -= n as u64;
                self.used += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.damage = Some(e.to_string());
                Err(e)
            }
        }
    }
}

impl<A, F> Walk<'_, A, F>
where
    F: FnMut(XmlInput<'_>, &Limits) -> Result<A, AggregateError>,
{
    fn refuse(&mut self, name: Option<String>, ctype: Option<String>, why: impl Into<String>) {
        self.out.push(Extracted {
            name,
            content_type: ctype,
            content: Content::Refused(why.into()),
        });
    }

    fn visit(&mut self, bytes: &[u8], name: Option<String>, ctype: Option<String>, depth: usize) {
        if depth > self.limits.max_container_depth {
            return self.refuse(name, ctype, "containers nested too deeply");
        }
        match sniff(bytes) {
            Sniffed::Gzip => {
                if let Some(content) = self.gunzip_xml(bytes, depth) {
                    self.out.push(Extracted {
                        name,
                        content_type: ctype,
                        content,
                    });
                    return;
                }
                match self.gunzip(bytes) {
                    Ok(inner) => self.visit(&inner, name, ctype, depth + 1),
                    Err(why) => self.refuse(name, ctype, why),
                }
            }
            Sniffed::Zip => self.unzip(bytes, name, ctype, depth),
            Sniffed::Xml => {
                let content = match (self.read_aggregate)(XmlInput::Bytes(bytes), self.limits) {
                    Ok(report) => Content::Aggregate(report),
                    Err(e) => Content::Refused(e.to_string()),
                };
                self.out.push(Extracted {
                    name,
                    content_type: ctype,
                    content,
                });
            }
            Sniffed::Json => {
                let content = match tlsrpt::parse(bytes) {
                    Ok(report) => Content::TlsRpt(Box::new(report)),
                    Err(e) => Content::Refused(e.to_string()),
                };
                self.out.push(Extracted {
                    name,
                    content_type: ctype,
                    content,
                });
            }
            Sniffed::Email => self.email(bytes, name, ctype, depth),
            Sniffed::Unknown => {
                let preview: String = String::from_utf8_lossy(&bytes[..bytes.len().min(24)])
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect();
                self.refuse(
                    name,
                    ctype,
                    format!("not a report: neither XML, JSON, an email nor an archive (starts \"{preview}\")"),
                );
            }
        }
    }

    /// Reads at most the remaining budget; more is a bomb, not a report.
    fn read_capped(&mut self, reader: impl std::io::Read, what: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let read = reader
            .take(self.budget.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| format!("damaged {what}: {e}"))?;
        if read as u64 > self.budget {
            return Err(format!(
                "{what} expands beyond {} bytes (the decompression limit)",
                self.limits.max_decompressed_bytes
            ));
        }
        self.budget -= read as u64;
        Ok(out)
    }

    /// A gzip of XML read as it is decompressed, never held whole; `None` when the gzip holds
    /// something else (or breaks at once), left to [`Self::gunzip`] and [`Self::visit`].
    fn gunzip_xml(&mut self, bytes: &[u8], depth: usize) -> Option<Content<A>> {
        if depth + 1 > self.limits.max_container_depth {
            return None;
        }
        if let Some(read) = self.gunzip_xml_in_memory(bytes) {
            return read;
        }
        let mut reader = std::io::BufReader::with_capacity(
            64 * 1024,
            Capped {
                inner: flate2::read::MultiGzDecoder::new(bytes),
                left: self.budget,
                used: 0,
                exceeded: false,
                damage: None,
            },
        );
        if sniff(reader.fill_buf().ok()?) != Sniffed::Xml {
            return None;
        }
        let read = (self.read_aggregate)(XmlInput::Stream(&mut reader), self.limits);
        // The rest of the stream too (normally a line end): damage or a bomb after the report
        // refuses it, as when the gzip is decompressed whole.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
        let capped = reader.get_ref();
        if capped.exceeded {
            return Some(Content::Refused(format!(
                "gzip expands beyond {} bytes (the decompression limit)",
                self.limits.max_decompressed_bytes
            )));
        }
        if let Some(e) = &capped.damage {
            return Some(Content::Refused(format!("damaged gzip: {e}")));
        }
        self.budget -= capped.used;
        Some(match read {
            Ok(report) => Content::Aggregate(report),
            Err(e) => Content::Refused(e.to_string()),
        })
    }

    /// A gzip of XML no larger than [`Limits::max_in_memory_gzip`] (by its trailer's size
    /// field, held to when decompressing), decompressed whole into a [`reused buffer`](inflate_pool) and read
    /// in place: reading XML in place costs about half what reading it through a buffer does,
    /// and a reused buffer costs no fresh memory. `None` when the gzip is larger (or says it is
    /// smaller than it is): then it streams. `Some(None)` when it holds something else.
    fn gunzip_xml_in_memory(&mut self, bytes: &[u8]) -> Option<Option<Content<A>>> {
        let cap = usize::try_from(self.budget.min(self.limits.max_in_memory_gzip as u64)).ok()?;
        let hint = gzip_size_hint(bytes)?;
        if hint > cap {
            return None;
        }
        let mut buffer = inflate_pool::take();
        if buffer.len() <= hint {
            // Room for the whole stream and the read that finds its end, and an eighth more
            // for the next report of about the same size. Replaced, not grown: growing would
            // copy the old contents, and fresh zeroed memory from the allocator is not written
            // twice.
            let room = (hint + 1).saturating_add(hint / 8).min(cap + 1);
            buffer = vec![0; room];
        }
        let inflated = inflate_into(bytes, &mut buffer, cap);
        let outcome = match inflated {
            Inflated::TooLarge => None,
            Inflated::Damaged(e) => Some(Some(Content::Refused(format!("damaged gzip: {e}")))),
            Inflated::Done(len) => {
                let xml = &buffer[..len];
                if sniff(xml) == Sniffed::Xml {
                    self.budget -= len as u64;
                    Some(Some(
                        match (self.read_aggregate)(XmlInput::Bytes(xml), self.limits) {
                            Ok(report) => Content::Aggregate(report),
                            Err(e) => Content::Refused(e.to_string()),
                        },
                    ))
                } else {
                    Some(None)
                }
            }
        };
        inflate_pool::give_back(buffer);
        outcome
    }

    fn gunzip(&mut self, bytes: &[u8]) -> Result<Vec<u8>, String> {
        self.read_capped(flate2::read::MultiGzDecoder::new(bytes), "gzip")
    }

    fn unzip(&mut self, bytes: &[u8], name: Option<String>, ctype: Option<String>, depth: usize) {
        let mut archive = match zip::ZipArchive::new(std::io::Cursor::new(bytes)) {
            Ok(a) => a,
            Err(e) => return self.refuse(name, ctype, format!("damaged zip: {e}")),
        };
        if archive.len() > self.limits.max_zip_entries {
            return self.refuse(
                name,
                ctype,
                format!(
                    "zip holds {} entries (at most {})",
                    archive.len(),
                    self.limits.max_zip_entries
                ),
            );
        }
        for i in 0..archive.len() {
            let (entry_name, data) = match archive.by_index(i) {
                Ok(entry) if entry.is_dir() => continue,
                Ok(entry) => {
                    let entry_name = entry.name().to_owned();
                    (Some(entry_name), self.read_capped(entry, "zip entry"))
                }
                Err(e) => (name.clone(), Err(format!("damaged zip entry: {e}"))),
            };
            match data {
                Ok(data) => self.visit(&data, entry_name, ctype.clone(), depth + 1),
                Err(why) => self.refuse(entry_name, ctype.clone(), why),
            }
        }
    }

    fn email(&mut self, bytes: &[u8], name: Option<String>, ctype: Option<String>, depth: usize) {
        let Some(message) = mail_parser::MessageParser::default().parse(bytes) else {
            return self.refuse(name, ctype, "unreadable email");
        };
        let before = self.out.len();
        let mut failure_report = false;
        for part in &message.parts {
            let part_type = crate::mime::part_type(part);
            if part_type == "message/feedback-report" {
                failure_report = true;
                continue;
            }
            if part_type.starts_with("multipart/") {
                continue;
            }
            let part_name = part.attachment_name().map(str::to_owned);
            let body_text =
                matches!(part_type.as_str(), "text/plain" | "text/html") && part_name.is_none();
            let contents: Vec<u8> = match &part.body {
                mail_parser::PartType::Message(inner) => inner.raw_message().to_vec(),
                _ => part.contents().to_vec(),
            };
            if body_text {
                // A message's own text is a report only when it says so by its shape; an
                // explanatory body is not a refusal.
                if matches!(sniff(&contents), Sniffed::Xml | Sniffed::Json) {
                    let mark = self.out.len();
                    self.visit(&contents, part_name, Some(part_type), depth + 1);
                    if self.out[mark..]
                        .iter()
                        .all(|e| matches!(e.content, Content::Refused(_)))
                    {
                        self.out.truncate(mark);
                    }
                }
                continue;
            }
            self.visit(&contents, part_name, Some(part_type), depth + 1);
        }
        if failure_report {
            self.out.truncate(before);
            self.out.push(Extracted {
                name,
                content_type: Some("message/feedback-report".into()),
                content: Content::Failure,
            });
            return;
        }
        if self.out.len() == before {
            // A plain-text failure report without an ARF part (Exim's, for one): a report
            // whose text the failure reader recognises.
            let is_report = message.content_type().is_some_and(|c| {
                c.c_subtype
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case("report"))
            });
            if is_report && crate::failure::parse(bytes).is_some() {
                self.out.push(Extracted {
                    name,
                    content_type: Some("multipart/report".into()),
                    content: Content::Failure,
                });
                return;
            }
            self.refuse(name, ctype, "the email carries no report");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn sniffs_by_first_bytes_only() {
        assert_eq!(sniff(b"\x1f\x8b\x08"), Sniffed::Gzip);
        assert_eq!(sniff(b"PK\x03\x04rest"), Sniffed::Zip);
        assert_eq!(sniff(b"\xef\xbb\xbf  <?xml"), Sniffed::Xml);
        assert_eq!(sniff(b"\n{\"a\":1}"), Sniffed::Json);
        assert_eq!(sniff(b"Return-Path: <x@y>\r\n"), Sniffed::Email);
        assert_eq!(sniff(b"unused"), Sniffed::Unknown);
    }

    #[test]
    fn a_gzip_of_the_word_unused_is_refused_precisely() {
        let out = extract(&gzip(b"unused"), &Limits::default());
        assert_eq!(out.len(), 1);
        let Content::Refused(why) = &out[0].content else {
            panic!("{out:?}")
        };
        assert!(why.contains("not a report"), "{why}");
    }

    #[test]
    fn bombs_stop_at_the_limit() {
        let limits = Limits {
            max_decompressed_bytes: 1024 * 1024,
            ..Limits::default()
        };
        let bomb = gzip(&vec![b'<'; 4 * 1024 * 1024]);
        assert!(bomb.len() < 64 * 1024);
        let out = extract(&bomb, &limits);
        let Content::Refused(why) = &out[0].content else {
            panic!()
        };
        assert!(why.contains("decompression limit"), "{why}");
        let nested = gzip(&gzip(&gzip(&gzip(&gzip(&gzip(&gzip(&gzip(&gzip(
            &gzip(b"x"),
        )))))))));
        let out = extract(&nested, &Limits::default());
        let Content::Refused(why) = &out[0].content else {
            panic!()
        };
        assert!(why.contains("nested too deeply"), "{why}");
    }

    /// Counts the records, noting whether the XML came in place or as a stream.
    fn count_records(
        streamed: &mut Vec<bool>,
    ) -> impl FnMut(XmlInput<'_>, &Limits) -> Result<usize, AggregateError> + '_ {
        |input, limits| {
            streamed.push(matches!(input, XmlInput::Stream(_)));
            let mut n = 0;
            aggregate::parse_streaming(input, limits, |_| n += 1)?;
            Ok(n)
        }
    }

    #[test]
    fn gzipped_xml_is_read_in_memory_or_streamed_with_the_same_outcome() {
        let xml = b"<feedback><report_metadata><report_id>r</report_id></report_metadata>\
            <policy_published><domain>x.org</domain></policy_published>\
            <record><row><count>2</count></row></record></feedback>\n";
        let streaming = Limits {
            max_in_memory_gzip: 0,
            ..Limits::default()
        };
        for (limits, stream) in [(Limits::default(), false), (streaming, true)] {
            for (input, gzipped) in [
                (xml.to_vec(), false),
                (gzip(xml), true),
                (gzip(&gzip(xml)), true),
            ] {
                let mut streamed = Vec::new();
                let out = extract_with(&input, &limits, count_records(&mut streamed));
                assert_eq!(out[0].content, Content::Aggregate(1));
                assert_eq!(streamed, [gzipped && stream]);
                assert_eq!(
                    extract(&input, &limits)[0].content,
                    Content::Aggregate(Box::new(aggregate::parse(xml, &limits).unwrap()))
                );
            }
            // Damage or a bomb after the report still refuses it, as when decompressed whole.
            let whole = gzip(xml);
            let mut streamed = Vec::new();
            let out = extract_with(
                &whole[..whole.len() - 4],
                &limits,
                count_records(&mut streamed),
            );
            assert!(matches!(&out[0].content, Content::Refused(w) if w.contains("damaged gzip")));
            let mut bomb = xml.to_vec();
            bomb.extend(vec![b' '; 2 * 1024 * 1024]);
            let tight = Limits {
                max_decompressed_bytes: 1024 * 1024,
                ..limits
            };
            let out = extract_with(&gzip(&bomb), &tight, count_records(&mut streamed));
            assert!(
                matches!(&out[0].content, Content::Refused(w) if w.contains("decompression limit")),
                "{out:?}"
            );
        }
    }

    #[test]
    fn a_gzip_that_understates_its_size_streams_within_the_limits() {
        let mut xml = b"<feedback><report_metadata><report_id>r</report_id></report_metadata>\
            <policy_published><domain>x.org</domain></policy_published>"
            .to_vec();
        for _ in 0..2000 {
            xml.extend_from_slice(b"<record><row><count>2</count></row></record>");
        }
        xml.extend_from_slice(b"</feedback>");
        let mut lying = gzip(&xml);
        let at = lying.len() - 4;
        lying[at..].copy_from_slice(&16u32.to_le_bytes());
        let limits = Limits {
            max_in_memory_gzip: 64 * 1024,
            ..Limits::default()
        };
        let mut streamed = Vec::new();
        let out = extract_with(&lying, &limits, count_records(&mut streamed));
        // flate2 checks the size field: the lie is damage, found either way.
        assert!(
            matches!(&out[0].content, Content::Refused(w) if w.contains("damaged gzip")),
            "{out:?}"
        );
        // An honest gzip over the in-memory size streams.
        let mut streamed = Vec::new();
        let out = extract_with(&gzip(&xml), &limits, count_records(&mut streamed));
        assert_eq!(out[0].content, Content::Aggregate(2000));
        assert_eq!(streamed, [true]);
    }

    #[test]
    fn truncated_gzip_is_refused_not_fatal() {
        let whole = gzip(b"<feedback></feedback>");
        let out = extract(&whole[..whole.len() / 2], &Limits::default());
        let Content::Refused(why) = &out[0].content else {
            panic!()
        };
        assert!(why.contains("damaged gzip"), "{why}");
    }
}
