//! The tool's spatial sampler against its full stream: a run sampled in the tool must give
//! the very batches that sampling the full stream of the same run gives (`Trace::sampled`,
//! what `--sampled TRACE` reads): the references of the sampled lines on every thread, each at
//! its position in the full stream, the limits, the spans of what was left out, and the same
//! events at the same positions.
//!
//! The programs are linked statically, so that two runs under the same environment make the
//! same references (a dynamically linked program is not deterministic under Valgrind:
//! `crates/cachescope-cli/tests/sample_tool.rs` says why). Skips, saying so (see
//! cachescope-testkit), where Valgrind, a C compiler or the tool are missing.

use std::path::{Path, PathBuf};

use cachescope::attribution::events::{Event, EventKind};
use cachescope::record::tool_spatial::SpatialReader;
use cachescope::record::{ProgramOutput, Recording, ToolOptions};
use cachescope::sampling::SamplerOptions;
use cachescope::spatial::SpatialOptions;
use cachescope::trace::AccessReader;
use cachescope::{AccessKind, Batch, LineSize};

mod common;

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

/// `PROGRAM` built with `cc -O1 FLAGS` in `dir`.
fn compile(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let mut all = vec!["-O1"];
    all.extend(flags);
    common::compile_c(dir, name, PROGRAM, &all)
}

fn tool_options(calls: bool) -> ToolOptions {
    ToolOptions {
        output: ProgramOutput::Null,
        calls,
        ..ToolOptions::default()
    }
}

/// Every batch of a trace.
fn batches(trace: &mut impl AccessReader) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut b = Batch::new();
    while trace.read_batch(&mut b).unwrap() > 0 {
        assert_eq!(b.check_sampling(), Ok(()));
        out.push(b.clone());
    }
    out
}

/// A run's full stream sampled as it is read (`Trace::sampled`, what `--sampled TRACE` does),
/// and its events.
fn full(exe: &Path, options: SpatialOptions, calls: bool) -> (Vec<Batch>, Vec<Event>) {
    let (recording, mut trace, rx) =
        Recording::start_tool(exe.as_os_str(), &[], tool_options(calls)).unwrap();
    trace.sampled(options, None).unwrap();
    let out = batches(&mut trace);
    recording.finish().unwrap();
    (out, rx.unwrap().try_iter().collect())
}

/// A run sampled in the tool, and its events.
fn sampled(exe: &Path, options: SpatialOptions, calls: bool) -> (Vec<Batch>, Vec<Event>) {
    let opts = tool_options(calls);
    let (recording, mut stream, rx) =
        Recording::start_spatial(exe.as_os_str(), &[], opts, options, None, None).unwrap();
    let out = batches(&mut stream);
    recording.finish().unwrap();
    (out, rx.unwrap().try_iter().collect())
}

/// The batches `read` of a sampled stream read through `Trace::sampled` (which filters them again).
fn restage(read: Vec<Batch>, options: SpatialOptions) -> Vec<Batch> {
    struct Replay(std::vec::IntoIter<Batch>);
    impl AccessReader for Replay {
        fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
            *batch = self.0.next().unwrap_or_default();
            Ok(batch.len())
        }
    }
    let replay = Replay(read.into_iter());
    let mut trace = cachescope::trace::Trace::from_reader(
        Box::new(replay),
        cachescope::Source::Workload("replay".into()),
    );
    trace.sampled(options, None).unwrap();
    batches(&mut trace)
}

/// Each sampled access as (thread, address, size, kind, pc).
fn accesses(batches: &[Batch]) -> Vec<(u32, u64, u32, AccessKind, Option<u64>)> {
    batches
        .iter()
        .flat_map(|b| {
            b.iter_threaded()
                .map(|(t, a)| (t, a.addr, a.size, a.kind, a.pc))
        })
        .collect()
}

/// Runs the program both ways and checks the sampled run against the full one: the very
/// same batches (accesses, positions, limits, spans) and events, or with `interleaved`, thread
/// by thread (two runs of a threaded program may switch threads at other points: after a
/// system call, which thread takes Valgrind's lock first is the kernel's choice; and now and
/// then, on a loaded machine, one of them makes a few dozen references more, in the C library:
/// up to three pairs of runs are made until two agree on the counts).
fn check(exe: &Path, options: SpatialOptions, interleaved: bool) {
    check_calls(exe, options, interleaved, false);
}

