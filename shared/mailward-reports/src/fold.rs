//! The fold of an aggregate report into rows per UTC day, source IP and header-from
//! ([`SourceDay`]): what ingestion stores and every report view adds up. A report whose date
//! range spans several days is spread over them in proportion ([`DaySpread`]).

use crate::Limits;
use crate::aggregate::{
    self, AggregateError, AggregateReport, Aligned, Disposition, DkimResult, Header, OverrideKind,
    Record, SpfResult, Word, XmlInput,
};
use mailward_domain::reports::{DaySpread, SourceDay};
use std::collections::BTreeMap;
use std::net::IpAddr;

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
        // Raw results, aligned or not: what a mailbox provider's "SPF passes" and "DKIM passes"
        // requirements ask (the envelope's SPF, not the HELO identity's).
        let spf_raw = record.spf_results.iter().any(|s| {
            matches!(s.result, Some(Word::Known(SpfResult::Pass)))
                && !s
                    .scope
                    .as_deref()
                    .is_some_and(|c| c.eq_ignore_ascii_case("helo"))
        });
        let dkim_raw = record
            .dkim_results
            .iter()
            .any(|d| matches!(d.result, Some(Word::Known(DkimResult::Pass))));
        for (day, count) in spread.split(record.count) {
            let row = by_day
                .entry(day)
                .or_insert_with(|| DayRows::with_capacity(*rows_per_day))
                .row_of(hasher, record.source_ip, from_id, || SourceDay {
                    source_ip: record.source_ip.map(ip_text).unwrap_or_default(),
                    header_from: header_from.to_owned(),
                    spf_pass: Some(0),
                    dkim_pass: Some(0),
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
            if spf_raw && let Some(n) = &mut row.spf_pass {
                *n += count;
            }
            if dkim_raw && let Some(n) = &mut row.dkim_pass {
                *n += count;
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
        let report = aggregate::parse(xml, &Limits::default()).unwrap();
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
        let report = aggregate::parse(xml, &Limits::default()).unwrap();
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
        let report = aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap();
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
            rows_of(&aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap())
        );
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
            let whole = aggregate::parse(xml.as_bytes(), &Limits::default()).unwrap();
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
