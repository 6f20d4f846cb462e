//! `cachescope.record([...])`: a program run under cachescope's Valgrind tool, its references
//! written into a native trace, which then is the source of every analysis.

use std::ffi::OsString;
use std::path::PathBuf;

use cachescope::batch::Batch;
use cachescope::record::{ProgramOutput, Recording, ToolOptions};
use cachescope::trace::{Compression, Format, native, write};
use cachescope::{Result, Source};
use pyo3::prelude::*;

use crate::{NativeSource, err, source::Spec};

/// Records `argv` into the native trace `output` (instruction fetches with the data
/// references, as `cachescope record`); the program's standard output goes to standard
/// error. Returns the trace as a source and the program's exit code (`None`: killed by a
/// signal). Fails when the tool cannot run or the program cannot be started.
#[pyfunction]
pub fn record(
    py: Python<'_>,
    argv: Vec<OsString>,
    output: PathBuf,
) -> PyResult<(NativeSource, Option<i32>)> {
    let Some((program, args)) = argv.split_first() else {
        return Err(crate::CachescopeError::new_err(
            "record needs a program to run",
        ));
    };
    let (program, args) = (program.clone(), args.to_vec());
    let path = output.clone();
    let code = py
        .detach(move || run(&program, &args, &path))
        .map_err(err)?;
    let spec = Spec::File {
        path: output,
        format: cachescope::trace::FormatChoice::Exactly(Format::Native),
    };
    Ok((NativeSource { spec }, code))
}

fn run(program: &OsString, args: &[OsString], path: &std::path::Path) -> Result<Option<i32>> {
    let opts = ToolOptions {
        events: false,
        instr: true,
        output: ProgramOutput::Stderr,
        trace_children: false,
        collect_at_start: true,
        toggle_collect: Vec::new(),
        calls: true,
    };
    let (recording, mut trace, _) = Recording::start_tool(program, args, opts)?;
    let dest = Source::File(path.to_owned());
    let file = std::fs::File::create(path).map_err(|e| cachescope::Error::io(&dest, e))?;
    let header = native::Header::new().with_metadata("program", recording.description());
    let mut out = write::writer(
        Box::new(file),
        dest,
        Format::Native,
        Compression::None,
        header,
    )?;
    let mut batch = Batch::new();
    let written = loop {
        match trace.read_batch(&mut batch) {
            Ok(0) => break Ok(()),
            Ok(_) => out.write_batch(&batch)?,
            Err(e) => break Err(e),
        }
    };
    drop(trace);
    let finished = recording.finish()?;
    written?;
    out.finish()?;
    Ok(finished.status.code())
}