/// [`check`], the tool writing call events (`calls`) into both streams: the sampled
/// stream's batches then hold every call event with its place, as sampling the full trace
/// places it.
fn check_calls(exe: &Path, options: SpatialOptions, interleaved: bool, calls: bool) {
    let total = |b: &[Batch]| {
        let mut all = cachescope::batch::ThreadSpan::default();
        for s in b.iter().filter_map(Batch::sampling) {
            all.add(&s.total_span());
        }
        all
    };
    let tries = if interleaved { 3 } else { 1 };
    let (mut want, mut full_events) = full(exe, options, calls);
    let (mut got, mut events) = sampled(exe, options, calls);
    for _ in 1..tries {
        if total(&got) == total(&want) {
            break;
        }
        eprintln!("the two runs made different references; again");
        (want, full_events) = full(exe, options, calls);
        (got, events) = sampled(exe, options, calls);
    }
    assert_eq!(total(&got), total(&want), "the full stream's counts");
    let n = accesses(&want).len();
    assert!(n > 100, "{n} samples");
    if interleaved {
        for t in 1..=2 {
            let of =
                |b: &[Batch]| -> Vec<_> { accesses(b).into_iter().filter(|a| a.0 == t).collect() };
            assert!(of(&got) == of(&want), "thread {t}'s samples differ");
        }
        return;
    }
    if options.max_lines.is_none() {
        // At a fixed rate the reader's batches are the stage's, batch for batch.
        assert_eq!(got.len(), want.len(), "batches");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                g == w,
                "batch {k} differs: {:?} against {:?}",
                g.sampling(),
                w.sampling()
            );
        }
    }
    // Read by the stage as every --sampled command reads it (the reader passes on the
    // references that lower the limit of the fixed-size variant, which the stage drops).
    let flat = |b: &[Batch]| -> Vec<_> {
        b.iter()
            .flat_map(|b| {
                let s = b.sampling().unwrap();
                b.iter_threaded().enumerate().map(move |(i, (t, a))| {
                    (
                        t,
                        a.addr,
                        a.pc,
                        s.data_before[i],
                        s.instrs_before[i],
                        s.limit_at(i),
                    )
                })
            })
            .collect()
    };
    let restaged = restage(got, options);
    assert_eq!(total(&restaged), total(&want), "the spans");
    assert!(
        flat(&restaged) == flat(&want),
        "the stage's accesses differ"
    );
    // The call events, each with its place in its thread's full stream.
    let calls_of = |b: &[Batch]| -> Vec<_> {
        b.iter()
            .flat_map(|b| {
                let places = b.sampling().unwrap().calls.clone();
                b.calls().iter().map(|e| (e.thread, e.op)).zip(places)
            })
            .collect()
    };
    assert_eq!(calls_of(&restaged).len(), calls_of(&want).len(), "calls");
    assert!(calls_of(&restaged) == calls_of(&want), "the calls differ");
    assert_eq!(calls_of(&want).is_empty(), !calls, "call events");
    // The events: the same, at the same positions (a static program has only its maps).
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::Map(_))));
    assert_eq!(events, full_events);
}

#[test]
fn the_sampled_stream_is_the_full_stream_filtered_by_line_hash() {
    if !common::tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "kernel", &["-static"]);
    let spatial = |rate: f64, line: u64, max_lines: Option<u64>| SpatialOptions {
        rate,
        seed: 3,
        max_lines,
        line_size: LineSize::new(line).unwrap(),
    };
    check(&exe, spatial(0.1, 64, None), false);
    check(&exe, spatial(0.05, 32, None), false);
    // The fixed-size variant: the reader lowers the limit as the program runs.
    check(&exe, spatial(0.5, 64, Some(40)), false);
    // Every line: every data reference of the full stream.
    check(&exe, spatial(1.0, 64, None), false);
    // With call events: every one in the sampled stream, placed as in the full stream.
    check_calls(&exe, spatial(0.1, 64, None), false, true);
    check_calls(&exe, spatial(0.5, 64, Some(40)), false, true);
}

#[test]
fn a_sampled_line_is_sampled_on_every_thread() {
    if !common::tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "threads", &["-static", "-DTHREADS", "-pthread"]);
    let options = SpatialOptions {
        rate: 0.125,
        max_lines: None,
        ..SpatialOptions::default()
    };
    check(&exe, options, true);
    // Both threads' references are among the samples.
    let got = accesses(&sampled(&exe, options, false).0);
    assert!(got.iter().any(|r| r.0 == 2) && got.iter().any(|r| r.0 == 1));
}

