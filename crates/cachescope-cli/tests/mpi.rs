//! `mpirun -n 2 cachescope mrc --method exact TRACE` prints exactly what one process prints
//! (built with `--features mpi`; `.ci/run` runs it after the main tests). Skips with a printed
//! reason where `mpirun` is missing.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::cargo::cargo_bin_cmd;

fn have_mpirun() -> bool {
    Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `mpirun -n RANKS --oversubscribe cachescope ARGS`, allowed to run as root (CI containers).
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    let out = Command::new("mpirun")
        .args(["-n", &ranks.to_string(), "--oversubscribe"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .arg(env!("CARGO_BIN_EXE_cachescope"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpirun failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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

fn generate(path: &Path) {
    cargo_bin_cmd!("cachescope")
        .args(["generate", "zipf", "--refs", "400000", "--seed", "3", "-o"])
        .arg(path)
        .assert()
        .success();
}

#[test]
fn two_and_three_ranks_print_the_single_process_curve() {
    if !have_mpirun() {
        eprintln!("skipped: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("zipf.cst");
    generate(&trace);
    let t = trace.to_str().unwrap();
    for args in [
        vec!["mrc", "--method", "exact", "--json", t, "--quiet"],
        vec![
            "mrc",
            "--json",
            "--range",
            "1K..1M",
            t,
            "--threads",
            "2",
            "--quiet",
        ],
        vec!["stats", "--json", t, "--quiet"],
    ] {
        let want = single(&args);
        for ranks in [2, 3] {
            let got = mpirun(ranks, &args);
            assert!(
                got.stdout == want,
                "{args:?} on {ranks} ranks differs:\n{}",
                String::from_utf8_lossy(&got.stdout)
            );
        }
    }
}
