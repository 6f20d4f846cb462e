//! What every accuracy table shares: the traces, exact references, error statistics, markdown.

use std::path::{Path, PathBuf};

use cachescope::analysis::Analysis;
use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::Mrc;
use cachescope::trace::{self, OpenOptions, Trace};
use cachescope::workloads::{self, Params, Workload};
use cachescope::{LineSize, Source};

/// One trace of the accuracy set.
pub struct Input {
    /// Short name for the table.
    pub name: String,
    /// `real` (a recorded trace of a real program) or `synthetic`.
    pub kind: &'static str,
    open: Opener,
}

enum Opener {
    File(PathBuf),
    Workload(Workload, Params),
}

impl Input {
    /// The same input with instruction fetches: a synthetic workload's generated with them
    /// (one per data reference and more, with pcs); a recorded trace has its own.
    pub fn with_instructions(&self) -> Input {
        let open = match &self.open {
            Opener::File(p) => Opener::File(p.clone()),
            Opener::Workload(w, p) => Opener::Workload(
                *w,
                Params {
                    instructions: true,
                    ..p.clone()
                },
            ),
        };
        Input {
            name: self.name.clone(),
            kind: self.kind,
            open,
        }
    }

    /// Opens a fresh pass over the trace.
    pub fn open(&self) -> Trace {
        match &self.open {
            Opener::File(p) => trace::open(p, &OpenOptions::default()).expect("trace opens"),
            Opener::Workload(w, p) => Trace::from_reader(
                Box::new(workloads::generator(*w, p).expect("valid workload")),
                Source::Workload(w.name().into()),
            ),
        }
    }
}

/// The real traces in `dir` (`NAME.lackey.zst`, or `NAME.cst` with `RECORDER=cachescope`, from
/// scripts/real-traces.sh) and a fixed set of synthetic workloads sized to have interesting
/// curves between 1 KiB and a few MiB.
pub fn inputs(dir: &Path) -> Vec<Input> {
    let mut v = Vec::new();
    let mut real: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| real_name(p).is_some())
                .collect()
        })
        .unwrap_or_default();
    real.sort();
    for p in real {
        let name = real_name(&p).expect("filtered");
        v.push(Input {
            name,
            kind: "real",
            open: Opener::File(p),
        });
    }
    let base = Params::default();
    let synthetic = [
        (
            Workload::Zipf,
            Params {
                lines: 32768,
                ..base.clone()
            },
        ),
        (
            Workload::Random,
            Params {
                lines: 16384,
                ..base.clone()
            },
        ),
        (
            Workload::MatmulTiled,
            Params {
                n: 96,
                tile: 16,
                ..base.clone()
            },
        ),
        (
            Workload::Stencil,
            Params {
                n: 40,
                ..base.clone()
            },
        ),
        (
            Workload::Phases,
            Params {
                lines: 8192,
                ..base.clone()
            },
        ),
    ];
    for (w, p) in synthetic {
        v.push(Input {
            name: w.name().into(),
            kind: "synthetic",
            open: Opener::Workload(w, p),
        });
    }
    v
}

/// The traces in `dir` as programs held out from the models' tuning (`NAME.cst` or
/// `NAME.lackey.zst`, from scripts/heldout-traces.sh).
pub fn held_out(dir: &Path) -> Vec<Input> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| real_name(p).is_some())
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .map(|p| Input {
            name: real_name(&p).expect("filtered"),
            kind: "held out",
            open: Opener::File(p),
        })
        .collect()
}

/// The program name of a real trace file, `NAME.lackey.zst` or `NAME.cst`.
fn real_name(p: &Path) -> Option<String> {
    let file = p.file_name()?.to_string_lossy().into_owned();
    [".lackey.zst", ".cst"]
        .iter()
        .find_map(|ext| file.strip_suffix(ext).map(str::to_string))
}

/// The sweep of a working-set graph: every eighth of an octave from 1 KiB, up to the first size
/// that holds every line of the trace (beyond it every curve is flat at its cold floor).
pub fn sweep(distinct_lines: u64, line_size: LineSize) -> Vec<u64> {
    let top = (distinct_lines * line_size.bytes())
        .next_power_of_two()
        .max(2048);
    cachescope::reuse::sizes_log_range(1 << 10, top, 8).expect("valid range")
}

/// One pass of `analyses` over `input`, both cores.
pub fn run(input: &Input, analyses: &mut [&mut dyn Analysis]) {
    let mut trace = input.open();
    Pass::new(2)
        .run(&mut trace, Analyses(analyses))
        .expect("trace reads");
}

/// The point-wise mean of curves at the same sizes.
pub fn average(curves: &[Mrc]) -> Mrc {
    let mut out = curves[0].clone();
    let k = curves.len() as f64;
    for (i, p) in out.points.iter_mut().enumerate() {
        p.miss_ratio_warm = curves
            .iter()
            .map(|c| c.points[i].miss_ratio_warm)
            .sum::<f64>()
            / k;
        p.miss_ratio = curves
            .iter()
            .map(|c| c.points[i].miss_ratio)
            .sum::<Option<f64>>()
            .map(|s| s / k);
    }
    out
}

/// Mean and max absolute difference of `miss_ratio_warm`, in percentage points.
pub fn error_pp(model: &Mrc, exact: &Mrc) -> (f64, f64) {
    assert_eq!(model.points.len(), exact.points.len());
    let d: Vec<f64> = model
        .points
        .iter()
        .zip(&exact.points)
        .map(|(a, b)| 100.0 * (a.miss_ratio_warm - b.miss_ratio_warm).abs())
        .collect();
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    let max = d.iter().copied().fold(0.0, f64::max);
    (mean, max)
}

/// Summary of a statistic over seeds: mean, min, max.
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        Spread {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} ({:.2}–{:.2})", self.mean, self.min, self.max)
    }
}

/// `1234567` → `1.23 M`.
pub fn human(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.2} G", n / 1e9),
        n if n >= 1e6 => format!("{:.2} M", n / 1e6),
        n if n >= 1e3 => format!("{:.1} k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// CPU seconds (user + system, every thread) this process has used, from /proc/self/stat
/// (in the kernel's clock ticks, 100 a second on Linux).
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// Today's date, `YYYY-MM-DD` (UTC), from the system clock.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Machine facts printed under each table.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {cores} cores")
}
