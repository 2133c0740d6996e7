//! The report's pages: a cover with the summary and an overview of every domain, one section
//! per domain (findings, sending services, records), then the plan, the potential loss and the
//! skipped domains. Backgrounds and footers ("page n / m") are added once the page count is known.

use crate::layout::{CONTENT_W, Flow, MARGIN, Op, PAGE_H, PAGE_W, Rgb, Style, TOP, rgb, width};
use mailward_api_types::prospecting::{DomainResult, ProspectingReportContent};
use mailward_prospecting::content::money;
use mailward_prospecting::html::{Palette, dkim_colour, palette, risk_colour, status_colour};
use mailward_prospecting::texts::{self, Labels};

struct Colours {
    background: Rgb,
    surface: Rgb,
    text: Rgb,
    muted: Rgb,
    border: Rgb,
    accent: Rgb,
}

fn colours(p: &Palette) -> Colours {
    Colours {
        background: rgb(p.background),
        surface: rgb(p.surface),
        text: rgb(p.text),
        muted: rgb(p.muted),
        border: rgb(p.border),
        accent: rgb(p.accent),
    }
}

fn heading(flow: &mut Flow, c: &Colours, text: &str) {
    flow.ensure(40.0);
    flow.y += 22.0;
    flow.text(MARGIN, flow.y, 12.0, Style::Bold, c.accent, text);
    flow.y += 8.0;
}

fn cover(flow: &mut Flow, report: &ProspectingReportContent, labels: &Labels, c: &Colours) {
    let cover = &report.cover;
    flow.push(Op::Rect {
        x: 0.0,
        y: 0.0,
        w: PAGE_W,
        h: 8.0,
        radius: 0.0,
        fill: c.accent,
        stroke: None,
    });
    flow.y = TOP + 30.0;
    for line in crate::layout::wrap(Style::Bold, 26.0, &cover.title, CONTENT_W) {
        flow.text(MARGIN, flow.y, 26.0, Style::Bold, c.accent, &line);
        flow.y += 32.0;
    }
    flow.paragraph(
        MARGIN,
        CONTENT_W,
        11.0,
        16.0,
        Style::Regular,
        c.muted,
        &cover.subtitle,
    );
    flow.y += 18.0;

    let mut meta: Vec<(String, String)> =
        vec![(labels.prepared_for.clone(), cover.generated_for.clone())];
    if let Some(by) = &cover.prepared_by {
        meta.push((labels.prepared_by.clone(), by.clone()));
    }
    meta.push((labels.date.clone(), cover.date.clone()));
    meta.push((labels.deadline.clone(), cover.deadline.clone()));
    meta.push((
        labels.average_score.clone(),
        format!("{}/100", cover.average_score),
    ));
    let column = CONTENT_W / 2.0;
    for pair in meta.chunks(2) {
        let mut height: f32 = 0.0;
        for (i, (label, value)) in pair.iter().enumerate() {
            let x = MARGIN + column * i as f32;
            flow.text(x, flow.y, 8.0, Style::Bold, c.muted, &label.to_uppercase());
            let lines = crate::layout::wrap(Style::Regular, 12.0, value, column - 12.0);
            flow.lines(x, flow.y + 16.0, 12.0, 15.0, Style::Regular, c.text, &lines);
            height = height.max(16.0 + 15.0 * lines.len() as f32);
        }
        flow.y += height + 14.0;
    }
    if let (Some(risk), Some(word)) = (cover.overall_risk, &cover.overall_risk_word) {
        flow.text(
            MARGIN,
            flow.y,
            8.0,
            Style::Bold,
            c.muted,
            &labels.overall_risk.to_uppercase(),
        );
        flow.badge(MARGIN, flow.y + 14.0, rgb(risk_colour(risk)), word);
        flow.y += 34.0;
    }

    let lines = crate::layout::wrap(Style::Regular, 11.0, &cover.summary, CONTENT_W - 32.0);
    let box_h = 16.0 * lines.len() as f32 + 24.0;
    flow.push(Op::Rect {
        x: MARGIN,
        y: flow.y,
        w: CONTENT_W,
        h: box_h,
        radius: 8.0,
        fill: c.surface,
        stroke: Some(c.border),
    });
    flow.lines(
        MARGIN + 16.0,
        flow.y + 27.0,
        11.0,
        16.0,
        Style::Regular,
        c.text,
        &lines,
    );
    flow.y += box_h + 8.0;

    if !report.domains.is_empty() {
        heading(
            flow,
            c,
            &texts::pick(report.language, "Overview", "Vue d'ensemble"),
        );
        for d in &report.domains {
            flow.ensure(24.0);
            flow.y += 22.0;
            flow.text(MARGIN, flow.y - 6.0, 11.0, Style::Bold, c.text, &d.domain);
            let score = format!("{} {}/100", labels.score, d.score);
            let badge_w = width(Style::Bold, 8.0, &d.risk_word) + 12.0;
            let right = MARGIN + CONTENT_W;
            flow.text(
                right - badge_w - 16.0 - width(Style::Regular, 10.0, &score),
                flow.y - 6.0,
                10.0,
                Style::Regular,
                c.muted,
                &score,
            );
            flow.badge(
                right - badge_w,
                flow.y - 10.0,
                rgb(risk_colour(d.risk)),
                &d.risk_word,
            );
            flow.y += 2.0;
            flow.rule(c.border);
        }
    }
}

