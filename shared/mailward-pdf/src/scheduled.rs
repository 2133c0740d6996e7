//! The scheduled report's pages: a cover block with the brand (and its logo), the window and the
//! totals, then one block per domain: score and its change, the rollout stage, a small chart of
//! the daily volume (bars) and DMARC pass share (a line), the window's figures, new senders, open
//! tasks by priority and what to do next. Charts are vector paths, never pictures.

use crate::layout::{CONTENT_W, Flow, MARGIN, Op, PAGE_W, Rgb, Style, TOP, width, wrap};
use mailward_api_types::scheduled_reports::{DayPoint, ReportedDomain, ScheduledReportContent};

const TEXT: Rgb = (0x1f, 0x29, 0x37);
const MUTED: Rgb = (0x5b, 0x64, 0x72);
const BORDER: Rgb = (0xd9, 0xde, 0xe5);
const ACCENT: Rgb = (0x1d, 0x4e, 0xd8);
const BARS: Rgb = (0x93, 0xb4, 0xf5);
const PASS: Rgb = (0x0f, 0x7b, 0x3f);
const SURFACE: Rgb = (0xf5, 0xf7, 0xfa);

/// The chart's box, and the height of its plot (the top keeps its labels clear).
const CHART_W: f32 = 240.0;
const CHART_H: f32 = 78.0;
const PLOT_H: f32 = CHART_H - 16.0;

fn band_colour(band: &str) -> Rgb {
    match band {
        "great" => (0x0f, 0x7b, 0x3f),
        "good" => (0x3b, 0x82, 0x46),
        "bad" => (0xb4, 0x53, 0x09),
        _ => (0xb9, 0x1c, 0x1c),
    }
}

fn signed(n: f64) -> String {
    if n > 0.0 {
        format!("+{n}")
    } else {
        format!("{n}")
    }
}

fn cover(flow: &mut Flow, report: &ScheduledReportContent, logo: Option<(f32, f32)>) {
    flow.push(Op::Rect {
        x: 0.0,
        y: 0.0,
        w: PAGE_W,
        h: 6.0,
        radius: 0.0,
        fill: ACCENT,
        stroke: None,
    });
    if let Some((w, h)) = logo {
        flow.push(Op::Image {
            x: MARGIN + CONTENT_W - w,
            y: TOP - 10.0,
            w,
            h,
        });
    }
    let name_w = CONTENT_W - logo.map_or(0.0, |(w, _)| w + 16.0);
    flow.y = TOP + 12.0;
    for line in wrap(Style::Bold, 20.0, &report.brand, name_w) {
        flow.text(MARGIN, flow.y, 20.0, Style::Bold, TEXT, &line);
        flow.y += 26.0;
    }
    flow.text(MARGIN, flow.y, 13.0, Style::Bold, ACCENT, &report.title);
    flow.y += 18.0;
    let window = format!(
        "{} to {} (the API's {}), generated {}",
        report.date_from, report.date_to, report.period, report.generated_at
    );
    flow.text(MARGIN, flow.y, 9.0, Style::Regular, MUTED, &window);
    flow.y += 16.0;
    let totals = format!(
        "{} domain{} · {} messages · {}% passed DMARC",
        report.domains.len(),
        if report.domains.len() == 1 { "" } else { "s" },
        report.volume,
        report.dmarc_pass_pct
    );
    flow.push(Op::Rect {
        x: MARGIN,
        y: flow.y,
        w: CONTENT_W,
        h: 26.0,
        radius: 4.0,
        fill: SURFACE,
        stroke: Some(BORDER),
    });
    flow.text(
        MARGIN + 10.0,
        flow.y + 17.0,
        11.0,
        Style::Bold,
        TEXT,
        &totals,
    );
    flow.y += 40.0;
}

