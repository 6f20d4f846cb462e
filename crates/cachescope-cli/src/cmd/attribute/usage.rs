//! `attribute`'s terminal tables of how lines are used: line utilization and write-backs by
//! stat bucket, and the loads' strides.

use std::fmt::Write as _;

use cachescope::attribution::Report;
use cachescope::units::thousands;

use super::table::cut;

/// Buckets with at least this share of the fetched bytes are ranked by utilization.
pub const MIN_FETCHED_SHARE: f64 = 0.01;

/// The utilization table (lowest first) and the loads table, `top` rows each; `w` is the
/// bucket column's width.
pub fn render(o: &mut String, r: &Report, top: usize, w: usize) {
    if let Some(u) = r.utilization {
        let _ = writeln!(
            o,
            "\nLine utilization: bytes touched of each fetched line while resident ({:.3} \
             overall), lowest first among buckets with ≥ 1 % of the fetched bytes",
            u
        );
        let wb = r.writebacks.is_some();
        let _ = write!(
            o,
            "{:<w$} {:>14} {:>14} {:>6}",
            "bucket", "fetched B", "used B", "util"
        );
        if wb {
            let _ = write!(o, " {:>12}", "writebacks");
        }
        o.push('\n');
        for b in r.worst_utilized(MIN_FETCHED_SHARE).into_iter().take(top) {
            let _ = write!(
                o,
                "{:<w$} {:>14} {:>14} {:>6.3}",
                cut(&b.name, w),
                thousands(b.fetched_bytes.unwrap_or(0)),
                thousands(b.used_bytes.unwrap_or(0)),
                b.utilization.unwrap_or(0.0)
            );
            if wb {
                let _ = write!(o, " {:>12}", thousands(b.writebacks.unwrap_or(0)));
            }
            o.push('\n');
        }
    } else if let Some(n) = r.writebacks {
        let _ = writeln!(
            o,
            "\nWrite-backs (dirty lines evicted) by stat bucket: {n} in all"
        );
        for b in r
            .buckets
            .iter()
            .filter(|b| b.writebacks > Some(0))
            .take(top)
        {
            let n = b.writebacks.unwrap_or(0);
            let _ = writeln!(o, "{:<w$} {:>12}", cut(&b.name, w), thousands(n));
        }
    }
    if !r.loads.is_empty() {
        let _ = writeln!(
            o,
            "\nLoads by misses: the dominant stride between an instruction's consecutive \
             addresses and the share of its pairs with it"
        );
        let _ = writeln!(
            o,
            "{:<14} {:<36} {:>12} {:>12} {:>10} {:>6} {:>6}",
            "pc", "code line", "loads", "misses", "stride", "regul", "util"
        );
        for l in r.loads.iter().take(top) {
            let util = l
                .utilization
                .map_or_else(|| "-".into(), |u| format!("{u:.3}"));
            // A regularity of 0: no pair repeated a stride, so none dominates.
            let stride = if l.regularity > 0.0 {
                l.stride.to_string()
            } else {
                "-".into()
            };
            let _ = writeln!(
                o,
                "{:<14} {:<36} {:>12} {:>12} {:>10} {:>6.3} {:>6}",
                l.pc,
                cut(&l.code, 36),
                thousands(l.refs),
                thousands(l.misses),
                stride,
                l.regularity,
                util
            );
        }
    }
}
