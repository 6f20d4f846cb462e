//! The `cachescope` command: parse flags, build validated configurations, call the library once,
//! map the outcome to a message and an exit status ([`exit`]). All the work happens in the
//! `cachescope` library crate.

mod args;
mod cmd;
mod exit;
mod input;
mod interrupt;
#[cfg(feature = "mpi")]
mod mpi;
mod output;
mod program;
mod progress;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    let matches = args::Cli::command().get_matches();
    let mut cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    args::note_explicit(&mut cli, &matches);
    interrupt::install();
    // Under an MPI launcher, MPI lives until main returns (the universe finalises it).
    #[cfg(feature = "mpi")]
    let _universe = mpi::init();
    let result = cmd::run(cli);
    program::remove_temporary();
    exit::finish(result)
}
