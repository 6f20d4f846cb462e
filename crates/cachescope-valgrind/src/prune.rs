//! Old tool directories out of the per-user cache: each build of cachescope writes its tool
//! into a directory named by the tool's hash, so without pruning one directory (about 5 MB)
//! stays behind per build ever run.
//!
//! A directory in use is touched each time it is found ([`touch`]); [`prune`] removes the
//! others (`valgrind-*`, and `tmp-*`/`broken-*` left by interrupted writes) untouched for
//! [`UNUSED_FOR`]. A cachescope build not run for that long writes its tool again when next
//! run.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long a tool directory stays after it was last used.
pub const UNUSED_FOR: Duration = Duration::from_secs(14 * 24 * 3600);

/// Marks `dir` as used now (its modification time), so that [`prune`] keeps it.
pub fn touch(dir: &Path) {
    // Best effort: a cache directory we cannot touch is only pruned sooner.
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Removes the entries of `base` other than `keep` that look like the tool's directories and
/// were last used more than `unused_for` before `now`; returns how many it removed. Errors
/// are ignored: pruning is housekeeping, never a reason to fail a recording.
pub fn prune(base: &Path, keep: &Path, now: SystemTime, unused_for: Duration) -> usize {
    let Ok(entries) = fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        let ours = ["valgrind-", "tmp-", "broken-"]
            .iter()
            .any(|p| name.starts_with(p));
        if !ours || path == keep {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > unused_for);
        if old && e.file_type().is_ok_and(|t| t.is_dir()) && fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_aged(base: &Path, name: &str, age: Duration) -> std::path::PathBuf {
        let d = base.join(name);
        fs::create_dir(&d).unwrap();
        fs::write(d.join("f"), b"x").unwrap();
        let f = fs::File::open(&d).unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
        d
    }

    #[test]
    fn old_tool_directories_go_and_the_rest_stay() {
        let base = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(24 * 3600);
        let keep = dir_aged(base.path(), "valgrind-00000000000000aa", 30 * day);
        let old = dir_aged(base.path(), "valgrind-00000000000000bb", 30 * day);
        let broken = dir_aged(base.path(), "broken-x", 30 * day);
        let recent = dir_aged(base.path(), "valgrind-00000000000000cc", day);
        let other = dir_aged(base.path(), "someone-elses", 30 * day);
        let n = prune(base.path(), &keep, SystemTime::now(), UNUSED_FOR);
        assert_eq!(n, 2);
        assert!(keep.exists() && recent.exists() && other.exists());
        assert!(!old.exists() && !broken.exists());
        touch(&recent);
        let n = prune(base.path(), &keep, SystemTime::now() + 10 * day, UNUSED_FOR);
        assert_eq!(n, 0, "touched today, unused for 10 days");
    }

    #[test]
    fn a_missing_base_prunes_nothing() {
        let n = prune(
            Path::new("/nonexistent/cachescope"),
            Path::new("/x"),
            SystemTime::now(),
            UNUSED_FOR,
        );
        assert_eq!(n, 0);
    }
}
