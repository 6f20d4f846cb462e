//! Turns [`InputArgs`] into an open [`Trace`]: a file, stdin, or a built-in workload.

use anyhow::Result;
use cachescope::trace::{self, OpenOptions, Trace};
use cachescope::{LineSize, Source, workloads};

use std::path::Path;

use crate::args::{InputArgs, ReadArgs};

/// Opens the trace or starts the workload the flags name.
pub fn open(args: &InputArgs, line_size: LineSize) -> Result<Trace> {
    if let Some(w) = args.workload {
        let generator = workloads::generator(w, &args.params.to_params(line_size))?;
        return Ok(Trace::from_reader(
            Box::new(generator),
            Source::Workload(w.name().into()),
        ));
    }
    let path = args
        .trace
        .as_deref()
        .expect("clap requires TRACE unless --workload is given");
    open_path(path, &args.read)
}

/// Opens a trace file (`-` for stdin).
pub fn open_path(path: &Path, read: &ReadArgs) -> Result<Trace> {
    let opts = OpenOptions {
        format: read.format,
        skip_bad_lines: read.skip_bad_lines,
    };
    Ok(trace::open(path, &opts)?)
}
