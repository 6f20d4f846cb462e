//! The tool's spatial sampler against its full stream: a run sampled in the tool must give
//! exactly the references of the full stream of the same run whose line hashes below the
//! threshold, each at its position in the full stream (data references and instructions
//! before it), on every thread, with the same events at the same positions.
//!
//! The programs are linked statically, so that two runs under the same environment make the
//! same references (a dynamically linked program is not deterministic under Valgrind:
//! `crates/cachescope-cli/tests/sample_tool.rs` says why). Skips with a printed reason where
//! Valgrind, a C compiler or the tool are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use cachescope::attribution::events::{Event, EventKind};
use cachescope::record::tool_spatial::SampledRefs;
use cachescope::record::{ProgramOutput, Recording, SpatialTool, ToolOptions};
use cachescope::trace::AccessReader;
use cachescope::{AccessKind, Batch, LineSize};

/// (thread, address, size, kind, pc, data references before, instructions before).
type Rec = (u32, u64, u32, AccessKind, u64, u64, u64);

/// A loop over 320 KB and an allocation; with THREADS a second thread reads the array first,
/// while the main thread waits on a pipe, so that each thread makes the same references in
/// every run (a join would race with the thread's exit: some runs take the futex path).
const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef THREADS
#include <pthread.h>
static int fds[2];
#endif
static long a[40000];
static long sum;
static void* worker(void* arg) {
    long s = 0;
    for (int r = 0; r < 3; r++) for (int i = 0; i < 40000; i += 3) s += a[i];
    sum = s;
#ifdef THREADS
    char c = 1;
    if (write(fds[1], &c, 1) != 1) return 0;
    for (;;) pause();
#endif
    return 0;
}
int main(void) {
#ifdef THREADS
    char c;
    pthread_t t;
    if (pipe(fds) || pthread_create(&t, 0, worker, 0) || read(fds[0], &c, 1) != 1) return 1;
#else
    worker(0);
#endif
    long s = sum;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 40000; i += 1 + r) { a[(i * 7) % 40000] += i; s += a[i]; }
    char* p = malloc(100000);
    for (int i = 0; i < 100000; i += 64) p[i] = i;
    free(p);
    printf("%ld\n", s);
    exit(0);
}"#;

fn tool_or_skip() -> bool {
    let valgrind = cachescope::record::valgrind();
    if Command::new(&valgrind).arg("--version").output().is_err() {
        eprintln!("skipping: valgrind is not installed");
        return false;
    }
    if let Err(why) = cachescope::record::tool_status() {
        eprintln!("skipping: cachescope's Valgrind tool cannot run: {why}");
        return false;
    }
    true
}

/// `PROGRAM` built with `cc -O1 FLAGS`, or `None` (saying why) if it cannot be.
fn compile(dir: &Path, name: &str, flags: &[&str]) -> Option<PathBuf> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.join(name);
    let ok = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(flags)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping: cc cannot build the program with {flags:?} here");
    }
    ok.then_some(exe)
}

fn options() -> ToolOptions {
    ToolOptions {
        output: ProgramOutput::Null,
        ..ToolOptions::default()
    }
}

