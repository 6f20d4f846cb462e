//! `Profile` on the Rust side: a sampling profile modelled without its trace.

use cachescope::Source;
use cachescope::sampling::Profile;
use std::path::PathBuf;

use pyo3::prelude::*;

use crate::err;
use crate::passes;
use crate::py_curves::mrc_options;

/// A sampling profile: StatCache's and StatStack's input, modelled without the trace.
#[pyclass(frozen, module = "cachescope._native")]
pub struct NativeProfile {
    pub(crate) profile: Profile,
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
pub fn load_profile(path: PathBuf) -> PyResult<NativeProfile> {
    let source = Source::File(path.clone());
    let file = std::fs::File::open(&path).map_err(|e| err(cachescope::Error::io(&source, e)))?;
    let profile = Profile::read(std::io::BufReader::new(file), &source).map_err(err)?;
    Ok(NativeProfile { profile })
}
