//! The attribution's counts per source line in Cachegrind's output format
//! (`cachegrind.out.<pid>`), so `cg_annotate FILE` and KCachegrind show cachescope's misses on
//! the program's source (`cachescope attribute --cachegrind-out FILE`).
//!
//! The format, as Valgrind's Cachegrind writes it and `cg_annotate` (the Perl one of
//! Valgrind ≤ 3.20 and the Python one since) reads it: `desc:` lines (free text, printed at
//! the head of the annotation), one `cmd:` line, one `events:` line naming the counts' columns,
//! then `fl=FILE` blocks of `fn=FUNCTION` blocks of `LINE COUNT…` lines, and a final
//! `summary:` line with the totals, which `cg_annotate` checks against the sum of the lines.
//!
//! The events (one simulated cache, called `D1` as in Cachegrind):
//!
//! | event | counts |
//! | --- | --- |
//! | `Ir` | instruction fetches (left out when the trace has none) |
//! | `Dr`, `Dw` | data reads (loads and modifies, a modify being one lookup as in Cachegrind) and writes |
//! | `D1mr`, `D1mw` | their misses in the exact simulation |
//! | `SD1mr`, `SD1mw` | the misses among those the sampling monitor picked |
//!
//! Code without a known source line goes to `fl=???`, line 0, under its function's name or
//! `fn=???`, as Cachegrind does.
//!
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::attribution::{cachegrind_out, Attribution, Options};
//! use cachescope::{Access, Batch};
//!
//! let opts = Options { per_instruction: true, sample_every: 1, ..Options::default() };
//! let mut a = Attribution::new(opts, None)?;
//! let batch: Batch = [Access::load(0x1000, 8), Access::store(0x1000, 8)].into_iter().collect();
//! a.observe(&batch);
//! let text = cachegrind_out::render(&a.finish()?, "prog");
//! assert!(text.contains("events: Dr D1mr Dw D1mw SD1mr SD1mw\n"));
//! assert!(text.contains("fl=???\nfn=???\n0 1 1 1 0 1 0\n"));
//! assert!(text.ends_with("summary: 1 1 1 0 1 0\n"));
//! # Ok::<(), cachescope::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::report::Report;

/// The counts of one instruction or one source line, one per event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Instruction fetches (`Ir`).
    pub ir: u64,
    /// Data reads: loads and modifies (`Dr`).
    pub dr: u64,
    /// Read misses (`D1mr`).
    pub d1mr: u64,
    /// Data writes (`Dw`).
    pub dw: u64,
    /// Write misses (`D1mw`).
    pub d1mw: u64,
    /// Read misses the monitor sampled (`SD1mr`).
    pub sd1mr: u64,
    /// Write misses the monitor sampled (`SD1mw`).
    pub sd1mw: u64,
}

impl LineCounts {
    /// One data reference: a write or a read, a miss or not, sampled or not.
    #[inline]
    pub(super) fn data(&mut self, write: bool, miss: bool, sampled: bool) {
        let (refs, misses, samples) = if write {
            (&mut self.dw, &mut self.d1mw, &mut self.sd1mw)
        } else {
            (&mut self.dr, &mut self.d1mr, &mut self.sd1mr)
        };
        *refs += 1;
        *misses += u64::from(miss);
        *samples += u64::from(sampled);
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &LineCounts) {
        for (a, b) in self.fields_mut().into_iter().zip(other.values()) {
            *a += b;
        }
    }

    /// The counts in [`EVENTS`] order.
    pub fn values(&self) -> [u64; 7] {
        [
            self.ir, self.dr, self.d1mr, self.dw, self.d1mw, self.sd1mr, self.sd1mw,
        ]
    }

    fn fields_mut(&mut self) -> [&mut u64; 7] {
        [
            &mut self.ir,
            &mut self.dr,
            &mut self.d1mr,
            &mut self.dw,
            &mut self.d1mw,
            &mut self.sd1mr,
            &mut self.sd1mw,
        ]
    }
}

/// Every event the file can have, in column order; `Ir` is written only when the trace had
/// instruction fetches.
pub const EVENTS: [&str; 7] = ["Ir", "Dr", "D1mr", "Dw", "D1mw", "SD1mr", "SD1mw"];

/// One source line's counts (every instruction of that file, function and line merged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceLine {
    /// The source file as DWARF names it (usually an absolute path); `None` when unknown.
    pub file: Option<String>,
    /// The function (the innermost one, inlining included), when known.
    pub function: Option<String>,
    /// The line; 0 when unknown.
    pub line: u32,
    /// Its counts.
    pub counts: LineCounts,
}

/// One line of the file: no line breaks inside, empty text as `???`.
fn one_line(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.replace(['\n', '\r'], " "),
        _ => "???".into(),
    }
}

fn push_counts(out: &mut String, values: &[u64]) {
    for v in values {
        let _ = write!(out, " {v}");
    }
    out.push('\n');
}

/// The Cachegrind-format file of `report`'s [`Report::source_lines`] (empty unless the
/// attribution ran with [`Options::per_instruction`](super::Options::per_instruction)):
/// `cmd` is the program's command line, or whatever names the trace. Files, functions and
/// lines are sorted, so equal reports give equal text.
pub fn render(report: &Report, cmd: &str) -> String {
    let skip = usize::from(report.instructions == 0);
    let g = &report.cache;
    let ways = if g.is_fully_associative() {
        "fully associative".to_string()
    } else {
        format!("{}-way associative", g.assoc())
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "desc: D1 cache:         {} B, {} B, {ways}",
        g.size_bytes(),
        g.line_size().bytes()
    );
    let _ = writeln!(
        out,
        "desc: Simulated by:     cachescope attribute: exact LRU, data references only, each \
         on the line of its first byte; a modify is one read"
    );
    let _ = writeln!(
        out,
        "desc: Sampled events:   SD1mr SD1mw, the D1 misses a monitor sampling 1 in {} misses \
         picked (seed {}): {} samples",
        report.sample_every, report.seed, report.samples
    );
    let _ = writeln!(out, "cmd: {}", one_line(Some(cmd)));
    let _ = writeln!(out, "events: {}", EVENTS[skip..].join(" "));

    let mut tree: BTreeMap<String, BTreeMap<String, BTreeMap<u32, LineCounts>>> = BTreeMap::new();
    let mut total = LineCounts::default();
    for l in &report.source_lines {
        let file = one_line(l.file.as_deref());
        let line = if l.file.is_some() { l.line } else { 0 };
        tree.entry(file)
            .or_default()
            .entry(one_line(l.function.as_deref()))
            .or_default()
            .entry(line)
            .or_default()
            .add(&l.counts);
        total.add(&l.counts);
    }
    for (file, functions) in &tree {
        let _ = writeln!(out, "fl={file}");
        for (function, lines) in functions {
            let _ = writeln!(out, "fn={function}");
            for (line, counts) in lines {
                let _ = write!(out, "{line}");
                push_counts(&mut out, &counts.values()[skip..]);
            }
        }
    }
    out.push_str("summary:");
    push_counts(&mut out, &total.values()[skip..]);
    out
}
