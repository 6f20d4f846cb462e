//! `cachescope._native`: the Rust side of the Python package. Functions take a [`NativeSource`]
//! and keyword options named as the command line's flags, run the library with the GIL
//! released, and return the command line's JSON; `python/cachescope/` makes numpy arrays
//! and pandas frames of it. Errors become `cachescope.CachescopeError` with the library's text
//! (the file and line of bad input).

mod advice;
mod attribution;
mod callgraph;
mod cores;
mod models;
mod passes;
mod py_curves;
mod py_models;
mod py_profile;
mod record;
mod sampled;
mod sharing;
mod source;

use std::path::PathBuf;

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

    /// The references of thread `thread` alone (`--thread ID`).
    fn thread(&self, thread: cachescope::ThreadId) -> NativeSource {
        NativeSource {
            spec: Spec::Thread {
                inner: Box::new(self.spec.clone()),
                thread,
            },
        }
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

/// Bytes from `32K`, `8MiB`, `64`: the command line's size syntax.
#[pyfunction]
fn parse_size(s: &str) -> PyResult<u64> {
    cachescope::units::parse_bytes(s, "size").map_err(|e| err(e.into()))
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
    m.add_class::<py_profile::NativeProfile>()?;
    for f in [
        wrap_pyfunction!(open_file, m)?,
        wrap_pyfunction!(workload, m)?,
        wrap_pyfunction!(py_curves::stats, m)?,
        wrap_pyfunction!(py_curves::mrc, m)?,
        wrap_pyfunction!(py_curves::sample, m)?,
        wrap_pyfunction!(py_profile::load_profile, m)?,
        wrap_pyfunction!(py_curves::footprint, m)?,
        wrap_pyfunction!(py_curves::analyse, m)?,
        wrap_pyfunction!(py_curves::report, m)?,
        wrap_pyfunction!(py_models::simulate, m)?,
        wrap_pyfunction!(py_models::l2, m)?,
        wrap_pyfunction!(py_models::phases, m)?,
        wrap_pyfunction!(py_models::attribute, m)?,
        wrap_pyfunction!(py_models::sharing, m)?,
        wrap_pyfunction!(py_models::whatif, m)?,
        wrap_pyfunction!(py_models::advise, m)?,
        wrap_pyfunction!(callgraph::callgraph, m)?,
        wrap_pyfunction!(parse_size, m)?,
        wrap_pyfunction!(size_range, m)?,
        wrap_pyfunction!(record::record, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
