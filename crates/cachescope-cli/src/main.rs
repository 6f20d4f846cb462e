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
    let matches = args::Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| exit::clap_exit(e));
    let mut cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit::clap_exit(e));
    args::note_explicit(&mut cli, &matches);
    one_malloc_arena();
    interrupt::install();
    // Under an MPI launcher, MPI lives until main returns (the universe finalises it).
    #[cfg(feature = "mpi")]
    let _universe = mpi::init();
    let result = cmd::run(cli);
    program::remove_temporary();
    exit::finish(result)
}

/// Makes every thread allocate from glibc's main arena. By default each thread that allocates
/// gets an arena of its own, and the memory a pass's workers free stays in theirs: 20-30 MB
/// more at the peak of `report` with two threads (docs/report.md, "Memory"), for no speed, as
/// the analyses allocate outside their hot loops. Before any thread starts; the programs run
/// under Valgrind are other processes and keep glibc's default.
///
/// Also fixes glibc's mmap threshold at 1 MiB: by default it rises to the size of each large
/// block freed (up to 32 MiB), after which the sampled analyses' line tables, rebuilt as they
/// forget dropped lines (`spatial::Forgetting`), come from the heap and their freed space stays
/// resident, fragmented. Fixed, a table of a MiB or more is mapped and unmapped whole: the
/// peak of `report --sampled` on 10^8 distinct lines 237 → 202 MB (docs/recording.md).
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt only sets an allocator parameter; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
