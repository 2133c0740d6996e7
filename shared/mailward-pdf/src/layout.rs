//! A small flow layout: text measured with the same shaper the PDF uses (rustybuzz), wrapped
//! greedily, and placed top to bottom on A4 pages that break when full. Layout produces plain
//! drawing operations per page; [`crate::draw`] turns them into PDF, so the page count is known
//! before any footer is drawn.

use std::sync::OnceLock;

/// A4 width in points.
pub const PAGE_W: f32 = 595.276;
/// A4 height in points.
pub const PAGE_H: f32 = 841.89;
/// Left and right margin.
pub const MARGIN: f32 = 50.0;
/// Where content starts on a page.
pub const TOP: f32 = 56.0;
/// Where content must end (the footer lives below).
pub const BOTTOM: f32 = PAGE_H - 64.0;
/// The usable width.
pub const CONTENT_W: f32 = PAGE_W - 2.0 * MARGIN;

/// The embedded fonts (DejaVu; see fonts/SOURCES.md).
pub static REGULAR: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
/// Bold.
pub static BOLD: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");
/// Monospace, for DNS names and records.
pub static MONO: &[u8] = include_bytes!("../fonts/DejaVuSansMono.ttf");

/// Which font a run of text uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Regular,
    Bold,
    Mono,
}

/// An sRGB colour.
pub type Rgb = (u8, u8, u8);

/// Parses `#rrggbb` (the palettes are constants; anything else is black).
pub fn rgb(hex: &str) -> Rgb {
    let h = hex.trim_start_matches('#');
    let part = |i: usize| {
        h.get(i..i + 2)
            .and_then(|p| u8::from_str_radix(p, 16).ok())
            .unwrap_or(0)
    };
    (part(0), part(2), part(4))
}

/// One drawing operation; y is the baseline for text and the top edge for shapes.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        style: Style,
        colour: Rgb,
        text: String,
    },
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        radius: f32,
        fill: Rgb,
        stroke: Option<Rgb>,
    },
    /// A stroked polyline (a chart's line).
    Line {
        points: Vec<(f32, f32)>,
        colour: Rgb,
        width: f32,
    },
    /// The document's logo, fitted into the box (top-left corner `x`, `y`).
    Image { x: f32, y: f32, w: f32, h: f32 },
}

struct Faces {
    regular: rustybuzz::Face<'static>,
    bold: rustybuzz::Face<'static>,
    mono: rustybuzz::Face<'static>,
}

fn faces() -> &'static Faces {
    static FACES: OnceLock<Faces> = OnceLock::new();
    FACES.get_or_init(|| Faces {
        regular: rustybuzz::Face::from_slice(REGULAR, 0).expect("embedded DejaVu Sans parses"),
        bold: rustybuzz::Face::from_slice(BOLD, 0).expect("embedded DejaVu Sans Bold parses"),
        mono: rustybuzz::Face::from_slice(MONO, 0).expect("embedded DejaVu Sans Mono parses"),
    })
}

/// The width of `text` in points, as the PDF will draw it (shaped, kerning included).
pub fn width(style: Style, size: f32, text: &str) -> f32 {
    let f = faces();
    let face = match style {
        Style::Regular => &f.regular,
        Style::Bold => &f.bold,
        Style::Mono => &f.mono,
    };
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(text);
    buffer.guess_segment_properties();
    let shaped = rustybuzz::shape(face, &[], buffer);
    let units: i64 = shaped
        .glyph_positions()
        .iter()
        .map(|p| i64::from(p.x_advance))
        .sum();
    units as f32 * size / f32::from(face.units_per_em() as u16)
}

