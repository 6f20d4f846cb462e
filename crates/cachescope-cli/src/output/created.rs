//! Directories a run creates for its output (`report -o DIR`): removed, with what was written
//! into them, when the run fails or is interrupted, so that it leaves nothing behind; kept
//! when it succeeds. A directory that existed before the run is never removed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A directory created for the output; [`CreatedDir::keep`] keeps it, dropping it otherwise
/// removes the outermost directory this run created (with everything under it).
pub struct CreatedDir {
    /// The outermost directory created, `None` when the directory already existed.
    top: Option<PathBuf>,
}

impl CreatedDir {
    /// Creates `dir` and the parents it lacks.
    pub fn create(dir: &Path) -> Result<CreatedDir> {
        // The outermost ancestor missing now is the one this run creates (`""`, the current
        // directory, always exists).
        let top = dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        if let Some(top) = &top {
            created_dirs().push(top.clone());
        }
        Ok(CreatedDir { top })
    }

    /// The run succeeded: the directory stays.
    pub fn keep(mut self) {
        if let Some(top) = self.top.take() {
            created_dirs().retain(|d| d != &top);
        }
    }
}

impl Drop for CreatedDir {
    fn drop(&mut self) {
        if let Some(top) = self.top.take() {
            let _ = std::fs::remove_dir_all(&top);
            created_dirs().retain(|d| d != &top);
        }
    }
}

/// Directories created and not yet kept, for a forced exit to remove (see `crate::interrupt`).
fn created_dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    DIRS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every directory created and not kept: what a forced exit does after removing the
/// temporary files.
pub fn remove_created_dirs() {
    for dir in created_dirs().drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_run_created_goes() {
        let base = tempfile::tempdir().unwrap();
        let deep = base.path().join("a/b/c");
        drop(CreatedDir::create(&deep).unwrap());
        assert!(!base.path().join("a").exists());
        std::fs::create_dir(base.path().join("a")).unwrap();
        drop(CreatedDir::create(&deep).unwrap());
        assert!(base.path().join("a").exists() && !base.path().join("a/b").exists());
        CreatedDir::create(&deep).unwrap().keep();
        assert!(deep.exists());
        drop(CreatedDir::create(&deep).unwrap());
        assert!(deep.exists(), "an existing directory is never removed");
    }
}
