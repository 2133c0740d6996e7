//! Stored report facts (reports issue): a report's identity (what makes two deliveries the same
//! report), the imported-report record, and the daily per-source rows that summaries read.
//! Raw records are never stored: a report becomes rows per UTC day and source.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// What kind of report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    /// DMARC aggregate (RFC 7489 / 9990).
    Dmarc,
    /// SMTP TLS report (RFC 8460).
    Tlsrpt,
    /// Failure report (ARF); counted, not parsed.
    Failure,
}

/// Reporters reuse report ids and collide with each other, so a report is the same report only
/// when reporter, id, policy domain and date range all match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportIdentity {
    pub kind: ReportKind,
    /// The reporter (`org_name`, or `organization-name`).
    pub reporter: String,
    pub report_id: String,
    pub policy_domain: String,
    /// Unix seconds.
    pub begin: i64,
    pub end: i64,
}

impl ReportIdentity {
    /// A stable key of the identity (hex SHA-256 of its fields).
    pub fn key(&self) -> String {
        let kind = match self.kind {
            ReportKind::Dmarc => "dmarc",
            ReportKind::Tlsrpt => "tlsrpt",
            ReportKind::Failure => "failure",
        };
        crate::secrets::sha256_hex(
            format!(
                "{kind}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
                self.reporter.trim().to_lowercase(),
                self.report_id.trim(),
                self.policy_domain
                    .trim()
                    .trim_end_matches('.')
                    .to_lowercase(),
                self.begin,
                self.end
            )
            .as_bytes(),
        )
    }
}

/// A report imported for one organization's domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredReport {
    /// [`ReportIdentity::key`].
    pub key: String,
    pub org_id: Uuid,
    pub domain_id: Uuid,
    pub kind: ReportKind,
    pub reporter: String,
    pub report_id: String,
    pub policy_domain: String,
    pub begin: i64,
    pub end: i64,
    pub records: u64,
    pub messages: u64,
    /// Object key of the raw message, when kept.
    pub raw_key: Option<String>,
    /// Whether the report's mail passed DKIM aligned with its From domain (checked here, or
    /// SES's DKIM and DMARC verdicts): an authenticated report replaces an unauthenticated one
    /// of the same identity, never the reverse. False for files and older imports.
    #[serde(default)]
    pub authenticated: bool,
    /// Oddities met while reading it.
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub imported_at: OffsetDateTime,
}

/// One source's messages for a domain on one UTC day, from one report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceDay {
    /// The sending IP (empty when the report gave none).
    pub source_ip: String,
    /// RFC5322.From domain.
    pub header_from: String,
    /// Envelope (MAIL FROM) domain, when reported.
    pub envelope_from: Option<String>,
    /// DKIM signing domains seen, with their selectors (`d` or `d/s`), passing ones first.
    pub dkim_signers: Vec<String>,
    /// Those of `dkim_signers` whose signature verified: only these may name a sender (anyone
    /// can write any `d=` into a signature that does not verify).
    #[serde(default)]
    pub dkim_passing: Vec<String>,
    pub volume: u64,
    /// Messages that passed DMARC (DKIM or SPF aligned pass).
    pub dmarc_pass: u64,
    /// Messages whose aligned SPF passed.
    pub spf_aligned_pass: u64,
    /// Messages whose aligned DKIM passed.
    pub dkim_aligned_pass: u64,
    /// Receiver dispositions.
    pub quarantined: u64,
    pub rejected: u64,
    /// Messages the receiver overrode as forwarded (forwarded, trusted_forwarder, mailing_list).
    pub forwarded: u64,
    /// Messages the report gave no DMARC evaluation for (neither aligned result readable).
    #[serde(default)]
    pub undetermined: u64,
    /// Messages whose envelope SPF passed for any domain, aligned or not (the report's
    /// `auth_results`); `None` in rows stored before it was kept.
    #[serde(default)]
    pub spf_pass: Option<u64>,
    /// Messages carrying a DKIM signature that verified for any domain; `None` likewise.
    #[serde(default)]
    pub dkim_pass: Option<u64>,
}

