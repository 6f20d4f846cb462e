//! Replays the fuzz corpus (`fuzz/corpus/TARGET/`) and every crash found so far
//! (`fuzz/regressions/TARGET/`) through the fuzz target bodies, on stable Rust, so CI checks that
//! no input that once broke a parser breaks it again. The fuzzing itself needs nightly
//! (`cargo +nightly fuzz run TARGET`, see docs/reliability.md).
//!
//! A replay that ran nothing, or only inputs every parser refuses, would pass while proving
//! nothing: the tests check which files ran and that each target read real input.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use cachescope::fuzzing::{Outcome, TARGETS, replay};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Every file in `dir/TARGET/`, by target, sorted.
fn files(dir: &Path) -> BTreeMap<&'static str, Vec<PathBuf>> {
    let mut found = BTreeMap::new();
    for target in TARGETS {
        let Ok(entries) = fs::read_dir(dir.join(target)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        found.insert(target, paths);
    }
    found
}

/// Runs every file in `dir/TARGET/` through its target: what each read, by target.
fn replay_all(dir: &Path) -> BTreeMap<&'static str, Vec<(PathBuf, Outcome)>> {
    files(dir)
        .into_iter()
        .map(|(target, paths)| {
            let runs = paths
                .into_iter()
                .map(|path| {
                    let outcome = replay(target, &fs::read(&path).unwrap());
                    (path, outcome)
                })
                .collect();
            (target, runs)
        })
        .collect()
}

#[test]
fn corpus_replays_without_panics_and_every_target_reads_real_input() {
    let runs = replay_all(&fuzz_dir().join("corpus"));
    for target in TARGETS {
        let Some(runs) = runs.get(target).filter(|r| !r.is_empty()) else {
            panic!("no corpus for {target} in {}", fuzz_dir().display());
        };
        // Each target's corpus holds inputs its parser accepts whole, with something in them,
        // and inputs it refuses: both paths ran.
        let read = runs.iter().filter(|(_, o)| o.items > 0 && !o.error).count();
        let refused = runs.iter().filter(|(_, o)| o.error).count();
        assert!(
            read > 0,
            "{target}: none of {} corpus files was read without an error",
            runs.len()
        );
        assert!(
            refused > 0,
            "{target}: the parser refused none of {} corpus files",
            runs.len()
        );
    }
}

#[test]
fn regressions_replay_without_panics() {
    let dir = fuzz_dir().join("regressions");
    let runs = replay_all(&dir);
    // Every regression on disk ran: the two known ones at least.
    let ran: Vec<String> = runs
        .values()
        .flatten()
        .map(|(p, _)| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    for known in [
        "native/leak-9a93e3fa8005f98502a009c5a2932891866fec55",
        "open/leak-675c31f6eb1bfe8d12e34ad795312bb9a350efbf",
    ] {
        assert!(
            ran.iter().any(|r| r == known),
            "{known} not replayed: {ran:?}"
        );
    }
    let on_disk: usize = files(&dir).values().map(Vec::len).sum();
    assert_eq!(ran.len(), on_disk);
    // Both were allocations sized by a corrupt header (the fuzzer's "leak"): refused now.
    for (path, outcome) in runs.values().flatten() {
        assert!(outcome.error, "{}: {outcome:?}", path.display());
    }
}
