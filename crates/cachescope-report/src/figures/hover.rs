//! Values on hover without scripts or network: while a figure is drawn, each point, cell or
//! cut label registers its pixel box and full text here; the SVG then gets one transparent
//! rectangle per box with an SVG `<title>`, which browsers show as a tooltip. plotters draws
//! no titles itself, so the boxes are collected beside it (per thread: figures are drawn on
//! one thread each) and laid over the finished SVG.

use std::cell::RefCell;
use std::fmt::Write as _;

/// One hover box in backend pixels.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Target {
    x: i32,
    y: i32,
    w: i32,
    h: i32,
    text: String,
}

thread_local! {
    static TARGETS: RefCell<Vec<Target>> = const { RefCell::new(Vec::new()) };
}

/// Registers the box between two pixel corners.
pub(super) fn rect(a: (i32, i32), b: (i32, i32), text: impl Into<String>) {
    let target = Target {
        x: a.0.min(b.0),
        y: a.1.min(b.1),
        w: (a.0 - b.0).abs().max(1),
        h: (a.1 - b.1).abs().max(1),
        text: text.into(),
    };
    TARGETS.with(|t| t.borrow_mut().push(target));
}

/// Registers a 12-pixel box centred on a point.
pub(super) fn point(at: (i32, i32), text: impl Into<String>) {
    rect((at.0 - 6, at.1 - 6), (at.0 + 6, at.1 + 6), text);
}

/// Forgets the boxes registered so far (before a figure is drawn).
pub(super) fn clear() {
    TARGETS.with(|t| t.borrow_mut().clear());
}

/// The boxes registered since [`clear`], laid over `svg` before its closing tag.
pub(super) fn overlay(svg: &str) -> String {
    let targets = TARGETS.with(|t| std::mem::take(&mut *t.borrow_mut()));
    let Some(end) = svg.rfind("</svg>") else {
        return svg.to_owned();
    };
    let mut layer = String::from("<g class=\"hover\">\n");
    for t in &targets {
        let _ = writeln!(
            layer,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#000\" fill-opacity=\"0\"><title>{}</title></rect>",
            t.x,
            t.y,
            t.w,
            t.h,
            escape(&t.text)
        );
    }
    layer.push_str("</g>\n");
    format!("{}{layer}{}", &svg[..end], &svg[end..])
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `name` cut to `max` characters with an ellipsis (the full name goes in a hover box).
pub(super) fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_owned();
    }
    let kept: String = name.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_become_titled_rectangles_before_the_closing_tag() {
        clear();
        rect((10, 20), (4, 8), "a <b> & c");
        point((100, 50), "p");
        let svg = overlay("<svg>x</svg>\n");
        assert!(svg.starts_with("<svg>x<g class=\"hover\">"), "{svg}");
        assert!(
            svg.contains("x=\"4\" y=\"8\" width=\"6\" height=\"12\""),
            "{svg}"
        );
        assert!(svg.contains("<title>a &lt;b&gt; &amp; c</title>"), "{svg}");
        assert!(svg.contains("x=\"94\" y=\"44\""), "{svg}");
        assert!(svg.ends_with("</g>\n</svg>\n"));
        // Taken: the next figure starts empty.
        assert!(!overlay("<svg></svg>").contains("<rect"));
    }

    #[test]
    fn long_names_are_cut_with_an_ellipsis() {
        assert_eq!(shorten("short", 8), "short");
        assert_eq!(
            shorten("make_block(prog.c:7)-main(prog.c:18)", 12),
            "make_block(…"
        );
        assert_eq!(
            shorten("make_block(prog.c:7)-main(prog.c:18)", 12)
                .chars()
                .count(),
            12
        );
    }
}
