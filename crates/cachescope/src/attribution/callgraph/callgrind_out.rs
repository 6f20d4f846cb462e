//! The call graph as a Callgrind output file (`callgrind.out`), which `callgrind_annotate`
//! (`--inclusive=yes` for inclusive costs) and KCachegrind read (`attribute --callgrind-out`).
//!
//! The format (Valgrind's "Callgrind Format Specification"): a header (`version:`,
//! `creator:`, `cmd:`, `desc:` lines, `positions: line`, one `event:` line per event giving
//! its long name, and `events:` last), then per function an `ob=` object, `fl=` file and
//! `fn=` name block whose lines are `LINE COST…` (self costs by source line; `fi=` switches to
//! another file for inlined code and `fe=` back), and per call site `cfi=`/`cfn=` (the
//! callee), `calls=COUNT TARGET` (the callee's first line), then `LINE COST…`: the site's line
//! and the calls' inclusive cost. `summary:` and `totals:` give every reference's costs.
//!
//! The calls' inclusive costs count recursion once ([`super::CallRow::inclusive`]): the sum
//! over a function's callers is its inclusive cost, which is how `callgrind_annotate
//! --inclusive=yes` computes it. (Callgrind itself writes a recursive call's whole nested
//! cost, so its annotate output counts recursive functions more than once.) Without call
//! events the file has self costs only.

use std::fmt::Write as _;

use super::costs::{Costs, D1MC, EVENT_NAMES, EVENTS};
use super::report::{CallGraphReport, CallRow, FunctionRow, Position};

/// A name on one line, `???` when empty or unknown.
fn one_line(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.replace(['\n', '\r'], " "),
        _ => "???".into(),
    }
}

/// The Callgrind file of `report` (its functions and calls, or those of thread `thread` when
/// given: Callgrind's `--separate-threads` writes one such file per thread). `cmd` names the
/// program.
pub fn render(report: &CallGraphReport, cmd: &str, thread: Option<u32>) -> String {
    let (totals, functions, calls) =
        match thread.and_then(|t| report.threads.iter().find(|g| g.thread == t)) {
            Some(g) => (&g.totals, &g.functions[..], &g.calls[..]),
            None => (&report.totals, &report.functions[..], &report.calls[..]),
        };
    let columns = if report.threaded { EVENTS.len() } else { D1MC };
    let mut out = String::new();
    out.push_str("# callgrind format\nversion: 1\ncreator: cachescope attribute --callgrind-out\n");
    let _ = writeln!(out, "cmd: {}", one_line(Some(cmd)));
    if let Some(t) = thread {
        let _ = writeln!(out, "thread: {t}");
    }
    for (level, g) in ["I1", "D1", "LL"].iter().zip(&report.caches) {
        let _ = writeln!(out, "desc: {level} cache: {g}");
    }
    let _ = writeln!(
        out,
        "desc: Simulated by: cachescope, Cachegrind's cache model (LRU, write-allocate); \
         D1ev, D1wb: lines data references replaced in D1, dirty ones; D1mc: misses in a \
         private D1 per thread caused by another thread's write"
    );
    if !report.call_events {
        out.push_str("desc: No call events: self costs only\n");
    }
    if let Some(rate) = report.sampled {
        let _ = writeln!(
            out,
            "desc: Sampled at rate {rate}: misses are estimates (the sampled lines' in miniature \
             caches, times {:.0}); Ir, Dr, Dw and calls are exact; I1mr, ILmr not measured",
            1.0 / rate
        );
    }
    out.push_str("positions: line\n");
    for (e, long) in EVENTS.iter().zip(EVENT_NAMES).take(columns) {
        let _ = writeln!(out, "event: {e} : {long}");
    }
    let _ = writeln!(out, "events: {}", EVENTS[..columns].join(" "));
    push_costs(&mut out, "summary:", totals, columns);
    for (i, f) in functions.iter().enumerate() {
        function(&mut out, i, f, functions, calls, columns);
    }
    push_costs(&mut out, "totals:", totals, columns);
    out
}

fn push_costs(out: &mut String, head: &str, c: &Costs, columns: usize) {
    out.push_str(head);
    for v in &c.0[..columns] {
        let _ = write!(out, " {v}");
    }
    out.push('\n');
}

/// One function's block: its lines, then its calls.
fn function(
    out: &mut String,
    i: usize,
    f: &FunctionRow,
    functions: &[FunctionRow],
    calls: &[CallRow],
    columns: usize,
) {
    let file = one_line(f.file.as_deref());
    let _ = writeln!(out, "\nob={}", one_line(f.object.as_deref()));
    let _ = writeln!(out, "fl={file}");
    let _ = writeln!(out, "fn={}", one_line(Some(&f.function)));
    let mut current = file.clone();
    // Inlined code of another file: `fi=` before its lines (and before a call's lines, whose
    // `calls=` must be followed by its cost line), `fe=` back.
    let mut switch = |out: &mut String, pos: &Position| {
        let want = one_line(pos.0.as_deref());
        if want != current {
            let tag = if want == file { "fe" } else { "fi" };
            let _ = writeln!(out, "{tag}={want}");
            current = want;
        }
    };
    for (pos, c) in &f.lines {
        switch(out, pos);
        push_costs(out, &pos.1.to_string(), c, columns);
    }
    for call in calls.iter().filter(|c| c.ends.0 == i) {
        let callee = &functions[call.ends.1];
        let site = &call.ends.2;
        switch(out, site);
        let _ = writeln!(out, "cob={}", one_line(callee.object.as_deref()));
        let _ = writeln!(out, "cfi={}", one_line(callee.file.as_deref()));
        let _ = writeln!(out, "cfn={}", one_line(Some(&callee.function)));
        let _ = writeln!(out, "calls={} {}", call.calls, callee.entry.1);
        push_costs(out, &site.1.to_string(), &call.inclusive, columns);
    }
}
