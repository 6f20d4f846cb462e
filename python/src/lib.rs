//! `cachescope._native`: the Rust side of the Python package. Functions take a [`NativeSource`]
//! and keyword options named as the command line's flags, run the library with the GIL
//! released, and return the command line's JSON; `python/cachescope/` makes numpy arrays
//! and pandas frames of it. Errors become `cachescope.CachescopeError` with the library's text
//! (the file and line of bad input).

mod models;
mod passes;
mod record;
mod source;

use std::path::PathBuf;

use cachescope::method::{CurvePolicy, Method, MrcOptions};
use cachescope::reuse::Options;
use cachescope::sampling::{Cold, Profile, SamplerOptions};
use cachescope::trace::FormatChoice;
use cachescope::workloads::{Params, Workload};
use cachescope::{LineSize, Source};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use passes::Progress;
use source::Spec;

pyo3::create_exception!(
    _native,
    CachescopeError,
    PyException,
    "An error from cachescope's library: bad input (with its file and line), an absurd parameter, a program that could not be recorded."
);

fn err(e: cachescope::Error) -> PyErr {
    CachescopeError::new_err(e.to_string())
}

/// A source of references: a trace file or a built-in workload.
#[pyclass(frozen, module = "cachescope._native")]
struct NativeSource {
    spec: Spec,
}

#[pymethods]
impl NativeSource {
    /// The source as results name it.
    #[getter]
    fn name(&self) -> String {
        self.spec.describe()
    }
}

/// A trace file; `format` is `auto` (detected from the content) or a format name.
#[pyfunction]
#[pyo3(signature = (path, format = "auto"))]
fn open_file(path: PathBuf, format: &str) -> PyResult<NativeSource> {
    let format: FormatChoice = format.parse().map_err(err)?;
    if !path.exists() {
        let e = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        return Err(err(cachescope::Error::io(&Source::File(path), e)));
    }
    Ok(NativeSource {
        spec: Spec::File { path, format },
    })
}

/// A built-in workload, with the parameters of `cachescope generate`.
#[pyfunction]
#[pyo3(signature = (name, seed = 1, refs = None, lines = None, stride = None, n = None, tile = None, zipf_s = None, instructions = false))]
#[allow(clippy::too_many_arguments)]
fn workload(
    name: &str,
    seed: u64,
    refs: Option<u64>,
    lines: Option<u64>,
    stride: Option<u64>,
    n: Option<u64>,
    tile: Option<u64>,
    zipf_s: Option<f64>,
    instructions: bool,
) -> PyResult<NativeSource> {
    let workload = Workload::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
        CachescopeError::new_err(format!(
            "unknown workload {name:?}: one of {}",
            names.join(", ")
        ))
    })?;
    let d = Params::default();
    let params = Params {
        seed,
        refs,
        lines: lines.unwrap_or(d.lines),
        stride: stride.unwrap_or(d.stride),
        n: n.unwrap_or(d.n),
        tile: tile.unwrap_or(d.tile),
        zipf_s: zipf_s.unwrap_or(d.zipf_s),
        instructions,
        ..d
    };
    Ok(NativeSource {
        spec: Spec::Workload { workload, params },
    })
}

/// The progress callback of a pass: `callback(references_read)` now and then, with the GIL
/// taken for the call only.
fn progress(callback: Option<Py<PyAny>>) -> Progress<'static> {
    let Some(cb) = callback else {
        return Box::new(|_| {});
    };
    let mut last = 0u64;
    Box::new(move |n| {
        // Every 4 M references: often enough for a bar, rare enough to cost nothing.
        if n >= last + (1 << 22) {
            last = n;
            Python::attach(|py| {
                let _ = cb.call1(py, (n,));
            });
        }
    })
}

fn line_size(bytes: u64) -> PyResult<LineSize> {
    LineSize::new(bytes).map_err(err)
}