/// Daily volume as bars and the DMARC pass share as a line, in a box at (`x`, `y`).
fn chart(flow: &mut Flow, x: f32, y: f32, days: &[DayPoint]) {
    flow.push(Op::Rect {
        x,
        y,
        w: CHART_W,
        h: CHART_H,
        radius: 0.0,
        fill: (255, 255, 255),
        stroke: Some(BORDER),
    });
    let max = days.iter().map(|d| d.volume).max().unwrap_or(0);
    let n = days.len().max(1) as f32;
    let slot = CHART_W / n;
    let bottom = y + CHART_H;
    let mut line = Vec::new();
    for (i, d) in days.iter().enumerate() {
        let left = x + slot * i as f32;
        if max > 0 && d.volume > 0 {
            let h = PLOT_H * d.volume as f32 / max as f32;
            flow.push(Op::Rect {
                x: left + slot * 0.15,
                y: bottom - h,
                w: slot * 0.7,
                h,
                radius: 0.0,
                fill: BARS,
                stroke: None,
            });
        }
        if d.volume > 0 {
            let share = (d.compliant as f32 / d.volume as f32).clamp(0.0, 1.0);
            line.push((left + slot / 2.0, bottom - 2.0 - (PLOT_H - 2.0) * share));
        }
    }
    if line.len() > 1 {
        flow.push(Op::Line {
            points: line,
            colour: PASS,
            width: 1.4,
        });
    } else if let Some(&(px, py)) = line.first() {
        flow.push(Op::Rect {
            x: px - 2.0,
            y: py - 2.0,
            w: 4.0,
            h: 4.0,
            radius: 2.0,
            fill: PASS,
            stroke: None,
        });
    }
    flow.text(
        x + 3.0,
        y + 9.0,
        6.5,
        Style::Regular,
        MUTED,
        &format!("max {max}/day"),
    );
    let legend = "bars: messages · line: DMARC pass";
    flow.text(
        x + CHART_W - width(Style::Regular, 6.5, legend) - 3.0,
        y + 9.0,
        6.5,
        Style::Regular,
        MUTED,
        legend,
    );
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        flow.text(x, bottom + 9.0, 6.5, Style::Regular, MUTED, &first.date);
        flow.text(
            x + CHART_W - width(Style::Regular, 6.5, &last.date),
            bottom + 9.0,
            6.5,
            Style::Regular,
            MUTED,
            &last.date,
        );
    }
}

fn score_line(d: &ReportedDomain) -> String {
    match (d.previous_score, &d.previous_band) {
        (Some(before), Some(band)) if *band != d.band => {
            format!("was {before} ({band}): band changed to {}", d.band)
        }
        (Some(before), _) if before != d.score => {
            format!(
                "was {before}: {}",
                signed(f64::from(d.score) - f64::from(before))
            )
        }
        (Some(_), _) => "unchanged since the last report".to_owned(),
        (None, _) => "first report".to_owned(),
    }
}

fn figures(d: &ReportedDomain) -> Vec<String> {
    let tasks: Vec<String> = d
        .open_tasks
        .iter()
        .map(|p| format!("{} {}", p.label, p.count))
        .collect();
    let senders = if d.new_senders_total == 0 {
        "New senders: none".to_owned()
    } else {
        let more = d
            .new_senders_total
            .saturating_sub(d.new_senders.len() as u64);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!(
            "New senders: {} ({}{tail})",
            d.new_senders_total,
            d.new_senders.join(", ")
        )
    };
    vec![
        format!(
            "Messages: {} ({} vs the window before)",
            d.volume,
            signed(d.delta_volume as f64)
        ),
        format!(
            "DMARC pass: {}% ({} points)",
            d.dmarc_pass_pct,
            signed(d.delta_dmarc_pass_pct)
        ),
        senders,
        format!("Open tasks: {}", tasks.join(" · ")),
        format!("Rollout: {}", d.stage),
    ]
}

fn domain(flow: &mut Flow, d: &ReportedDomain) {
    flow.ensure(200.0);
    flow.y += 18.0;
    flow.text(MARGIN, flow.y, 13.0, Style::Bold, TEXT, &d.domain);
    let badge = format!("Score {} ({})", d.score, d.band);
    let x = MARGIN + width(Style::Bold, 13.0, &d.domain) + 10.0;
    let w = flow.badge(x, flow.y - 4.5, band_colour(&d.band), &badge);
    flow.text(
        x + w + 8.0,
        flow.y - 1.0,
        8.5,
        Style::Regular,
        MUTED,
        &score_line(d),
    );
    flow.y += 10.0;
    let top = flow.y;
    chart(flow, MARGIN, top, &d.days);
    let column = MARGIN + CHART_W + 18.0;
    let column_w = CONTENT_W - CHART_W - 18.0;
    let mut y = top + 10.0;
    for item in figures(d) {
        for line in wrap(Style::Regular, 9.0, &item, column_w) {
            flow.text(column, y, 9.0, Style::Regular, TEXT, &line);
            y += 12.5;
        }
        y += 2.0;
    }
    flow.y = (top + CHART_H + 14.0).max(y);
    flow.paragraph(
        MARGIN,
        CONTENT_W,
        9.0,
        13.0,
        Style::Bold,
        ACCENT,
        &format!("Next: {}", d.next_action),
    );
    flow.y += 8.0;
    flow.rule(BORDER);
}