impl SourceDay {
    /// The row's forwarded messages once its source's network is known to relay mail for
    /// others (RFC 9990 dropped the `forwarded` override type, so forwarding is derived):
    /// - a forward-only service (an MX forwarder): every message failing DMARC;
    /// - a mailbox provider that also forwards: the messages failing DMARC when the row carries
    ///   a DKIM signature that verified (the original signature survived the hop while SPF
    ///   failed on the forwarder's address); without one, its failures may be the customer's
    ///   own misconfigured mail and stay failures.
    ///
    /// What the receiver itself overrode as forwarded counts too; each message once (the
    /// larger of the two, never their sum).
    pub fn forwarded_through(&self, relay: crate::sources::ForwardingType) -> u64 {
        use crate::sources::ForwardingType;
        let failing = self.volume - self.dmarc_pass.min(self.volume);
        let derived = match relay {
            ForwardingType::ForwarderOnly => failing,
            ForwardingType::Forwarder
                if !self.dkim_passing.is_empty() && self.spf_aligned_pass < self.volume =>
            {
                failing
            }
            ForwardingType::Forwarder | ForwardingType::NotForwarder => 0,
        };
        self.forwarded.max(derived).min(self.volume)
    }

    /// How this row's messages split (SPEC §2.12): forwarded mail is forwarded whatever its
    /// result, then undetermined; of the rest, the DMARC passes are compliant and the failures
    /// are non-compliant when `source_passes` (the source sent DMARC-passing mail for the
    /// domain in the window), else unknown.
    pub fn split(&self, source_passes: bool) -> RowSplit {
        let forwarded = self.forwarded.min(self.volume);
        let undetermined = self.undetermined.min(self.volume - forwarded);
        let compliant = self.dmarc_pass.min(self.volume - forwarded - undetermined);
        let failing = self.volume - forwarded - undetermined - compliant;
        let (non_compliant, unknown) = if source_passes {
            (failing, 0)
        } else {
            (0, failing)
        };
        RowSplit {
            compliant,
            non_compliant,
            forwarded,
            unknown,
            undetermined,
        }
    }
}

/// One row's messages split into the five totals (they sum to its volume).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowSplit {
    pub compliant: u64,
    pub non_compliant: u64,
    pub forwarded: u64,
    pub unknown: u64,
    pub undetermined: u64,
}

impl RowSplit {
    /// The messages the pass percentages count: compliant and non-compliant.
    pub fn counted(&self) -> u64 {
        self.compliant + self.non_compliant
    }
}

/// A domain's messages on one UTC day, summed over every report and source: what the
/// organization-wide report data and the time series read instead of the per-source rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayTotal {
    pub volume: u64,
    pub dmarc_pass: u64,
    pub spf_aligned_pass: u64,
    pub dkim_aligned_pass: u64,
    pub forwarded: u64,
    pub undetermined: u64,
    pub quarantined: u64,
    pub rejected: u64,
}

impl DayTotal {
    /// Adds one row.
    pub fn add(&mut self, row: &SourceDay) {
        self.merge(&DayTotal {
            volume: row.volume,
            dmarc_pass: row.dmarc_pass,
            spf_aligned_pass: row.spf_aligned_pass,
            dkim_aligned_pass: row.dkim_aligned_pass,
            forwarded: row.forwarded,
            undetermined: row.undetermined,
            quarantined: row.quarantined,
            rejected: row.rejected,
        });
    }

    /// Adds another total.
    pub fn merge(&mut self, other: &DayTotal) {
        self.volume += other.volume;
        self.dmarc_pass += other.dmarc_pass;
        self.spf_aligned_pass += other.spf_aligned_pass;
        self.dkim_aligned_pass += other.dkim_aligned_pass;
        self.forwarded += other.forwarded;
        self.undetermined += other.undetermined;
        self.quarantined += other.quarantined;
        self.rejected += other.rejected;
    }
}

/// The UTC days of a report's date range, worked out once per report, to spread each of its
/// records' counts over (see [`spread_over_days`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaySpread {
    days: Vec<time::Date>,
}

impl DaySpread {
    /// The days from the day of `begin` to the day of `end` (an end exactly at midnight closes
    /// the previous day; a range that is empty or backwards is the day of `begin`; at most a
    /// year, a longer range being a reporter error kept on its first year).
    pub fn new(begin: i64, end: i64) -> Self {
        let day_of = |t: i64| {
            OffsetDateTime::from_unix_timestamp(t)
                .unwrap_or(OffsetDateTime::UNIX_EPOCH)
                .date()
        };
        let first = day_of(begin);
        // Reporters use both conventions for the end.
        let last_instant = if end > begin { end - 1 } else { begin };
        let last = day_of(last_instant).max(first);
        let mut d = first;
        let mut days = vec![d];
        while d < last && days.len() < 366 {
            d = d.next_day().unwrap_or(d);
            days.push(d);
        }
        Self { days }
    }

