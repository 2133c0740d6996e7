//! Typesets a prospecting report, and the scheduled report, as PDFs with krilla.
//!
//! Why a crate of its own: the PDF engine and its fonts (about 2 MB) are linked only by the
//! report-download function and the workers (the scheduled report); every other Lambda stays
//! small. The content is the same
//! [`ProspectingReportContent`] the JSON and HTML previews show, with the same words and colours
//! (`mailward_prospecting::{texts, html}`), so the PDF cannot say something the HTML
//! does not.

pub mod layout;
mod report;
mod scheduled;

use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{Path, PathBuilder, Point, Rect, Size, Transform};
use krilla::image::Image;
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::surface::Surface;
use krilla::text::{Font, TextDirection};
use layout::{Op, PAGE_H, PAGE_W, Rgb, Style};
use mailward_api_types::prospecting::{Language, ProspectingReportContent};
use mailward_api_types::scheduled_reports::ScheduledReportContent;

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

impl Fonts {
    fn load() -> Result<Self, PdfError> {
        Ok(Fonts {
            regular: Font::new(layout::REGULAR.into(), 0).ok_or(PdfError::Font)?,
            bold: Font::new(layout::BOLD.into(), 0).ok_or(PdfError::Font)?,
            mono: Font::new(layout::MONO.into(), 0).ok_or(PdfError::Font)?,
        })
    }
}

/// A logo: PNG or JPEG bytes, read by krilla.
fn image(bytes: &[u8]) -> Option<Image> {
    let data: krilla::Data = bytes.to_vec().into();
    if bytes.starts_with(b"\x89PNG") {
        Image::from_png(data, true).ok()
    } else if bytes.starts_with(&[0xff, 0xd8]) {
        Image::from_jpeg(data, true).ok()
    } else {
        None
    }
}

/// The size of `image` fitted into `w` × `h`, keeping its proportions.
fn fit(image: &Image, w: f32, h: f32) -> (f32, f32) {
    let (iw, ih) = image.size();
    let (iw, ih) = (iw.max(1) as f32, ih.max(1) as f32);
    let scale = (w / iw).min(h / ih);
    (iw * scale, ih * scale)
}

fn draw(surface: &mut Surface, fonts: &Fonts, logo: Option<&Image>, op: &Op) {
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
        Op::Line {
            points,
            colour,
            width,
        } => {
            let mut pb = PathBuilder::new();
            for (i, (x, y)) in points.iter().enumerate() {
                if i == 0 {
                    pb.move_to(*x, *y);
                } else {
                    pb.line_to(*x, *y);
                }
            }
            if let Some(path) = pb.finish() {
                surface.set_fill(None);
                surface.set_stroke(Some(Stroke {
                    paint: rgb::Color::new(colour.0, colour.1, colour.2).into(),
                    width: *width,
                    ..Default::default()
                }));
                surface.draw_path(&path);
            }
        }
        Op::Image { x, y, w, h } => {
            if let Some(logo) = logo {
                let (fw, fh) = fit(logo, *w, *h);
                if let Some(size) = Size::from_wh(fw, fh) {
                    // Right-aligned in its box, vertically centred.
                    let left = x + w - fw;
                    let top = y + (h - fh) / 2.0;
                    surface.push_transform(&Transform::from_translate(left, top));
                    surface.draw_image(logo.clone(), size);
                    surface.pop();
                }
            }
        }
    }
}

/// The report as PDF bytes (A4, fonts embedded as subsets, text extractable).
pub fn render(report: &ProspectingReportContent) -> Result<Vec<u8>, PdfError> {
    let pages = report::lay_out(report);
    let fonts = Fonts::load()?;
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
            draw(&mut surface, &fonts, None, op);
        }
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| PdfError::Serialize(e.to_string()))
}

/// Width and height of the logo's box on the cover.
const LOGO_BOX: (f32, f32) = (140.0, 44.0);

/// A scheduled report as PDF bytes (A4, fonts embedded as subsets, text extractable), with the
/// brand's logo when `logo` holds a PNG or JPEG krilla can read (anything else is left out).
pub fn render_scheduled(
    report: &ScheduledReportContent,
    logo: Option<&[u8]>,
) -> Result<Vec<u8>, PdfError> {
    let logo = logo.and_then(image);
    let pages = scheduled::lay_out(report, logo.as_ref().map(|_| LOGO_BOX));
    let fonts = Fonts::load()?;
    let mut doc = Document::new();
    doc.set_metadata(
        Metadata::new()
            .title(format!("{} · {}", report.title, report.brand))
            .language("en".to_owned())
            .creator("Mailward".to_owned()),
    );
    let settings = PageSettings::from_wh(PAGE_W, PAGE_H).ok_or(PdfError::Font)?;
    for ops in &pages {
        let mut page = doc.start_page_with(settings.clone());
        let mut surface = page.surface();
        for op in ops {
            draw(&mut surface, &fonts, logo.as_ref(), op);
        }
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| PdfError::Serialize(e.to_string()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_scheduled_report_renders_with_and_without_a_logo() {
        let report = crate::scheduled::tests::sample();
        let plain = super::render_scheduled(&report, None).unwrap();
        assert!(plain.starts_with(b"%PDF-"));
        let png = include_bytes!("../../../tests/api/fixtures/logo.png");
        let branded = super::render_scheduled(&report, Some(png)).unwrap();
        assert!(branded.len() > plain.len());
        // Not an image at all: left out, never an error.
        let odd = super::render_scheduled(&report, Some(b"<svg/>")).unwrap();
        assert!(odd.starts_with(b"%PDF-"));
        if let Ok(dir) = std::env::var("MAILWARD_KEEP_REPORT_PDF") {
            std::fs::write(
                std::path::Path::new(&dir).join("sample-report.pdf"),
                &branded,
            )
            .unwrap();
        }
    }
}
