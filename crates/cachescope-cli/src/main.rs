//! The `cachescope` command: parse flags, build validated configurations, call the library once,
//! map errors to exit codes. All the work happens in the `cachescope` library crate.

mod args;
mod cmd;
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
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if interrupt::exit_code(&err).is_some() => {
            eprintln!("cachescope: interrupted");
            interrupt::exit_code(&err).unwrap_or(ExitCode::FAILURE)
        }
        Err(err) => {
            eprintln!("cachescope: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
