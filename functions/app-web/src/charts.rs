//! Charts drawn on the server as SVG inside the page: no chart library, no extra request, no
//! script. Each chart has a title and a description for screen readers, and the page shows
//! the same figures as a table.

use maud::{Markup, PreEscaped, html};
use std::fmt::Write as _;

/// One day of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Messages that day (the bar).
    pub volume: u64,
    /// The share that passed, 0 to 100, when there was mail (the line).
    pub pass_pct: Option<f64>,
}

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 48.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 36.0;

/// Daily volume as bars (left axis) and the pass rate as a line (right axis, 0-100%).
pub fn volume_and_pass(id: &str, title: &str, pass_label: &str, days: &[Day]) -> Markup {
    let max = days.iter().map(|d| d.volume).max().unwrap_or(0).max(1);
    let top = nice_ceiling(max);
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / days.len().max(1) as f64;
    let mut svg = String::new();
    // Grid and axis labels.
    for i in 0..=4 {
        let y = TOP + plot_h * f64::from(i) / 4.0;
        let volume = top as f64 * f64::from(4 - i) / 4.0;
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="#d5dae1"/><text x="{lx}" y="{ty:.1}" text-anchor="end" font-size="11" fill="#4a5566">{v}</text><text x="{rx}" y="{ty:.1}" font-size="11" fill="#116d2d">{p}%</text>"##,
            x2 = W - RIGHT,
            lx = LEFT - 6.0,
            rx = W - RIGHT + 6.0,
            ty = y + 4.0,
            v = short(volume as u64),
            p = 25 * (4 - i),
        );
    }
    let mut line = String::new();
    let mut dots = String::new();
    for (i, day) in days.iter().enumerate() {
        let x = LEFT + slot * i as f64;
        let h = plot_h * day.volume as f64 / top as f64;
        let bar_w = (slot * 0.7).max(1.0);
        let _ = write!(
            svg,
            r##"<rect x="{bx:.1}" y="{by:.1}" width="{bar_w:.1}" height="{h:.1}" fill="#8ab4f8"><title>{date}: {vol} messages</title></rect>"##,
            bx = x + (slot - bar_w) / 2.0,
            by = TOP + plot_h - h,
            date = day.date,
            vol = day.volume,
        );
        if let Some(pct) = day.pass_pct {
            let cx = x + slot / 2.0;
            let cy = TOP + plot_h * (1.0 - pct.clamp(0.0, 100.0) / 100.0);
            let _ = write!(
                line,
                "{}{cx:.1},{cy:.1}",
                if line.is_empty() { "" } else { " " }
            );
            let _ = write!(
                dots,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="#116d2d"><title>{date}: {pct:.1}% passed</title></circle>"##,
                date = day.date,
            );
        }
        let every = (days.len() / 7).max(1);
        if i.is_multiple_of(every) {
            let _ = write!(
                svg,
                r##"<text x="{tx:.1}" y="{ty}" text-anchor="middle" font-size="11" fill="#4a5566">{label}</text>"##,
                tx = x + slot / 2.0,
                ty = H - BOTTOM + 16.0,
                label = day.date.get(5..).unwrap_or(&day.date),
            );
        }
    }
    if !line.is_empty() {
        let _ = write!(
            svg,
            r##"<polyline points="{line}" fill="none" stroke="#116d2d" stroke-width="2.5"/>"##
        );
    }
    svg.push_str(&dots);
    let total: u64 = days.iter().map(|d| d.volume).sum();
    let desc = format!(
        "{} days, {total} messages in all; the bars are messages per day, the line is the {pass_label} per day.",
        days.len()
    );
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (W) " " (H) } role="img" aria-labelledby={ (id) "-t " (id) "-d" } xmlns="http://www.w3.org/2000/svg" {
                title #{ (id) "-t" } { (title) }
                desc #{ (id) "-d" } { (desc) }
                (PreEscaped(svg))
            }
            figcaption { "Bars: messages per day (left axis). Line: " (pass_label) " (right axis)." }
        }
    }
}

/// The smallest of 4, 8, 20, 40, 80, 200… at or above `n`: a top whose quarters are whole.
fn nice_ceiling(n: u64) -> u64 {
    let mut base = 1u64;
    loop {
        for m in [2, 4, 8] {
            if base.saturating_mul(m) < 4 {
                continue;
            }
            if base.saturating_mul(m) >= n {
                return base.saturating_mul(m);
            }
        }
        base = base.saturating_mul(10);
    }
}

fn short(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(1), 4);
        assert_eq!(nice_ceiling(5), 8);
        assert_eq!(nice_ceiling(9), 20);
        assert_eq!(nice_ceiling(120), 200);
        assert_eq!(nice_ceiling(1000), 2000);
    }

    #[test]
    fn the_chart_draws_a_bar_per_day_and_the_line() {
        let days: Vec<Day> = (1..=7)
            .map(|d| Day {
                date: format!("2026-11-0{d}"),
                volume: d * 10,
                pass_pct: Some(90.0),
            })
            .collect();
        let svg = volume_and_pass("c", "Volume", "DMARC pass rate", &days).into_string();
        assert_eq!(svg.matches("<rect").count(), 7);
        assert!(svg.contains("<polyline"));
        assert!(svg.contains("280 messages in all"));
        assert!(!svg.contains("style="));
    }
}
