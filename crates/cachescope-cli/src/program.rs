//! A running program as a trace source: `cachescope mrc -- ./prog` and every other analysing
//! command. The program runs under cachescope's Valgrind tool (or lackey, where the tool
//! cannot run) and its references feed the analysis as they are made: no trace file, unless
//! `--save TRACE` keeps one (written as the references pass) or the command reads its input
//! twice (`phases`), when the trace is kept in a temporary file for the second pass. The
//! program's standard output goes to standard error, so the analysis alone is on standard
//! output.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use cachescope::record::{Recording, ToolOptions, tool_status};
use cachescope::trace::native::{Header, Writer};
use cachescope::trace::{AccessReader, Diagnostics, Trace};
use cachescope::{Batch, Source};

/// The trace of the program run by this process, once a first pass has saved it: a second
/// pass reads it instead of running the program again.
static SAVED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// A temporary file removed when the process ends normally.
static TEMPORARY: Mutex<Option<tempfile::TempPath>> = Mutex::new(None);

/// Starts `command` (or reopens its saved trace on a second call). `save` keeps the trace
/// there; `twice` keeps it in a temporary file when `save` is not given.
pub fn open(command: &[OsString], save: Option<&Path>, twice: bool, quiet: bool) -> Result<Trace> {
    if let Some(path) = SAVED.lock().expect("not poisoned").clone() {
        return Ok(cachescope::trace::open(
            &path,
            &cachescope::trace::OpenOptions::default(),
        )?);
    }
    let (program, args) = command.split_first().context("no program to run")?;
    let keep = match save {
        Some(p) => Some(p.to_owned()),
        None if twice => {
            let tmp = tempfile::Builder::new()
                .prefix("cachescope-program-")
                .suffix(".cst")
                .tempfile()?
                .into_temp_path();
            let path = tmp.to_path_buf();
            *TEMPORARY.lock().expect("not poisoned") = Some(tmp);
            Some(path)
        }
        None => None,
    };
    let (recording, trace) = match tool_status() {
        Ok(_) => {
            let opts = ToolOptions {
                events: false,
                instr: true,
                stdout_to_stderr: true,
                trace_children: false,
            };
            let (recording, trace, _) = Recording::start_tool(program, args, opts)?;
            (recording, trace)
        }
        Err(why) => {
            if !quiet {
                eprintln!("cachescope: running the program under lackey (much slower): {why}");
            }
            Recording::start(program, args)?
        }
    };
    let source = Source::Program(recording.description().to_string());
    let save = match &keep {
        Some(path) => {
            // Written under a `.partial` name and renamed at the end: a run cut short never
            // leaves a trace that looks complete.
            let partial = partial_path(path);
            let file = std::fs::File::create(&partial)
                .with_context(|| format!("cannot create {}", partial.display()))?;
            let mut header = Header::new();
            header.metadata = vec![
                ("source".into(), recording.description().to_string()),
                ("source_format".into(), "lackey".into()),
            ];
            let w = Writer::new(std::io::BufWriter::new(file), header)?;
            Some((w, path.clone()))
        }
        None => None,
    };
    let reader = ProgramReader {
        trace,
        recording: Some(recording),
        save,
        quiet,
    };
    Ok(Trace::from_reader(Box::new(reader), source))
}

type SaveWriter = Writer<std::io::BufWriter<std::fs::File>>;

/// Reads the program's trace; at its end waits for the program, says how it ended, and
/// finishes the saved copy.
struct ProgramReader {
    trace: Trace,
    recording: Option<Recording>,
    save: Option<(SaveWriter, PathBuf)>,
    quiet: bool,
}

impl AccessReader for ProgramReader {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        let n = match self.trace.read_batch(batch) {
            Ok(n) => n,
            Err(e) => {
                if let Some((_, path)) = self.save.take() {
                    let _ = std::fs::remove_file(partial_path(&path));
                }
                return Err(e);
            }
        };
        if n > 0 {
            if let Some((w, _)) = &mut self.save {
                w.write_batch(batch)?;
            }
            return Ok(n);
        }
        if let Some(recording) = self.recording.take() {
            let description = recording.description().to_string();
            let finished = recording.finish()?;
            if !finished.status.success() && !self.quiet {
                eprintln!(
                    "cachescope: note: `{description}` exited with {}; its references up to \
                     the exit were analysed",
                    finished.status
                );
            }
            if let Some((w, path)) = self.save.take() {
                let (buf, _) = w.finish_and_patch_header()?;
                let file = buf.into_inner().map_err(|e| {
                    cachescope::Error::io(&Source::File(path.clone()), e.into_error())
                })?;
                file.sync_all()
                    .map_err(|e| cachescope::Error::io(&Source::File(path.clone()), e))?;
                std::fs::rename(partial_path(&path), &path)
                    .map_err(|e| cachescope::Error::io(&Source::File(path.clone()), e))?;
                *SAVED.lock().expect("not poisoned") = Some(path);
            }
        }
        Ok(0)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.trace.diagnostics()
    }
}

impl Drop for ProgramReader {
    fn drop(&mut self) {
        // Stopped before the end (an error, an interrupt): no half-written trace is kept.
        if let Some((_, path)) = self.save.take() {
            let _ = std::fs::remove_file(partial_path(&path));
        }
    }
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// `sample -- PROG` and `mrc --method statcache|statstack -- PROG`: StatCache's sampler runs
/// inside the tool and only the samples' reuses cross the pipe; the profile equals sampling the
/// run's full trace. `None` (sample the full stream instead) when the input is not a program,
/// when --save wants the trace or --thread one thread, or where the tool cannot run.
pub fn sample_in_tool(
    input: &crate::args::InputArgs,
    options: cachescope::sampling::SamplerOptions,
    quiet: bool,
) -> Result<Option<cachescope::sampling::Profile>> {
    // The tool's sampler sees every thread: one thread's profile needs its stream.
    if input.program.is_empty()
        || input.save.is_some()
        || input.thread.is_some()
        || tool_status().is_err()
    {
        return Ok(None);
    }
    let (program, args) = input.program.split_first().context("no program to run")?;
    let (profile, finished) = cachescope::record::sample_program(program, args, options, true)?;
    if !finished.status.success() && !quiet {
        eprintln!(
            "cachescope: note: {} exited with {}; its references up to the exit were sampled",
            profile.source(),
            finished.status
        );
    }
    Ok(Some(profile))
}
