//! Text traces cut into byte ranges at line boundaries, each parsed by its own thread: the
//! accesses (kinds, sizes, pcs included), every mergeable analysis and the sampled profile are
//! those of one sequential reader, and an error names the file and the absolute line.

use cachescope::analysis::Analysis;
use cachescope::parallel::{self, Chunked, FootprintPlan, ReuseTimePlan, StatsPlan, Wire};
use cachescope::pass::{Analyses, Pass, Plan, Sampling};
use cachescope::reuse::{Options, ReuseTimeAnalysis, StackDistanceAnalysis};
use cachescope::sampling::{Sampler, SamplerOptions};
use cachescope::stats::StatsAnalysis;
use cachescope::trace::OpenOptions;
use cachescope::{Access, AccessKind, Batch, Source};

/// Collects every access, in order: the plan that shows exactly what the ranges parsed.
struct Collect;

/// The accesses of one chunk.
#[derive(Default)]
struct Seen(Vec<Access>);

impl Analysis for Seen {
    fn observe(&mut self, batch: &Batch) {
        self.0.extend(batch.iter());
    }
}

impl Chunked for Collect {
    type Worker = Seen;
    type Partial = Seen;
    type Output = Vec<Access>;
    fn worker(&self, _: u64) -> Seen {
        Seen::default()
    }
    fn seal(&self, w: Seen) -> Seen {
        w
    }
    fn merge(&self, acc: &mut Seen, next: Seen) {
        acc.0.extend(next.0);
    }
    fn finish(&self, acc: Seen) -> Vec<Access> {
        acc.0
    }
}

/// Every plan a pass runs can travel between MPI ranks: an access as its address, size, kind
/// and pc (`u64::MAX` for none), little-endian.
impl Wire for Collect {
    fn encode(&self, part: &mut Seen) -> Vec<u8> {
        let mut out = Vec::new();
        for a in &part.0 {
            out.extend(a.addr.to_le_bytes());
            out.extend(a.size.to_le_bytes());
            out.push(a.kind as u8);
            out.extend(a.pc.unwrap_or(u64::MAX).to_le_bytes());
        }
        out
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> cachescope::Result<Seen> {
        let corrupt = || cachescope::Error::Corrupt {
            source_name: source.clone(),
            message: "not a whole number of accesses".into(),
        };
        let records = bytes.chunks(21);
        let mut seen = Seen::default();
        for r in records {
            let r: &[u8; 21] = r.try_into().map_err(|_| corrupt())?;
            let word = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap());
            seen.0.push(Access {
                addr: word(0),
                size: u32::from_le_bytes(r[8..12].try_into().unwrap()),
                kind: *AccessKind::ALL
                    .get(usize::from(r[12]))
                    .ok_or_else(corrupt)?,
                pc: Some(word(13)).filter(|&pc| pc != u64::MAX),
            });
        }
        Ok(seen)
    }

    fn refs(&self, part: &Seen) -> u64 {
        part.0.len() as u64
    }
}

#[test]
fn the_collecting_plan_crosses_the_wire_unchanged() {
    let mut part = Seen(vec![
        Access::load(0x1000, 8),
        Access {
            addr: 7,
            size: 1,
            kind: AccessKind::Instr,
            pc: Some(0x4000),
        },
    ]);
    let bytes = Collect.encode(&mut part);
    let back = Collect.decode(&bytes, &Source::Memory).unwrap();
    assert_eq!(back.0, part.0);
    assert!(Collect.decode(&bytes[1..], &Source::Memory).is_err());
}

/// A lackey trace of `n` records: a Valgrind banner, fetches followed by 0–3 data records
/// (loads, stores, modifies), a Valgrind message in the middle, CRLF line ends now and then.
fn lackey_text(n: usize) -> String {
    let mut x = 99u64;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut s = String::from("==4400== Lackey, an example Valgrind tool\n==4400== \n");
    let mut i = 0;
    while i < n {
        let pc = 0x0400_0000 + (next() % 5000) * 4;
        s += &format!("I  {pc:08x},{}\n", 1 + next() % 7);
        i += 1;
        for _ in 0..next() % 4 {
            let kind = ["L", "S", "M"][(next() % 3) as usize];
            let addr = 0x001f_ff00_0000 + (next() % 20_000) * 8;
            let end = if next() % 50 == 0 { "\r\n" } else { "\n" };
            s += &format!(
                " {kind} {addr:010x},{}{end}",
                [1, 2, 4, 8][(next() % 4) as usize]
            );
            i += 1;
        }
        if i == n / 2 {
            s += "--4400-- a message in the middle\n";
        }
    }
    s
}

