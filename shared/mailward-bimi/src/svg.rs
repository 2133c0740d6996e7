//! The SVG Tiny Portable/Secure profile BIMI logos must follow (LESSONS.md): an `<svg>` root
//! in the SVG namespace with `version="1.2"` and `baseProfile="tiny-ps"`, no `x`/`y` on the
//! root, a `<title>`, and nothing that runs or fetches: no scripts, event handlers, animation,
//! foreign objects, raster images, or references outside the document. Read with quick-xml,
//! which never resolves external entities. Publishing rules of the BIMI Group and mailbox
//! providers that do not make a logo invalid are warnings: a square `viewBox`, at most 32 KiB.

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

const SVG_NS: &[u8] = b"http://www.w3.org/2000/svg";
/// Elements the profile forbids.
const FORBIDDEN: &[&[u8]] = &[
    b"script",
    b"animate",
    b"animateMotion",
    b"animateColor",
    b"animateTransform",
    b"set",
    b"discard",
    b"foreignObject",
    b"image",
    b"video",
    b"audio",
    b"iframe",
];
/// Size above which mailbox providers may refuse a logo.
pub const RECOMMENDED_MAX_BYTES: usize = 32 * 1024;

/// The checks of one element's attributes: no event handler, only local references.
fn check_attributes(e: &BytesStart<'_>) -> Result<(), String> {
    for attr in e.attributes() {
        let attr = attr.map_err(|err| format!("malformed attribute: {err}"))?;
        let local = attr.key.local_name();
        let local = local.as_ref();
        if local.len() > 2 && local[..2].eq_ignore_ascii_case(b"on") {
            return Err(format!(
                "event handler attribute {} is not allowed",
                String::from_utf8_lossy(attr.key.as_ref())
            ));
        }
        if local == b"href" {
            let value = attr
                .unescape_value()
                .map_err(|err| format!("malformed attribute value: {err}"))?;
            if !value.trim_start().starts_with('#') {
                return Err(format!("external reference {value} is not allowed"));
            }
        }
    }
    Ok(())
}

fn attribute(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// The root's checks.
fn check_root(ns: &ResolveResult<'_>, e: &BytesStart<'_>) -> Result<Vec<String>, String> {
    let in_svg_ns = matches!(ns, ResolveResult::Bound(n) if n.as_ref() == SVG_NS);
    if e.local_name().as_ref() != b"svg" || !in_svg_ns {
        return Err("the root element is not <svg> in the SVG namespace".into());
    }
    if attribute(e, b"version").as_deref() != Some("1.2") {
        return Err("the root must say version=\"1.2\"".into());
    }
    if attribute(e, b"baseProfile").as_deref() != Some("tiny-ps") {
        return Err("the root must say baseProfile=\"tiny-ps\"".into());
    }
    if attribute(e, b"x").is_some() || attribute(e, b"y").is_some() {
        return Err("the root must not have x or y".into());
    }
    let mut warnings = Vec::new();
    if let Some(view_box) = attribute(e, b"viewBox") {
        let numbers: Vec<f64> = view_box
            .split(|c: char| c.is_ascii_whitespace() || c == ',')
            .filter(|p| !p.is_empty())
            .filter_map(|p| p.parse().ok())
            .collect();
        if let [_, _, width, height] = numbers[..]
            && (width - height).abs() > f64::EPSILON
        {
            warnings.push("svg-viewbox-not-square".to_owned());
        }
    }
    Ok(warnings)
}

/// Checks a logo: `Ok(warnings)`, or why it is not SVG Tiny PS.
pub fn check(svg: &[u8]) -> Result<Vec<String>, String> {
    let mut reader = NsReader::from_reader(svg);
    reader.config_mut().trim_text(true);
    let mut depth = 0usize;
    let mut root_seen = false;
    let mut title = false;
    let mut warnings = Vec::new();
    loop {
        let (ns, event) = reader
            .read_resolved_event()
            .map_err(|e| format!("not well-formed XML: {e}"))?;
        let (element, empty) = match &event {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                (None, false)
            }
            Event::Eof => break,
            _ => (None, false),
        };
        let Some(e) = element else { continue };
        if !root_seen {
            warnings = check_root(&ns, &e)?;
            root_seen = true;
        } else {
            let name = e.local_name();
            if FORBIDDEN
                .iter()
                .any(|f| f.eq_ignore_ascii_case(name.as_ref()))
            {
                return Err(format!(
                    "<{}> is not allowed in SVG Tiny PS",
                    String::from_utf8_lossy(name.as_ref())
                ));
            }
            if depth == 1 && name.as_ref() == b"title" {
                title = true;
            }
        }
        check_attributes(&e)?;
        if !empty {
            depth += 1;
        }
    }
    if !root_seen {
        return Err("no root element".into());
    }
    if !title {
        return Err("the logo has no <title> (the brand name)".into());
    }
    if svg.len() > RECOMMENDED_MAX_BYTES {
        warnings.push("svg-larger-than-32kib".to_owned());
    }
    Ok(warnings)
}