/// Splits a word too wide for a line into pieces that fit.
fn split_long(style: Style, size: f32, word: &str, max: f32) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in word.chars() {
        current.push(c);
        if width(style, size, &current) > max && current.chars().count() > 1 {
            current.pop();
            pieces.push(std::mem::take(&mut current));
            current.push(c);
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Greedy word wrap to `max` points; words wider than a line are cut.
pub fn wrap(style: Style, size: f32, text: &str, max: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_owned()
        } else {
            format!("{current} {word}")
        };
        if width(style, size, &candidate) <= max {
            current = candidate;
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        if width(style, size, word) <= max {
            current = word.to_owned();
        } else {
            let mut pieces = split_long(style, size, word, max);
            current = pieces.pop().unwrap_or_default();
            lines.extend(pieces);
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// The pages being laid out and the cursor on the last one.
pub struct Flow {
    /// Finished and current pages.
    pub pages: Vec<Vec<Op>>,
    /// The next free y on the current page.
    pub y: f32,
}

impl Default for Flow {
    fn default() -> Self {
        Self::new()
    }
}

impl Flow {
    /// One empty page.
    pub fn new() -> Self {
        Self {
            pages: vec![Vec::new()],
            y: TOP,
        }
    }

    /// Starts a new page.
    pub fn page_break(&mut self) {
        self.pages.push(Vec::new());
        self.y = TOP;
    }

    /// Breaks the page unless `height` more points fit.
    pub fn ensure(&mut self, height: f32) {
        if self.y + height > BOTTOM && self.y > TOP {
            self.page_break();
        }
    }

    /// Adds an operation to the current page.
    pub fn push(&mut self, op: Op) {
        if let Some(page) = self.pages.last_mut() {
            page.push(op);
        }
    }

    /// Text on one line at `x`, baseline `y`.
    pub fn text(&mut self, x: f32, y: f32, size: f32, style: Style, colour: Rgb, text: &str) {
        self.push(Op::Text {
            x,
            y,
            size,
            style,
            colour,
            text: text.to_owned(),
        });
    }

    /// Pre-wrapped lines from baseline `top`, `leading` apart (the cursor does not move).
    #[allow(clippy::too_many_arguments)]
    pub fn lines(
        &mut self,
        x: f32,
        top: f32,
        size: f32,
        leading: f32,
        style: Style,
        colour: Rgb,
        lines: &[String],
    ) {
        for (n, line) in lines.iter().enumerate() {
            self.text(x, top + leading * n as f32, size, style, colour, line);
        }
    }

    /// A wrapped paragraph at the cursor, between `x` and `x + max`, breaking pages between
    /// lines. Returns the number of lines.
    #[allow(clippy::too_many_arguments)]
    pub fn paragraph(
        &mut self,
        x: f32,
        max: f32,
        size: f32,
        leading: f32,
        style: Style,
        colour: Rgb,
        text: &str,
    ) -> usize {
        let lines = wrap(style, size, text, max);
        for line in &lines {
            self.ensure(leading);
            self.y += leading;
            let y = self.y - (leading - size) / 2.0 - size * 0.2;
            self.text(x, y, size, style, colour, line);
        }
        lines.len()
    }

    /// A pill with white text whose left edge is `x` and vertical centre `centre`; returns its
    /// width.
    pub fn badge(&mut self, x: f32, centre: f32, colour: Rgb, text: &str) -> f32 {
        let size = 8.0;
        let w = width(Style::Bold, size, text) + 12.0;
        let h = 13.0;
        self.push(Op::Rect {
            x,
            y: centre - h / 2.0,
            w,
            h,
            radius: h / 2.0,
            fill: colour,
            stroke: None,
        });
        self.text(
            x + 6.0,
            centre + size * 0.35,
            size,
            Style::Bold,
            (255, 255, 255),
            text,
        );
        w
    }

    /// A thin horizontal rule across the content width at the cursor.
    pub fn rule(&mut self, colour: Rgb) {
        self.push(Op::Rect {
            x: MARGIN,
            y: self.y,
            w: CONTENT_W,
            h: 0.6,
            radius: 0.0,
            fill: colour,
            stroke: None,
        });
    }
}

/// A page's footer: a rule, `text` on the left and "n / total" on the right.
pub fn footer(
    page: &mut Vec<Op>,
    text: &str,
    (n, total): (usize, usize),
    (rule, colour): (Rgb, Rgb),
) {
    let y = PAGE_H - 32.0;
    page.push(Op::Rect {
        x: MARGIN,
        y: y - 14.0,
        w: CONTENT_W,
        h: 0.6,
        radius: 0.0,
        fill: rule,
        stroke: None,
    });
    page.push(Op::Text {
        x: MARGIN,
        y,
        size: 7.5,
        style: Style::Regular,
        colour,
        text: text.to_owned(),
    });
    let number = format!("{n} / {total}");
    page.push(Op::Text {
        x: MARGIN + CONTENT_W - width(Style::Regular, 7.5, &number),
        y,
        size: 7.5,
        style: Style::Regular,
        colour,
        text: number,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_respects_the_width_and_keeps_every_word() {
        let text = "Vérifié dans le DNS public : les destinataires rejettent le courrier usurpé \
                    quand DMARC est appliqué avec p=reject.";
        let lines = wrap(Style::Regular, 10.0, text, 150.0);
        assert!(lines.len() > 2);
        for line in &lines {
            assert!(width(Style::Regular, 10.0, line) <= 150.0, "{line}");
        }
        assert_eq!(
            lines.join(" ").split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_word_wider_than_the_line_is_cut() {
        let record = "v=DKIM1;k=rsa;p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwXyZ";
        let lines = wrap(Style::Mono, 8.0, record, 80.0);
        assert!(lines.len() > 1);
        assert_eq!(lines.concat(), record);
    }

    #[test]
    fn the_flow_breaks_pages_when_full() {
        let mut flow = Flow::new();
        for _ in 0..200 {
            flow.paragraph(
                MARGIN,
                CONTENT_W,
                10.0,
                14.0,
                Style::Regular,
                (0, 0, 0),
                "line",
            );
        }
        assert!(flow.pages.len() > 1);
        for page in &flow.pages {
            for op in page {
                if let Op::Text { y, .. } = op {
                    assert!(*y <= BOTTOM);
                }
            }
        }
    }
}
