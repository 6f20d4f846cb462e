//! Compiling the C programs tests record. The caller has checked that `cc` exists
//! ([`crate::tools_or_skip`]); from then on a compilation that fails is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes the C `source` to `dir/NAME.c` and compiles it into `dir/NAME` with `cc FLAGS…`;
/// panics with cc's message when it fails.
pub fn compile_c(dir: &Path, name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let exe = dir.join(name);
    compile_c_file(&c, &exe, flags);
    exe
}

/// Compiles the C file `src` into `exe` with `cc FLAGS…`; panics with cc's message when it
/// fails.
pub fn compile_c_file(src: &Path, exe: &Path, flags: &[&str]) {
    let out = Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc: {e}"));
    assert!(
        out.status.success(),
        "cc {flags:?} {} failed: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
