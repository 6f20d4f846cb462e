//! `cachescope record` with the allocation interposer, end to end: small C programs compiled
//! here, recorded under Valgrind, and the trace and `TRACE.events` checked against what the C
//! code does. Skips, saying why, where Valgrind or a C compiler is missing.

use std::path::Path;
use std::process::Command;

use cachescope::attribution::events::{Event, EventKind, EventReader, Mapping, sidecar_path};
use cachescope::record::sentinel::region_of;
use cachescope::trace::{self, OpenOptions};
use cachescope::{AccessKind, Batch};

mod common;
use common::{compile_c, tool_or_skip, tools_or_skip};

/// Every reference of a trace: (kind, addr, pc).
/// `cachescope record EXTRA -o trace -- exe`, which must succeed: the program's stdout and
/// cachescope's stderr.
fn record(extra: &[&str], trace: &Path, exe: &Path) -> (String, String) {
    common::record_ok(extra, trace, &[exe])
}

fn references(path: &Path) -> Vec<(AccessKind, u64, u64)> {
    let mut t = trace::open(path, &OpenOptions::default()).unwrap();
    let mut b = Batch::new();
    let mut out = Vec::new();
    while t.read_batch(&mut b).unwrap() > 0 {
        out.extend((0..b.len()).map(|i| (b.kinds[i], b.addrs[i], b.pcs[i])));
    }
    out
}

fn events(trace: &Path) -> Vec<Event> {
    EventReader::open(&sidecar_path(trace))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn maps(events: &[Event]) -> Vec<Mapping> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Map(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

const BLOCKS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
volatile char begin_mark, end_mark;
int main(void) {
    char *p = malloc(1000);
    char *q = malloc(2000);            /* keeps realloc from growing p in place */
    begin_mark = 1;                    /* stores: VEX drops loads whose value is unused */
    for (long i = 0; i < 125; i++) ((volatile long *)p)[i] = i;
    end_mark = 1;
    char *r = realloc(p, 4000);
    for (long i = 0; i < 500; i++) ((volatile long *)r)[i] = i;
    free(r);
    free(q);
    printf("%lx %lx %lx %lx %lx\n", (unsigned long)&begin_mark, (unsigned long)&end_mark,
           (unsigned long)p, (unsigned long)q, (unsigned long)r);
    return 0;
}
"#;

#[test]
fn events_of_a_c_program_are_exact_and_aligned() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    // Lackey with its interposer, then the tool.
    events_are_exact_and_aligned(&["--backend", "lackey"]);
    if tool_or_skip() {
        events_are_exact_and_aligned(&["--backend", "tool"]);
    }
}

fn events_are_exact_and_aligned(backend: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "blocks", BLOCKS, &["-g", "-O1"]);
    let out_trace = dir.path().join("blocks.cst");
    let (stdout, stderr) = record(backend, &out_trace, &exe);
    assert!(stderr.contains("allocations"), "{stderr}");
    let printed: Vec<u64> = stdout
        .split_whitespace()
        .map(|w| u64::from_str_radix(w, 16).unwrap())
        .collect();
    let [begin, end, p, q, r] = printed[..] else {
        panic!("program printed {printed:?}")
    };
    assert_ne!(p, r, "realloc should have moved the block");

    let evs = events(&out_trace);
    let refs = references(&out_trace);
    assert!(evs.windows(2).all(|w| w[0].position <= w[1].position));
    assert!(evs.iter().all(|e| e.position <= refs.len() as u64));

    // The memory map: the executable and libc, with sane bounds.
    let m = maps(&evs);
    let real = std::fs::canonicalize(&exe).unwrap();
    let text: Vec<&Mapping> = m
        .iter()
        .filter(|x| Path::new(&x.path) == real && x.perms.starts_with("r-x"))
        .collect();
    assert!(!text.is_empty(), "no executable text mapping in {m:?}");
    assert!(
        m.iter()
            .any(|x| x.path.contains("/libc.so") && x.perms == "r-xp" && x.start < x.end),
        "no libc text mapping"
    );
    assert!(
        m.iter()
            .all(|x| x.start < x.end && (x.end <= 1 << 47 || x.path == "[vsyscall]"))
    );
    let in_exe = |a: u64| text.iter().any(|x| (x.start..x.end).contains(&a));

    // The allocations main made, exactly, with call paths starting in main.
    let from_main: Vec<(u64, u64, u64)> = evs
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Alloc { addr, size, stack } if stack.first().is_some_and(|&a| in_exe(a)) => {
                Some((e.position, *addr, *size))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        from_main.iter().map(|a| (a.1, a.2)).collect::<Vec<_>>(),
        vec![(p, 1000), (q, 2000), (r, 4000)]
    );
    let free_of = |addr: u64, after: u64| {
        evs.iter()
            .find(|e| e.position >= after && e.kind == EventKind::Free { addr })
            .map(|e| e.position)
    };
    for &(alloc_at, addr, size) in &from_main {
        let freed_at = free_of(addr, alloc_at).expect("every block main allocated is freed");
        assert!(freed_at > alloc_at);
        // Every reference main's code makes to the block lies in its lifetime.
        let mut touched = 0;
        for (i, &(kind, a, pc)) in refs.iter().enumerate() {
            if kind.is_data() && (addr..addr + size).contains(&a) && in_exe(pc) {
                let i = i as u64;
                assert!(
                    (alloc_at..freed_at).contains(&i),
                    "reference {i} to block {addr:#x} outside [{alloc_at}, {freed_at})"
                );
                touched += 1;
            }
        }
        let expected = match size {
            1000 => 125,
            4000 => 500,
            _ => 0,
        };
        assert_eq!(touched, expected, "stores main made to block {addr:#x}");
    }

    // The realloc is a free of p and an allocation of r at the same position.
    assert_eq!(free_of(p, 0), Some(from_main[2].0));

    // No sentinel reference survives, and the marked loop is exactly the C code's.
    assert!(refs.iter().all(|r| region_of(r.1).is_none()));
    let mark = |addr: u64| {
        refs.iter()
            .position(|r| r.0 == AccessKind::Store && r.1 == addr)
            .expect("marker store in the trace")
    };
    let (b, e) = (mark(begin), mark(end));
    let between: Vec<_> = refs[b + 1..e].iter().filter(|r| r.0.is_data()).collect();
    assert_eq!(between.len(), 125, "data references between the markers");
    assert!(
        between
            .iter()
            .enumerate()
            .all(|(i, r)| r.0 == AccessKind::Store && r.1 == p + 8 * i as u64)
    );
}