/// `cachescope stats --json`.
#[pyfunction]
#[pyo3(signature = (source, line_size = 64, threads = 2, progress_cb = None))]
fn stats(
    py: Python<'_>,
    source: &NativeSource,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let ls = self::line_size(line_size)?;
    let spec = source.spec.clone();
    py.detach(move || passes::stats(&spec, ls, threads, progress(progress_cb)))
        .map_err(err)
}

/// The options of `mrc` and `analyse`, from the flags' names.
#[allow(clippy::too_many_arguments)]
fn mrc_options(
    method: &str,
    policy: Option<&str>,
    sizes: Vec<u64>,
    line_size: u64,
    include_instructions: bool,
    seed: u64,
    rate: f64,
    slot: u64,
    ways: Option<u32>,
    estimate_cold: bool,
    mini_rate: f64,
    threads: usize,
) -> PyResult<MrcOptions> {
    Ok(MrcOptions {
        method: method.parse::<Method>().map_err(err)?,
        policy: policy
            .map(str::parse::<CurvePolicy>)
            .transpose()
            .map_err(err)?,
        sizes,
        options: Options {
            line_size: self::line_size(line_size)?,
            include_instructions,
            ..Options::default()
        },
        seed,
        rate,
        slot,
        ways,
        cold: if estimate_cold {
            Cold::Estimate
        } else {
            Cold::Exclude
        },
        mini_rate,
        threads: threads.max(1),
    })
}

/// `cachescope mrc --json`: any method's curve.
#[pyfunction]
#[pyo3(signature = (source, method, policy, sizes, line_size, include_instructions, seed, rate, slot, ways, estimate_cold, mini_rate, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn mrc(
    py: Python<'_>,
    source: &NativeSource,
    method: &str,
    policy: Option<&str>,
    sizes: Vec<u64>,
    line_size: u64,
    include_instructions: bool,
    seed: u64,
    rate: f64,
    slot: u64,
    ways: Option<u32>,
    estimate_cold: bool,
    mini_rate: f64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let opts = mrc_options(
        method,
        policy,
        sizes,
        line_size,
        include_instructions,
        seed,
        rate,
        slot,
        ways,
        estimate_cold,
        mini_rate,
        threads,
    )?;
    let spec = source.spec.clone();
    py.detach(move || passes::mrc(&spec, &opts, progress(progress_cb)))
        .map_err(err)
}

/// A sampling profile: StatCache's and StatStack's input, modelled without the trace.
#[pyclass(frozen, module = "cachescope._native")]
struct NativeProfile {
    profile: Profile,
}

#[pymethods]
impl NativeProfile {
    /// `cachescope sample --json`'s summary.
    fn summary(&self) -> String {
        passes::profile_summary(&self.profile, None)
    }

    /// The curve of `method` (`statstack` or `statcache`) at `sizes`.
    #[pyo3(signature = (method, sizes, estimate_cold = false, threads = 2))]
    fn mrc(
        &self,
        py: Python<'_>,
        method: &str,
        sizes: Vec<u64>,
        estimate_cold: bool,
        threads: usize,
    ) -> PyResult<String> {
        let opts = mrc_options(
            method,
            None,
            sizes,
            self.profile.line_size().bytes(),
            false,
            1,
            1.0,
            1,
            None,
            estimate_cold,
            0.01,
            threads,
        )?;
        let profile = self.profile.clone();
        py.detach(move || cachescope::method::mrc_of_profile(profile, &opts))
            .map(|run| passes::pretty(&run.mrc))
            .map_err(err)
    }

