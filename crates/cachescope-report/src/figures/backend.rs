//! The two backends every figure is drawn into: SVG (vector, inlined in the page) and PNG (for
//! slides and issues), with DejaVu Sans embedded in the binary and registered with plotters'
//! `ab_glyph` backend, so no system font is needed to render.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Drawn, HEIGHT, WIDTH};

/// DejaVu Sans (Bitstream Vera licence, assets/DejaVuSans-LICENSE).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a fixed, known-good file: failure to parse it is a build defect.
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans does not parse"));
    });
}

pub(super) fn svg(
    f: impl Fn(&DrawingArea<SVGBackend, Shift>) -> Drawn,
) -> std::result::Result<String, Box<dyn std::error::Error>> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        super::hover::clear();
        f(&root)?;
        root.present()?;
    }
    Ok(super::hover::overlay(&out))
}

pub(super) fn png(
    f: impl Fn(&DrawingArea<BitMapBackend, Shift>) -> Drawn,
) -> std::result::Result<Vec<u8>, Box<dyn std::error::Error>> {
    register_font();
    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        f(&root)?;
        root.present()?;
        // A bitmap has no hover: the boxes the drawing registered are dropped.
        super::hover::clear();
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(out)
}
