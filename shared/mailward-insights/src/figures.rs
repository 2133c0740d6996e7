//! A window's figures from report rows: volumes and pass rates (rounded to two decimals), and
//! the five totals every view shows (SPEC §2.12).

use mailward_api_types::reports::{PeriodFigures, Totals};
use mailward_domain::reports::SourceDay;
use mailward_domain::reports::day_string;
use std::collections::HashSet;
use time::Date;

/// `part` of `whole` in percent, two decimals (0 without a whole).
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10_000.0 / whole as f64).round() / 100.0
    }
}

pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub fn figures(from: Date, to: Date, rows: &[(String, SourceDay)]) -> PeriodFigures {
    let (mut volume, mut dmarc, mut spf, mut dkim) = (0, 0, 0, 0);
    for (_, r) in rows {
        volume += r.volume;
        dmarc += r.dmarc_pass;
        spf += r.spf_aligned_pass;
        dkim += r.dkim_aligned_pass;
    }
    PeriodFigures {
        date_from: day_string(from),
        date_to: day_string(to),
        volume,
        dmarc_pass_pct: pct(dmarc, volume),
        spf_pass_pct: pct(spf, volume),
        dkim_pass_pct: pct(dkim, volume),
    }
}

/// Splits the window's messages into the five totals (see [`Totals`]).
pub fn totals(rows: &[(String, SourceDay)]) -> Totals {
    let passing_sources: HashSet<&str> = rows
        .iter()
        .filter(|(_, r)| r.dmarc_pass > 0)
        .map(|(_, r)| r.source_ip.as_str())
        .collect();
    let mut t = Totals::default();
    for (_, r) in rows {
        let split = r.split(passing_sources.contains(r.source_ip.as_str()));
        t.compliant += split.compliant;
        t.non_compliant += split.non_compliant;
        t.forwarded += split.forwarded;
        t.unknown += split.unknown;
        t.undetermined += split.undetermined;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ip: &str, volume: u64, pass: u64, forwarded: u64) -> (String, SourceDay) {
        (
            "2026-01-01".into(),
            SourceDay {
                source_ip: ip.into(),
                volume,
                dmarc_pass: pass,
                forwarded,
                ..SourceDay::default()
            },
        )
    }

    #[test]
    fn totals_sum_to_volume_and_tell_known_from_unknown_sources() {
        let rows = vec![
            row("192.0.2.1", 100, 90, 0),
            row("192.0.2.1", 10, 0, 0),
            row("198.51.100.2", 5, 0, 0),
            row("203.0.113.3", 8, 2, 6),
        ];
        let t = totals(&rows);
        assert_eq!(t.compliant, 92);
        assert_eq!(
            t.non_compliant, 20,
            "192.0.2.1 also passes: its failures are known"
        );
        assert_eq!(t.unknown, 5);
        assert_eq!(t.forwarded, 6);
        let sum = t.compliant + t.non_compliant + t.forwarded + t.unknown + t.undetermined;
        assert_eq!(sum, 123);
    }
}