    /// Writes the profile file `cachescope mrc PROFILE` reads.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        let dest = Source::File(path.clone());
        let file =
            std::fs::File::create(&path).map_err(|e| err(cachescope::Error::io(&dest, e)))?;
        let mut w = std::io::BufWriter::new(file);
        self.profile.write(&mut w, &dest).map_err(err)?;
        std::io::Write::flush(&mut w).map_err(|e| err(cachescope::Error::io(&dest, e)))
    }

    /// `(position, distance)` of every sample; distance −1 for a sample never reused.
    fn samples(&self) -> Vec<(u64, i64)> {
        self.profile
            .samples()
            .iter()
            .map(|s| (s.position, s.distance().map_or(-1, |d| d as i64)))
            .collect()
    }
}

/// Reads a profile written by `cachescope sample` or `Profile.save`.
#[pyfunction]
fn load_profile(path: PathBuf) -> PyResult<NativeProfile> {
    let source = Source::File(path.clone());
    let file = std::fs::File::open(&path).map_err(|e| err(cachescope::Error::io(&source, e)))?;
    let profile = Profile::read(std::io::BufReader::new(file), &source).map_err(err)?;
    Ok(NativeProfile { profile })
}

/// `cachescope sample`: the profile of sampling the source.
#[pyfunction]
#[pyo3(signature = (source, rate, seed, slot, line_size, include_instructions, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn sample(
    py: Python<'_>,
    source: &NativeSource,
    rate: f64,
    seed: u64,
    slot: u64,
    line_size: u64,
    include_instructions: bool,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<NativeProfile> {
    let options = SamplerOptions {
        rate,
        seed,
        slot_refs: slot,
        line_size: self::line_size(line_size)?,
        include_instructions,
    };
    let spec = source.spec.clone();
    py.detach(move || passes::sample(&spec, options, threads.max(1), progress(progress_cb)))
        .map(|profile| NativeProfile { profile })
        .map_err(err)
}

/// `cachescope footprint --json`.
#[pyfunction]
#[pyo3(signature = (source, line_size, include_instructions, windows, per_octave, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn footprint(
    py: Python<'_>,
    source: &NativeSource,
    line_size: u64,
    include_instructions: bool,
    windows: Option<Vec<u64>>,
    per_octave: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let options = Options {
        line_size: self::line_size(line_size)?,
        include_instructions,
        ..Options::default()
    };
    let spec = source.spec.clone();
    py.detach(move || {
        passes::footprint(
            &spec,
            options,
            windows.as_deref(),
            per_octave,
            threads.max(1),
            progress(progress_cb),
        )
    })
    .map_err(err)
}

/// Several analyses from one pass: their JSON documents, and the profile when `sample` is one.
#[pyfunction]
#[pyo3(signature = (source, names, sizes, line_size, include_instructions, seed, rate, slot, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn analyse(
    py: Python<'_>,
    source: &NativeSource,
    names: Vec<String>,
    sizes: Vec<u64>,
    line_size: u64,
    include_instructions: bool,
    seed: u64,
    rate: f64,
    slot: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, Option<NativeProfile>)> {
    let opts = mrc_options(
        "exact",
        None,
        sizes,
        line_size,
        include_instructions,
        seed,
        rate,
        slot,
        None,
        false,
        0.01,
        threads,
    )?;
    let spec = source.spec.clone();
    py.detach(move || passes::analyse(&spec, &names, &opts, progress(progress_cb)))
        .map(|(docs, profile)| (docs, profile.map(|profile| NativeProfile { profile })))
        .map_err(err)
}

/// `cachescope report --json`: every analysis written as an HTML report into `dir`.
#[pyfunction]
#[pyo3(signature = (source, dir, line_size, seed, rate, interval, ways, threads))]
#[allow(clippy::too_many_arguments)]
fn report(
    py: Python<'_>,
    source: &NativeSource,
    dir: PathBuf,
    line_size: u64,
    seed: u64,
    rate: f64,
    interval: u64,
    ways: u32,
    threads: usize,
) -> PyResult<String> {
    let options = cachescope_report::collect::CollectOptions {
        line_size: self::line_size(line_size)?,
        seed,
        sample_rate: rate,
        phase_interval: interval,
        ways,
    };
    let spec = source.spec.clone();
    py.detach(move || passes::report(&spec, &dir, options, threads.max(1)))
        .map_err(err)
}