fn domain(
    flow: &mut Flow,
    report: &ProspectingReportContent,
    d: &DomainResult,
    labels: &Labels,
    c: &Colours,
) {
    let lang = report.language;
    flow.page_break();
    flow.y += 20.0;
    flow.text(MARGIN, flow.y, 20.0, Style::Bold, c.text, &d.domain);
    let risk = format!("{} {}", labels.risk, d.risk_word);
    let badge_w = width(Style::Bold, 8.0, &risk) + 12.0;
    let right = MARGIN + CONTENT_W;
    flow.badge(
        right - badge_w,
        flow.y - 6.0,
        rgb(risk_colour(d.risk)),
        &risk,
    );
    let score = format!("{} {}/100", labels.score, d.score);
    flow.text(
        right - badge_w - 12.0 - width(Style::Bold, 11.0, &score),
        flow.y - 2.0,
        11.0,
        Style::Bold,
        c.text,
        &score,
    );
    flow.y += 10.0;
    flow.rule(c.accent);
    if d.parked {
        flow.y += 4.0;
        flow.paragraph(
            MARGIN,
            CONTENT_W,
            9.5,
            14.0,
            Style::Regular,
            c.muted,
            &labels.parked,
        );
    }

    heading(flow, c, &labels.findings);
    let text_x = MARGIN + 86.0;
    let text_w = CONTENT_W - 86.0;
    for f in &d.findings {
        let title = crate::layout::wrap(Style::Bold, 10.5, &f.title, text_w);
        let detail = crate::layout::wrap(Style::Regular, 9.0, &f.detail, text_w);
        let height = 15.0 * title.len() as f32 + 12.5 * detail.len() as f32 + 12.0;
        flow.ensure(height);
        let top = flow.y;
        flow.badge(
            MARGIN,
            top + 12.0,
            rgb(status_colour(f.status)),
            &texts::status_word(lang, f.status),
        );
        let mut y = top + 4.0;
        for line in &title {
            y += 14.0;
            flow.text(text_x, y - 2.0, 10.5, Style::Bold, c.text, line);
        }
        for line in &detail {
            y += 12.5;
            flow.text(text_x, y - 1.0, 9.0, Style::Regular, c.muted, line);
        }
        flow.y = top + height;
        flow.rule(c.border);
    }

    heading(flow, c, &labels.sending_services);
    if d.sending_services.is_empty() {
        flow.paragraph(
            MARGIN,
            CONTENT_W,
            9.5,
            14.0,
            Style::Regular,
            c.muted,
            &labels.no_sending_services,
        );
    }
    for s in &d.sending_services {
        flow.ensure(22.0);
        flow.y += 20.0;
        let name = crate::layout::wrap(Style::Bold, 10.0, &s.name, 170.0);
        flow.text(
            MARGIN,
            flow.y - 6.0,
            10.0,
            Style::Bold,
            c.text,
            name.first().map(String::as_str).unwrap_or(""),
        );
        let include = format!("include:{}", s.spf_include);
        let include = crate::layout::wrap(Style::Mono, 8.0, &include, 220.0);
        flow.text(
            MARGIN + 180.0,
            flow.y - 6.0,
            8.0,
            Style::Mono,
            c.muted,
            include.first().map(String::as_str).unwrap_or(""),
        );
        let state = format!("{} {}", labels.dkim, texts::dkim_state(lang, s.dkim));
        let badge_w = width(Style::Bold, 8.0, &state) + 12.0;
        flow.badge(
            right - badge_w,
            flow.y - 9.0,
            rgb(dkim_colour(s.dkim)),
            &state,
        );
        flow.y += 2.0;
        flow.rule(c.border);
    }

    if let Some(records) = &d.dns_records {
        heading(flow, c, &labels.dns_records);
        for r in records {
            let name = crate::layout::wrap(Style::Mono, 8.0, &r.name, 150.0);
            let value = crate::layout::wrap(Style::Mono, 8.0, &r.value, CONTENT_W - 210.0);
            let lines = name.len().max(value.len()).max(1);
            let height = 11.0 * lines as f32 + 10.0;
            flow.ensure(height);
            let top = flow.y + 14.0;
            flow.text(MARGIN, top, 8.5, Style::Bold, c.text, &r.record_type);
            flow.lines(MARGIN + 48.0, top, 8.0, 11.0, Style::Mono, c.text, &name);
            flow.lines(MARGIN + 210.0, top, 8.0, 11.0, Style::Mono, c.muted, &value);
            flow.y += height;
            flow.rule(c.border);
        }
    }
}

