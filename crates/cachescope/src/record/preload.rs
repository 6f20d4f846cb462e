//! Finding the allocation interposer (`libcachescope_preload.so`, built from the
//! `cachescope-preload` crate).

use std::path::{Path, PathBuf};

/// The interposer's file name.
pub const FILE_NAME: &str = "libcachescope_preload.so";

/// Environment variable that names the interposer explicitly.
pub const ENV: &str = "CACHESCOPE_PRELOAD";

/// How to build the interposer, for messages.
pub const BUILD_HINT: &str = "cargo build --release -p cachescope-preload";

/// The interposer to use: `$CACHESCOPE_PRELOAD`, else next to the running executable or in
/// its `deps/` (Cargo builds the cdylib into `target/PROFILE/deps/` as a dependency of the
/// CLI, and into `target/PROFILE/` when built on its own; test binaries run from `deps/`, so
/// its parent too), else `../lib` from it (an installed layout).
/// `Err` lists the places searched.
pub fn locate() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("${ENV} names {}, which is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let candidates = candidates(&exe);
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            let searched: Vec<String> =
                candidates.iter().map(|p| p.display().to_string()).collect();
            format!("searched ${ENV}, {}", searched.join(", "))
        })
}

fn candidates(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else {
        return Vec::new();
    };
    let mut out = vec![dir.join(FILE_NAME), dir.join("deps").join(FILE_NAME)];
    if let Some(up) = dir.parent() {
        if dir.file_name().is_some_and(|n| n == "deps") {
            out.push(up.join(FILE_NAME));
        }
        out.push(up.join("lib").join(FILE_NAME));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_beside_the_executable_then_lib() {
        let c = candidates(Path::new("/opt/cs/bin/cachescope"));
        assert_eq!(
            c,
            vec![
                PathBuf::from("/opt/cs/bin/libcachescope_preload.so"),
                PathBuf::from("/opt/cs/bin/deps/libcachescope_preload.so"),
                PathBuf::from("/opt/cs/lib/libcachescope_preload.so")
            ]
        );
        let c = candidates(Path::new("/w/target/debug/deps/record-123"));
        assert_eq!(
            c[2],
            PathBuf::from("/w/target/debug/libcachescope_preload.so")
        );
    }
}
