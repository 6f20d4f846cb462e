//! A running program as a trace source (`cachescope mrc -- ./prog` and every other analysing
//! command), and how every command that takes `-- PROGRAM` runs it ([`Capture`], from the
//! shared [`LiveArgs`]). The program runs under cachescope's Valgrind tool (or lackey, where
//! the tool cannot run or `--backend lackey` asks) and its references feed the analysis as
//! they are made: no trace file, unless `--save TRACE` keeps one (written as the references
//! pass) or the command reads its input twice (`phases`), when the trace is kept in a
//! temporary file for the second pass. The program's standard output goes to standard error
//! unless `--program-output` says otherwise, so the analysis alone is on standard output.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use cachescope::Source;
use cachescope::attribution::events::Event;
use cachescope::record::{ProgramOutput, Recording, ToolOptions, tool_status};
use cachescope::trace::Trace;
use cachescope::trace::native::{Header, Writer, WriterOptions};

use crate::args::{Backend, InputArgs, LiveArgs};
use crate::output::Pending;

mod estimate;
mod reader;
mod sampled;

use reader::{ProgramReader, Saving};
pub use sampled::{Kept, start_sampled};

/// How a command runs its program: the shared flags, resolved.
#[derive(Clone, Debug)]
pub struct Capture {
    /// The tool or lackey, as asked (`None`: the tool where it can run, else lackey).
    pub backend: Option<Backend>,
    /// Follow the programs the recorded one execs (the tool only).
    pub trace_children: bool,
    /// Record allocation events (where the command records them at all).
    pub events: bool,
    /// Where the program's standard output goes.
    pub output: ProgramOutput,
    /// Record from the start, or only between CACHESCOPE_START() and CACHESCOPE_STOP().
    pub collect_at_start: bool,
    /// Record only while one of these functions is on the stack (empty: everywhere).
    pub toggle_collect: Vec<String>,
    /// Record call events (the tool only).
    pub calls: bool,
}

impl Capture {
    /// The capture `live` asks for; the program's output goes to `default_output` unless
    /// `--program-output` says where.
    pub fn new(live: &LiveArgs, default_output: ProgramOutput) -> Capture {
        Capture {
            backend: live.backend,
            trace_children: live.trace_children,
            events: !live.no_events,
            output: live.output(default_output),
            collect_at_start: live.collect_atstart == crate::args::YesNo::Yes,
            toggle_collect: live.toggle_collect.clone(),
            calls: !live.no_calls,
        }
    }

    /// The note for a run that recorded nothing: why, when the flags make that likely.
    pub fn nothing_recorded(&self) -> String {
        let why = if !self.toggle_collect.is_empty() {
            format!(
                ": no function named by --toggle-collect ({}) ran, and collection starts only \
                 inside one",
                self.toggle_collect.join(", ")
            )
        } else if !self.collect_at_start {
            ": --collect-atstart=no, and the program never switched collection on".to_string()
        } else {
            String::new()
        };
        format!("cachescope: note: nothing was recorded{why}")
    }

    /// The backend that runs: the tool unless lackey is asked for or the tool cannot run here
    /// (then lackey, with the reason printed unless quiet, or an error where `--backend tool`
    /// was given). `--trace-children` needs the tool.
    pub fn backend(&self, quiet: bool) -> Result<Backend> {
        if self.backend == Some(Backend::Tool) {
            if let Err(why) = tool_status() {
                bail!("--backend tool: cachescope's Valgrind tool cannot run: {why}");
            }
        }
        match self.backend.unwrap_or(Backend::Tool) {
            Backend::Lackey if self.trace_children => bail!(
                "--trace-children needs the tool backend: lackey would write every child into \
                 the same log"
            ),
            Backend::Lackey if !self.collect_at_start => bail!(
                "--collect-atstart=no needs the tool backend: lackey cannot be told where the \
                 program's region of interest starts"
            ),
            Backend::Lackey if !self.toggle_collect.is_empty() => bail!(
                "--toggle-collect needs the tool backend: lackey cannot follow the program's \
                 calls"
            ),
            Backend::Lackey => Ok(Backend::Lackey),
            Backend::Tool => match tool_status() {
                Ok(_) => Ok(Backend::Tool),
                Err(why) if self.trace_children => bail!(
                    "--trace-children needs cachescope's Valgrind tool, which cannot run: {why}"
                ),
                Err(why) if !self.collect_at_start => bail!(
                    "--collect-atstart=no needs cachescope's Valgrind tool, which cannot run: \
                     {why}"
                ),
                Err(why) if !self.toggle_collect.is_empty() => bail!(
                    "--toggle-collect needs cachescope's Valgrind tool, which cannot run: {why}"
                ),
                Err(why) => {
                    if !quiet {
                        eprintln!("cachescope: recording with lackey (much slower): {why}");
                    }
                    Ok(Backend::Lackey)
                }
            },
        }
    }
}

/// The trace of the program run by this process, once a first pass has saved it: a second
/// pass reads it instead of running the program again.
static SAVED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The temporary file that trace is in, removed by [`remove_temporary`] when the command
/// ends (a static is never dropped, so nothing else would remove it).
static TEMPORARY: Mutex<Option<tempfile::TempPath>> = Mutex::new(None);

/// Set once a run of the program was noted as recording nothing, so that the command does not
/// go on to say of its curve, again, that there was nothing to count.
static NOTED_EMPTY: AtomicBool = AtomicBool::new(false);

/// Whether this process noted that a run of the program recorded nothing.
pub fn noted_empty() -> bool {
    NOTED_EMPTY.load(Ordering::Relaxed)
}

