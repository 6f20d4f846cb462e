//! Replays the fuzz corpus (`fuzz/corpus/TARGET/`) and every crash found so far
//! (`fuzz/regressions/TARGET/`) through the fuzz target bodies, on stable Rust, so CI checks that
//! no input that once broke a parser breaks it again. The fuzzing itself needs nightly
//! (`cargo +nightly fuzz run TARGET`, see docs/reliability.md).

use std::fs;
use std::path::{Path, PathBuf};

use cachescope::fuzzing::{TARGETS, run};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Runs every file in `dir/TARGET/` through its target; returns how many files ran.
fn replay(dir: &Path) -> usize {
    let mut ran = 0;
    for target in TARGETS {
        let Ok(entries) = fs::read_dir(dir.join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = fs::read(&path).unwrap();
            eprintln!("{target}: {}", path.display());
            run(target, &data);
            ran += 1;
        }
    }
    ran
}

#[test]
fn corpus_replays_without_panics() {
    let ran = replay(&fuzz_dir().join("corpus"));
    // Every target has a seeded corpus: an empty replay would mean the path is wrong.
    assert!(ran >= TARGETS.len(), "only {ran} corpus files found");
    for target in TARGETS {
        let dir = fuzz_dir().join("corpus").join(target);
        assert!(
            fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()),
            "no corpus for {target} in {}",
            dir.display()
        );
    }
}

#[test]
fn regressions_replay_without_panics() {
    replay(&fuzz_dir().join("regressions"));
}