    /// The days, first to last.
    pub fn days(&self) -> &[time::Date] {
        &self.days
    }

    /// `count` spread over the days as evenly as integers allow, earlier days taking the
    /// remainder; days that get nothing are left out (unless `count` is zero).
    pub fn split(&self, count: u64) -> impl Iterator<Item = (time::Date, u64)> + '_ {
        let n = self.days.len() as u64;
        let (each, rest) = (count / n, count % n);
        self.days
            .iter()
            .enumerate()
            .map(move |(i, d)| (*d, each + u64::from((i as u64) < rest)))
            .filter(move |(_, c)| *c > 0 || count == 0)
    }
}

/// Splits `count` messages over the UTC days from `begin` to `end` (unix seconds, inclusive
/// end), as evenly as integers allow, earlier days taking the remainder. A range that is empty
/// or backwards counts on the day of `begin`.
pub fn spread_over_days(begin: i64, end: i64, count: u64) -> Vec<(time::Date, u64)> {
    DaySpread::new(begin, end).split(count).collect()
}

/// `yyyy-mm-dd`.
pub fn day_string(day: time::Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        day.year(),
        u8::from(day.month()),
        day.day()
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn forwarding_is_derived_from_the_network_once_per_message() {
        use crate::sources::ForwardingType::{Forwarder, ForwarderOnly, NotForwarder};
        let row = |forwarded: u64, signed: bool| SourceDay {
            volume: 10,
            dmarc_pass: 2,
            spf_aligned_pass: 0,
            forwarded,
            dkim_passing: if signed {
                vec!["esp.example/k1".into()]
            } else {
                Vec::new()
            },
            ..SourceDay::default()
        };
        assert_eq!(row(0, false).forwarded_through(ForwarderOnly), 8);
        assert_eq!(row(0, true).forwarded_through(Forwarder), 8);
        assert_eq!(
            row(0, false).forwarded_through(Forwarder),
            0,
            "no surviving signature"
        );
        assert_eq!(row(3, false).forwarded_through(NotForwarder), 3);
        // The receiver's own count and the derived one are not added up.
        assert_eq!(row(9, true).forwarded_through(Forwarder), 9);
        assert_eq!(row(5, true).forwarded_through(Forwarder), 8);
        let split = SourceDay {
            forwarded: 8,
            ..row(0, true)
        }
        .split(false);
        assert_eq!((split.compliant, split.forwarded, split.unknown), (2, 8, 0));
    }
    use super::*;

    #[test]
    fn identity_ignores_case_and_spacing_but_not_dates() {
        let a = ReportIdentity {
            kind: ReportKind::Dmarc,
            reporter: "Google.com".into(),
            report_id: "123".into(),
            policy_domain: "Example.com.".into(),
            begin: 1,
            end: 2,
        };
        let mut b = a.clone();
        b.reporter = " google.com ".into();
        b.policy_domain = "example.com".into();
        assert_eq!(a.key(), b.key());
        b.end = 3;
        assert_ne!(a.key(), b.key(), "reporters reuse ids across ranges");
    }

    #[test]
    fn multi_day_reports_spread_over_their_days() {
        let day = 86_400;
        let base = 1_700_006_400; // 2023-11-15T00:00:00Z
        assert_eq!(spread_over_days(base, base + day - 1, 7).len(), 1);
        assert_eq!(
            spread_over_days(base, base + day, 7).len(),
            1,
            "midnight end closes the day"
        );
        let spread = spread_over_days(base, base + 3 * day - 1, 10);
        assert_eq!(
            spread.iter().map(|(_, c)| c).collect::<Vec<_>>(),
            [&4, &3, &3]
        );
        assert_eq!(spread_over_days(base + 10, base, 5), vec![(spread[0].0, 5)]);
        let one = spread_over_days(base, base + 3 * day - 1, 1);
        assert_eq!(one.len(), 1, "days without messages are left out");
    }
}
