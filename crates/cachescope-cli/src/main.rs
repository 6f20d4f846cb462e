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

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    interrupt::install();
    // Under an MPI launcher, MPI lives until main returns (the universe finalises it).
    #[cfg(feature = "mpi")]
    let _universe = mpi::init();
    exit::finish(cmd::run(cli))
}
