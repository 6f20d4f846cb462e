//! HOTL's co-run prediction (§4.5, `cachescope corun`) against a simulation of the two programs
//! sharing one cache, for every pair of a set of traces.
//!
//! The simulation runs the two programs on a clock of instructions: each executes one
//! instruction per tick, so a program's data references come at its own rate (data references
//! per instruction, measured from its trace), and each runs to its end (the longer one finishes
//! alone). Their lines are told apart (two address spaces). The prediction is what a user
//! gets: each program's whole-run footprint and its measured rate. Pairs of two real programs
//! are reported apart from pairs with a synthetic partner.

use std::collections::HashSet;
use std::fmt::Write as _;

use cachescope::analysis::Analysis;
use cachescope::models::hotl::corun::{self, CorunProgram};
use cachescope::models::hotl::{FootprintAnalysis, FootprintCurve};
use cachescope::reuse::Options;
use cachescope::sim::{Cache, Geometry, Policy};
use cachescope::trace::Trace;
use cachescope::{AccessKind, Batch};

use crate::common::{Input, human};

/// The pairs are taken from these (up to 25 M data references each).
const PICKED: [&str; 8] = [
    "awk", "gzip", "hash", "mm", "sort", "zipf", "random", "stencil",
];

/// A program's whole run: its footprint, data references and instructions.
struct Solo {
    input: Input,
    footprint: FootprintCurve,
    refs: u64,
    instructions: u64,
}

impl Solo {
    fn of(input: &Input) -> Solo {
        let input = input.with_instructions();
        let mut fp = FootprintAnalysis::new(Options::default(), &[]).expect("valid");
        let (mut refs, mut instructions) = (0u64, 0u64);
        let mut trace = input.open();
        let mut b = Batch::new();
        while trace.read_batch(&mut b).expect("reads") > 0 {
            fp.observe(&b);
            let fetches = b.kinds.iter().filter(|&&k| k == AccessKind::Instr).count() as u64;
            instructions += fetches;
            refs += b.len() as u64 - fetches;
        }
        assert!(
            instructions > 0,
            "{} has no instruction fetches",
            input.name
        );
        let footprint = FootprintCurve::from_footprint(&fp.finish(), 256).expect("valid");
        Solo {
            input,
            footprint,
            refs,
            instructions,
        }
    }

    /// Data references per instruction.
    fn rate(&self) -> f64 {
        self.refs as f64 / self.instructions as f64
    }
}

/// One program's side of a simulated co-run.
#[derive(Default, Clone, Copy)]
struct Counts {
    refs: u64,
    misses: u64,
    /// References made after the partner ended.
    alone: u64,
}

/// One program being replayed: its trace, the batch being read and the place in it.
struct Replay {
    trace: Trace,
    batch: Batch,
    at: usize,
    /// Instructions executed so far: the program's clock.
    clock: u64,
    done: bool,
}

impl Replay {
    fn new(trace: Trace) -> Replay {
        Replay {
            trace,
            batch: Batch::new(),
            at: 0,
            clock: 0,
            done: false,
        }
    }

    /// The next access, `None` at the end.
    fn next(&mut self) -> Option<(AccessKind, u64)> {
        if self.at == self.batch.len() {
            self.at = 0;
            if self.done || self.trace.read_batch(&mut self.batch).expect("reads") == 0 {
                self.done = true;
                return None;
            }
        }
        let i = self.at;
        self.at += 1;
        Some((self.batch.kinds[i], self.batch.addrs[i]))
    }
}

/// Both programs on one clock of instructions, in every cache of `caches` at once (lines of 64
/// bytes, program `p`'s lines tagged `p << 56`): each program's counts in each cache.
fn simulate(pair: [&Solo; 2], geometries: &[Geometry]) -> Vec<[Counts; 2]> {
    let mut caches: Vec<Cache> = geometries
        .iter()
        .map(|&g| Cache::new(g, Policy::Lru).expect("valid"))
        .collect();
    let mut counts = vec![[Counts::default(); 2]; caches.len()];
    let mut seen = [HashSet::new(), HashSet::new()];
    let mut replays = pair.map(|s| Replay::new(s.input.open()));
    loop {
        // The program behind on its clock moves next (program 0 on a tie).
        let running: Vec<usize> = (0..2).filter(|&p| !replays[p].done).collect();
        let Some(&p) = running.iter().min_by_key(|&&p| (replays[p].clock, p)) else {
            break;
        };
        let Some((kind, addr)) = replays[p].next() else {
            continue;
        };
        if kind == AccessKind::Instr {
            replays[p].clock += 1;
            continue;
        }
        let line = addr >> 6;
        assert!(line < 1 << 56, "line {line:#x} too high to tag");
        let tagged = line | (p as u64) << 56;
        let cold = seen[p].insert(line);
        let alone = replays[1 - p].done;
        for (cache, c) in caches.iter_mut().zip(&mut counts) {
            let hit = cache.access(tagged) && !cold;
            c[p].refs += 1;
            c[p].misses += u64::from(!hit);
            c[p].alone += u64::from(alone);
        }
    }
    counts
}

/// One row's numbers: simulated and predicted miss ratios (cold misses included).
struct Row {
    pair: String,
    program: String,
    simulated: f64,
    predicted: f64,
    alone: f64,
}

impl Row {
    fn absolute_pp(&self) -> f64 {
        100.0 * (self.predicted - self.simulated).abs()
    }