/// The line hash of docs/sampled.md, written out independently of the tool's C.
fn hash(line: u64) -> u64 {
    let mut h = line;
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The full stream of a run: every record with its position, and the events.
fn full(exe: &Path) -> (Vec<Rec>, Vec<Event>) {
    let (recording, mut reader, rx) =
        Recording::start_tool_stream(exe.as_os_str(), &[], options()).unwrap();
    let mut batch = Batch::new();
    let mut out = Vec::new();
    let (mut data, mut instrs) = (0, 0);
    while reader.read_batch(&mut batch).unwrap() > 0 {
        for (t, a) in batch.iter_threaded() {
            out.push((t, a.addr, a.size, a.kind, a.pc.unwrap(), data, instrs));
            if a.kind == AccessKind::Instr {
                instrs += 1;
            } else {
                data += 1;
            }
        }
    }
    recording.finish().unwrap();
    (out, rx.unwrap().try_iter().collect())
}

/// The spatially sampled stream of a run, its events and its counts.
fn sampled(exe: &Path, spatial: SpatialTool) -> (Vec<Rec>, Vec<Event>, (u64, u64)) {
    let (recording, mut stream, rx) =
        Recording::start_spatial(exe.as_os_str(), &[], options(), spatial, None).unwrap();
    let mut refs = SampledRefs::default();
    let mut out = Vec::new();
    while stream.read(&mut refs).unwrap() > 0 {
        for (k, (t, a)) in refs.batch.iter_threaded().enumerate() {
            let (d, i) = (refs.data_before[k], refs.instrs_before[k]);
            out.push((t, a.addr, a.size, a.kind, a.pc.unwrap(), d, i));
        }
    }
    let (ending, profile) = stream.finish().unwrap();
    assert!(profile.is_none());
    recording.finish().unwrap();
    (
        out,
        rx.unwrap().try_iter().collect(),
        (ending.data, ending.instrs),
    )
}

/// Runs the program both ways and checks the sampled run against the full one: with
/// `interleaved`, thread by thread (two runs of a threaded program may switch threads at
/// other points: after a system call, which thread takes Valgrind's lock first is the
/// kernel's choice), otherwise record for record, positions included.
fn check(exe: &Path, spatial: SpatialTool, interleaved: bool) {
    let shift = spatial.line_size.shift();
    let (all, full_events) = full(exe);
    let (got, events, counts) = sampled(exe, spatial);
    let data = all.iter().filter(|r| r.3 != AccessKind::Instr).count() as u64;
    assert_eq!(
        counts,
        (data, all.len() as u64 - data),
        "the full stream's counts"
    );
    let want: Vec<Rec> = all
        .into_iter()
        .filter(|r| r.3 != AccessKind::Instr || spatial.instructions)
        .filter(|r| hash(r.1 >> shift) < spatial.threshold)
        .collect();
    assert!(want.len() > 100, "{} samples", want.len());
    assert_eq!(got.len(), want.len());
    if interleaved {
        for t in 1..=2 {
            let of = |recs: &[Rec]| -> Vec<(u64, u32, AccessKind, u64)> {
                recs.iter()
                    .filter(|r| r.0 == t)
                    .map(|r| (r.1, r.2, r.3, r.4))
                    .collect()
            };
            assert!(of(&got) == of(&want), "thread {t}'s samples differ");
        }
        return;
    }
    if let Some(k) = (0..got.len()).find(|&k| got[k] != want[k]) {
        panic!(
            "sample {k} of {}: {:x?} in the sampled run, {:x?} in the full one",
            got.len(),
            got[k],
            want[k]
        );
    }
    // The events: the same, at the same positions (a static program has only its maps).
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::Map(_))));
    assert_eq!(events, full_events);
}

#[test]
fn the_sampled_stream_is_the_full_stream_filtered_by_line_hash() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "kernel", &["-static"]) else {
        return;
    };
    let spatial = |rate: f64, line: u64, instructions: bool| SpatialTool {
        threshold: (rate * u64::MAX as f64) as u64,
        line_size: LineSize::new(line).unwrap(),
        instructions,
    };
    check(&exe, spatial(0.1, 64, false), false);
    check(&exe, spatial(0.02, 32, true), false);
    // Every line: every data reference of the full stream.
    check(&exe, spatial(1.0, 64, false), false);
}

#[test]
fn a_sampled_line_is_sampled_on_every_thread() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "threads", &["-static", "-DTHREADS", "-pthread"]) else {
        return;
    };
    let spatial = SpatialTool {
        threshold: u64::MAX / 8,
        line_size: LineSize::default(),
        instructions: false,
    };
    check(&exe, spatial, true);
    // Both threads' references are among the samples.
    let (got, _, _) = sampled(&exe, spatial);
    assert!(got.iter().any(|r| r.0 == 2) && got.iter().any(|r| r.0 == 1));
}

#[test]
fn allocations_keep_their_positions_in_a_sampled_run() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Linked dynamically, so the tool's wrappers see its allocations.
    let Some(exe) = compile(dir.path(), "dynamic", &[]) else {
        return;
    };
    let spatial = SpatialTool {
        threshold: u64::MAX / 16,
        line_size: LineSize::default(),
        instructions: false,
    };
    let (all, full_events) = full(&exe);
    let (_, events, counts) = sampled(&exe, spatial);
    // The same counts (the dynamic loader's few nondeterministic loads change addresses, not
    // how many references there are), the same events at the same positions.
    let data = all.iter().filter(|r| r.3 != AccessKind::Instr).count() as u64;
    assert_eq!(counts, (data, all.len() as u64 - data));
    let alloc = |e: &Event| matches!(e.kind, EventKind::Alloc { size: 100000, .. });
    assert_eq!(events.iter().filter(|e| alloc(e)).count(), 1);
    let positions = |ev: &[Event]| -> Vec<(u64, bool)> {
        ev.iter()
            .map(|e| (e.position, matches!(e.kind, EventKind::Map(_))))
            .collect()
    };
    assert_eq!(positions(&events), positions(&full_events));
    let at = |ev: &[Event]| ev.iter().find(|e| alloc(e)).map(|e| e.position);
    assert_eq!(at(&events), at(&full_events));
}