#[test]
fn allocations_keep_their_positions_in_a_sampled_run() {
    if !common::tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Linked dynamically, so the tool's wrappers see its allocations.
    let exe = compile(dir.path(), "dynamic", &[]);
    let options = SpatialOptions {
        rate: 1.0 / 16.0,
        ..SpatialOptions::default()
    };
    let (want, full_events) = full(&exe, options, false);
    let (got, events) = sampled(&exe, options, false);
    // The same counts (the dynamic loader's few nondeterministic loads change addresses, not
    // how many references there are), the same events at the same positions.
    let data = |b: &[Batch]| -> u64 {
        b.iter()
            .filter_map(Batch::sampling)
            .map(|s| s.total_span().data())
            .sum()
    };
    assert_eq!(data(&got), data(&want));
    let alloc = |e: &Event| matches!(e.kind, EventKind::Alloc { size: 100000, .. });
    assert_eq!(events.iter().filter(|e| alloc(e)).count(), 1);
    let positions = |ev: &[Event]| -> Vec<(u64, bool)> {
        ev.iter()
            .map(|e| (e.position, matches!(e.kind, EventKind::Map(_))))
            .collect()
    };
    assert_eq!(positions(&events), positions(&full_events));
}

#[test]
fn statcaches_sampler_runs_in_the_same_tool() {
    if !common::tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "kernel", &["-static"]);
    let spatial = SpatialOptions {
        rate: 0.1,
        max_lines: None,
        ..SpatialOptions::default()
    };
    for reuse in [
        SamplerOptions {
            rate: 0.01,
            seed: 5,
            ..SamplerOptions::default()
        },
        SamplerOptions {
            rate: 0.05,
            include_instructions: true,
            ..SamplerOptions::default()
        },
    ] {
        // The full stream, both samplers above it.
        let (recording, mut trace, _) =
            Recording::start_tool(exe.as_os_str(), &[], tool_options(false)).unwrap();
        trace.sampled(spatial, Some(reuse)).unwrap();
        let want_batches = batches(&mut trace);
        let want = trace.reuse_profile().expect("the stage's profile");
        recording.finish().unwrap();
        // Both samplers in the tool, its stream kept in a file as it is read (a second read).
        let copy = dir.path().join("stream");
        let kept = cachescope::record::StreamCopy::create(&copy).unwrap();
        let (recording, mut stream, _) = Recording::start_spatial(
            exe.as_os_str(),
            &[],
            tool_options(false),
            spatial,
            Some(reuse),
            Some(&kept),
        )
        .unwrap();
        let got_batches = batches(&mut stream);
        let got = stream.reuse_profile().expect("the tool's profile");
        recording.finish().unwrap();
        // Needed: the file is complete once finished.
        kept.finish(true).unwrap();
        let source = cachescope::Source::File(copy.clone());
        let file = std::fs::File::open(&copy).unwrap();
        let mut again = SpatialReader::new(file, source, spatial, None).unwrap();
        assert!(
            batches(&mut again) == got_batches,
            "{reuse:?}: the copy read again"
        );
        assert!(
            got_batches == want_batches,
            "{reuse:?}: the spatial samples"
        );
        assert!(want.samples().len() > 20, "{reuse:?}");
        // Long enough that the floored sampler's level rose (every reference drawn at first,
        // a quarter of them or fewer kept at the end): the tool, told where each sample stops
        // being kept, wrote no record and measured no window for those past it.
        assert!(want.rate() <= 0.25, "{reuse:?}: rate {}", want.rate());
        assert_eq!(got.refs(), want.refs(), "{reuse:?}");
        assert!(
            got.samples() == want.samples(),
            "{reuse:?}: the reuse samples"
        );
        // The short reuses' windows, measured by the tool as the stage measures them on the
        // full stream (`cs_windows.c`, `sampling/windows.rs`): the loops' reuses, within the
        // ring, at the distances of the array's lines between.
        let measured = |p: &cachescope::sampling::Profile| -> Vec<(u64, Option<u64>)> {
            let at = p.samples().iter().map(|s| s.position);
            at.map(|j| (j, p.measured_distance(j))).collect()
        };
        assert!(
            want.measured() > 20,
            "{reuse:?}: {} measured",
            want.measured()
        );
        assert_eq!(got.measured(), want.measured(), "{reuse:?}");
        assert!(
            measured(&got) == measured(&want),
            "{reuse:?}: the measured distances"
        );
    }
}
