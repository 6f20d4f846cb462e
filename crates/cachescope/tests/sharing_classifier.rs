//! The sharing classifier (`cachescope sharing`, `sharing::SharingAnalysis`) on generated
//! threaded traces against a brute-force reading of its definitions (docs/threads.md): a line
//! is shared when two or more threads touch it and one writes it; among the threads making at
//! least 1/100 of its accesses (when two or more do, else all of them) it is *true* sharing
//! when one writes a byte another reads or writes, *false* otherwise. A reference belongs to
//! the line of its first byte and touches the bytes up to that line's end.
//!
//! The generator gives each thread a home range in each line (disjoint or overlapping by
//! chance), mostly accessed, with strays outside it and threads that touch a line only a
//! few times: every branch of the definitions is reached (the test counts them).

use std::collections::BTreeMap;

use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::sharing::{SharedLine, SharingAnalysis};
use cachescope::{Access, AccessKind, LineSize, ThreadId};

const LINE: u64 = 64;

/// One thread's use of one line, byte by byte.
#[derive(Clone)]
struct Use {
    reads: u64,
    writes: u64,
    read: [bool; 64],
    written: [bool; 64],
}

impl Default for Use {
    fn default() -> Use {
        Use {
            reads: 0,
            writes: 0,
            read: [false; 64],
            written: [false; 64],
        }
    }
}

