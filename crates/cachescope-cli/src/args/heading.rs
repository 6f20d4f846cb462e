//! The `--help` headings. clap keeps the last heading set for every argument added after it,
//! so a command's own flags that follow a flattened group name their heading explicitly
//! (`help_heading = heading::OUTPUT`); the groups in `shared` set theirs at their start.
//! One list, so that the same kind of flag sits under the same heading in every command.

/// Positional arguments: under clap's own "Arguments", whatever heading came before.
pub const ARGUMENTS: Option<&str> = None;
/// Where the references come from: the trace's format, a workload, a thread, an event log.
pub const INPUT: &str = "Input";
/// What the analysis computes: method, policy, model variants.
pub const ANALYSIS: &str = "Analysis";
/// The caches simulated or modelled: geometries, levels, cores.
pub const CACHE: &str = "Cache";
/// The cache sizes a curve is evaluated at.
pub const SIZES: &str = "Cache sizes";
/// Sampling rates and periods.
pub const SAMPLING: &str = "Sampling";
/// What is printed or written, and in which form.
pub const OUTPUT: &str = "Output";
/// How the run goes: line size, threads, progress.
pub const RUN: &str = "Run";
/// A program run under Valgrind (`-- PROGRAM ARGS…`).
pub const PROGRAM: &str = "Running a program (-- PROGRAM ARGS…)";
/// The built-in workloads' parameters.
pub const WORKLOAD: &str = "Workload parameters";
/// What a report measures.
pub const REPORT: &str = "Report";
/// The TLBs simulated and the page sizes they translate.
pub const TLB: &str = "TLBs and pages";
