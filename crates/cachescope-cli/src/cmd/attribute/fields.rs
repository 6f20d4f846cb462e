//! `attribute --fields` on the terminal: each structure's fields, with their references,
//! misses and the bytes of each fetched line they used.

use std::fmt::Write as _;

use cachescope::attribution::Report;
use cachescope::units::thousands;

/// The structures with the most misses (at most `top`), field by field.
pub fn render(o: &mut String, r: &Report, top: usize) {
    if r.structures.is_empty() {
        return;
    }
    let line = r.cache.line_size().bytes();
    let _ = writeln!(
        o,
        "\nStructures by field: references, misses, and the bytes of each fetched {line}-byte \
         line the field used"
    );
    for s in r.structures.iter().take(top) {
        let what = match (&s.type_name, &s.pointer) {
            (Some(t), Some(p)) => format!("{t} through pointer {p}"),
            (Some(t), None) => t.clone(),
            (None, _) => format!("elements of {} bytes ({})", s.element_size, s.element_from),
        };
        let dims = if s.dims.is_empty() {
            String::new()
        } else {
            let d: Vec<String> = s.dims.iter().map(u64::to_string).collect();
            format!(" [{}]", d.join("]["))
        };
        let _ = writeln!(
            o,
            "{} ({}): {what}{dims}, {} references, {} misses",
            s.structure,
            s.site.as_deref().unwrap_or(match s.kind {
                cachescope::attribution::BucketKind::Global => "global",
                cachescope::attribution::BucketKind::Stack => "stack local",
                _ => "heap",
            }),
            thousands(s.refs),
            thousands(s.misses)
        );
        let _ = writeln!(
            o,
            "  {:<24} {:>6} {:>5} {:>12} {:>10} {:>10}",
            "field", "offset", "size", "refs", "misses", "used/line"
        );
        for f in &s.fields {
            let _ = writeln!(
                o,
                "  {:<24} {:>6} {:>5} {:>12} {:>10} {:>10.1}",
                f.field,
                f.offset,
                f.size,
                thousands(f.refs),
                thousands(f.misses),
                f.used_per_line
            );
        }
    }
}