/// The bytes set in `bytes` as ranges `a-b,c-d`.
fn ranges(bytes: &[bool; 64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < 64 {
        if bytes[i] {
            let start = i;
            while i < 64 && bytes[i] {
                i += 1;
            }
            out.push(format!("{start}-{}", i - 1));
        } else {
            i += 1;
        }
    }
    out.join(",")
}

/// What the definitions say of each line: kind, writes, and per thread (in thread order) its
/// reads, writes, read bytes and written bytes; only the shared lines.
type Expected = BTreeMap<u64, (String, u64, Vec<(ThreadId, u64, u64, String, String)>)>;

fn brute(trace: &[(ThreadId, Access)]) -> Expected {
    let mut lines: BTreeMap<u64, BTreeMap<ThreadId, Use>> = BTreeMap::new();
    for &(t, a) in trace {
        let line = a.addr / LINE;
        let u = lines.entry(line).or_default().entry(t).or_default();
        let first = (a.addr % LINE) as usize;
        let end = (first + a.size.max(1) as usize).min(LINE as usize);
        if a.kind != AccessKind::Store {
            u.reads += 1;
            u.read[first..end].iter_mut().for_each(|b| *b = true);
        }
        if a.kind != AccessKind::Load {
            u.writes += 1;
            u.written[first..end].iter_mut().for_each(|b| *b = true);
        }
    }
    let mut shared = Expected::new();
    for (line, threads) in lines {
        let writes: u64 = threads.values().map(|u| u.writes).sum();
        if threads.len() < 2 || writes == 0 {
            continue;
        }
        let total: u64 = threads.values().map(|u| u.reads + u.writes).sum();
        let major: Vec<&Use> = threads
            .values()
            .filter(|u| (u.reads + u.writes) * 100 >= total)
            .collect();
        let deciding = if major.len() >= 2 {
            major
        } else {
            threads.values().collect()
        };
        let mut truly = false;
        for (i, a) in deciding.iter().enumerate() {
            for (j, b) in deciding.iter().enumerate() {
                let touches = (0..64).any(|k| a.written[k] && (b.read[k] || b.written[k]));
                truly |= i != j && touches;
            }
        }
        let per_thread = threads
            .iter()
            .map(|(&t, u)| (t, u.reads, u.writes, ranges(&u.read), ranges(&u.written)))
            .collect();
        let kind = if truly { "true" } else { "false" };
        shared.insert(line * LINE, (kind.to_owned(), writes, per_thread));
    }
    shared
}

/// The classifier's answer in the same shape, checking its order (most writes first, then
/// the line's address text) and that a fix comes with false sharing alone.
fn classified(trace: &[(ThreadId, Access)]) -> Expected {
    let mut b = Batch::new();
    for &(t, a) in trace {
        b.set_thread(t);
        b.push(a);
    }
    let mut s = SharingAnalysis::new(LineSize::new(LINE).unwrap());
    s.observe(&b);
    let found: Vec<SharedLine> = s.finish();
    for pair in found.windows(2) {
        assert!(
            (pair[0].writes, &pair[1].line) >= (pair[1].writes, &pair[0].line),
            "order: {} then {}",
            pair[0].line,
            pair[1].line
        );
    }
    found
        .into_iter()
        .map(|l| {
            // Every shared line has a fix: false sharing moves the threads' data apart, true
            // sharing passes less data (docs/threads.md).
            let fix = l.fix.as_deref().unwrap_or_default();
            assert_eq!(
                fix.contains("no byte is shared"),
                l.kind == "false",
                "{}: {fix:?}",
                l.line
            );
            assert_eq!(
                fix.contains("data other threads use"),
                l.kind == "true",
                "{}: {fix:?}",
                l.line
            );
            assert_eq!(l.line, format!("{:#x}", l.addr));
            let threads = l
                .threads
                .iter()
                .map(|t| {
                    let (r, w) = (t.read_bytes.clone(), t.written_bytes.clone());
                    (t.thread, t.reads, t.writes, r, w)
                })
                .collect();
            (l.addr, (l.kind, l.writes, threads))
        })
        .collect()
}

/// A small xorshift generator: the test's traces are the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A trace over 1-4 lines by 2-4 threads: each thread works in a home range of each line,
/// strays outside it now and then, and some threads touch a line only once or twice.
fn generate(rng: &mut Rng) -> Vec<(ThreadId, Access)> {
    let lines = 1 + rng.below(4);
    let threads = 2 + rng.below(3) as ThreadId;
    // A line in five only read: touched by every thread, shared by none.
    let read_only: Vec<bool> = (0..lines).map(|_| rng.below(5) == 0).collect();
    let mut homes = BTreeMap::new();
    for t in 1..=threads {
        for l in 0..lines {
            let start = rng.below(LINE);
            let len = 1 + rng.below(16);
            let busy = if rng.below(4) == 0 {
                1 + rng.below(2)
            } else {
                200 + rng.below(300)
            };
            homes.insert((t, l), (start, len, busy));
        }
    }
    let mut trace = Vec::new();
    for round in 0..6 {
        for t in 1..=threads {
            for l in 0..lines {
                let (start, len, busy) = homes[&(t, l)];
                // A thread of one or two accesses makes them in the first round.
                let n = match busy {
                    1 | 2 if round > 0 => 0,
                    1 | 2 => busy,
                    _ => busy.div_ceil(6),
                };
                for _ in 0..n {
                    let stray = rng.below(50) == 0;
                    let offset = if stray { rng.below(LINE) } else { start };
                    let size = if stray { 1 + rng.below(8) } else { len } as u32;
                    let kind = match rng.below(5) {
                        _ if read_only[l as usize] => AccessKind::Load,
                        0 | 1 => AccessKind::Load,
                        2 | 3 => AccessKind::Store,
                        _ => AccessKind::Modify,
                    };
                    let addr = 0x10_0000 + l * LINE + offset;
                    trace.push((
                        t,
                        Access {
                            addr,
                            size,
                            kind,
                            pc: Some(0x400 + t as u64),
                        },
                    ));
                }
            }
        }
    }
    trace
}

#[test]
fn the_classifier_follows_the_definitions_on_generated_traces() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut truly, mut falsely, mut minor_decides, mut unshared) = (0, 0, 0, 0);
    for case in 0..3000 {
        let trace = generate(&mut rng);
        let want = brute(&trace);
        let got = classified(&trace);
        assert_eq!(got.len(), want.len(), "case {case}: shared lines");
        for (line, w) in &want {
            assert_eq!(got.get(line), Some(w), "case {case}, line {line:#x}");
            match w.0.as_str() {
                "true" => truly += 1,
                _ => falsely += 1,
            }
            // Lines with a thread below 1/100 of their accesses, left out of the decision.
            let total: u64 = w.2.iter().map(|t| t.1 + t.2).sum();
            minor_decides +=
                usize::from(w.0 == "false" && w.2.iter().any(|t| (t.1 + t.2) * 100 < total));
        }
        let lines: std::collections::BTreeSet<u64> =
            trace.iter().map(|(_, a)| a.addr / LINE * LINE).collect();
        unshared += lines.len() - want.len();
    }
    // Every branch was reached, many times.
    assert!(
        truly > 1000 && falsely > 300,
        "true {truly}, false {falsely}"
    );
    assert!(
        minor_decides > 20,
        "{minor_decides} lines with a minor thread left out"
    );
    assert!(unshared > 100, "{unshared} lines touched but not shared");
}
