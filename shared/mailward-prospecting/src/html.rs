//! The prospecting report as one self-contained HTML document: inline CSS, no scripts, no
//! external resources, so it can be mailed, archived or printed as is. Every string comes from
//! the content (already in the report's language) or from [`texts::labels`].

use crate::content::money;
use crate::texts;
use mailward_api_types::prospecting::{
    DkimState, DomainResult, FindingStatus, Language, ProspectingReportContent, RiskLevel, Theme,
};
use mailward_domain::html::escape;
use std::fmt::Write;

/// The colours of one theme, shared with the PDF rendering.
pub struct Palette {
    pub background: &'static str,
    pub surface: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    pub border: &'static str,
    pub accent: &'static str,
}

/// The palette of a theme.
pub fn palette(theme: Theme) -> Palette {
    match theme {
        Theme::Light => Palette {
            background: "#ffffff",
            surface: "#f4f6fa",
            text: "#1b2330",
            muted: "#5b6676",
            border: "#d9dee7",
            accent: "#1d4ed8",
        },
        Theme::Dark => Palette {
            background: "#111827",
            surface: "#1f2937",
            text: "#f3f4f6",
            muted: "#9ca3af",
            border: "#374151",
            accent: "#60a5fa",
        },
    }
}

/// The colour of a finding status (same in both themes).
pub fn status_colour(status: FindingStatus) -> &'static str {
    match status {
        FindingStatus::Pass => "#16a34a",
        FindingStatus::Warn => "#d97706",
        FindingStatus::Fail => "#dc2626",
        FindingStatus::Error => "#6b7280",
    }
}

/// The colour of a risk level.
pub fn risk_colour(risk: RiskLevel) -> &'static str {
    match risk {
        RiskLevel::Low => "#16a34a",
        RiskLevel::Moderate => "#ca8a04",
        RiskLevel::High => "#ea580c",
        RiskLevel::Critical => "#dc2626",
    }
}

/// The colour of a DKIM state.
pub fn dkim_colour(state: DkimState) -> &'static str {
    match state {
        DkimState::Signed => "#16a34a",
        DkimState::Missing => "#dc2626",
        DkimState::Unknown => "#6b7280",
    }
}

fn badge(out: &mut String, colour: &str, text: &str) {
    let _ = write!(
        out,
        r#"<span class="badge" style="background:{colour}">{}</span>"#,
        escape(text)
    );
}

fn domain_section(out: &mut String, lang: Language, d: &DomainResult) {
    let labels = texts::labels(lang);
    let _ = write!(
        out,
        r#"<section class="domain"><div class="domain-head"><h2>{}</h2><div>{} <strong>{}</strong>/100 "#,
        escape(&d.domain),
        escape(&labels.score),
        d.score
    );
    badge(
        out,
        risk_colour(d.risk),
        &format!("{} {}", labels.risk, d.risk_word),
    );
    out.push_str("</div></div>");
    if d.parked {
        let _ = write!(out, r#"<p class="muted">{}</p>"#, escape(&labels.parked));
    }
    let _ = write!(
        out,
        "<h3>{}</h3><table class=\"findings\">",
        escape(&labels.findings)
    );
    for f in &d.findings {
        out.push_str("<tr><td class=\"status\">");
        badge(
            out,
            status_colour(f.status),
            &texts::status_word(lang, f.status),
        );
        let _ = write!(
            out,
            r#"</td><td><strong>{}</strong><br><span class="muted">{}</span></td></tr>"#,
            escape(&f.title),
            escape(&f.detail)
        );
    }
    out.push_str("</table>");
    let _ = write!(out, "<h3>{}</h3>", escape(&labels.sending_services));
    if d.sending_services.is_empty() {
        let _ = write!(
            out,
            r#"<p class="muted">{}</p>"#,
            escape(&labels.no_sending_services)
        );
    } else {
        out.push_str("<table class=\"services\">");
        for s in &d.sending_services {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td class="mono">include:{}</td><td>{} "#,
                escape(&s.name),
                escape(&s.spf_include),
                escape(&labels.dkim)
            );
            badge(out, dkim_colour(s.dkim), &texts::dkim_state(lang, s.dkim));
            out.push_str("</td></tr>");
        }
        out.push_str("</table>");
    }
    if let Some(records) = &d.dns_records {
        let _ = write!(
            out,
            "<h3>{}</h3><table class=\"records\">",
            escape(&labels.dns_records)
        );
        for r in records {
            let _ = write!(
                out,
                r#"<tr><td>{}</td><td class="mono">{}</td><td class="mono">{}</td></tr>"#,
                escape(&r.record_type),
                escape(&r.name),
                escape(&r.value)
            );
        }
        out.push_str("</table>");
    }
    out.push_str("</section>");
}

