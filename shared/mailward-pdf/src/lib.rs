//! Typesets a prospecting report as a PDF with krilla.
//!
//! Why a crate of its own: the PDF engine and its fonts (about 2 MB) are linked only by the
//! report-download function; every other Lambda stays small. The content is the same
//! [`ProspectingReportContent`] the JSON and HTML previews show, with the same words and colours
//! (`mailward_prospecting::{texts, html}`), so the PDF cannot say something the HTML
//! does not.

pub mod layout;
mod report;

use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{Path, PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::surface::Surface;
use krilla::text::{Font, TextDirection};
use layout::{Op, PAGE_H, PAGE_W, Rgb, Style};
use mailward_api_types::prospecting::{Language, ProspectingReportContent};

/// Why a PDF could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// An embedded font did not load.
    #[error("embedded font did not load")]
    Font,
    /// krilla refused the document.
    #[error("PDF serialisation failed: {0}")]
    Serialize(String),
}

fn fill(c: Rgb) -> Fill {
    Fill {
        paint: rgb::Color::new(c.0, c.1, c.2).into(),
        ..Default::default()
    }
}

fn rounded(x: f32, y: f32, w: f32, h: f32, r: f32) -> Option<Path> {
    let mut pb = PathBuilder::new();
    if r <= 0.0 {
        pb.push_rect(Rect::from_xywh(x, y, w, h)?);
        return pb.finish();
    }
    let r = r.min(w / 2.0).min(h / 2.0);
    let (k, x2, y2) = (0.552_284_8 * r, x + w, y + h);
    pb.move_to(x + r, y);
    pb.line_to(x2 - r, y);
    pb.cubic_to(x2 - r + k, y, x2, y + r - k, x2, y + r);
    pb.line_to(x2, y2 - r);
    pb.cubic_to(x2, y2 - r + k, x2 - r + k, y2, x2 - r, y2);
    pb.line_to(x + r, y2);
    pb.cubic_to(x + r - k, y2, x, y2 - r + k, x, y2 - r);
    pb.line_to(x, y + r);
    pb.cubic_to(x, y + r - k, x + r - k, y, x + r, y);
    pb.close();
    pb.finish()
}

struct Fonts {
    regular: Font,
    bold: Font,
    mono: Font,
}

fn draw(surface: &mut Surface, fonts: &Fonts, op: &Op) {
    match op {
        Op::Text {
            x,
            y,
            size,
            style,
            colour,
            text,
        } => {
            let font = match style {
                Style::Regular => &fonts.regular,
                Style::Bold => &fonts.bold,
                Style::Mono => &fonts.mono,
            };
            surface.set_stroke(None);
            surface.set_fill(Some(fill(*colour)));
            surface.draw_text(
                Point::from_xy(*x, *y),
                font.clone(),
                *size,
                text,
                false,
                TextDirection::Auto,
            );
        }
        Op::Rect {
            x,
            y,
            w,
            h,
            radius,
            fill: colour,
            stroke,
        } => {
            if let Some(path) = rounded(*x, *y, *w, *h, *radius) {
                surface.set_fill(Some(fill(*colour)));
                surface.set_stroke(stroke.map(|s| Stroke {
                    paint: rgb::Color::new(s.0, s.1, s.2).into(),
                    width: 0.8,
                    ..Default::default()
                }));
                surface.draw_path(&path);
            }
        }
    }
}

/// The report as PDF bytes (A4, fonts embedded as subsets, text extractable).
pub fn render(report: &ProspectingReportContent) -> Result<Vec<u8>, PdfError> {
    let pages = report::lay_out(report);
    let fonts = Fonts {
        regular: Font::new(layout::REGULAR.into(), 0).ok_or(PdfError::Font)?,
        bold: Font::new(layout::BOLD.into(), 0).ok_or(PdfError::Font)?,
        mono: Font::new(layout::MONO.into(), 0).ok_or(PdfError::Font)?,
    };
    let mut doc = Document::new();
    let language = match report.language {
        Language::En => "en",
        Language::Fr => "fr",
    };
    doc.set_metadata(
        Metadata::new()
            .title(format!(
                "{} · {}",
                report.cover.title, report.cover.generated_for
            ))
            .language(language.to_owned())
            .creator("Mailward".to_owned()),
    );
    let settings = PageSettings::from_wh(PAGE_W, PAGE_H).ok_or(PdfError::Font)?;
    for ops in &pages {
        let mut page = doc.start_page_with(settings.clone());
        let mut surface = page.surface();
        for op in ops {
            draw(&mut surface, &fonts, op);
        }
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| PdfError::Serialize(e.to_string()))
}