/// Lays out every page with its footer ("brand · footer", "page n / m").
pub fn lay_out(report: &ScheduledReportContent, logo: Option<(f32, f32)>) -> Vec<Vec<Op>> {
    let mut flow = Flow::new();
    cover(&mut flow, report, logo);
    flow.rule(BORDER);
    if report.domains.is_empty() {
        flow.y += 20.0;
        flow.text(
            MARGIN,
            flow.y,
            10.0,
            Style::Regular,
            MUTED,
            "No domain in this report's scope.",
        );
    }
    for d in &report.domains {
        domain(&mut flow, d);
    }
    let total = flow.pages.len();
    let footer = match &report.footer {
        Some(f) => format!("{} · {f}", report.brand),
        None => format!("{} · sent by Mailward", report.brand),
    };
    let footer = wrap(Style::Regular, 7.5, &footer, CONTENT_W - 60.0)
        .into_iter()
        .next()
        .unwrap_or_default();
    flow.pages
        .into_iter()
        .enumerate()
        .map(|(i, mut page)| {
            crate::layout::footer(&mut page, &footer, (i + 1, total), (BORDER, MUTED));
            page
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mailward_api_types::scheduled_reports::PriorityCount;

    fn band(score: u8) -> &'static str {
        match score {
            0..=39 => "critical",
            40..=69 => "bad",
            70..=89 => "good",
            _ => "great",
        }
    }

    /// A report of two domains over 30 days of varying mail.
    pub(crate) fn sample() -> ScheduledReportContent {
        let days: Vec<DayPoint> = (1..=30)
            .map(|d| DayPoint {
                date: format!("2026-11-{d:02}"),
                volume: 200 + (d * 37 % 90) as u64 * 10,
                compliant: (200 + (d * 37 % 90) as u64 * 10) * (70 + d * 7 % 30) as u64 / 100,
            })
            .collect();
        let domain = |name: &str, score: u8, previous: Option<u8>| ReportedDomain {
            domain: name.to_owned(),
            score,
            band: band(score).to_owned(),
            previous_score: previous,
            previous_band: previous.map(|p| band(p).to_owned()),
            stage: "Stage 2 of 4: Align your senders".to_owned(),
            volume: days.iter().map(|d| d.volume).sum(),
            dmarc_pass_pct: 81.25,
            delta_volume: -120,
            delta_dmarc_pass_pct: 3.5,
            days: days.clone(),
            new_senders: vec!["Mailchimp".to_owned(), "198.51.100.7".to_owned()],
            new_senders_total: 7,
            open_tasks: ["Critical", "High", "Medium", "Low"]
                .iter()
                .enumerate()
                .map(|(i, l)| PriorityCount {
                    label: (*l).to_owned(),
                    count: i as u64,
                })
                .collect(),
            next_action: "Fix the failing senders before moving to p=quarantine".to_owned(),
        };
        ScheduledReportContent {
            title: "Monthly email authentication report".to_owned(),
            brand: "Northwind MSP for Contoso".to_owned(),
            footer: Some("Questions? support@northwind.example".to_owned()),
            period: "last_30_days".to_owned(),
            date_from: "2026-11-01".to_owned(),
            date_to: "2026-11-30".to_owned(),
            generated_at: "2026-12-01T06:00:00Z".to_owned(),
            volume: 12345,
            dmarc_pass_pct: 81.25,
            domains: vec![
                domain("contoso.example", 72, Some(45)),
                domain("contoso-mail.example", 91, Some(91)),
            ],
        }
    }

    #[test]
    fn charts_are_vector_lines_inside_their_boxes() {
        let pages = lay_out(&sample(), None);
        let lines: Vec<&Vec<(f32, f32)>> = pages
            .iter()
            .flatten()
            .filter_map(|op| match op {
                Op::Line { points, .. } => Some(points),
                _ => None,
            })
            .collect();
        assert_eq!(lines.len(), 2);
        for points in lines {
            assert_eq!(points.len(), 30);
            for (x, _) in points {
                assert!((MARGIN..=MARGIN + CHART_W).contains(x));
            }
            let (low, high) = points.iter().fold((f32::MAX, f32::MIN), |(l, h), (_, y)| {
                (l.min(*y), h.max(*y))
            });
            assert!(high - low <= CHART_H, "the line stays in its box");
        }
        let texts: Vec<&str> = pages
            .iter()
            .flatten()
            .filter_map(|op| match op {
                Op::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.contains(&"was 45 (bad): band changed to good"));
        assert!(texts.contains(&"unchanged since the last report"));
        assert!(texts.join(" ").contains("and 5 more"), "{texts:?}");
    }
}