fn closing(flow: &mut Flow, report: &ProspectingReportContent, labels: &Labels, c: &Colours) {
    let lang = report.language;
    flow.page_break();
    heading(flow, c, &labels.plan);
    for step in &report.plan {
        let title = crate::layout::wrap(Style::Regular, 10.5, &step.title, CONTENT_W - 96.0);
        let height = 15.0 * title.len() as f32 + 10.0;
        flow.ensure(height);
        let top = flow.y;
        flow.badge(
            MARGIN,
            top + 12.0,
            c.accent,
            &format!("{} {}", labels.week, step.week),
        );
        flow.lines(
            MARGIN + 96.0,
            top + 16.0,
            10.5,
            15.0,
            Style::Regular,
            c.text,
            &title,
        );
        flow.y = top + height;
        flow.rule(c.border);
    }
    if let Some(loss) = &report.potential_loss {
        heading(flow, c, &labels.potential_loss);
        let right = MARGIN + CONTENT_W;
        let row = |flow: &mut Flow, left: &str, amount: &str, style: Style| {
            flow.ensure(20.0);
            flow.y += 18.0;
            flow.text(MARGIN, flow.y - 5.0, 10.0, style, c.text, left);
            flow.text(
                right - width(style, 10.0, amount),
                flow.y - 5.0,
                10.0,
                style,
                c.text,
                amount,
            );
            flow.rule(c.border);
        };
        for e in &loss.domains {
            row(
                flow,
                &e.domain,
                &money(lang, loss.currency, e.amount),
                Style::Regular,
            );
        }
        row(
            flow,
            &labels.total,
            &money(lang, loss.currency, loss.total),
            Style::Bold,
        );
        flow.y += 6.0;
        flow.paragraph(
            MARGIN,
            CONTENT_W,
            8.5,
            12.5,
            Style::Regular,
            c.muted,
            &loss.explanation,
        );
    }
    if !report.skipped_domains.is_empty() {
        heading(flow, c, &labels.skipped);
        for s in &report.skipped_domains {
            let message = crate::layout::wrap(Style::Regular, 9.5, &s.message, CONTENT_W - 200.0);
            let height = 13.0 * message.len() as f32 + 8.0;
            flow.ensure(height);
            let top = flow.y + 13.0;
            let name = crate::layout::wrap(Style::Mono, 8.5, &s.domain, 190.0);
            flow.text(
                MARGIN,
                top,
                8.5,
                Style::Mono,
                c.text,
                name.first().map(String::as_str).unwrap_or(""),
            );
            flow.lines(
                MARGIN + 200.0,
                top,
                9.5,
                13.0,
                Style::Regular,
                c.muted,
                &message,
            );
            flow.y += height;
            flow.rule(c.border);
        }
    }
}

/// Lays out every page, with backgrounds and footers.
pub fn lay_out(report: &ProspectingReportContent) -> Vec<Vec<Op>> {
    let labels = texts::labels(report.language);
    let c = colours(&palette(report.theme));
    let mut flow = Flow::new();
    cover(&mut flow, report, &labels, &c);
    for d in &report.domains {
        domain(&mut flow, report, d, &labels, &c);
    }
    closing(&mut flow, report, &labels, &c);
    let total = flow.pages.len();
    let footer = format!("{} · {}", labels.footer, report.cover.generated_for);
    let footer = crate::layout::wrap(Style::Regular, 7.5, &footer, CONTENT_W - 60.0)
        .into_iter()
        .next()
        .unwrap_or_default();
    flow.pages
        .into_iter()
        .enumerate()
        .map(|(i, ops)| {
            let mut page = Vec::with_capacity(ops.len() + 4);
            page.push(Op::Rect {
                x: 0.0,
                y: 0.0,
                w: PAGE_W,
                h: PAGE_H,
                radius: 0.0,
                fill: c.background,
                stroke: None,
            });
            page.extend(ops);
            crate::layout::footer(&mut page, &footer, (i + 1, total), (c.border, c.muted));
            page
        })
        .collect()
}
