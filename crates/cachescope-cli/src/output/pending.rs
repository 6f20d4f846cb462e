//! Files written under a temporary name and renamed when complete: a run that is interrupted
//! never leaves a file that looks finished.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file being written under a temporary name in the same directory; [`Pending::commit`]
/// renames it into place, dropping it uncommitted removes it. A run that is interrupted never
/// leaves a file that looks finished.
pub struct Pending {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl Pending {
    /// Creates the temporary file for `dest`.
    pub fn create(dest: &Path) -> Result<(Pending, File)> {
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file name", dest.display()))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = dest.with_file_name(tmp_name);
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", dest.display()))?;
        pending_files().push(tmp.clone());
        Ok((
            Pending {
                tmp,
                dest: dest.to_owned(),
                committed: false,
            },
            file,
        ))
    }

    /// Moves the finished file into place.
    pub fn commit(mut self) -> Result<()> {
        // An interrupted run leaves nothing that looks finished, even when its pass ended first.
        cachescope::interrupt::check()?;
        std::fs::rename(&self.tmp, &self.dest).with_context(|| {
            format!(
                "cannot move the output into place at {}",
                self.dest.display()
            )
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
        pending_files().retain(|p| p != &self.tmp);
    }
}

/// Temporary files not yet committed, for a forced exit to remove (see `crate::interrupt`).
fn pending_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static FILES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    FILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every temporary file not yet committed: the last thing a forced exit does.
pub fn remove_pending_files() {
    for tmp in pending_files().drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
}
