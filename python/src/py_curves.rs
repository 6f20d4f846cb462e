//! The Python functions of the curves and passes: `stats`, `mrc`, `sample`, `footprint`,
//! `analyse`, `report` (each the CLI's `--json` for the same request).

use cachescope::method::{CurvePolicy, Method, MrcOptions};
use cachescope::reuse::Options;
use cachescope::sampling::{Cold, SamplerOptions};
use std::path::PathBuf;

use pyo3::prelude::*;

use crate::passes;
use crate::py_profile::NativeProfile;
use crate::{NativeSource, err, progress};

/// `cachescope stats --json`.
#[pyfunction]
#[pyo3(signature = (source, line_size = 64, threads = 2, progress_cb = None))]
pub fn stats(
    py: Python<'_>,
    source: &NativeSource,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let ls = crate::line_size(line_size)?;
    let spec = source.spec.clone();
    py.detach(move || passes::stats(&spec, ls, threads, progress(progress_cb)))
        .map_err(err)
}

/// The options of `mrc` and `analyse`, from the flags' names.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mrc_options(
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
            line_size: crate::line_size(line_size)?,
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
        mini_min_sets: cachescope::method::DEFAULT_MINI_MIN_SETS,
        mini_unadjusted: false,
        threads: threads.max(1),
        hotl_variant: Default::default(),
    })
}

/// `cachescope mrc --json`: any method's curve.
#[pyfunction]
#[pyo3(signature = (source, method, policy, sizes, line_size, include_instructions, seed, rate, slot, ways, estimate_cold, mini_rate, threads, progress_cb = None, mini_min_sets = cachescope::method::DEFAULT_MINI_MIN_SETS, mini_unadjusted = false, per_thread = false))]
#[allow(clippy::too_many_arguments)]
pub fn mrc(
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
    mini_min_sets: u64,
    mini_unadjusted: bool,
    per_thread: bool,
) -> PyResult<String> {
    let mut opts = mrc_options(
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
    opts.mini_min_sets = mini_min_sets;
    opts.mini_unadjusted = mini_unadjusted;
    let spec = source.spec.clone();
    py.detach(move || {
        if per_thread {
            passes::mrc_per_thread(&spec, &opts, progress(progress_cb))
        } else {
            passes::mrc(&spec, &opts, progress(progress_cb))
        }
    })
    .map_err(err)
}

/// `cachescope sample`: the profile of sampling the source.
#[pyfunction]
#[pyo3(signature = (source, rate, seed, slot, line_size, include_instructions, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
pub fn sample(
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
        line_size: crate::line_size(line_size)?,
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
pub fn footprint(
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
        line_size: crate::line_size(line_size)?,
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
#[pyo3(signature = (source, names, sizes, line_size, include_instructions, seed, rate, slot, threads, progress_cb = None, sampled = None))]
#[allow(clippy::too_many_arguments)]
pub fn analyse(
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
    sampled: Option<(f64, u64)>,
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
    // `sampled`: the share of lines and the most sampled at once (0: a fixed rate).
    let spatial = sampled.map(|(share, lines)| cachescope::spatial::SpatialOptions {
        rate: share,
        seed,
        max_lines: (lines > 0).then_some(lines),
        line_size: opts.options.line_size,
    });
    let spec = source.spec.clone();
    py.detach(move || passes::analyse(&spec, &names, &opts, spatial, progress(progress_cb)))
        .map(|(docs, profile)| (docs, profile.map(|profile| NativeProfile { profile })))
        .map_err(err)
}

/// `cachescope report --json`: every analysis written as an HTML report into `dir`.
#[pyfunction]
#[pyo3(signature = (source, dir, line_size, seed, rate, interval, ways, threads))]
#[allow(clippy::too_many_arguments)]
pub fn report(
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
        line_size: crate::line_size(line_size)?,
        seed,
        sample_rate: rate,
        phase_interval: interval,
        ways,
        sampled_calls: false,
    };
    let spec = source.spec.clone();
    py.detach(move || passes::report(&spec, &dir, options, threads.max(1)))
        .map_err(err)
}