    fn relative(&self) -> f64 {
        if self.simulated > 0.0 {
            (self.predicted - self.simulated) / self.simulated
        } else {
            0.0
        }
    }
}

pub fn table(inputs: &[Input]) -> String {
    let solos: Vec<Solo> = inputs
        .iter()
        .filter(|i| PICKED.contains(&i.name.as_str()))
        .map(|i| {
            eprintln!("accuracy corun: {} alone", i.name);
            Solo::of(i)
        })
        .collect();
    let geometries = [
        (
            "256 KiB fully associative",
            Geometry::fully_associative(256 << 10, 64).expect("valid"),
        ),
        (
            "256 KiB 8-way",
            Geometry::new(256 << 10, 8, 64).expect("valid"),
        ),
    ];
    let shapes: Vec<Geometry> = geometries.iter().map(|g| g.1).collect();
    // rows[g][real pairs: 0, with a synthetic partner: 1]
    let mut rows: Vec<[Vec<Row>; 2]> = geometries.iter().map(|_| [vec![], vec![]]).collect();
    for i in 0..solos.len() {
        for j in i + 1..solos.len() {
            let pair = [&solos[i], &solos[j]];
            let name = format!("{} + {}", pair[0].input.name, pair[1].input.name);
            eprintln!("accuracy corun: {name}");
            let sims = simulate(pair, &shapes);
            let real = pair.iter().all(|s| s.input.kind == "real");
            let programs: Vec<CorunProgram> = pair
                .iter()
                .map(|s| CorunProgram {
                    footprint: s.footprint.clone(),
                    rate: s.rate(),
                })
                .collect();
            for (g, counts) in sims.iter().enumerate() {
                let predicted = corun::predict(&programs, shapes[g]).expect("predicts");
                for p in 0..2 {
                    let c = counts[p];
                    rows[g][usize::from(!real)].push(Row {
                        pair: name.clone(),
                        program: pair[p].input.name.clone(),
                        simulated: c.misses as f64 / c.refs.max(1) as f64,
                        predicted: predicted[p]
                            .miss_ratio
                            .unwrap_or(predicted[p].miss_ratio_warm),
                        alone: c.alone as f64 / c.refs.max(1) as f64,
                    });
                }
            }
        }
    }
    let mut o = String::from(
        "# Co-run accuracy\n\n\
         `cachescope corun`'s prediction (HOTL §4.5) for every pair of the programs below \
         sharing one cache, against a simulation of the pair. The simulation runs both on one \
         clock of instructions (one instruction per tick each, so each makes its data \
         references at its own measured rate) and each program to its end: the longer one \
         finishes alone. The prediction is what `corun` gives a user: each program's footprint \
         over its whole run and its rate, data references per instruction, measured from its \
         trace. Miss ratio per data reference, cold misses included; the two programs' lines \
         never shared (two address spaces). *Alone* is the share of a program's references made \
         after its partner ended, which the model, assuming both run throughout, does not \
         see. Caches: 256 KiB fully associative LRU and 8-way LRU (Smith's formula on the \
         shared reuse distances). Synthetic workloads (`zipf`, `random`, `stencil`) run with \
         their generated instruction fetches; pairs with one are reported apart.\n\n",
    );
    o.push_str("| program | kind | data refs | instructions | refs per instruction |\n");
    o.push_str("|---|---|---:|---:|---:|\n");
    for s in &solos {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.3} |",
            s.input.name,
            s.input.kind,
            human(s.refs as f64),
            human(s.instructions as f64),
            s.rate()
        );
    }
    for (g, (label, _)) in geometries.iter().enumerate() {
        for (k, title) in [
            (0, "pairs of real programs"),
            (1, "pairs with a synthetic partner"),
        ] {
            let rows = &rows[g][k];
            if rows.is_empty() {
                continue;
            }
            let _ = write!(
                o,
                "\n## {label}, {title}\n\n{}\n\n| pair | program | simulated | predicted | absolute error (pp) | relative error | alone |\n|---|---|---:|---:|---:|---:|---:|\n",
                summary(rows)
            );
            for r in rows {
                let _ = writeln!(
                    o,
                    "| {} | {} | {:.5} | {:.5} | {:.3} | {:+.1}% | {:.0}% |",
                    r.pair,
                    r.program,
                    r.simulated,
                    r.predicted,
                    r.absolute_pp(),
                    100.0 * r.relative(),
                    100.0 * r.alone
                );
            }
        }
    }
    o
}

/// The median and worst relative error, and the mean and worst absolute one.
fn summary(rows: &[Row]) -> String {
    let mut rel: Vec<f64> = rows.iter().map(|r| r.relative().abs()).collect();
    rel.sort_by(f64::total_cmp);
    let abs: Vec<f64> = rows.iter().map(Row::absolute_pp).collect();
    let worst = rows
        .iter()
        .max_by(|a, b| a.relative().abs().total_cmp(&b.relative().abs()))
        .expect("rows");
    format!(
        "{} predictions: relative error median {:.1}%, worst {:.1}% ({} in {}); absolute \
         error mean {:.3} pp, worst {:.3} pp.",
        rows.len(),
        100.0 * rel[rel.len() / 2],
        100.0 * rel[rel.len() - 1],
        worst.program,
        worst.pair,
        abs.iter().sum::<f64>() / abs.len() as f64,
        abs.iter().copied().fold(0.0, f64::max)
    )
}
