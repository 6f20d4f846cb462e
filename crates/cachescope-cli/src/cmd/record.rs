//! `cachescope record -- PROGRAM ARGS…`: a real program's references, straight into a trace.

use std::path::PathBuf;

use anyhow::{Result, bail};
use cachescope::record::Recording;

use super::convert::write_trace;
use crate::args::RecordArgs;

pub fn run(args: RecordArgs) -> Result<()> {
    let (program, rest) = args.command.split_first().expect("clap requires a program");
    let out = args.output.clone().unwrap_or_else(|| {
        let name = std::path::Path::new(program)
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        PathBuf::from(format!("{name}.cst"))
    });
    let (recording, mut trace) = Recording::start(program, rest)?;
    let meta = vec![
        ("source".to_string(), recording.description().to_string()),
        ("source_format".into(), "lackey".into()),
        (
            "recorded_with".into(),
            "valgrind --tool=lackey --trace-mem=yes".into(),
        ),
    ];
    let written = write_trace(&mut trace, &out, args.to, &args.run, meta);
    let finished = recording.finish()?;
    written?;
    if !args.run.quiet {
        eprintln!(
            "cachescope: recorded {} into {} ({})",
            trace.source(),
            out.display(),
            finished.status
        );
    }
    if !finished.status.success() {
        bail!(
            "the recorded program exited with {}; the trace in {} is complete up to its exit",
            finished.status,
            out.display()
        );
    }
    Ok(())
}