#[test]
fn without_events_the_trace_has_no_sidecar_and_the_same_program_references() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "blocks", BLOCKS, &["-g", "-O1"]);
    let plain = dir.path().join("plain.cst");
    record(&["--no-events"], &plain, &exe);
    assert!(!sidecar_path(&plain).exists());
    let with = dir.path().join("with.cst");
    record(&[], &with, &exe);
    // main's own data references (pc in the executable) are the same in both recordings:
    // the interposer's references are all removed.
    let exe_refs = |path: &Path, evs: &[Event]| {
        let real = std::fs::canonicalize(&exe).unwrap();
        let m = maps(evs);
        let text: Vec<_> = m.iter().filter(|x| Path::new(&x.path) == real).collect();
        references(path)
            .iter()
            .filter(|r| r.0.is_data() && text.iter().any(|x| (x.start..x.end).contains(&r.2)))
            .count()
    };
    let evs = events(&with);
    let n_with = exe_refs(&with, &evs);
    let n_plain = exe_refs(&plain, &evs);
    assert!(n_with > 625, "{n_with}");
    assert_eq!(n_with, n_plain);
}

const THREADS: &str = r#"
#include <pthread.h>
#include <stdlib.h>
#define N 200
static void *work(void *arg) {
    long sum = 0;
    for (int i = 0; i < N; i++) {
        long *b = malloc(64 + i);
        for (int j = 0; j < 8; j++) b[j] = i + j;
        sum += b[3];
        free(b);
    }
    return (void *)sum;
}
int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    return 0;
}
"#;