/// A plain trace: `R`/`W` and a hex address.
fn plain_text(n: usize) -> String {
    (0..n as u64)
        .map(|i| {
            let k = if i % 3 == 0 { "W" } else { "R" };
            format!("{k} {:#x} 4\n", (i * 7919 % 9000) * 64)
        })
        .collect()
}

fn write(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

fn open(path: &std::path::Path) -> cachescope::trace::Trace {
    cachescope::trace::open(path, &OpenOptions::default()).unwrap()
}

fn run<P: Wire>(path: &std::path::Path, plan: &P, threads: usize) -> P::Output {
    Pass::new(threads).run(&mut open(path), Plan(plan)).unwrap()
}

fn sequential<A: Analysis>(mut a: A, path: &std::path::Path) -> A {
    Pass::new(1)
        .run(&mut open(path), Analyses(&mut [&mut a]))
        .unwrap();
    a
}

fn check(path: &std::path::Path) {
    let all = run(path, &Collect, 1);
    assert!(all.len() > 10_000, "{}", all.len());
    let o = Options::default();
    let sd = sequential(StackDistanceAnalysis::new(o), path).finish();
    let rt = sequential(ReuseTimeAnalysis::new(o), path).finish();
    let st = sequential(StatsAnalysis::new(o.line_size), path).finish();
    let windows = [1, 10, 1000];
    let fp = sequential(
        cachescope::models::hotl::FootprintAnalysis::new(o, &windows).unwrap(),
        path,
    )
    .finish();
    let so = SamplerOptions {
        rate: 0.01,
        ..SamplerOptions::default()
    };
    let mut sampler = Sampler::new(so).unwrap();
    Pass::new(1)
        .run(&mut open(path), Analyses(&mut [&mut sampler]))
        .unwrap();
    let profile = sampler.finish();
    for threads in [2, 3, 4] {
        assert!(run(path, &Collect, threads) == all, "{threads} threads");
        let plan = parallel::StackDistancePlan { options: o };
        assert_eq!(run(path, &plan, threads), sd);
        assert_eq!(run(path, &ReuseTimePlan { options: o }, threads), rt);
        let st2 = run(
            path,
            &StatsPlan {
                line_size: o.line_size,
            },
            threads,
        );
        assert_eq!(st2, st);
        let fp2 = run(path, &FootprintPlan::new(o, &windows).unwrap(), threads);
        assert_eq!(
            serde_json::to_string(&fp2).unwrap(),
            serde_json::to_string(&fp).unwrap()
        );
        for segment in [500, 5000] {
            let mut c = Pass::new(threads).segment(segment);
            let got = c.run(&mut open(path), Sampling(so)).unwrap();
            assert_eq!(got, profile, "{c:?}");
        }
    }
}

#[test]
fn lackey_ranges_keep_pcs_modifies_and_messages() {
    let f = write(&lackey_text(60_000));
    let all = run(f.path(), &Collect, 1);
    // The pc of a data record is its fetch's, also right after a cut.
    assert!(all.iter().all(|a| a.pc.is_some()));
    check(f.path());
}

#[test]
fn plain_ranges() {
    let f = write(&plain_text(40_000));
    check(f.path());
}

#[test]
fn a_bad_line_in_a_later_range_is_named_by_its_absolute_number() {
    let text = lackey_text(60_000);
    let mut lines: Vec<&str> = text.lines().collect();
    let bad = lines.len() * 3 / 4;
    lines[bad] = " X 1234,8";
    let f = write(&(lines.join("\n") + "\n"));
    for threads in [1, 2, 4] {
        let mut t = open(f.path());
        let err = Pass::new(threads)
            .run(&mut t, Plan(&parallel::StackDistancePlan::default()))
            .unwrap_err()
            .to_string();
        let want = format!("{}:{}:", f.path().display(), bad + 1);
        assert!(
            err.starts_with(&want),
            "{threads} threads: {err}, want {want}"
        );
        let mut c = Pass::new(threads).segment(1000);
        let err = c
            .run(&mut open(f.path()), Sampling(SamplerOptions::default()))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&want), "sampling, {threads} threads: {err}");
    }
}
