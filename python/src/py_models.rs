//! The Python functions of the simulators and the other models: `simulate`, `l2`, `phases`,
//! `attribute`, `sharing`, `whatif`, `advise` (each the CLI's `--json` for the same request).

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::{NativeSource, err, progress};
use crate::{attribution, models};

/// `cachescope simulate --cache SPEC… --json`; with `cores`, `simulate --cores N --cache SPEC
/// --interleave I [--quantum Q] --json`.
#[pyfunction]
#[pyo3(signature = (source, caches, policy, seed, line_size, threads, progress_cb = None, writebacks = false, write_allocate = true, prefetch = "none".to_string(), prefetch_degree = 1, prefetch_distance = 1, utilization = false, dtlb = Vec::new(), itlb = Vec::new(), stlb = Vec::new(), tlb = None, tlb_policy = "lru".to_string(), pages = Vec::new(), walks = true, cores = None, interleave = "time".to_string(), quantum = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    source: &NativeSource,
    caches: Vec<String>,
    policy: String,
    seed: u64,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
    writebacks: bool,
    write_allocate: bool,
    prefetch: String,
    prefetch_degree: u32,
    prefetch_distance: u32,
    utilization: bool,
    dtlb: Vec<String>,
    itlb: Vec<String>,
    stlb: Vec<String>,
    tlb: Option<String>,
    tlb_policy: String,
    pages: Vec<String>,
    walks: bool,
    cores: Option<u32>,
    interleave: String,
    quantum: Option<u64>,
) -> PyResult<String> {
    let ls = crate::line_size(line_size)?;
    let spec = source.spec.clone();
    let hardware = models::Hardware {
        writebacks,
        write_allocate,
        prefetch,
        prefetch_degree,
        prefetch_distance,
        utilization,
    };
    let tlb = models::TlbRequest {
        dtlb,
        itlb,
        stlb,
        preset: tlb,
        policy: tlb_policy,
        pages,
        walks,
    };
    let cores = cores.map(|cores| crate::cores::CoresRequest {
        cores,
        interleave,
        quantum,
    });
    py.detach(move || {
        models::simulate(
            &spec,
            &caches,
            &hardware,
            &tlb,
            cores.as_ref(),
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
pub fn l2(
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
    let ls = crate::line_size(line_size)?;
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
pub fn phases(
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

/// `cachescope attribute --json` (and `--cachegrind-out`).
#[pyfunction]
#[pyo3(signature = (source, cache, sample, events, exe, handler_lines, no_cost, no_mrc, cachegrind_out, seed, line_size, threads, progress_cb = None, writebacks = false, utilization = false))]
#[allow(clippy::too_many_arguments)]
pub fn attribute(
    py: Python<'_>,
    source: &NativeSource,
    cache: String,
    sample: u64,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    handler_lines: u64,
    no_cost: bool,
    no_mrc: bool,
    cachegrind_out: Option<PathBuf>,
    seed: u64,
    line_size: u64,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
    writebacks: bool,
    utilization: bool,
) -> PyResult<String> {
    let req = attribution::Request {
        cache,
        sample,
        events,
        exe,
        handler_lines,
        no_cost,
        no_mrc,
        cachegrind_out,
        seed,
        writebacks,
        utilization,
    };
    let ls = crate::line_size(line_size)?;
    let spec = source.spec.clone();
    py.detach(move || {
        attribution::attribute(&spec, &req, ls, threads.max(1), progress(progress_cb))
    })
    .map_err(err)
}

/// `cachescope sharing --json`.
#[pyfunction]
#[pyo3(signature = (source, l1, ll, cores, interleave, quantum, all, events, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
pub fn sharing(
    py: Python<'_>,
    source: &NativeSource,
    l1: String,
    ll: String,
    cores: Option<u32>,
    interleave: String,
    quantum: Option<u64>,
    all: bool,
    events: Option<PathBuf>,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let spec = source.spec.clone();
    py.detach(move || {
        crate::sharing::sharing(
            &spec,
            &l1,
            &ll,
            cores,
            &interleave,
            quantum,
            all,
            events,
            threads.max(1),
            progress(progress_cb),
        )
    })
    .map_err(err)
}

/// What `whatif` and `advise` take beside their own arguments: the machine (`caches` or
/// `cores`), the event log and executable, and the pass's threads and progress.
struct OnMachine {
    spec: crate::source::Spec,
    caches: Vec<String>,
    cores: Option<u32>,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    threads: usize,
    /// Made into the pass's progress inside the detached closure (a Python callable is
    /// `Send`, the progress closure is not).
    progress_cb: Option<Py<PyAny>>,
}

impl OnMachine {
    #[allow(clippy::too_many_arguments)]
    fn new(
        source: &NativeSource,
        caches: Vec<String>,
        cores: Option<u32>,
        events: Option<PathBuf>,
        exe: Option<PathBuf>,
        threads: usize,
        progress_cb: Option<Py<PyAny>>,
    ) -> OnMachine {
        OnMachine {
            spec: source.spec.clone(),
            caches,
            cores,
            events,
            exe,
            threads: threads.max(1),
            progress_cb,
        }
    }
}

/// `cachescope whatif TRACE --change SPEC… --json`.
#[pyfunction]
#[pyo3(signature = (source, changes, caches, cores, events, exe, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
pub fn whatif(
    py: Python<'_>,
    source: &NativeSource,
    changes: Vec<String>,
    caches: Vec<String>,
    cores: Option<u32>,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let on = OnMachine::new(source, caches, cores, events, exe, threads, progress_cb);
    py.detach(move || {
        crate::advice::whatif(
            &on.spec,
            &changes,
            &on.caches,
            on.cores,
            on.events,
            on.exe,
            on.threads,
            progress(on.progress_cb),
        )
    })
    .map_err(err)
}

/// `cachescope advise TRACE --json`.
#[pyfunction]
#[pyo3(signature = (source, caches, cores, events, exe, threads, progress_cb = None))]
#[allow(clippy::too_many_arguments)]
pub fn advise(
    py: Python<'_>,
    source: &NativeSource,
    caches: Vec<String>,
    cores: Option<u32>,
    events: Option<PathBuf>,
    exe: Option<PathBuf>,
    threads: usize,
    progress_cb: Option<Py<PyAny>>,
) -> PyResult<String> {
    let on = OnMachine::new(source, caches, cores, events, exe, threads, progress_cb);
    py.detach(move || {
        crate::advice::advise(
            &on.spec,
            &on.caches,
            on.cores,
            on.events,
            on.exe,
            on.threads,
            progress(on.progress_cb),
        )
    })
    .map_err(err)
}