/// Renders the document.
pub fn render(report: &ProspectingReportContent) -> String {
    let lang = report.language;
    let labels = texts::labels(lang);
    let p = palette(report.theme);
    let cover = &report.cover;
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{title} · {for_}</title><style>
body{{margin:0;background:{bg};color:{text};font:15px/1.5 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}}
main{{max-width:860px;margin:0 auto;padding:40px 24px}}
.cover{{background:{surface};border:1px solid {border};border-radius:12px;padding:32px;margin-bottom:32px}}
.cover h1{{margin:0 0 8px;font-size:30px;color:{accent}}}
.meta{{display:grid;grid-template-columns:repeat(2,1fr);gap:12px 24px;margin:24px 0}}
.meta .label{{display:block;color:{muted};font-size:12px;text-transform:uppercase;letter-spacing:.04em}}
.muted{{color:{muted}}}.mono{{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px;word-break:break-all}}
.badge{{display:inline-block;color:#fff;border-radius:999px;padding:1px 10px;font-size:12px;font-weight:600;white-space:nowrap}}
section{{border-top:1px solid {border};padding-top:16px;margin-top:24px}}
.domain-head{{display:flex;justify-content:space-between;align-items:baseline;gap:16px;flex-wrap:wrap}}
h2{{margin:0;font-size:22px}}h3{{font-size:15px;margin:20px 0 8px;color:{accent}}}
table{{width:100%;border-collapse:collapse}}td{{border-bottom:1px solid {border};padding:8px 6px;vertical-align:top}}
td.status{{width:110px}}
</style></head><body><main>"#,
        lang = match lang {
            Language::En => "en",
            Language::Fr => "fr",
        },
        title = escape(&cover.title),
        for_ = escape(&cover.generated_for),
        bg = p.background,
        text = p.text,
        surface = p.surface,
        border = p.border,
        accent = p.accent,
        muted = p.muted,
    );
    let _ = write!(
        out,
        r#"<div class="cover"><h1>{}</h1><p class="muted">{}</p><div class="meta"><div><span class="label">{}</span>{}</div>"#,
        escape(&cover.title),
        escape(&cover.subtitle),
        escape(&labels.prepared_for),
        escape(&cover.generated_for)
    );
    if let Some(by) = &cover.prepared_by {
        let _ = write!(
            out,
            "<div><span class=\"label\">{}</span>{}</div>",
            escape(&labels.prepared_by),
            escape(by)
        );
    }
    let _ = write!(
        out,
        "<div><span class=\"label\">{}</span>{}</div><div><span class=\"label\">{}</span>{}</div><div><span class=\"label\">{}</span>{}/100</div>",
        escape(&labels.date),
        escape(&cover.date),
        escape(&labels.deadline),
        escape(&cover.deadline),
        escape(&labels.average_score),
        cover.average_score
    );
    if let (Some(risk), Some(word)) = (cover.overall_risk, &cover.overall_risk_word) {
        let _ = write!(
            out,
            "<div><span class=\"label\">{}</span>",
            escape(&labels.overall_risk)
        );
        badge(&mut out, risk_colour(risk), word);
        out.push_str("</div>");
    }
    let _ = write!(out, "</div><p>{}</p></div>", escape(&cover.summary));
    for d in &report.domains {
        domain_section(&mut out, lang, d);
    }
    if let Some(loss) = &report.potential_loss {
        let _ = write!(
            out,
            "<section><h2>{}</h2><table>",
            escape(&labels.potential_loss)
        );
        for e in &loss.domains {
            let _ = write!(
                out,
                "<tr><td>{}</td><td style=\"text-align:right\">{}</td></tr>",
                escape(&e.domain),
                escape(&money(lang, loss.currency, e.amount))
            );
        }
        let _ = write!(
            out,
            "<tr><td><strong>{}</strong></td><td style=\"text-align:right\"><strong>{}</strong></td></tr></table><p class=\"muted\">{}</p></section>",
            escape(&labels.total),
            escape(&money(lang, loss.currency, loss.total)),
            escape(&loss.explanation)
        );
    }
    let _ = write!(out, "<section><h2>{}</h2><table>", escape(&labels.plan));
    for step in &report.plan {
        let _ = write!(
            out,
            "<tr><td style=\"width:110px\">{} {}</td><td>{}</td></tr>",
            escape(&labels.week),
            step.week,
            escape(&step.title)
        );
    }
    out.push_str("</table></section>");
    if !report.skipped_domains.is_empty() {
        let _ = write!(out, "<section><h2>{}</h2><table>", escape(&labels.skipped));
        for s in &report.skipped_domains {
            let _ = write!(
                out,
                "<tr><td class=\"mono\">{}</td><td>{}</td></tr>",
                escape(&s.domain),
                escape(&s.message)
            );
        }
        out.push_str("</table></section>");
    }
    let _ = write!(
        out,
        r#"<p class="muted" style="margin-top:32px;font-size:12px">{}</p></main></body></html>"#,
        escape(&labels.footer)
    );
    out
}
