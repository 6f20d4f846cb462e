//! `cachescope simulate`: exact cache simulation — independent caches, a hierarchy, or
//! Valgrind Cachegrind's I1/D1/LL model — all fed by one pass over the trace.

use cachescope::units::{size_label, thousands};
use std::fmt::Write as _;

use anyhow::{Context, Result, bail};
use cachescope::analysis::Analysis;
use cachescope::sim::{
    CachegrindCounts, CachegrindSim, Geometry, HierarchyConfig, LineMapping, Policy, SimAnalysis,
    SimOptions, SimReport,
};

use super::{drive, drive_split};
use crate::args::SimulateArgs;
use crate::{input, output};

fn geometry(spec: &str, flag: &str) -> Result<Geometry> {
    Geometry::parse(spec).with_context(|| format!("--{flag} {spec}"))
}

pub fn run(args: SimulateArgs) -> Result<()> {
    let seed = args.input.params.seed;
    let policy = Policy::from_name(&args.policy, seed)?;
    let opts = SimOptions {
        mapping: if args.straddle {
            LineMapping::Straddle
        } else {
            LineMapping::FirstByte
        },
        three_c: args.three_c,
    };
    let hierarchy_flags = [&args.i1, &args.d1, &args.l2, &args.l3]
        .iter()
        .any(|f| f.is_some());

    // Validate every geometry before reading anything.
    if args.cachegrind {
        let (Some(i1), Some(d1), Some(ll)) = (&args.i1, &args.d1, &args.l2) else {
            bail!("--cachegrind needs --I1, --D1 and --LL, each SIZE,ASSOC,LINE (e.g. 32K,8,64)");
        };
        if args.l3.is_some() || !args.caches.is_empty() {
            bail!("--cachegrind simulates exactly I1, D1 and LL; drop --L3 and --cache");
        }
        let mut sim = CachegrindSim::new(
            geometry(i1, "I1")?,
            geometry(d1, "D1")?,
            geometry(ll, "LL")?,
        )?;
        let mut trace = input::open(&args.input, args.run.line_size)?;
        drive(&mut trace, &mut [&mut sim], &args.run)?;
        let counts = sim.finish();
        return if args.json {
            output::print(&(serde_json::to_string_pretty(&counts)? + "\n"))
        } else {
            output::print(&render_cachegrind(&counts))
        };
    }

    if policy == Policy::Opt {
        return run_opt(&args, opts);
    }
    let mut sims: Vec<SimAnalysis> = Vec::new();
    if hierarchy_flags {
        let (Some(i1), Some(d1), Some(l2)) = (&args.i1, &args.d1, &args.l2) else {
            bail!("a hierarchy needs --I1, --D1 and --L2 (or --LL); --L3 is optional");
        };
        let mut config = HierarchyConfig::new(
            geometry(i1, "I1")?,
            geometry(d1, "D1")?,
            geometry(l2, "L2")?,
        );
        config.l3 = args.l3.as_deref().map(|s| geometry(s, "L3")).transpose()?;
        config.policy = policy;
        config.inclusion = args.inclusion.into();
        sims.push(SimAnalysis::hierarchy(&config, opts)?);
    }
    for spec in &args.caches {
        sims.push(SimAnalysis::cache(geometry(spec, "cache")?, policy, opts)?);
    }
    if sims.is_empty() {
        bail!(
            "nothing to simulate: give --cache SIZE,ASSOC,LINE (repeatable), a hierarchy \
             (--I1, --D1, --L2 [--L3]), or --cachegrind --I1 --D1 --LL"
        );
    }
    let mut trace = input::open(&args.input, args.run.line_size)?;
    // Independent configurations: side by side on the threads, one decode.
    let mut analyses: Vec<&mut (dyn Analysis + Send)> = sims
        .iter_mut()
        .map(|s| s as &mut (dyn Analysis + Send))
        .collect();
    drive_split(&mut trace, &mut analyses, &args.run)?;
    let reports: Vec<SimReport> = sims.iter().map(SimAnalysis::finish).collect();
    print(&args, &reports)
}

