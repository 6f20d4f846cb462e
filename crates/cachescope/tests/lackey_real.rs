//! The lackey reader on real Valgrind output, checked against an independent count.
//!
//! Records small traces with `valgrind --tool=lackey --trace-mem=yes` when Valgrind is on PATH
//! (otherwise skips, saying so: see cachescope-testkit), reads them with
//! [`lackey::Reader`], and compares per kind the number of records, the sum of sizes, the sum of
//! addresses and the sum of pcs with a count made here with plain `str` splitting.

use std::collections::BTreeMap;
use std::path::Path;

use cachescope::trace::AccessReader;
use cachescope::{AccessKind, Batch};

mod common;

/// Per kind: records, sum of sizes, wrapping sums of addresses and of pcs.
type Totals = BTreeMap<AccessKind, (u64, u64, u64, u64)>;

/// The totals computed with `str` methods, independently of the reader.
fn count_with_str(text: &str) -> Totals {
    let mut totals = Totals::new();
    let mut pc = 0u64;
    for line in text.lines() {
        if line.starts_with("==") || line.is_empty() {
            continue;
        }
        let (kind, rest) = if let Some(rest) = line.strip_prefix("I  ") {
            (AccessKind::Instr, rest)
        } else if let Some(rest) = line.strip_prefix(" L ") {
            (AccessKind::Load, rest)
        } else if let Some(rest) = line.strip_prefix(" S ") {
            (AccessKind::Store, rest)
        } else if let Some(rest) = line.strip_prefix(" M ") {
            (AccessKind::Modify, rest)
        } else {
            panic!("unexpected line in a lackey log: {line:?}");
        };
        let (addr, size) = rest.split_once(',').expect("a comma");
        let addr = u64::from_str_radix(addr, 16).expect("a hex address");
        let size: u64 = size.parse().expect("a decimal size");
        if kind == AccessKind::Instr {
            pc = addr;
        }
        let t = totals.entry(kind).or_default();
        t.0 += 1;
        t.1 += size.max(1); // the reader reads a size of 0 as 1
        t.2 = t.2.wrapping_add(addr);
        t.3 = t.3.wrapping_add(pc);
    }
    totals
}

/// The totals as the reader sees them.
fn count_with_reader(path: &Path) -> Totals {
    let mut reader = common::lackey_reader(path);
    let mut batch = Batch::new();
    let mut totals = Totals::new();
    while reader.read_batch(&mut batch).unwrap() > 0 {
        for a in batch.iter() {
            let t = totals.entry(a.kind).or_default();
            t.0 += 1;
            t.1 += u64::from(a.size);
            t.2 = t.2.wrapping_add(a.addr);
            t.3 = t.3.wrapping_add(a.pc.unwrap_or(0));
        }
    }
    assert_eq!(reader.diagnostics().skipped_lines, 0);
    totals
}

#[test]
fn reader_agrees_with_an_independent_count_on_real_traces() {
    let dir = tempfile::tempdir().unwrap();
    for (i, program) in [&["true"][..], &["sort", "/dev/null"]]
        .into_iter()
        .enumerate()
    {
        let log = dir.path().join(format!("lackey{i}.txt"));
        if !common::record_lackey(&log, program, None) {
            return;
        }
        let text = std::fs::read_to_string(&log).unwrap();
        let want = count_with_str(&text);
        assert!(
            want[&AccessKind::Instr].0 > 1000,
            "{program:?}: a suspiciously short trace"
        );
        assert_eq!(count_with_reader(&log), want, "{program:?}");
    }
}
