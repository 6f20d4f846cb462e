//! `simulate`'s output: the levels of independent caches and hierarchies as a table (or
//! `--json`, `--csv` one row per level), and Cachegrind's own summary layout.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::sim::{CachegrindCounts, SimReport};
use cachescope::tlb::TlbReport;
use cachescope::units::{size_label, thousands};

use crate::output::{self, Output};

/// The reports of one run, in the order of the flags, and the TLBs' when simulated.
pub struct Simulations(pub Vec<SimReport>, pub Option<TlbReport>);

impl Output for Simulations {
    fn json(&self) -> Result<String> {
        let mut doc = serde_json::json!({ "simulations": json_reports(&self.0) });
        if let (Some(t), Some(o)) = (&self.1, doc.as_object_mut()) {
            o.extend(super::tlb::json_fields(t));
        }
        output::json(&doc)
    }

    /// One row per level of every simulation: its index, then the level's JSON fields.
    fn csv(&self) -> Result<String> {
        let mut rows = Vec::new();
        for (i, r) in json_reports(&self.0).into_iter().enumerate() {
            for level in r["levels"].as_array().into_iter().flatten() {
                let mut row = serde_json::json!({ "simulation": i });
                if let (Some(row), Some(fields)) = (row.as_object_mut(), level.as_object()) {
                    row.extend(fields.clone());
                }
                rows.push(row);
            }
        }
        rows.extend(self.1.iter().flat_map(super::tlb::csv_rows));
        Ok(output::csv_records(&rows))
    }

    fn table(&self) -> String {
        let mut o = render(&self.0);
        if let Some(t) = &self.1 {
            o += &super::tlb::render(t);
        }
        o
    }
}

impl Output for CachegrindCounts {
    fn json(&self) -> Result<String> {
        output::json(self)
    }

    fn csv(&self) -> Result<String> {
        bail!("--csv does not apply to --cachegrind (clap keeps them apart)")
    }

    fn table(&self) -> String {
        render_cachegrind(self)
    }
}

/// The reports as JSON, each level with its `miss_ratio` (misses per reference) added.
fn json_reports(reports: &[SimReport]) -> Vec<serde_json::Value> {
    reports.iter().map(SimReport::to_json).collect()
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
        // Write-back columns only when they were tracked: the default table is unchanged.
        let writebacks = r.levels.iter().any(|l| l.stats.writebacks.is_some());
        let _ = write!(
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
        if writebacks {
            let _ = write!(o, " {:>12} {:>12}", "writebacks", "wb received");
        }
        // Likewise the utilization columns.
        let utilization = r.levels.iter().any(|l| l.stats.used_bytes.is_some());
        if utilization {
            let _ = write!(o, " {:>14} {:>14} {:>6}", "used B", "fetched B", "util");
        }
        o.push('\n');
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
            let _ = write!(
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
            if writebacks {
                let n = |x: Option<u64>| x.map_or_else(|| "-".into(), thousands);
                let (out, received) = (l.stats.writebacks, l.stats.writebacks_received);
                let _ = write!(o, " {:>12} {:>12}", n(out), n(received));
            }
            if utilization {
                let n = |x: Option<u64>| x.map_or_else(|| "-".into(), thousands);
                let (used, fetched) = (l.stats.used_bytes, l.stats.fetched_bytes);
                let u = l.stats.utilization().unwrap_or(0.0);
                let _ = write!(o, " {:>14} {:>14} {:>6.3}", n(used), n(fetched), u);
            }
            o.push('\n');
        }
        o.push('\n');
    }
    o
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