/// The reports as JSON, CSV or a table.
fn print(args: &SimulateArgs, reports: &[SimReport]) -> Result<()> {
    if args.json {
        let v = serde_json::json!({ "simulations": json_reports(reports)? });
        output::print(&(serde_json::to_string_pretty(&v)? + "\n"))
    } else if args.csv {
        // One row per level of every simulation: its index, then the level's JSON fields.
        let mut rows = Vec::new();
        for (i, r) in json_reports(reports)?.into_iter().enumerate() {
            for level in r["levels"].as_array().into_iter().flatten() {
                let mut row = serde_json::json!({ "simulation": i });
                if let (Some(row), Some(fields)) = (row.as_object_mut(), level.as_object()) {
                    row.extend(fields.clone());
                }
                rows.push(row);
            }
        }
        output::print(&output::csv_records(&rows))
    } else {
        output::print(&render(reports))
    }
}

/// `--policy opt`: every --cache under Belady's MIN, from one spilled pass (see cachescope::opt).
fn run_opt(args: &SimulateArgs, opts: SimOptions) -> Result<()> {
    if [&args.i1, &args.d1, &args.l2, &args.l3]
        .iter()
        .any(|f| f.is_some())
        || args.three_c
    {
        bail!("--policy opt simulates independent --cache caches only (no hierarchy, no --3c)");
    }
    if opts.mapping == LineMapping::Straddle {
        bail!("--policy opt maps each reference to the line of its first byte: drop --straddle");
    }
    let geometries = args
        .caches
        .iter()
        .map(|spec| geometry(spec, "cache"))
        .collect::<Result<Vec<_>>>()?;
    let Some(first) = geometries.first() else {
        bail!("nothing to simulate: give --cache SIZE,ASSOC,LINE (repeatable)");
    };
    let line_size = first.line_size();
    if geometries.iter().any(|g| g.line_size() != line_size) {
        bail!("--policy opt looks ahead over one line size: give every --cache the same line");
    }
    let options = cachescope::reuse::Options {
        line_size,
        ..Default::default()
    };
    let mut spill = cachescope::opt::NextUseSpill::new(options)?;
    let mut trace = input::open(&args.input, args.run.line_size)?;
    drive(&mut trace, &mut [&mut spill], &args.run)?;
    let refs = spill.refs();
    let misses = cachescope::opt::set_assoc_misses(&mut spill.finish()?, &geometries)?;
    let reports: Vec<SimReport> = geometries
        .iter()
        .zip(misses)
        .map(|(&geometry, misses)| SimReport {
            mapping: LineMapping::FirstByte,
            inclusion: None,
            levels: vec![cachescope::sim::LevelReport {
                name: "cache",
                geometry,
                policy: Policy::Opt,
                stats: cachescope::sim::MissStats {
                    refs,
                    misses,
                    line_accesses: refs,
                    line_misses: misses,
                    three_c: None,
                },
            }],
        })
        .collect();
    print(args, &reports)
}

