//! `mpirun -n 2|3 cachescope CMD TRACE` prints exactly what one process prints, for every
//! command that distributes (`stats`, `footprint`, `mrc --method exact|hotl|hotl-rt`, `hotl`,
//! `l2`) and for one that does not; a damaged block in any rank's range is a clear error, not
//! a hang. Built with `--features mpi`; `.ci/run` runs it after the main tests. Skips with a
//! printed reason where `mpirun` (or, for the real trace, Valgrind) is missing.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;

mod common;

fn have_mpirun() -> bool {
    common::tools_or_skip(&["mpirun"])
}

/// How many `mpirun`s this test binary runs at once, at most: each starts two or three
/// processes, on a machine that may have two cores.
const AT_ONCE: usize = 2;

/// Ends with the test (or its panic): frees its place among the [`AT_ONCE`] running.
struct Slot;

static RUNNING: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

impl Slot {
    /// Waits for a place among the [`AT_ONCE`] running `mpirun`s.
    fn take() -> Slot {
        let (count, freed) = &RUNNING;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= AT_ONCE {
            n = freed.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (count, freed) = &RUNNING;
        *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// `mpirun -n RANKS --oversubscribe cachescope ARGS`, allowed to run as root (CI containers),
/// at most [`AT_ONCE`] at a time, killed after five minutes (a hang guard: a hang is a
/// failure, not a stuck test run; no speed is asserted).
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    let _slot = Slot::take();
    let child = Command::new("mpirun")
        .args(["-n", &ranks.to_string(), "--oversubscribe"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("CACHESCOPE_MPI_TIMING", "1")
        .arg(env!("CARGO_BIN_EXE_cachescope"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Collected on a thread of its own, which drains the pipes as the output comes.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(300)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("mpirun -n {ranks} {args:?} still running after 300 s: a hang");
        }
    }
}

fn single(args: &[&str]) -> Vec<u8> {
    cargo_bin_cmd!("cachescope")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

/// The commands compared on `t`: every distributing command in JSON, one in each other output
/// form (and a sampling profile's bytes), and one command that runs on rank 0 alone.
fn commands(t: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["stats", "--json", t],
        vec!["stats", t],
        vec!["footprint", "--json", t],
        vec!["footprint", "--json", "--windows", "1,7,1000,70001", t],
        vec!["footprint", t],
        vec!["mrc", "--json", "--method", "exact", t],
        // The time-local reading (the default) needs one ordered pass: rank 0 alone runs it.
        vec!["mrc", "--json", "--method", "hotl", t],
        vec![
            "mrc",
            "--json",
            "--method",
            "hotl",
            "--hotl-variant",
            "paper",
            t,
        ],
        vec!["mrc", "--json", "--method", "hotl-rt", t],
        vec![
            "mrc",
            "--csv",
            "--method",
            "hotl",
            "--hotl-variant",
            "paper",
            "--include-instructions",
            t,
        ],
        vec!["hotl", "--json", t],
        vec!["l2", "--json", "--l1", "4K", "--l2", "16K,64K", t],
        vec![
            "mrc",
            "--json",
            "--method",
            "statcache",
            "--rate",
            "0.01",
            t,
        ],
        vec![
            "mrc",
            "--json",
            "--method",
            "statstack",
            "--rate",
            "0.003",
            "--seed",
            "9",
            t,
        ],
        // The profile's bytes.
        vec!["sample", "--rate", "0.01", "-o", "-", t],
        vec![
            "mrc", "--json", "--method", "exact", "--policy", "random", "--range", "4K..64K", t,
        ],
    ]
}

/// Every command of [`commands`] (those in JSON only when `json_only`) on 2 and 3 ranks prints
/// what one process prints; two threads, so that both places of [`AT_ONCE`] stay busy
/// (mpirun's start-up, about a second of mostly waiting, is what takes time here).
fn same_on_2_and_3_ranks(trace: &Path, json_only: bool) {
    let t = trace.to_str().unwrap();
    let jobs: Vec<(Vec<&str>, usize)> = commands(t)
        .into_iter()
        .filter(|c| !json_only || c.contains(&"--json"))
        .flat_map(|c| [(c.clone(), 2), (c, 3)])
        .collect();
    std::thread::scope(|s| {
        for group in jobs.chunks(jobs.len().div_ceil(AT_ONCE)) {
            s.spawn(move || {
                for (args, ranks) in group {
                    let mut args = args.clone();
                    args.push("--quiet");
                    let want = single(&args);
                    let got = mpirun(*ranks, &args);
                    assert!(
                        got.status.success(),
                        "{args:?} on {ranks} ranks failed: {}",
                        String::from_utf8_lossy(&got.stderr)
                    );
                    assert!(
                        got.stdout == want,
                        "{args:?} on {ranks} ranks differs:\n{}",
                        String::from_utf8_lossy(&got.stdout)
                    );
                    // The distributing commands merged partials from the other ranks.
                    let stderr = String::from_utf8_lossy(&got.stderr);
                    let rank0_only = args.contains(&"random")
                        || (args.contains(&"mrc")
                            && args.contains(&"hotl")
                            && !args.contains(&"paper"));
                    let distributed = !rank0_only;
                    assert_eq!(
                        stderr.contains(&format!("cachescope: mpi: ranks {ranks} ")),
                        distributed,
                        "{args:?}: {stderr}"
                    );
                }
            });
        }
    });
}

#[test]
fn a_zipf_trace_gives_the_single_process_output_on_2_and_3_ranks() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("zipf.cst");
    cargo_bin_cmd!("cachescope")
        .args(["generate", "zipf", "--refs", "400000", "--seed", "3", "-o"])
        .arg(&trace)
        .assert()
        .success();
    same_on_2_and_3_ranks(&trace, false);
}

#[test]
fn a_real_programs_trace_gives_the_single_process_output_on_2_and_3_ranks() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(log) = common::record_ls(dir.path()) else {
        return;
    };
    let native = dir.path().join("ls.cst");
    cargo_bin_cmd!("cachescope")
        .args(["convert", log.to_str().unwrap(), native.to_str().unwrap()])
        .assert()
        .success();
    // The other output forms render the same results: JSON suffices here.
    same_on_2_and_3_ranks(&native, true);
}

#[test]
fn a_damaged_block_in_any_ranks_range_is_a_clear_error() {
    if !have_mpirun() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("zipf.cst");
    cargo_bin_cmd!("cachescope")
        .args(["generate", "zipf", "--refs", "400000", "--seed", "3", "-o"])
        .arg(&trace)
        .assert()
        .success();
    let bytes = std::fs::read(&trace).unwrap();
    // Seven blocks: one early in the file is rank 0's, one late is the last rank's.
    for (at, rank, commands) in [
        (bytes.len() / 10, 0, vec![vec!["footprint", "--json"]]),
        (
            bytes.len() * 8 / 10,
            1,
            vec![
                vec!["stats", "--json"],
                vec!["mrc", "--method", "hotl-rt"],
                vec!["mrc", "--method", "statstack"],
            ],
        ),
    ] {
        let name = format!("damaged-{rank}.cst");
        let path = dir.path().join(&name);
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x55;
        std::fs::write(&path, &damaged).unwrap();
        for args in commands {
            let mut args = args.clone();
            args.push(path.to_str().unwrap());
            let out = mpirun(2, &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "{args:?} succeeded on a damaged trace"
            );
            assert!(out.stdout.is_empty(), "{args:?} printed a result");
            assert!(
                stderr.contains(&format!("cachescope: error: MPI rank {rank}: "))
                    && stderr.contains(&name)
                    && stderr.contains("checksum mismatch"),
                "{args:?}: {stderr}"
            );
        }
    }
}
