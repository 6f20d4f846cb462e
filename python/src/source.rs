//! Where references come from: a trace file, a built-in workload, or a program recorded
//! into a trace. A [`Spec`] opens a fresh [`Trace`] for every pass, so one Python object can
//! be analysed many times.

use std::path::PathBuf;

use cachescope::trace::{self, FormatChoice, OpenOptions, Trace};
use cachescope::workloads::{self, Params, Workload};
use cachescope::{LineSize, Result, Source};

/// A source of references the Python side holds on to.
#[derive(Clone, Debug)]
pub enum Spec {
    /// A trace file (any format cachescope reads).
    File {
        /// The file.
        path: PathBuf,
        /// `auto` or a format name.
        format: FormatChoice,
    },
    /// A built-in workload with its parameters (the line size is the analysis').
    Workload {
        /// The workload.
        workload: Workload,
        /// Its parameters.
        params: Params,
    },
    /// One thread's references of another source (`--thread ID`).
    Thread {
        /// The whole source.
        inner: Box<Spec>,
        /// The thread kept.
        thread: cachescope::ThreadId,
    },
}

impl Spec {
    /// A new reading of the source; workloads are generated with `line_size`.
    pub fn open(&self, line_size: LineSize) -> Result<Trace> {
        match self {
            Spec::File { path, format } => trace::open(
                path,
                &OpenOptions {
                    format: *format,
                    skip_bad_lines: false,
                },
            ),
            Spec::Workload { workload, params } => {
                let params = Params {
                    line_size: line_size.bytes(),
                    ..params.clone()
                };
                let generator = workloads::generator(*workload, &params)?;
                Ok(Trace::from_reader(
                    Box::new(generator),
                    Source::Workload(workload.name().into()),
                ))
            }
            Spec::Thread { inner, thread } => {
                let mut trace = inner.open(line_size)?;
                trace.only_thread(*thread);
                Ok(trace)
            }
        }
    }

    /// The trace file behind the source, if it is one (its event log sits beside it).
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Spec::File { path, .. } => Some(path),
            Spec::Workload { .. } => None,
            Spec::Thread { inner, .. } => inner.file(),
        }
    }

    /// How the source is named in results (`source` fields) and messages.
    pub fn describe(&self) -> String {
        match self {
            Spec::File { path, .. } => path.display().to_string(),
            Spec::Workload { workload, .. } => workload.name().into(),
            Spec::Thread { inner, thread } => format!("{} thread {thread}", inner.describe()),
        }
    }
}