#[test]
fn a_threaded_program_gives_every_event_once() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "threads", THREADS, &["-g", "-O1", "-pthread"]);
    let out_trace = dir.path().join("threads.cst");
    record(&[], &out_trace, &exe);
    let evs = events(&out_trace);
    let real = std::fs::canonicalize(&exe).unwrap();
    let m = maps(&evs);
    let in_exe = |a: u64| {
        m.iter()
            .any(|x| Path::new(&x.path) == real && (x.start..x.end).contains(&a))
    };
    let mut live = std::collections::HashMap::new();
    let mut allocs = 0;
    for e in &evs {
        match &e.kind {
            EventKind::Alloc { addr, size, stack } if stack.first().is_some_and(|&a| in_exe(a)) => {
                assert!((64..64 + 200).contains(size));
                assert!(
                    live.insert(*addr, e.position).is_none(),
                    "{addr:#x} allocated twice"
                );
                allocs += 1;
            }
            EventKind::Free { addr } => {
                live.remove(addr);
            }
            _ => {}
        }
    }
    assert_eq!(allocs, 400, "two threads, 200 allocations each");
    assert!(live.is_empty(), "blocks never freed: {live:?}");
    assert!(
        references(&out_trace)
            .iter()
            .all(|r| region_of(r.1).is_none())
    );
}

#[test]
fn a_static_program_records_without_events() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = "#include <stdlib.h>\nint main(void){ char *p = malloc(10); p[0] = 1; free(p); return 0; }\n";
    let c = dir.path().join("s.c");
    std::fs::write(&c, src).unwrap();
    let exe = dir.path().join("s");
    let built = Command::new("cc")
        .args(["-static", "-O1", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
        .unwrap();
    if !built.status.success() {
        common::skip(
            "static-libc",
            "cc -static failed (no static libc installed?)",
        );
        return;
    }
    // lackey's interposer is an LD_PRELOAD library, which a static program never loads.
    let out_trace = dir.path().join("s.cst");
    let (_, stderr) = record(&["--backend", "lackey"], &out_trace, &exe);
    assert!(
        stderr.contains("no allocation events (statically linked?)"),
        "{stderr}"
    );
    assert!(!sidecar_path(&out_trace).exists());
    assert!(references(&out_trace).len() > 1000);
    // The tool logs the memory map whatever the program is, but no heap events.
    let tool_trace = dir.path().join("t.cst");
    if !tool_or_skip() {
        return;
    }
    let (_, stderr) = record(&["--backend", "tool"], &tool_trace, &exe);
    assert!(stderr.contains("0 allocations, 0 frees"), "{stderr}");
    assert!(stderr.contains("no heap events"), "{stderr}");
    let evs = events(&tool_trace);
    assert!(!maps(&evs).is_empty());
    assert!(evs.iter().all(|e| matches!(e.kind, EventKind::Map(_))));
    assert!(references(&tool_trace).len() > 1000);
}

#[test]
fn the_library_streams_trace_and_events_without_files() {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return;
    }
    let so = match cachescope::record::preload::locate() {
        Ok(so) => so,
        Err(searched) => {
            common::skip(
                "preload",
                &format!("the interposer is not built ({searched})"),
            );
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "blocks", BLOCKS, &["-O1"]);
    let (rec, mut trace, rx) =
        cachescope::record::Recording::start_with_events(exe.as_os_str(), &[], &so).unwrap();
    let mut b = Batch::new();
    let (mut refs, mut events) = (0u64, Vec::new());
    while trace.read_batch(&mut b).unwrap() > 0 {
        assert!(b.addrs.iter().all(|&a| region_of(a).is_none()));
        refs += b.len() as u64;
        // Every event of the batch's positions has arrived once the batch is returned.
        events.extend(rx.try_iter());
        assert!(events.iter().all(|e: &Event| e.position <= refs));
    }
    drop(trace);
    events.extend(rx.try_iter());
    let done = rec.finish().unwrap();
    assert!(done.status.success());
    let counts = done.events.unwrap();
    assert_eq!(counts.kept, refs);
    assert!(counts.brackets > 3 && counts.dropped > 0);
    let allocs = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Alloc { .. }))
        .count() as u64;
    assert_eq!(allocs, counts.allocs);
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Alloc { size: 4000, .. }))
    );
}