/// Removes the temporary copy of the program's trace, if a command made one: `main` calls it
/// when the command has returned, whether it succeeded, failed or was interrupted.
pub fn remove_temporary() {
    let taken = TEMPORARY.lock().map(|mut t| t.take());
    drop(taken);
}

/// Starts `command` as `live` says (or reopens its saved trace on a second call). `--save`
/// keeps the trace; `twice` keeps it in a temporary file when `--save` is not given.
pub fn open(command: &[OsString], live: &LiveArgs, twice: bool, quiet: bool) -> Result<Trace> {
    if let Some(path) = SAVED.lock().expect("not poisoned").clone() {
        return Ok(cachescope::trace::open(
            &path,
            &cachescope::trace::OpenOptions::default(),
        )?);
    }
    let keep = match &live.save {
        Some(p) => Some(p.clone()),
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
    Ok(start(command, live, keep, false, false, quiet)?.trace)
}

/// A program started as a trace source ([`start`]).
pub struct Started {
    /// Its references, as it makes them.
    pub trace: Trace,
    /// Its allocation events and memory maps, sent as the trace is decoded (the tool, when
    /// asked for them): an event positioned at record `p` is sent before record `p` is read.
    pub events: Option<crossbeam_channel::Receiver<Event>>,
    /// The run id in the kept trace's header, which its event log must carry too.
    pub run_id: String,
    /// The program's command line.
    pub description: String,
}

/// Starts `command` as `live` says, its trace kept in `keep` as it passes (committed when the
/// program's stream ends) and, with `events`, its allocation events sent as they are decoded
/// (the tool only: lackey's come from a file the interposer writes). With `estimate` (an exact
/// `report`), a run still going after a minute says once how long `--sampled` would have
/// taken ([`estimate`]).
pub fn start(
    command: &[OsString],
    live: &LiveArgs,
    keep: Option<PathBuf>,
    events: bool,
    estimate: bool,
    quiet: bool,
) -> Result<Started> {
    let (program, args) = command.split_first().context("no program to run")?;
    let capture = Capture::new(live, ProgramOutput::Stderr);
    let backend = capture.backend(quiet)?;
    let empty = (!quiet).then(|| capture.nothing_recorded());
    // Created before the program starts, so that a path that cannot be written fails at once;
    // written under a temporary name and renamed at the end, so that a run cut short never
    // leaves a trace that looks complete.
    let pending = keep
        .map(|path| Pending::create(&path).map(|p| (p, path)))
        .transpose()?;
    let (recording, trace, events) = match backend {
        Backend::Tool => {
            let opts = ToolOptions {
                events,
                instr: true,
                output: capture.output,
                trace_children: capture.trace_children,
                collect_at_start: capture.collect_at_start,
                toggle_collect: capture.toggle_collect.clone(),
                calls: capture.calls,
            };
            Recording::start_tool(program, args, opts)?
        }
        Backend::Lackey => {
            let (recording, trace, _) =
                Recording::start_lackey(program, args, None, &capture.output)?;
            (recording, trace, None)
        }
    };
    let description = recording.description().to_string();
    let source = Source::Program(description.clone());
    let run_id = cachescope::attribution::run_id::new();
    let save = match pending {
        Some(((pending, file), path)) => {
            let mut header = Header::new();
            header.metadata = vec![
                ("source".into(), description.clone()),
                ("source_format".into(), "lackey".into()),
                (cachescope::attribution::run_id::KEY.into(), run_id.clone()),
            ];
            // zstd level 1, as `record` writes: the copy is made while the program runs.
            let opts = WriterOptions::recording(Source::File(path.clone()));
            let writer = Writer::with_options(std::io::BufWriter::new(file), header, opts)?;
            Some(Saving {
                writer,
                pending,
                path,
            })
        }
        None => None,
    };
    let reader = ProgramReader {
        trace,
        recording: Some(recording),
        save,
        empty,
        estimate: (estimate && !quiet).then(estimate::Estimate::new),
    };
    Ok(Started {
        trace: Trace::from_reader(Box::new(reader), source),
        events,
        run_id,
        description,
    })
}

/// `sample -- PROG` and `mrc --method statcache|statstack -- PROG`: StatCache's sampler runs
/// inside the tool and only the samples' reuses cross the pipe; the profile equals sampling the
/// run's full trace. `None` (sample the full stream instead) when the input is not a program,
/// when --save wants the trace, --thread one thread, lackey or --trace-children the full
/// stream, or where the tool cannot run.
pub fn sample_in_tool(
    input: &InputArgs,
    options: cachescope::sampling::SamplerOptions,
    quiet: bool,
) -> Result<Option<cachescope::sampling::Profile>> {
    let live = &input.live;
    // The tool's sampler sees every thread, and stops at an exec.
    if input.program.is_empty()
        || live.save.is_some()
        || input.thread.is_some()
        || live.backend == Some(Backend::Lackey)
        || live.trace_children
        || live.collect_atstart == crate::args::YesNo::No
        || !live.toggle_collect.is_empty()
        || tool_status().is_err()
    {
        return Ok(None);
    }
    let (program, args) = input.program.split_first().context("no program to run")?;
    let output = live.output(ProgramOutput::Stderr);
    let (profile, finished) = cachescope::record::sample_program(program, args, options, output)?;
    let description = input
        .program
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    crate::exit::program_ended(&description, &finished);
    if !quiet {
        for note in &finished.notes {
            eprintln!("cachescope: note: {}: {note}", profile.source());
        }
    }
    Ok(Some(profile))
}
