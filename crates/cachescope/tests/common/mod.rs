//! Helpers shared by the integration tests: random and hand-made traces, chunkings of them,
//! native files, and real traces recorded under Valgrind. Each test file takes it with
//! `mod common;` and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer, WriterOptions};
use cachescope::trace::{AccessReader, lackey};
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, AccessKind, Batch, Source};

/// A trace from `(kind, line)` pairs: kind 0 is an instruction fetch.
pub fn accesses(spec: &[(u8, u16)]) -> Vec<Access> {
    spec.iter()
        .map(|&(k, l)| Access {
            addr: u64::from(l) * 64 + u64::from(k) * 8,
            size: 8,
            kind: match k % 4 {
                0 => AccessKind::Instr,
                1 => AccessKind::Load,
                2 => AccessKind::Store,
                _ => AccessKind::Modify,
            },
            pc: None,
        })
        .collect()
}

/// Cuts `a` at the positions `cuts` into chunks; each chunk split again into batches of at
/// most `batch` accesses (`usize::MAX`: one batch a chunk).
pub fn chunked(a: &[Access], cuts: &[usize], batch: usize) -> Vec<Vec<Batch>> {
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(a.len())).collect();
    bounds.push(0);
    bounds.push(a.len());
    bounds.sort_unstable();
    bounds.dedup();
    bounds
        .windows(2)
        .map(|w| {
            a[w[0]..w[1]]
                .chunks(batch.max(1))
                .map(|c| c.iter().copied().collect())
                .collect()
        })
        .collect()
}

/// The batches `r` reads, one by one.
pub fn batches_of(mut r: impl AccessReader) -> impl Iterator<Item = Batch> {
    std::iter::from_fn(move || {
        let mut b = Batch::new();
        (r.read_batch(&mut b).unwrap() > 0).then_some(b)
    })
}

/// The whole trace of the workload `w` under `p`, in batches.
pub fn workload_batches(w: Workload, p: &Params) -> Vec<Batch> {
    batches_of(generator(w, p).unwrap()).collect()
}

/// Flips a byte in the middle of the file at `path` (inside a native trace's payload).
pub fn damage_middle(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(path, &bytes).unwrap();
}

/// A native trace of `trace` with `block_len` accesses per block, in a temporary file.
pub fn native_file(trace: &[Access], block_len: usize) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    let opts = WriterOptions {
        block_len,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(file.reopen().unwrap(), Header::new(), opts).unwrap();
    for part in trace.chunks(1000) {
        w.write_batch(&part.iter().copied().collect()).unwrap();
    }
    w.finish().unwrap();
    file
}

/// `n` pseudo-random accesses over `lines` lines (and a few far away), every fifth a fetch.
pub fn lcg_trace(n: usize, lines: u64) -> Vec<Access> {
    let mut x = 12345u64;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly a hot set, sometimes far away, every fifth access a fetch.
            let line = if x >> 60 == 0 {
                x >> 20
            } else {
                (x >> 33) % lines
            };
            let kind = if i % 5 == 0 {
                AccessKind::Instr
            } else {
                AccessKind::Load
            };
            Access {
                addr: line * 64,
                size: 4,
                kind,
                pc: None,
            }
        })
        .collect()
}

// Finding tools, compiling C, recording under lackey and skipping: one implementation for
// every crate's tests.
#[allow(unused_imports)]
pub use cachescope_testkit::{
    compile_c, compile_c_file, have, lackey as record_lackey, skip, tool_or_skip, tools_or_skip,
    valgrind,
};

/// Writes 3000 numbers in a scrambled order, one a line, to `dir/numbers.txt`.
pub fn write_numbers(dir: &Path) {
    let numbers: String = (0..3000u64)
        .map(|i| format!("{}\n", (i * 7919) % 3001))
        .collect();
    std::fs::write(dir.join("numbers.txt"), numbers).unwrap();
}

/// The lackey trace of `sort -n` on [`write_numbers`]' file, recorded in `dir`; `None` (after
/// a skip) when Valgrind is not installed.
pub fn sort_trace(dir: &Path) -> Option<PathBuf> {
    write_numbers(dir);
    let log = dir.join("sort.lackey");
    record_lackey(&log, &["sort", "-n", "numbers.txt"], Some(dir)).then_some(log)
}

/// A lackey reader of the trace at `log`, default options.
pub fn lackey_reader(log: &Path) -> lackey::Reader<std::fs::File> {
    let file = std::fs::File::open(log).unwrap();
    lackey::Reader::new(
        file,
        Source::File(log.to_path_buf()),
        lackey::Options::default(),
    )
}