/// Independent caches and hierarchies as a table.
fn render(reports: &[SimReport]) -> String {
    let mut o = String::new();
    for r in reports {
        if let Some(inc) = r.inclusion {
            let _ = writeln!(
                o,
                "# hierarchy, {}",
                serde_json::to_value(inc).unwrap_or_default()
            );
        }
        let _ = writeln!(
            o,
            "{:<5} {:<22} {:<6} {:>14} {:>12} {:>10} {:>12} {:>12} {:>12}",
            "level",
            "geometry",
            "policy",
            "refs",
            "misses",
            "miss rate",
            "cold",
            "capacity",
            "conflict"
        );
        for l in &r.levels {
            let g = &l.geometry;
            let shape = format!(
                "{} {}-way {}B",
                size_label(g.size_bytes()),
                if g.is_fully_associative() {
                    "full".into()
                } else {
                    g.assoc().to_string()
                },
                g.line_size().bytes()
            );
            let (cold, cap, conf) = match &l.stats.three_c {
                Some(c) => (
                    thousands(c.cold),
                    thousands(c.capacity),
                    thousands(c.conflict),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                o,
                "{:<5} {:<22} {:<6} {:>14} {:>12} {:>9.4}% {:>12} {:>12} {:>12}",
                l.name,
                shape,
                l.policy.name(),
                thousands(l.stats.refs),
                thousands(l.stats.misses),
                l.stats.miss_ratio() * 100.0,
                cold,
                cap,
                conf
            );
        }
        o.push('\n');
    }
    o
}

/// The reports as JSON, each level with its `miss_ratio` (misses per reference) added.
fn json_reports(reports: &[SimReport]) -> Result<Vec<serde_json::Value>> {
    Ok(reports.iter().map(SimReport::to_json).collect())
}

/// Cachegrind's summary layout (`cg_main.c`), without the `==pid==` prefixes.
pub fn render_cachegrind(c: &CachegrindCounts) -> String {
    let pct = |n: u64, d: u64| {
        if d == 0 {
            0.0
        } else {
            n as f64 * 100.0 / d as f64
        }
    };
    let ll_rd_refs = c.i1_misses + c.d1_read_misses;
    let ll_rd_misses = c.lli_misses + c.lld_read_misses;
    let l1 = thousands(c.i_refs).len();
    let l2 = thousands(c.d_reads).len();
    let l3 = thousands(c.d_writes).len();
    let n = |x: u64, w: usize| format!("{:>w$}", thousands(x));
    let three = |label: &str, t: u64, r: u64, w: u64| {
        format!(
            "{label} {}  ({} rd   + {} wr)\n",
            n(t, l1),
            n(r, l2),
            n(w, l3)
        )
    };
    let rate = |label: &str, t: f64, r: f64, w: f64| {
        format!("{label} {t:>l1$.1}% ({r:>l2$.1}%     + {w:>l3$.1}%  )\n")
    };
    let mut o = String::new();
    o += &format!("I   refs:      {}\n", n(c.i_refs, l1));
    o += &format!("I1  misses:    {}\n", n(c.i1_misses, l1));
    o += &format!("LLi misses:    {}\n", n(c.lli_misses, l1));
    o += &format!("I1  miss rate: {:>l1$.2}%\n", pct(c.i1_misses, c.i_refs));
    o += &format!("LLi miss rate: {:>l1$.2}%\n", pct(c.lli_misses, c.i_refs));
    o += "\n";
    o += &three("D   refs:     ", c.d_refs, c.d_reads, c.d_writes);
    o += &three(
        "D1  misses:   ",
        c.d1_misses,
        c.d1_read_misses,
        c.d1_write_misses,
    );
    o += &three(
        "LLd misses:   ",
        c.lld_misses,
        c.lld_read_misses,
        c.lld_write_misses,
    );
    o += &rate(
        "D1  miss rate:",
        pct(c.d1_misses, c.d_refs),
        pct(c.d1_read_misses, c.d_reads),
        pct(c.d1_write_misses, c.d_writes),
    );
    o += &rate(
        "LLd miss rate:",
        pct(c.lld_misses, c.d_refs),
        pct(c.lld_read_misses, c.d_reads),
        pct(c.lld_write_misses, c.d_writes),
    );
    o += "\n";
    o += &three("LL refs:      ", c.ll_refs, ll_rd_refs, c.d1_write_misses);
    o += &three(
        "LL misses:    ",
        c.ll_misses,
        ll_rd_misses,
        c.lld_write_misses,
    );
    o += &rate(
        "LL miss rate: ",
        pct(c.ll_misses, c.i_refs + c.d_refs),
        pct(ll_rd_misses, c.i_refs + c.d_reads),
        pct(c.lld_write_misses, c.d_writes),
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of a real Cachegrind run (`ls /`), laid out as Cachegrind printed them.
    #[test]
    fn cachegrind_layout_matches_valgrind() {
        let c = CachegrindCounts {
            i_refs: 569_869,
            i1_misses: 2_266,
            lli_misses: 2_006,
            d_refs: 203_560,
            d1_misses: 4_568,
            lld_misses: 3_178,
            d_reads: 143_966,
            d_writes: 59_594,
            d1_read_misses: 3_591,
            d1_write_misses: 977,
            lld_read_misses: 2_298,
            lld_write_misses: 880,
            ll_refs: 6_834,
            ll_misses: 5_184,
        };
        let want = "\
I   refs:      569,869
I1  misses:      2,266
LLi misses:      2,006
I1  miss rate:    0.40%
LLi miss rate:    0.35%

D   refs:      203,560  (143,966 rd   + 59,594 wr)
D1  misses:      4,568  (  3,591 rd   +    977 wr)
LLd misses:      3,178  (  2,298 rd   +    880 wr)
D1  miss rate:     2.2% (    2.5%     +    1.6%  )
LLd miss rate:     1.6% (    1.6%     +    1.5%  )

LL refs:         6,834  (  5,857 rd   +    977 wr)
LL misses:       5,184  (  4,304 rd   +    880 wr)
LL miss rate:      0.7% (    0.6%     +    1.5%  )
";
        assert_eq!(render_cachegrind(&c), want);
    }
}