/// `cachescope simulate --cache SPEC… --json`.
#[pyfunction]
#[pyo3(signature = (source, caches, policy, seed, line_size, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    source: &NativeSource,
    caches: Vec<String>,
    policy: String,
    seed: u64,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let ls = self::line_size(line_size)?;
    let spec = source.spec.clone();
    py.detach(move || {
        models::simulate(
            &spec,
            &caches,
            &policy,
            seed,
            ls,
            threads.max(1),
            progress(progress_cb),
        )
    })
    .map_err(err)
}

/// `cachescope l2 --json`.
#[pyfunction]
#[pyo3(signature = (source, l1, l2, policy, variant, simulate, seed, line_size, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
fn l2(
    py: Python<'_>,
    source: &NativeSource,
    l1: u64,
    l2: Vec<u64>,
    policy: String,
    variant: String,
    simulate: bool,
    seed: u64,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let ls = self::line_size(line_size)?;
    let spec = source.spec.clone();
    py.detach(move || {
        models::l2(
            &spec,
            l1,
            &l2,
            &policy,
            &variant,
            simulate,
            seed,
            ls,
            threads.max(1),
            progress(progress_cb),
        )
    })
    .map_err(err)
}

/// `cachescope phases --json`.
#[pyfunction]
#[pyo3(signature = (source, interval, unit, k, method, l2, l1, bits, seed, no_simpoint, threads))]
#[allow(clippy::too_many_arguments)]
fn phases(
    py: Python<'_>,
    source: &NativeSource,
    interval: u64,
    unit: String,
    k: String,
    method: String,
    l2: String,
    l1: Option<String>,
    bits: u32,
    seed: u64,
    no_simpoint: bool,
    threads: usize,
) -> PyResult<String> {
    let spec = source.spec.clone();
    py.detach(move || {
        models::phases(
            &spec,
            interval,
            &unit,
            &k,
            &method,
            &l2,
            l1.as_deref(),
            bits,
            seed,
            no_simpoint,
            threads.max(1),
        )
    })
    .map_err(err)
}

/// Bytes from `32K`, `8MiB`, `64`: the command line's size syntax.
#[pyfunction]
fn parse_size(s: &str) -> PyResult<u64> {
    cachescope::units::parse_bytes(s, "size").map_err(err)
}

/// The command line's default sizes: `per_octave` per power of two from `lo` to `hi` bytes.
#[pyfunction]
#[pyo3(signature = (lo = cachescope::reuse::mrc::DEFAULT_MIN_BYTES, hi = cachescope::reuse::mrc::DEFAULT_MAX_BYTES, per_octave = 8))]
fn size_range(lo: u64, hi: u64, per_octave: u64) -> PyResult<Vec<u64>> {
    cachescope::reuse::sizes_log_range(lo, hi, per_octave).map_err(err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CachescopeError", m.py().get_type::<CachescopeError>())?;
    m.add_class::<NativeSource>()?;
    m.add_class::<NativeProfile>()?;
    for f in [
        wrap_pyfunction!(open_file, m)?,
        wrap_pyfunction!(workload, m)?,
        wrap_pyfunction!(stats, m)?,
        wrap_pyfunction!(mrc, m)?,
        wrap_pyfunction!(sample, m)?,
        wrap_pyfunction!(load_profile, m)?,
        wrap_pyfunction!(footprint, m)?,
        wrap_pyfunction!(analyse, m)?,
        wrap_pyfunction!(report, m)?,
        wrap_pyfunction!(simulate, m)?,
        wrap_pyfunction!(l2, m)?,
        wrap_pyfunction!(phases, m)?,
        wrap_pyfunction!(parse_size, m)?,
        wrap_pyfunction!(size_range, m)?,
        wrap_pyfunction!(record::record, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
